"""Fused parameter-sweep kernels: indicator, signal and simulation in one pass per combination.

Every built-in strategy's signals are produced by :func:`signal_block_nb` from a
few scalars of state (rolling sums, EMA and Wilder recursions) carried from one
block of :data:`BLOCK` bars to the next, so a sweep never materialises an
indicator or a signal series: memory grows with the number of combinations,
never combinations x time. :func:`signals_1d_nb` runs the very same recursion
over a whole series; the public strategies use it, which makes a sweep row
identical to a single run with the same parameters.
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
from quantcore._kernels.sweep_fast import (
    extrema_table_nb,
    ma_cross_row_nb,
    price_tree_nb,
    return_prefix_nb,
)

__all__ = [
    "BLOCK",
    "N_STATE",
    "STRATEGY_BUY_HOLD",
    "STRATEGY_MEAN_REVERSION",
    "STRATEGY_MOMENTUM",
    "STRATEGY_MOVING_AVERAGE",
    "STRATEGY_RSI",
    "constants_nb",
    "fast_path_applies_nb",
    "ma_table_nb",
    "signal_block_nb",
    "signals_1d_nb",
    "sweep_general_nb",
    "sweep_ma_fast_nb",
    "sweep_nb",
]

STRATEGY_BUY_HOLD = 0
STRATEGY_MOVING_AVERAGE = 1  # p0 short window, p1 long window, p2 0 = SMA / 1 = EMA
STRATEGY_MOMENTUM = 2  # p0 lookback, p1 threshold
STRATEGY_MEAN_REVERSION = 3  # p0 window, p1 num_std
STRATEGY_RSI = 4  # p0 window, p1 oversold, p2 overbought

#: Scalars of indicator state per combination.
N_STATE = 6
#: Bars of signals a sweep computes at a time (two bool buffers of this length per task).
BLOCK = 256


@njit(cache=True)
def constants_nb(strategy: int, p0: float, p1: float) -> np.ndarray:
    """Per-combination constants of :func:`signal_block_nb`, computed once, not per bar.

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
def _ma_block(
    x: np.ndarray, first: int, t0: int, t1: int, p0: float, p1: float, p2: float,
    cst: np.ndarray, st: np.ndarray, ent: np.ndarray, ext: np.ndarray,
) -> None:  # fmt: skip
    w_fast = int(p0)
    w_slow = int(p1)
    ema = p2 != 0.0
    a_fast = st[0]
    a_slow = st[1]
    pf = st[2]
    ps = st[3]
    if ema:
        for t in range(t0, t1):
            i = t - first
            a_fast, fast = _ma_update(x, t, i, w_fast, cst[0], cst[2], True, a_fast)
            a_slow, slow = _ma_update(x, t, i, w_slow, cst[1], cst[3], True, a_slow)
            ent[t - t0] = (pf < ps) & (fast > slow)
            ext[t - t0] = (pf > ps) & (fast < slow)
            pf = fast
            ps = slow
    else:  # the SMA branch of _ma_update, written out: the sweeps' hot loop
        inv_fast = cst[0]
        inv_slow = cst[1]
        nan = np.nan
        for t in range(t0, t1):
            i = t - first
            v = x[t]
            a_fast += v
            if i >= w_fast:
                a_fast -= x[t - w_fast]
            a_slow += v
            if i >= w_slow:
                a_slow -= x[t - w_slow]
            fast = a_fast * inv_fast if i >= w_fast - 1 else nan
            slow = a_slow * inv_slow if i >= w_slow - 1 else nan
            ent[t - t0] = (pf < ps) & (fast > slow)
            ext[t - t0] = (pf > ps) & (fast < slow)
            pf = fast
            ps = slow
    st[0] = a_fast
    st[1] = a_slow
    st[2] = pf
    st[3] = ps


@njit(cache=True)
def _momentum_block(
    x: np.ndarray, first: int, t0: int, t1: int, p0: float, p1: float,
    ent: np.ndarray, ext: np.ndarray,
) -> None:  # fmt: skip
    lb = int(p0)
    for t in range(t0, t1):
        if t - first < lb:
            ent[t - t0] = False
            ext[t - t0] = False
        else:
            m = x[t] / x[t - lb] - 1.0
            ent[t - t0] = m > p1
            ext[t - t0] = m < -p1


@njit(cache=True)
def _mean_reversion_block(
    x: np.ndarray, first: int, t0: int, t1: int, p0: float, p1: float,
    cst: np.ndarray, st: np.ndarray, ent: np.ndarray, ext: np.ndarray,
) -> None:  # fmt: skip
    w = int(p0)
    s1 = st[0]
    s2 = st[1]
    for t in range(t0, t1):
        i = t - first
        v = x[t]
        s1 += v
        s2 += v * v
        if i >= w:
            old = x[t - w]
            s1 -= old
            s2 -= old * old
        if i < w - 1:
            ent[t - t0] = False
            ext[t - t0] = False
            continue
        mid = s1 * cst[0]
        var = s2 * cst[0] - mid * mid
        sd = np.sqrt(var) if var > 0.0 else 0.0
        ent[t - t0] = v < mid - p1 * sd
        ext[t - t0] = v >= mid
    st[0] = s1
    st[1] = s2


