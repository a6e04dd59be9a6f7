"""Fused parameter-sweep kernels: indicator, signal and simulation in one pass per combination.

Signals come block by block from :mod:`quantcore._kernels.signals`, so a sweep never
materialises an indicator or a signal series: memory grows with the number of
combinations, never combinations x time.
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
from quantcore._kernels.signals import (
    BLOCK,
    N_STATE,
    STRATEGY_MOVING_AVERAGE,
    constants_nb,
    ma_update_nb,
    signal_block_nb,
)
from quantcore._kernels.sweep_fast import (
    extrema_table_nb,
    ma_cross_row_nb,
    price_tree_nb,
    return_prefix_nb,
)

__all__ = [
    "fast_path_applies_nb",
    "ma_table_nb",
    "sweep_general_nb",
    "sweep_ma_fast_nb",
    "sweep_nb",
]


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
    ent = np.zeros(BLOCK, dtype=np.bool_)
    ext = np.zeros(BLOCK, dtype=np.bool_)
    b = BLOCK - 1  # position in the signal buffers: refilled at the first valid bar
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
            b += 1
            if b == BLOCK:
                signal_block_nb(
                    strategy, x, first, t, min(t + BLOCK, n), p0, p1, p2, cst, st, ent, ext
                )
                b = 0
            se = ent[b]
            sx = ext[b]
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
def sweep_general_nb(
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
    """Metrics of every (combination, asset) pair, simulated bar by bar, parallel over pairs.

    ``close`` and ``open_`` are (n, k); ``params`` is (m, 3) (``p0, p1, p2`` of
    :func:`~quantcore._kernels.signals.signal_block_nb`); ``first[j]`` is asset ``j``'s first valid bar. Row
    ``c * k + j`` of the (m * k, N_STATS) result is combination ``c`` on asset
    ``j``, computed with the fills and online metrics of ``simulate_nb`` and
    ``equity_stats_nb``. ``DIRECTION_SHORT`` is accepted like the engine.
    Any strategy and option; :func:`sweep_nb` uses it where the fast path does not apply.
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


@njit(cache=True, parallel=True)
def ma_table_nb(x: np.ndarray, first: int, keys: np.ndarray) -> np.ndarray:
    """Moving averages of one series for every distinct (window, type) of a sweep.

    ``keys[i] = 2 * window + ema`` (``ema`` 1 for an EMA, 0 for an SMA). Row ``i``
    of the (len(keys), n) result is that average at every bar, NaN before it is
    defined, computed by :func:`ma_update_nb`: the very recursion of
    :func:`~quantcore._kernels.signals.signal_block_nb`, so the values are bit-identical to the signal kernels'.
    Rows are computed in parallel.
    """
    n = x.shape[0]
    table = np.full((keys.shape[0], n), np.nan)
    for i in prange(keys.shape[0]):
        w = keys[i] // 2
        ema = keys[i] % 2 == 1
        p = float(w)
        inv_w = 1.0 / p
        alpha = 2.0 / (p + 1.0)
        acc = 0.0
        row = table[i]
        for t in range(first, n):
            acc, row[t] = ma_update_nb(x, t, t - first, w, inv_w, alpha, ema, acc)
    return table


@njit(cache=True)
def fast_path_applies_nb(
    strategy: int, use_open: bool, max_size: float, direction: int, integer_shares: bool
) -> bool:
    """Whether :func:`sweep_ma_fast_nb` computes the sweep (else :func:`sweep_general_nb`).

    moving_average, fills at the close, long only, ``max_size >= 1`` (an entry
    spends all the cash), fractional shares.
    """
    return (
        strategy == STRATEGY_MOVING_AVERAGE
        and not use_open
        and direction == DIRECTION_LONG
        and max_size >= 1.0
        and not integer_shares
    )


