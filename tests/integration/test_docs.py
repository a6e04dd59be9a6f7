"""The API reference builds with ``mkdocs build --strict``: a broken cross-reference fails.

Also checks that the reST maths of the numpydoc *Notes* sections reach the pages as
MathJax blocks, and that every public module has its page.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import quantcore
from tests.conftest import require_oracle

ROOT = Path(__file__).resolve().parents[2]

require_oracle("mkdocstrings_handlers")  # mkdocs and mkdocstrings[python]
require_oracle("griffe")


def _load_extension() -> ModuleType:
    spec = importlib.util.spec_from_file_location("griffe_rst", ROOT / "docs/api/griffe_rst.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_public_module_has_a_page() -> None:
    ext = _load_extension()
    modules = {m for m in quantcore.__all__ if m != "__version__"} | {"plot", "report"}
    assert {f"quantcore.{m}" for m in modules} <= ext.RENDERED


def test_rst_roles_become_markdown() -> None:
    ext = _load_extension()
    text = (
        "With :math:`z = \\Phi^{-1}(\\alpha)`, see :func:`quantcore.risk.beta` and\n"
        ":func:`~quantcore.metrics.summary`, :func:`run`, :data:`quantcore._records.trade_dt`.\n\n"
        "    .. math::\n\n        R = \\prod_t (1 + r_t) - 1\n\n    after\n"
        ".. math:: a = b\n"
    )
    assert ext.convert(text).splitlines() == [
        "With $z = \\Phi^{-1}(\\alpha)$, see [`quantcore.risk.beta`][quantcore.risk.beta] and",
        "[`summary`][quantcore.metrics.summary], `run`, `quantcore._records.trade_dt`.",
        "",
        "",
        "    $$",
        "    R = \\prod_t (1 + r_t) - 1",
        "    $$",
        "",
        "    after",
        "",
        "$$",
        "a = b",
        "$$",
    ]


@pytest.mark.slow
def test_mkdocs_build_strict(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    risk = (tmp_path / "site/api/risk/index.html").read_text(encoding="utf-8")
    assert 'id="quantcore.risk.value_at_risk"' in risk
    assert '<span class="arithmatex">\\(z = \\Phi^{-1}(\\alpha)\\)</span>' in risk
    assert ":math:" not in risk and ".. math::" not in risk
    returns = (tmp_path / "site/api/returns/index.html").read_text(encoding="utf-8")
    assert '<div class="arithmatex">\\[' in returns
