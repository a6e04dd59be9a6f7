"""quantcore.plot / quantcore.report beside quantstats, on the same seeded daily returns.

Both sides build the figure and render it to PNG in memory (what a notebook or a
report does), so the time includes matplotlib's rasterization. The tear-sheet case
compares one self-contained HTML page each; quantstats' page has more figures
(about a dozen against our four) and tables, so its ratio measures "a full page",
not the same work. quantstats is a benchmark-only dependency (``pip install quantstats``);
without it the cases run ours alone.
"""

from __future__ import annotations

import io
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Case

__all__ = ["CASES"]


def _returns(quick: bool) -> tuple[pd.Series, pd.Series]:
    n = 504 if quick else 5040  # 2 or 20 years of business days
    rng = np.random.default_rng(20261122)
    index = pd.bdate_range("2005-01-03", periods=n)
    b = pd.Series(rng.standard_t(4, n) * 0.008 + 0.0003, index=index, name="benchmark")
    r = (0.9 * b + pd.Series(rng.normal(0.0001, 0.005, n), index=index)).rename("strategy")
    return r, b


def _png(fig: Any) -> int:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=96)
    return buf.tell()


def _qs() -> Any:
    try:
        warnings.simplefilter("ignore")
        import matplotlib

        matplotlib.use("Agg")
        import quantstats
    except ImportError:
        return None
    return quantstats


def _close_all() -> None:
    import matplotlib.pyplot as plt

    plt.close("all")


def _ours_underwater(data: tuple[pd.Series, pd.Series]) -> int:
    from quantcore import plot

    return _png(plot.underwater(data[0]))


def _peer_underwater(data: tuple[pd.Series, pd.Series]) -> int:
    fig = _qs().plots.drawdown(data[0], show=False)
    size = _png(fig)
    _close_all()
    return size


def _ours_equity(data: tuple[pd.Series, pd.Series]) -> int:
    from quantcore import plot

    return _png(plot.equity_curve(*data))


def _peer_equity(data: tuple[pd.Series, pd.Series]) -> int:
    fig = _qs().plots.returns(data[0], data[1], show=False)
    size = _png(fig)
    _close_all()
    return size


def _ours_tearsheet(data: tuple[pd.Series, pd.Series]) -> int:
    from quantcore import report

    return len(report.tearsheet(*data))


def _peer_tearsheet(data: tuple[pd.Series, pd.Series]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "qs.html"
        _qs().reports.html(data[0], benchmark=data[1], output=str(out), title="strategy")
        size = len(out.read_text(encoding="utf-8"))
    _close_all()
    return size


_HAVE_QS = _qs() is not None

CASES: list[Case] = [
    Case(
        name="plot_underwater",
        setup=_returns,
        ours=_ours_underwater,
        peer=_peer_underwater if _HAVE_QS else None,
        peer_name="quantstats.plots.drawdown",
        notes="figure + PNG render; 504 days quick, 5,040 full",
    ),
    Case(
        name="plot_equity_curve",
        setup=_returns,
        ours=_ours_equity,
        peer=_peer_equity if _HAVE_QS else None,
        peer_name="quantstats.plots.returns",
        notes="strategy and benchmark cumulative returns, figure + PNG render",
    ),
    Case(
        name="plot_tearsheet",
        setup=_returns,
        ours=_ours_tearsheet,
        peer=_peer_tearsheet if _HAVE_QS else None,
        peer_name="quantstats.reports.html",
        quick=False,
        notes="one HTML page each; quantstats draws ~3x more figures",
    ),
]