@njit(cache=True, parallel=True)
def _ma_fast_asset(
    x: np.ndarray, first: int, keys: np.ndarray, fi: np.ndarray, si: np.ndarray,
    init_cash: float, fees: float, slippage: float, max_size: float, periods_per_year: float,
    out: np.ndarray, j: int, k: int,
) -> None:  # fmt: skip
    """Rows ``c * k + j`` of :func:`sweep_ma_fast_nb` for one clean asset ``x``."""
    table = ma_table_nb(x, first, keys)
    pre = return_prefix_nb(x, first)
    ext = extrema_table_nb(x)
    idx, mr = price_tree_nb(x, first)
    # lanes take every 64th block of 16 consecutive combinations: balanced (short
    # windows trade more) and cache-friendly (neighbours share their fast average)
    m = fi.shape[0]
    blocks = -(-m // 16)
    lanes = min(blocks, 64)
    width = 8 * (-(-x.shape[0] // 8))
    for lane in prange(lanes):
        flags = np.empty(width, dtype=np.uint8)  # scratch, once per lane
        acc = np.empty(8)
        for b in range(lane, blocks, lanes):
            for c in range(16 * b, min(16 * b + 16, m)):
                ma_cross_row_nb(
                    x, first, table, fi[c], si[c], pre, ext, idx, mr, init_cash, fees,
                    slippage, max_size, periods_per_year, out, c * k + j, flags, acc,
                )  # fmt: skip


@njit(cache=True, parallel=True)
def sweep_ma_fast_nb(
    close: np.ndarray,
    first: np.ndarray,
    params: np.ndarray,
    init_cash: float,
    fees: float,
    slippage: float,
    max_size: float,
    periods_per_year: float,
) -> np.ndarray:
    """The moving-average sweep on the fast path (see :mod:`quantcore._kernels.sweep_fast`).

    Same arguments and (m * k, N_STATS) result as :func:`sweep_general_nb` under
    :func:`fast_path_applies_nb`. Per asset, the moving average of each distinct
    (window, type) of the grid (:func:`ma_table_nb`), the return prefix sums and
    the price segment tree are computed once; then, parallel over combinations,
    one crossing scan per combination and O(log n) work per trade. An asset with
    a non-finite price after its first valid bar goes through the general kernel.
    Memory: O(distinct windows x n + m), never m x n.
    """
    m = params.shape[0]
    n, k = close.shape
    out = np.empty((m * k, N_STATS))
    fk = (params[:, 0].astype(np.int64) * 2 + (params[:, 2] != 0.0)).astype(np.int64)
    sk = (params[:, 1].astype(np.int64) * 2 + (params[:, 2] != 0.0)).astype(np.int64)
    keys = np.unique(np.concatenate((fk, sk)))
    fi = np.searchsorted(keys, fk)
    si = np.searchsorted(keys, sk)
    for j in range(k):
        x = np.ascontiguousarray(close[:, j])
        f0 = first[j]
        clean = True
        for t in range(f0, n):
            if not (np.isfinite(x[t]) and x[t] > 0.0):
                clean = False
                break
        if not clean:
            for c in prange(m):
                _run_one(
                    STRATEGY_MOVING_AVERAGE, x, x, False, f0, params[c, 0], params[c, 1],
                    params[c, 2], init_cash, fees, slippage, max_size, DIRECTION_LONG, False,
                    periods_per_year, out[c * k + j],
                )  # fmt: skip
            continue
        _ma_fast_asset(
            x, f0, keys, fi, si, init_cash, fees, slippage, max_size, periods_per_year, out, j, k
        )
    return out


@njit(cache=True)
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
    """Metrics of every (combination, asset) pair: the fast path where it applies.

    ``close`` and ``open_`` are (n, k); ``params`` is (m, 3) (``p0, p1, p2`` of
    :func:`~quantcore._kernels.signals.signal_block_nb`); ``first[j]`` is asset ``j``'s first valid bar. Row
    ``c * k + j`` of the (m * k, N_STATS) result is combination ``c`` on asset
    ``j``. Under :func:`fast_path_applies_nb` the work goes to
    :func:`sweep_ma_fast_nb`, otherwise to :func:`sweep_general_nb`; both equal
    a single run with the same parameters.
    """
    if fast_path_applies_nb(strategy, use_open, max_size, direction, integer_shares):
        return sweep_ma_fast_nb(
            close, first, params, init_cash, fees, slippage, max_size, periods_per_year
        )
    return sweep_general_nb(
        strategy, close, open_, use_open, first, params, init_cash, fees, slippage, max_size,
        direction, integer_shares, periods_per_year,
    )  # fmt: skip
