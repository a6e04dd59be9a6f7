"""Figures for research: equity, drawdowns, return distribution, rolling ratios, sweeps, trades.

Every function takes the library's own inputs (returns, prices, a sweep table, a
:class:`~quantcore.backtest.BacktestResult`), draws one :class:`matplotlib.figure.Figure`
and returns it; nothing is shown or saved, so the caller chooses
(``fig.savefig("equity.png")``, or let a notebook display it). matplotlib is an
optional dependency (``pip install quantcore[plot]``), imported on the first call,
and figures are built with the object-oriented API (no ``pyplot`` global state),
so they are safe in threads and under any backend.

>>> import numpy as np
>>> from quantcore import plot
>>> r = np.random.default_rng(0).normal(0.0004, 0.01, 500)
>>> fig = plot.equity_curve(r)
>>> fig.axes[0].get_title()
'Equity curve'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from quantcore import _figures as _fig
from quantcore import drawdown as _drawdown
from quantcore import returns as _returns
from quantcore import risk as _risk
from quantcore import rolling as _rolling
from quantcore._records import TRADE_SHORT

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "equity_curve",
    "price_with_indicators",
    "return_distribution",
    "rolling_sharpe_volatility",
    "sweep_heatmap",
    "trades_on_price",
    "underwater",
]

def equity_curve(
    returns: Any,
    benchmark: Any = None,
    *,
    initial: float = 1.0,
    log_scale: bool = False,
    title: str = "Equity curve",
) -> Figure:
    """Growth of ``initial`` invested in the strategy, and in the benchmark if given.

    Parameters
    ----------
    returns : ndarray, Series or one-column DataFrame
        Simple returns per period; NaN periods leave the wealth unchanged.
    benchmark : same kinds, optional
        Benchmark returns; two pandas inputs are aligned on their common dates,
        otherwise the lengths must match.
    initial : float, default 1.0
        Starting wealth.
    log_scale : bool, default False
        Logarithmic y axis (straight lines are constant growth rates).
    title : str
        Axes title.

    Returns
    -------
    matplotlib.figure.Figure
        One axes; line 0 is the strategy, line 1 the benchmark.

    Notes
    -----
    The plotted wealth is :math:`W_t = W_0 \\prod_{s \\le t} (1 + r_s)`, i.e.
    ``initial * (1 + quantcore.returns.cumulative_returns(returns))``.

    Examples
    --------
    >>> import numpy as np
    >>> fig = equity_curve(np.array([0.1, -0.5, 1.0]), initial=100.0)
    >>> fig.axes[0].lines[0].get_ydata().tolist()
    [110.0, 55.0, 110.0]
    """
    r, b = _fig.aligned(_fig.series(returns, "returns", "strategy"), benchmark)
    fig = _fig.figure()
    ax = fig.axes[0]
    for k, s in enumerate((r, b)):
        if s is None:
            continue
        wealth = initial * (1.0 + _returns.cumulative_returns(s.fillna(0.0)))
        ax.plot(
            wealth.index, wealth.to_numpy(), color=_fig.COLORS[k], lw=1.4 - 0.3 * k, label=str(s.name)
        )
    ax.axhline(initial, color="0.6", lw=0.8, ls=":")
    if log_scale:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.set_ylabel(f"wealth (start = {initial:g})")
    ax.legend(loc="upper left")
    ax.grid(alpha=0.3)
    return fig


def underwater(returns: Any, *, title: str = "Underwater (drawdown)") -> Figure:
    """Drawdown from the running peak, shaded below zero, with the maximum drawdown marked.

    Parameters
    ----------
    returns : ndarray, Series or one-column DataFrame
        Simple returns per period.
    title : str
        Axes title.

    Returns
    -------
    matplotlib.figure.Figure
        One axes; line 0 is the drawdown series, line 1 the horizontal line at the
        maximum drawdown.

    Notes
    -----
    :math:`DD_t = W_t / \\max(1, \\max_{s \\le t} W_s) - 1` with
    :math:`W_t = \\prod_{s \\le t}(1 + r_s)` (:func:`quantcore.drawdown.drawdown_series`);
    the line is at :math:`\\min_t DD_t` (:func:`quantcore.drawdown.max_drawdown`).

    Examples
    --------
    >>> import numpy as np
    >>> fig = underwater(np.array([0.1, -0.5, 1.0]))
    >>> fig.axes[0].lines[1].get_ydata()[0]
    -0.5
    """
    r = _fig.series(returns, "returns", "strategy")
    dd = _drawdown.drawdown_series(r)
    worst = float(_drawdown.max_drawdown(r))
    fig = _fig.figure()
    ax = fig.axes[0]
    x, y = dd.index, dd.to_numpy()
    ax.plot(x, y, color=_fig.DOWN, lw=0.9, label="drawdown")
    ax.fill_between(x, y, 0.0, where=~np.isnan(y), color=_fig.DOWN, alpha=0.3, lw=0)
    ax.axhline(worst, color="0.3", lw=0.9, ls="--", label=f"max drawdown {worst:.1%}")
    ax.set_ylim(min(worst * 1.1, -0.01) if np.isfinite(worst) else -0.01, 0.0)
    _fig.percent(ax)
    ax.set_title(title)
    ax.set_ylabel("drawdown")
    ax.legend(loc="lower left")
    ax.grid(alpha=0.3)
    return fig


def return_distribution(
    returns: Any,
    *,
    level: float = 0.95,
    method: _risk.Method = "historical",
    bins: int = 60,
    title: str = "Return distribution",
) -> Figure:
    """Histogram of the returns with the value at risk and the expected shortfall marked.

    Parameters
    ----------
    returns : ndarray, Series or one-column DataFrame
        Simple returns per period; NaNs are dropped.
    level : float, default 0.95
        Confidence level of VaR and ES, in (0, 1).
    method : {"historical", "parametric", "cornish_fisher"}
        As in :func:`quantcore.risk.value_at_risk`.
    bins : int, default 60
        Number of histogram bins (> 0).
    title : str
        Axes title.

    Returns
    -------
    matplotlib.figure.Figure
        One axes; line 0 is the vertical line at ``-VaR``, line 1 at ``-ES``
        (returns, so losses are on the left).

    Notes
    -----
    VaR and ES are positive loss fractions, so they are drawn at the returns
    :math:`-\\mathrm{VaR}_\\alpha` and :math:`-\\mathrm{ES}_\\alpha`; for the
    historical method :math:`\\mathrm{VaR}_\\alpha = -Q_{1-\\alpha}(r)` and ES is
    minus the mean of the returns at or below it (see :mod:`quantcore.risk`).

    Examples
    --------
    >>> import numpy as np
    >>> fig = return_distribution(np.linspace(-0.05, 0.05, 101), level=0.95)
    >>> round(float(fig.axes[0].lines[0].get_xdata()[0]), 12)
    -0.045
    """
    if not isinstance(bins, int | np.integer) or bins <= 0:
        raise ValueError(f"bins must be a positive integer, got {bins!r}")
    r = _fig.series(returns, "returns", "strategy").dropna()
    if len(r) < 2:
        raise ValueError("returns needs at least 2 non-NaN values")
    var = float(_risk.value_at_risk(r, level=level, method=method))
    es = float(_risk.expected_shortfall(r, level=level, method=method))
    fig = _fig.figure()
    ax = fig.axes[0]
    ax.hist(r.to_numpy(), bins=bins, color=_fig.COLORS[0], alpha=0.75)
    ax.axvline(-var, color=_fig.COLORS[4], lw=1.5, label=f"VaR {level:.0%} = {var:.2%}")
    ax.axvline(-es, color=_fig.DOWN, lw=1.5, ls="--", label=f"ES {level:.0%} = {es:.2%}")
    _fig.percent(ax, "x")
    ax.set_title(title)
    ax.set_xlabel("return per period")
    ax.set_ylabel("count")
    ax.legend(loc="upper left")
    ax.grid(alpha=0.3)
    return fig


def rolling_sharpe_volatility(
    returns: Any,
    *,
    window: int = 126,
    periods_per_year: float = 252,
    title: str = "Rolling Sharpe ratio and volatility",
) -> Figure:
    """Rolling annualized Sharpe ratio (top) and volatility (bottom).

    Parameters
    ----------
    returns : ndarray, Series or one-column DataFrame
        Simple returns per period.
    window : int, default 126
        Periods per window (>= 2); a window with a NaN is NaN.
    periods_per_year : float, default 252
        Annualization factor :math:`P`.
    title : str
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes sharing x: Sharpe ratio, then volatility; the first ``window - 1``
        points are NaN.

    Notes
    -----
    Over each window of :math:`w` returns,
    :math:`SR = \\sqrt{P}\\, \\bar r / s` and :math:`\\sigma = \\sqrt{P}\\, s` with
    :math:`s` the sample standard deviation (ddof=1): the windowed
    :func:`quantcore.metrics.sharpe_ratio` and :func:`quantcore.risk.volatility`,
    computed by :func:`quantcore.rolling.rolling_sharpe` and
    :func:`quantcore.rolling.rolling_volatility`. A window of equal returns has a
    NaN Sharpe ratio and a volatility of exactly 0; a window holding a NaN is NaN.

    Examples
    --------
    >>> import numpy as np
    >>> r = np.random.default_rng(1).normal(0.0, 0.01, 300)
    >>> fig = rolling_sharpe_volatility(r, window=50)
    >>> [ax.get_ylabel() for ax in fig.axes]
    ['Sharpe ratio', 'volatility']
    """
    r = _fig.series(returns, "returns", "strategy")
    # the library's rolling kernels (validation of window and periods_per_year included)
    sharpe = _rolling.rolling_sharpe(r, window, periods_per_year=periods_per_year)
    vol = _rolling.rolling_volatility(r, window, periods_per_year=periods_per_year)
    fig = _fig.figure(2, figsize=(10.0, 5.5), sharex=True)
    top, bottom = fig.axes
    top.plot(sharpe.index, sharpe.to_numpy(), color=_fig.COLORS[0], lw=1.0)
    top.axhline(0.0, color="0.5", lw=0.8)
    top.set_ylabel("Sharpe ratio")
    bottom.plot(vol.index, vol.to_numpy(), color=_fig.COLORS[1], lw=1.0)
    bottom.set_ylabel("volatility")
    _fig.percent(bottom)
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
    top.set_title(f"{title} ({window}-period window)")
    return fig


def sweep_heatmap(
    table: pd.DataFrame,
    x: str,
    y: str,
    value: str = "sharpe_ratio",
    *,
    agg: str = "max",
    cmap: str = "RdYlGn",
    title: str | None = None,
) -> Figure:
    """Heatmap of a sweep metric over two parameters (vectorbt-style).

    Parameters
    ----------
    table : DataFrame
        A :func:`quantcore.backtest.sweep` table (one row per combination and asset).
    x, y : str
        Parameter columns for the horizontal and vertical axes.
    value : str, default "sharpe_ratio"
        Metric column shown as colour.
    agg : {"max", "min", "mean", "median"}
        How rows sharing an ``(x, y)`` cell (other parameters, assets) are combined.
    cmap : str
        matplotlib colormap name.
    title : str, optional
        Axes title; default ``"<value> by <y> and <x>"``.

    Returns
    -------
    matplotlib.figure.Figure
        Axes 0 holds one image whose array is ``(n_y, n_x)``: the sorted distinct
        values of ``y`` by those of ``x``; skipped combinations are blank (NaN).
        Evenly spaced numeric parameters get numeric axes with each cell centred
        on its value; other parameters get one labelled tick per value.
        Axes 1 is the colour bar.

    Notes
    -----
    Cell :math:`(i, j) = \\operatorname{agg}\\{v_k : y_k = Y_i, x_k = X_j\\}`.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"a": [1, 1, 2], "b": [5, 6, 6], "sharpe_ratio": [0.1, 0.2, 0.3]})
    >>> sweep_heatmap(t, "a", "b").axes[0].images[0].get_array().shape
    (2, 2)
    """
    if not isinstance(table, pd.DataFrame):
        raise ValueError(f"table must be a DataFrame, got {type(table).__name__}")
    for name, col in (("x", x), ("y", y), ("value", value)):
        if col not in table.columns:
            raise ValueError(f"{name}={col!r} is not a column of table: {list(table.columns)}")
    if x == y:
        raise ValueError("x and y must be different columns")
    if agg not in ("max", "min", "mean", "median"):
        raise ValueError(f"agg must be 'max', 'min', 'mean' or 'median', got {agg!r}")
    if table.empty:
        raise ValueError("table is empty")
    grid = table.pivot_table(index=y, columns=x, values=value, aggfunc=agg, dropna=False)  # type: ignore[arg-type]
    grid = grid.sort_index().sort_index(axis=1)
    data = grid.to_numpy(dtype=np.float64)
    fig = _fig.figure(figsize=(10.0, 6.0))
    ax = fig.axes[0]
    xs, ys = grid.columns.to_numpy(), grid.index.to_numpy()
    finite = data[np.isfinite(data)]
    if _fig.evenly_spaced(xs) and _fig.evenly_spaced(ys):  # numeric axes, cells centred on the values
        dx, dy = (xs[-1] - xs[0]) / (len(xs) - 1), (ys[-1] - ys[0]) / (len(ys) - 1)
        extent = (xs[0] - dx / 2, xs[-1] + dx / 2, ys[0] - dy / 2, ys[-1] + dy / 2)
        image = ax.imshow(data, origin="lower", aspect="auto", cmap=cmap, extent=extent,
                          interpolation="nearest")  # fmt: skip
    else:
        image = ax.imshow(data, origin="lower", aspect="auto", cmap=cmap, interpolation="nearest")
        ax.set_xticks(range(len(xs)), [str(v) for v in xs], rotation=90 if len(xs) > 12 else 0)
        ax.set_yticks(range(len(ys)), [str(v) for v in ys])
    if finite.size and value in (
        "sharpe_ratio",
        "total_return",
        "annualized_return",
        "sortino_ratio",
    ):
        bound = float(np.abs(finite).max()) or 1.0
        image.set_clim(-bound, bound)
    fig.colorbar(image, ax=ax, label=value)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title(title if title is not None else f"{value} by {y} and {x}")
    return fig


def price_with_indicators(
    prices: Any,
    overlays: Mapping[str, Any] | pd.DataFrame | None = None,
    *,
    panel: Mapping[str, Any] | pd.DataFrame | None = None,
    panel_levels: tuple[float, ...] = (),
    title: str = "Price",
) -> Figure:
    """Close prices with indicators on the price scale and, optionally, a lower panel.

    Parameters
    ----------
    prices : ndarray, Series or DataFrame
        Closes, or an OHLC frame (its ``Close`` column is drawn).
    overlays : mapping of name to series, or DataFrame, optional
        Indicators on the price scale (moving averages, Bollinger bands), one line
        each, same length as ``prices``.
    panel : mapping or DataFrame, optional
        Indicators on their own scale (RSI, MACD) in a second axes below.
    panel_levels : tuple of float
        Horizontal reference lines in the lower panel (e.g. ``(30, 70)`` for RSI).
    title : str
        Axes title.

    Returns
    -------
    matplotlib.figure.Figure
        Axes 0: line 0 the closes, then one line per overlay in order; axes 1
        (only with ``panel``): one line per panel series.

    Examples
    --------
    >>> import numpy as np
    >>> p = 100 + np.cumsum(np.random.default_rng(2).normal(0, 1, 200))
    >>> from quantcore import indicators
    >>> fig = price_with_indicators(p, {"SMA 20": indicators.sma(p, 20)})
    >>> [line.get_label() for line in fig.axes[0].lines]
    ['close', 'SMA 20']
    """
    close = _fig.closes(prices)
    fig = _fig.figure(2 if panel is not None else 1, figsize=(10.0, 6.0 if panel is not None else 4.0),
                  sharex=True, **({"height_ratios": [3, 1]} if panel is not None else {}))  # fmt: skip
    ax = fig.axes[0]
    ax.plot(close.index, close.to_numpy(), color="0.15", lw=1.1, label=str(close.name))
    for k, (name, values) in enumerate(_fig.named(overlays, "overlays", len(close))):
        ax.plot(close.index, values, color=_fig.COLORS[k % len(_fig.COLORS)], lw=1.0, label=name)
    ax.set_title(title)
    ax.set_ylabel("price")
    ax.legend(loc="upper left")
    ax.grid(alpha=0.3)
    if panel is not None:
        low = fig.axes[1]
        for k, (name, values) in enumerate(_fig.named(panel, "panel", len(close))):
            low.plot(close.index, values, color=_fig.COLORS[k % len(_fig.COLORS)], lw=1.0, label=name)
        for level in panel_levels:
            low.axhline(level, color="0.5", lw=0.8, ls="--")
        low.legend(loc="upper left")
        low.grid(alpha=0.3)
    return fig


def trades_on_price(
    prices: Any,
    trades: Any,
    *,
    column: int = 0,
    title: str = "Trades",
) -> Figure:
    """Close prices with every trade's entry and exit marked at its fill price.

    Parameters
    ----------
    prices : ndarray, Series or DataFrame
        The closes the backtest ran on (an OHLC frame's ``Close``; for a
        several-asset frame, the column ``column``).
    trades : BacktestResult or ndarray
        A :class:`~quantcore.backtest.BacktestResult`, or its ``trades`` records
        (:data:`quantcore._records.trade_dt`).
    column : int, default 0
        The asset whose trades are drawn.
    title : str
        Axes title.

    Returns
    -------
    matplotlib.figure.Figure
        One axes: line 0 the closes, line 1 the entries (markers at
        ``(entry_idx, entry_price)``: up for longs, down for shorts), line 2 the
        exits of closed trades (open trades have no exit marker); with short
        trades, line 3 circles their entries.

    Examples
    --------
    >>> import numpy as np
    >>> from quantcore.backtest import run_strategy
    >>> p = 100.0 + 10.0 * np.sin(np.arange(300) / 15.0)
    >>> res = run_strategy(p, "moving_average", short_window=5, long_window=20)
    >>> fig = trades_on_price(p, res)
    >>> len(fig.axes[0].lines[1].get_xdata()) == res.total_trades
    True
    """
    records = getattr(trades, "trades", trades)
    if not (isinstance(records, np.ndarray) and records.dtype.names
            and {"entry_idx", "exit_idx", "entry_price", "exit_price"} <= set(records.dtype.names)):  # fmt: skip
        raise ValueError("trades must be a BacktestResult or an array of trade_dt records")
    if isinstance(prices, pd.DataFrame) and "close" not in {str(c).lower() for c in prices.columns}:
        if not 0 <= column < prices.shape[1]:
            raise ValueError(f"column must be in [0, {prices.shape[1]}), got {column}")
        close = _fig.series(prices.iloc[:, column], "prices", "close")
    else:
        close = _fig.closes(prices)
    if "column" in records.dtype.names:
        records = records[records["column"] == column]
    n = len(close)
    if len(records) and (records["entry_idx"].max() >= n or records["exit_idx"].max() >= n):
        raise ValueError(f"trades refer to bars beyond the {n} prices given")
    x = close.index
    entry = records["entry_idx"]
    closed = records[records["exit_idx"] >= 0]
    fig = _fig.figure()
    ax = fig.axes[0]
    ax.plot(x, close.to_numpy(), color="0.25", lw=1.0, label=str(close.name))
    short = records["direction"] == TRADE_SHORT if "direction" in records.dtype.names else None
    ax.plot(x[entry], records["entry_price"], ls="none", marker="^", color=_fig.UP, ms=7, label="entry")
    ax.plot(x[closed["exit_idx"]], closed["exit_price"], ls="none", marker="v", color=_fig.DOWN, ms=7,
            label="exit")  # fmt: skip
    if short is not None and short.any():
        ax.plot(x[entry[short]], records["entry_price"][short], ls="none", marker="o",
                mfc="none", mec=_fig.DOWN, ms=11, label="short entry")  # fmt: skip
    ax.set_title(f"{title} ({len(records)} trades)")
    ax.set_ylabel("price")
    ax.legend(loc="upper left")
    ax.grid(alpha=0.3)
    return fig
