"""Target-weight portfolios: rebalance several assets to weights on a schedule."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from quantcore._kernels.backtest import equity_stats_nb
from quantcore._kernels.backtest_rebalance import rebalance_nb
from quantcore._records import trade_dt
from quantcore._validation import as_float64_2d, check_int, check_positive
from quantcore.backtest.engine import benchmark_metrics
from quantcore.backtest.result import BacktestResult

__all__ = ["rebalance"]

# pandas offset aliases that name a period end/start; periods use the bare letter
_PERIOD_ALIASES = {"ME": "M", "MS": "M", "BME": "M", "BMS": "M", "QE": "Q", "QS": "Q",
                   "BQE": "Q", "BQS": "Q", "YE": "Y", "YS": "Y", "BYE": "Y", "BYS": "Y"}  # fmt: skip
_SUM_TOLERANCE = 1e-9


def rebalance(
    prices: Any,
    weights: Any,
    *,
    every: str | int | None = None,
    threshold: float | None = None,
    fees: float = 0.0,
    slippage: float = 0.0,
    initial_capital: float = 100_000.0,
    integer_shares: bool = False,
    benchmark: Any = None,
    periods_per_year: float = 252,
) -> BacktestResult:
    """Backtest a long-only portfolio rebalanced to target weights at the close.

    Parameters
    ----------
    prices : DataFrame or 2-D array, shape (n, k)
        Closes, one column per asset (a Series or 1-D array is one asset). NaN
        means no price: the asset is not traded on that bar and keeps its last
        price for valuation.
    weights : mapping, 1-D array or DataFrame
        Target weights, each >= 0, summing to at most 1 (the rest stays in cash).
        A mapping (column label to weight; absent columns weigh 0) or a length-k
        array is a fixed target. A DataFrame gives new targets on the dates of
        its rows (index labels of ``prices``, or later bars: a row applies from
        the first bar at or after its label; columns are a subset of the
        asset labels, NaN and absent columns weigh 0).
    every : str or int, optional
        A rebalance schedule besides the first bar: a pandas period alias
        (``"M"``/``"ME"`` monthly, ``"Q"``, ``"W-FRI"``, ``"Y"``...), meaning the
        first bar of each new period (``prices`` needs a DatetimeIndex), or a bar
        count ``m`` (bars 0, m, 2m, ...).
    threshold : float, optional
        Rebalance only when some asset's weight has drifted further than this
        from its target (absolute, e.g. 0.05). Checked on the scheduled bars,
        or on every bar when there is no schedule.
    fees : float, default 0.0
        Fee as a fraction of traded value.
    slippage : float, default 0.0
        Fraction by which a fill moves against the trader (buys at ``p (1 + s)``,
        sells at ``p (1 - s)``).
    initial_capital : float, default 100_000.0
    integer_shares : bool, default False
        Buy whole units (rounded down) and sell whole units (rounded up, at most
        the units held).
    benchmark : Series or ndarray, optional
        Benchmark prices on the same bars, for ``benchmark_return``, ``alpha``
        and ``beta`` (as in :func:`quantcore.backtest.run`).
    periods_per_year : float, default 252
        Bars per year, for the annualized metrics.

    Returns
    -------
    BacktestResult
        Metrics of the equity curve; ``positions`` (units per bar and asset),
        ``turnover`` (value traded / equity before trading, per bar: the sum of
        ``|weight change|``) and ``costs`` (fees plus slippage paid, per bar).
        ``trades`` is empty and ``total_trades`` counts the orders filled;
        ``win_rate`` and ``profit_factor`` are NaN (no round trips).

    Raises
    ------
    ValueError
        For prices that are not positive, weights that are negative, not
        finite, sum above 1 or name unknown assets, an unknown ``every`` alias,
        a negative ``threshold``, or costs outside [0, 1).

    Notes
    -----
    Rebalance bars are: the first bar, then the bars ``every`` schedules and the
    bars a weights row applies on; with neither and a ``threshold``, every bar;
    with neither and no threshold, the first bar only (buy and hold). At a
    rebalance, with ``V`` the equity and ``v_j`` asset ``j``'s value at the
    close, each asset trades ``a_j = w_j V - v_j`` of cash, fees and slippage
    included: sells first, each raising ``-a_j`` net (``-a_j / (p (1 - s)(1 - f))``
    units; the whole position when ``w_j = 0``), then buys, each spending ``a_j``
    (``a_j / (p (1 + s)(1 + f))`` units). Costs therefore come out of the asset
    traded and cash ends at ``(1 - sum w) V``. This is ``bt``'s ``Rebalance``
    algo with ``commissions=lambda q, p: abs(q) * p * fees`` (the parity test
    holds it to 1e-9), whose ``RunMonthly`` is ``every="M"``.

    Examples
    --------
    >>> idx = pd.bdate_range("2024-01-01", periods=60)
    >>> prices = pd.DataFrame({"A": np.linspace(100, 130, 60), "B": np.linspace(50, 45, 60)}, idx)
    >>> res = rebalance(prices, {"A": 0.6, "B": 0.4}, every="M", fees=0.001)
    >>> res.total_trades, round(res.total_return, 6)
    (6, 0.127202)
    >>> res.turnover[res.turnover > 0].round(4).tolist()  # January, February, March
    [0.999, 0.071, 0.0611]
    """
    close, wrapper = as_float64_2d(prices, "prices")
    n, k = close.shape
    if n == 0:
        raise ValueError("prices must have at least one bar")
    if np.isinf(close).any() or (close[~np.isnan(close)] <= 0).any():
        raise ValueError("prices must be finite and > 0 where given (NaN: no price)")
    fees = _cost(fees, "fees")
    slippage = _cost(slippage, "slippage")
    init = check_positive(initial_capital, "initial_capital")
    ppy = check_positive(periods_per_year, "periods_per_year")
    if not isinstance(integer_shares, (bool, np.bool_)):
        raise ValueError(f"integer_shares must be True or False, got {integer_shares!r}")
    if wrapper.columns is not None:
        labels = list(wrapper.columns)
    elif wrapper.kind == "series" and wrapper.name is not None:
        labels = [wrapper.name]
    else:
        labels = list(range(k))
    index = wrapper.index
    targets, row_bars = _targets(weights, labels, index, n)
    candidate = np.zeros(n, dtype=np.bool_)
    candidate[0] = True
    if row_bars is not None:
        candidate[row_bars] = True
    if every is not None:
        candidate |= _schedule(every, index, n)
    if threshold is not None:
        threshold = check_positive(threshold, "threshold", allow_zero=True)
        if every is None and row_bars is None:
            candidate[:] = True
    equity, _cash, positions, traded, costs, n_orders = rebalance_nb(
        np.ascontiguousarray(close), targets, candidate,
        -1.0 if threshold is None else float(threshold),
        init, fees, slippage, bool(integer_shares),
    )  # fmt: skip
    # fills are at the close: the equity before trading is the equity after it plus costs
    turnover = np.where(traded > 0.0, traded / (equity + costs), 0.0)
    exposed = (positions != 0.0).any(axis=1)
    stats = equity_stats_nb(equity, exposed, np.empty(0), np.empty(0, dtype=np.bool_), init, ppy)
    nan = float("nan")
    bench_ret, alpha, beta = nan, nan, nan
    if benchmark is not None:
        bench_ret, alpha, beta = benchmark_metrics(equity, benchmark, n, init, ppy)

    def series(values: np.ndarray, name: str) -> Any:
        return pd.Series(values, index=index, name=name) if index is not None else values

    return BacktestResult(
        total_return=float(stats[0]),
        annualized_return=float(stats[1]),
        sharpe_ratio=float(stats[2]),
        sortino_ratio=float(stats[3]),
        max_drawdown=float(stats[4]),
        win_rate=nan,
        total_trades=int(n_orders),
        profit_factor=nan,
        exposure=float(stats[8]),
        benchmark_return=bench_ret,
        alpha=alpha,
        beta=beta,
        equity=series(equity, "equity"),
        trades=np.empty(0, dtype=trade_dt),
        positions=wrapper.wrap(positions),
        turnover=series(turnover, "turnover"),
        costs=series(costs, "costs"),
    )


def _cost(value: Any, name: str) -> float:
    v = check_positive(value, name, allow_zero=True)
    if v >= 1.0:
        raise ValueError(f"{name} is a fraction of traded value and must be < 1, got {value!r}")
    return v


def _check_weights(w: np.ndarray, what: str) -> None:
    if not np.isfinite(w).all():
        raise ValueError(f"{what} must be finite")
    if (w < 0).any():
        raise ValueError(f"{what} must be >= 0 (long-only), got a negative weight")
    sums = w.sum(axis=-1)
    if (sums > 1.0 + _SUM_TOLERANCE).any():
        raise ValueError(f"{what} must sum to at most 1, got {float(np.max(sums))!r}")


def _column_positions(columns: Any, labels: list[Any]) -> list[int]:
    where = {label: j for j, label in enumerate(labels)}
    unknown = [c for c in columns if c not in where]
    if unknown:
        raise ValueError(f"weights name assets not in prices: {unknown[:5]!r}")
    return [where[c] for c in columns]


def _targets(
    weights: Any, labels: list[Any], index: pd.Index | None, n: int
) -> tuple[np.ndarray, np.ndarray | None]:
    """Target weights per bar (n, k) and the bars weights rows apply on (None: fixed)."""
    k = len(labels)
    if isinstance(weights, pd.DataFrame):
        if index is None:
            raise ValueError("weights given as a DataFrame need prices with an index")
        if not index.is_monotonic_increasing:
            raise ValueError("prices must be sorted by their index for dated weights")
        cols = _column_positions(weights.columns, labels)
        rows = np.zeros((len(weights), k))
        rows[:, cols] = np.nan_to_num(weights.to_numpy(dtype=np.float64), nan=0.0)
        _check_weights(rows, "weights")
        try:
            bars = index.searchsorted(weights.index, side="left")
        except TypeError:
            raise ValueError(
                "weights' index must hold labels comparable to prices' index"
            ) from None
        order = np.argsort(bars, kind="stable")
        rows, bars = rows[order], bars[order]
        keep = bars < n
        rows, bars = rows[keep], bars[keep]
        if bars.size == 0:
            raise ValueError("weights have no row on or before the last bar of prices")
        targets = np.zeros((n, k))
        # the last row on a bar wins; a row holds until the next one
        which = np.searchsorted(bars, np.arange(n), side="right") - 1
        valid = which >= 0
        targets[valid] = rows[which[valid]]
        return targets, np.unique(bars)
    if isinstance(weights, Mapping):
        cols = _column_positions(list(weights), labels)
        w = np.zeros(k)
        try:
            w[cols] = np.array([float(v) for v in weights.values()], dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError("weights must be numbers") from None
    else:
        try:
            w = np.asarray(weights, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError("weights must be a mapping, a 1-D array or a DataFrame") from None
        if w.ndim == 0:
            w = w.reshape(1)
        if w.shape != (k,):
            raise ValueError(f"weights must have one entry per asset ({k}), got shape {w.shape}")
    _check_weights(w, "weights")
    return np.ascontiguousarray(np.broadcast_to(w, (n, k))), None


def _schedule(every: Any, index: pd.Index | None, n: int) -> np.ndarray:
    """Bars that start a new period of ``every`` (a period alias) or every ``every`` bars."""
    if isinstance(every, (int, np.integer)) and not isinstance(every, bool):
        m = check_int(every, "every")
        out = np.zeros(n, dtype=np.bool_)
        out[::m] = True
        return out
    if not isinstance(every, str):
        raise ValueError(f"every must be a period alias such as 'M' or a bar count, got {every!r}")
    if not isinstance(index, pd.DatetimeIndex):
        raise ValueError(f"every={every!r} needs prices with a DatetimeIndex")
    alias = _PERIOD_ALIASES.get(every, every)
    try:
        periods = index.to_period(alias)
    except (ValueError, TypeError):
        raise ValueError(
            f"every={every!r} is not a pandas period alias ('M', 'Q', 'W-FRI', ...)"
        ) from None
    codes = periods.asi8
    out = np.ones(n, dtype=np.bool_)
    out[1:] = codes[1:] != codes[:-1]
    return out
