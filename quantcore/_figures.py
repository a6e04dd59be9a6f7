"""Figure helpers shared by :mod:`quantcore.plot` and :mod:`quantcore.report`.

A figure is a bare matplotlib ``Figure`` (no pyplot state); a data argument is
checked and turned into one float ``Series`` here, so both modules raise the same
``ValueError`` naming the argument.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "COLORS",
    "DOWN",
    "UP",
    "aligned",
    "closes",
    "evenly_spaced",
    "figure",
    "named",
    "percent",
    "series",
]

COLORS = ("#1f4e79", "#c0504d", "#4f8f3a", "#8064a2", "#f79646", "#4bacc6")
UP, DOWN = "#2e7d32", "#c62828"


def figure(nrows: int = 1, *, figsize: tuple[float, float] = (10.0, 4.0), **kw: Any) -> Figure:
    """A new Figure, not registered with pyplot (no global state, no GUI)."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError("quantcore.plot needs matplotlib: pip install 'quantcore[plot]'") from exc
    fig = Figure(figsize=figsize, layout="constrained")
    fig.subplots(nrows, 1, squeeze=False, **kw)
    return fig


def series(data: Any, name: str, default: str) -> pd.Series:
    """One float Series from an ndarray/Series/one-column DataFrame; ``ValueError`` otherwise."""
    if isinstance(data, pd.DataFrame):
        if data.shape[1] != 1:
            raise ValueError(
                f"{name} must be one series, got a DataFrame of {data.shape[1]} columns"
            )
        data = data.iloc[:, 0]
    if isinstance(data, pd.Series):
        out = data.astype(np.float64)
    else:
        arr = np.asarray(data, dtype=np.float64)
        if arr.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got {arr.ndim} dimensions")
        out = pd.Series(arr)
    if len(out) == 0:
        raise ValueError(f"{name} is empty")
    if out.name is None:
        out = out.rename(default)
    return out


def aligned(returns: pd.Series, benchmark: Any) -> tuple[pd.Series, pd.Series | None]:
    """The benchmark as a Series on the returns' rows, named apart from the returns."""
    if benchmark is None:
        return returns, None
    b = series(benchmark, "benchmark", "benchmark")
    if isinstance(benchmark, pd.Series | pd.DataFrame) and not isinstance(
        returns.index, pd.RangeIndex
    ):
        returns, b = returns.align(b, join="inner")
    elif len(b) != len(returns):
        raise ValueError(f"benchmark has {len(b)} rows, returns has {len(returns)}")
    else:
        b.index = returns.index
    if len(returns) == 0:
        raise ValueError("returns and benchmark share no dates")
    if str(b.name) == str(returns.name):
        # tables and legends are keyed by name: two "Adj Close" series would collide
        b = b.rename(f"{b.name} (benchmark)")
    return returns, b


def percent(ax: Axes, axis: str = "y") -> None:
    from matplotlib.ticker import PercentFormatter

    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(PercentFormatter(1.0))


def evenly_spaced(values: np.ndarray) -> bool:
    """At least two numbers with one common step (a numeric heatmap axis); else categorical."""
    if len(values) < 2 or not np.issubdtype(values.dtype, np.number):
        return False
    steps = np.diff(values.astype(np.float64))
    return bool(np.allclose(steps, steps[0], rtol=1e-9, atol=0.0))


def closes(prices: Any) -> pd.Series:
    if isinstance(prices, pd.DataFrame):
        lower = {str(c).lower(): c for c in prices.columns}
        if "close" in lower:
            return series(prices[lower["close"]], "prices", "close")
    return series(prices, "prices", "close")


def named(
    items: Mapping[str, Any] | pd.DataFrame | None, what: str, n: int
) -> list[tuple[str, np.ndarray]]:
    if items is None:
        return []
    if isinstance(items, pd.DataFrame):
        items = {str(c): items[c] for c in items.columns}
    if not isinstance(items, Mapping):
        raise ValueError(f"{what} must be a mapping of name to series or a DataFrame")
    out = []
    for name, values in items.items():
        arr = np.asarray(values, dtype=np.float64)
        if arr.shape != (n,):
            raise ValueError(f"{what}[{name!r}] has shape {arr.shape}, prices have {n} rows")
        out.append((str(name), arr))
    return out