@njit(cache=True)
def _rsi_block(
    x: np.ndarray, first: int, t0: int, t1: int, p0: float, p1: float, p2: float,
    st: np.ndarray, ent: np.ndarray, ext: np.ndarray,
) -> None:  # fmt: skip
    w = int(p0)
    gain = st[0]
    loss = st[1]
    for t in range(t0, t1):
        i = t - first
        ent[t - t0] = False
        ext[t - t0] = False
        if i == 0:
            continue
        d = x[t] - x[t - 1]
        up = d if d > 0.0 else 0.0
        down = -d if d < 0.0 else 0.0
        if i < w:
            gain += up
            loss += down
            continue
        if i == w:
            gain = (gain + up) / w
            loss = (loss + down) / w
        else:
            gain = (gain * (w - 1) + up) / w
            loss = (loss * (w - 1) + down) / w
        tot = gain + loss
        rsi = 100.0 * (gain / tot) if tot != 0.0 else 0.0
        ent[t - t0] = rsi < p1
        ext[t - t0] = rsi > p2
    st[0] = gain
    st[1] = loss


@njit(cache=True)
def signal_block_nb(
    strategy: int,
    x: np.ndarray,
    first: int,
    t0: int,
    t1: int,
    p0: float,
    p1: float,
    p2: float,
    cst: np.ndarray,
    st: np.ndarray,
    ent: np.ndarray,
    ext: np.ndarray,
) -> None:
    """Entry and exit signals of one strategy on bars ``first <= t0 <= t < t1``.

    Writes bar ``t`` to ``ent[t - t0]`` and ``ext[t - t0]``. ``cst`` comes from
    :func:`constants_nb`; ``st`` carries :data:`N_STATE` scalars of indicator
    state from one block to the next (zeros before the first block), so any
    split of the bars into blocks gives the same signals. Definitions
    (``i = t - first``):

    * buy_hold: entry at ``i == 0``, never an exit.
    * moving_average: fast/slow MA; entry when ``fast[t-1] < slow[t-1]`` and
      ``fast[t] > slow[t]``; exit when ``fast[t-1] > slow[t-1]`` and ``fast[t] < slow[t]``.
    * momentum: ``m = x[t] / x[t - lookback] - 1``; entry ``m > threshold``,
      exit ``m < -threshold``.
    * mean_reversion: ``mid`` = SMA, ``sd`` = population std over ``window``
      (rolling sums of ``x`` and ``x**2``, as TA-Lib); entry
      ``x[t] < mid - num_std * sd``, exit ``x[t] >= mid``.
    * rsi: Wilder RSI (TA-Lib); entry ``rsi < oversold``, exit ``rsi > overbought``.
    """
    if strategy == STRATEGY_MOVING_AVERAGE:
        _ma_block(x, first, t0, t1, p0, p1, p2, cst, st, ent, ext)
    elif strategy == STRATEGY_MOMENTUM:
        _momentum_block(x, first, t0, t1, p0, p1, ent, ext)
    elif strategy == STRATEGY_MEAN_REVERSION:
        _mean_reversion_block(x, first, t0, t1, p0, p1, cst, st, ent, ext)
    elif strategy == STRATEGY_RSI:
        _rsi_block(x, first, t0, t1, p0, p1, p2, st, ent, ext)
    else:
        for t in range(t0, t1):
            ent[t - t0] = t == first
            ext[t - t0] = False


@njit(cache=True)
def signals_1d_nb(
    strategy: int, x: np.ndarray, first: int, p0: float, p1: float, p2: float
) -> tuple[np.ndarray, np.ndarray]:
    """Entries and exits of one strategy over a whole series (bars before ``first`` are False)."""
    n = x.shape[0]
    entries = np.zeros(n, dtype=np.bool_)
    exits = np.zeros(n, dtype=np.bool_)
    if first < n:
        st = np.zeros(N_STATE)
        cst = constants_nb(strategy, p0, p1)
        signal_block_nb(
            strategy, x, first, first, n, p0, p1, p2, cst, st, entries[first:], exits[first:]
        )
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
    :func:`signal_block_nb`); ``first[j]`` is asset ``j``'s first valid bar. Row
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
    defined, computed by :func:`_ma_update`: the very recursion of
    :func:`signal_block_nb`, so the values are bit-identical to the signal kernels'.
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
            acc, row[t] = _ma_update(x, t, t - first, w, inv_w, alpha, ema, acc)
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
    :func:`signal_block_nb`); ``first[j]`` is asset ``j``'s first valid bar. Row
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
