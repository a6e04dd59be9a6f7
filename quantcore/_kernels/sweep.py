"""Fused parameter-sweep kernels: indicator, signal and simulation in one pass per combination.

Every built-in strategy's signal at bar ``t`` is produced by :func:`signal_step_nb`
from a few scalars of state (rolling sums, EMA and Wilder recursions), so a sweep
never materialises an indicator or a signal series: memory grows with the number
of combinations, never combinations x time. :func:`signals_1d_nb` runs the very
same step over a whole series; the public strategies use it, which makes a sweep
row identical to a single run with the same parameters.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from quantcore._kernels.backtest import (
    DIRECTION_BOTH,
    DIRECTION_LONG,
    DIRECTION_SHORT,
    N_STATS,
    close_position_nb,
    finalize_stats_nb,
    mark_value_nb,
    open_position_nb,
    stats_step_nb,
)

__all__ = [
    "N_STATE",
    "STRATEGY_BUY_HOLD",
    "STRATEGY_MEAN_REVERSION",
    "STRATEGY_MOMENTUM",
    "STRATEGY_MOVING_AVERAGE",
    "STRATEGY_RSI",
    "constants_nb",
    "signal_step_nb",
    "signals_1d_nb",
    "sweep_nb",
]

STRATEGY_BUY_HOLD = 0
STRATEGY_MOVING_AVERAGE = 1  # p0 short window, p1 long window, p2 0 = SMA / 1 = EMA
STRATEGY_MOMENTUM = 2  # p0 lookback, p1 threshold
STRATEGY_MEAN_REVERSION = 3  # p0 window, p1 num_std
STRATEGY_RSI = 4  # p0 window, p1 oversold, p2 overbought

#: Scalars of indicator state per combination.
N_STATE = 6


@njit(cache=True)
def constants_nb(strategy: int, p0: float, p1: float) -> np.ndarray:
    """Per-combination constants of :func:`signal_step_nb`, computed once, not per bar.

    moving_average: ``1 / short, 1 / long, 2 / (short + 1), 2 / (long + 1)``;
    mean_reversion: ``1 / window``.
    """
    cst = np.zeros(4)
    if strategy == STRATEGY_MOVING_AVERAGE:
        cst[0] = 1.0 / p0
        cst[1] = 1.0 / p1
        cst[2] = 2.0 / (p0 + 1.0)
        cst[3] = 2.0 / (p1 + 1.0)
    elif strategy == STRATEGY_MEAN_REVERSION:
        cst[0] = 1.0 / p0
    return cst


@njit(cache=True)
def _ma_update(
    x: np.ndarray, t: int, i: int, w: int, inv_w: float, alpha: float, ema: bool, acc: float
) -> tuple[float, float]:
    """Advance a moving average of window ``w`` by bar ``t`` (``i`` bars since the first).

    SMA: rolling sum ``acc += x[t] - x[t - w]``, value ``acc * (1 / w)``. EMA
    (TA-Lib convention): seeded with the SMA of the first ``w`` values, then
    ``acc = (x[t] - acc) * alpha + acc`` with ``alpha = 2 / (w + 1)``. Returns
    ``(acc, value)``, value NaN until ``i >= w - 1``.
    """
    if ema and i >= w:
        acc = (x[t] - acc) * alpha + acc
        return acc, acc
    acc += x[t]
    if i >= w:
        acc -= x[t - w]
    if i < w - 1:
        return acc, np.nan
    if ema:  # i == w - 1: the seed
        acc = acc * inv_w
        return acc, acc
    return acc, acc * inv_w


@njit(cache=True)
def signal_step_nb(
    strategy: int,
    x: np.ndarray,
    t: int,
    first: int,
    p0: float,
    p1: float,
    p2: float,
    cst: np.ndarray,
    st: np.ndarray,
) -> tuple[bool, bool]:
    """Entry and exit signal of one strategy at bar ``t >= first``.

    ``first`` is the first valid bar of ``x``; ``cst`` comes from
    :func:`constants_nb`; ``st`` holds :data:`N_STATE` scalars of state, zero
    before the first call. Definitions (``i = t - first``):

    * buy_hold: entry at ``i == 0``, never an exit.
    * moving_average: fast/slow MA; entry when ``fast[t-1] < slow[t-1]`` and
      ``fast[t] > slow[t]``; exit when ``fast[t-1] > slow[t-1]`` and ``fast[t] < slow[t]``.
    * momentum: ``m = x[t] / x[t - lookback] - 1``; entry ``m > threshold``,
      exit ``m < -threshold``.
    * mean_reversion: ``mid`` = SMA, ``sd`` = population std over ``window``;
      entry ``x[t] < mid - num_std * sd``, exit ``x[t] >= mid``.
    * rsi: Wilder RSI (TA-Lib); entry ``rsi < oversold``, exit ``rsi > overbought``.
    """
    i = t - first
    if strategy == STRATEGY_MOVING_AVERAGE:
        ema = p2 != 0.0
        st[0], fast = _ma_update(x, t, i, int(p0), cst[0], cst[2], ema, st[0])
        st[1], slow = _ma_update(x, t, i, int(p1), cst[1], cst[3], ema, st[1])
        pf = st[2]
        ps = st[3]
        st[2] = fast
        st[3] = slow
        if i == 0:
            return False, False
        return (pf < ps and fast > slow), (pf > ps and fast < slow)
    if strategy == STRATEGY_MOMENTUM:
        lb = int(p0)
        if i < lb:
            return False, False
        m = x[t] / x[t - lb] - 1.0
        return m > p1, m < -p1
    if strategy == STRATEGY_MEAN_REVERSION:
        w = int(p0)
        v = x[t]
        st[0] += v
        st[1] += v * v
        if i >= w:
            old = x[t - w]
            st[0] -= old
            st[1] -= old * old
        if i < w - 1:
            return False, False
        mid = st[0] * cst[0]
        var = st[1] * cst[0] - mid * mid
        sd = np.sqrt(var) if var > 0.0 else 0.0
        return v < mid - p1 * sd, v >= mid
    if strategy == STRATEGY_RSI:
        w = int(p0)
        if i == 0:
            return False, False
        d = x[t] - x[t - 1]
        up = d if d > 0.0 else 0.0
        down = -d if d < 0.0 else 0.0
        if i < w:
            st[0] += up
            st[1] += down
            return False, False
        if i == w:
            st[0] = (st[0] + up) / w
            st[1] = (st[1] + down) / w
        else:
            st[0] = (st[0] * (w - 1) + up) / w
            st[1] = (st[1] * (w - 1) + down) / w
        tot = st[0] + st[1]
        rsi = 100.0 * (st[0] / tot) if tot != 0.0 else 0.0
        return rsi < p1, rsi > p2
    # buy and hold
    return i == 0, False


@njit(cache=True)
def signals_1d_nb(
    strategy: int, x: np.ndarray, first: int, p0: float, p1: float, p2: float
) -> tuple[np.ndarray, np.ndarray]:
    """Entries and exits of one strategy over a whole series (bars before ``first`` are False)."""
    n = x.shape[0]
    entries = np.zeros(n, dtype=np.bool_)
    exits = np.zeros(n, dtype=np.bool_)
    st = np.zeros(N_STATE)
    cst = constants_nb(strategy, p0, p1)
    for t in range(first, n):
        entries[t], exits[t] = signal_step_nb(strategy, x, t, first, p0, p1, p2, cst, st)
    return entries, exits


@njit(cache=True)
def _run_one(
    strategy: int,
    x: np.ndarray,
    o: np.ndarray,
    use_open: bool,
    first: int,
    p0: float,
    p1: float,
    p2: float,
    init_cash: float,
    fees: float,
    slippage: float,
    max_size: float,
    direction: int,
    integer_shares: bool,
    periods_per_year: float,
    out: np.ndarray,
) -> None:
    n = x.shape[0]
    st = np.zeros(N_STATE)
    cst = constants_nb(strategy, p0, p1)
    cash = init_cash
    size = 0.0
    side = 0
    entry_fill = 0.0
    entry_fee = 0.0
    mark = np.nan
    pend_e = False
    pend_x = False
    peak = init_cash
    trough = init_cash
    max_dd = 0.0
    sum_r = 0.0
    sum_r2 = 0.0
    sum_down2 = 0.0
    prev = init_cash
    n_closed = 0
    n_wins = 0
    gross_profit = 0.0
    gross_loss = 0.0
    exposed = 0
    for t in range(n):
        se = False
        sx = False
        if t >= first:
            se, sx = signal_step_nb(strategy, x, t, first, p0, p1, p2, cst, st)
        if use_open:
            e = pend_e
            xs = pend_x
            p = o[t]
            pend_e = se
            pend_x = sx
        else:
            e = se
            xs = sx
            p = x[t]
        if e != xs and np.isfinite(p) and p > 0.0:
            if size != 0.0:
                if direction == DIRECTION_BOTH:
                    do_close = (xs and side > 0) or (e and side < 0)
                else:
                    do_close = xs
                if do_close:
                    cash, pnl, _, _ = close_position_nb(
                        cash, size, side, entry_fill, entry_fee, p, fees, slippage
                    )
                    n_closed += 1
                    if pnl > 0.0:
                        n_wins += 1
                        gross_profit += pnl
                    elif pnl < 0.0:
                        gross_loss -= pnl
                    size = 0.0
                    side = 0
            if size == 0.0:
                new_side = 0
                if direction == DIRECTION_LONG:
                    new_side = 1 if e else 0
                elif direction == DIRECTION_SHORT:
                    new_side = -1 if e else 0
                else:
                    new_side = 1 if e else -1
                if new_side != 0:
                    eq = cash
                    budget = min(max_size * eq, cash)
                    cash, q, f, fee = open_position_nb(
                        cash, budget, p, new_side, fees, slippage, integer_shares
                    )
                    if q > 0.0:
                        size = q
                        side = new_side
                        entry_fill = f
                        entry_fee = fee
        c = x[t]
        if np.isfinite(c):
            mark = c
        eq = cash
        if size != 0.0:
            eq += mark_value_nb(size, side, entry_fill, mark)
            exposed += 1
        peak, trough, max_dd, sum_r, sum_r2, sum_down2 = stats_step_nb(
            eq, prev, peak, trough, max_dd, sum_r, sum_r2, sum_down2
        )
        prev = eq
    n_trades = n_closed + (1 if size != 0.0 else 0)
    finalize_stats_nb(
        out, init_cash, prev, n, sum_r, sum_r2, sum_down2, peak, trough, max_dd, n_trades,
        n_closed, n_wins, gross_profit, gross_loss, exposed, periods_per_year,
    )  # fmt: skip


@njit(cache=True, parallel=True)
def sweep_nb(
    strategy: int,
    close: np.ndarray,
    open_: np.ndarray,
    use_open: bool,
    first: np.ndarray,
    params: np.ndarray,
    init_cash: float,
    fees: float,
    slippage: float,
    max_size: float,
    direction: int,
    integer_shares: bool,
    periods_per_year: float,
) -> np.ndarray:
    """Metrics of every (combination, asset) pair, fused and parallel over pairs.

    ``close`` and ``open_`` are (n, k); ``params`` is (m, 3) (``p0, p1, p2`` of
    :func:`signal_step_nb`); ``first[j]`` is asset ``j``'s first valid bar. Row
    ``c * k + j`` of the (m * k, N_STATS) result is combination ``c`` on asset
    ``j``, computed with the fills and online metrics of ``simulate_nb`` and
    ``equity_stats_nb``. ``DIRECTION_SHORT`` is accepted like the engine.
    """
    m = params.shape[0]
    k = close.shape[1]
    out = np.empty((m * k, N_STATS))
    for task in prange(m * k):
        c = task // k
        j = task % k
        _run_one(
            strategy, close[:, j], open_[:, j], use_open, first[j],
            params[c, 0], params[c, 1], params[c, 2], init_cash, fees, slippage,
            max_size, direction, integer_shares, periods_per_year, out[task],
        )  # fmt: skip
    return out
