"""Every notebook in ``notebooks/`` runs top to bottom in a fresh kernel; a failing cell fails.

The notebooks are stored without outputs (checked here too) and executed with nbclient
in the ``notebooks/`` directory, each cell under :data:`CELL_TIMEOUT` seconds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import require_oracle

nbformat = require_oracle("nbformat")  # pip install nbclient nbformat ipykernel
nbclient = require_oracle("nbclient")

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
#: Seconds one cell may take before the run fails (the whole notebook should take well under a minute).
CELL_TIMEOUT = 120
EXPECTED = [
    "01_analytics_quickstart",
    "02_backtest_and_sweep",
    "03_risk_report",
    "04_tax_lots_and_harvesting",
    "05_service_client",
    "06_walk_forward_cpcv",
]


def test_the_notebooks_are_all_here() -> None:
    assert sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb")) == EXPECTED


@pytest.mark.slow
@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_runs(name: str) -> None:
    book = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    nbformat.validate(book)
    code = [c for c in book.cells if c.cell_type == "code"]
    assert code, "a notebook without code"
    assert all(not c.outputs and c.execution_count is None for c in code), (
        "store notebooks without outputs (jupyter nbconvert --clear-output --inplace)"
    )
    client = nbclient.NotebookClient(
        book,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
        allow_errors=False,
    )
    client.execute()  # raises CellExecutionError naming the cell and its traceback
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors
    assert all(c.execution_count is not None for c in code)
