"""Fused parameter-sweep kernels: indicator, signal and simulation in one pass per combination.

Signals come block by block from :mod:`quantcore._kernels.backtest_signals`, so a sweep never
materialises an indicator or a signal series: memory grows with the number of
combinations, never combinations x time. :func:`run_sweep` and :func:`sweep_ma_fast`
are plain Python: they pick the kernel that runs, so that a first sweep compiles
only the path it takes (a moving-average sweep on clean prices never compiles
the bar-by-bar kernel, the other strategies' signals or the stops).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from quantcore._kernels.backtest import N_STATS, asset_bar_nb, finish_run_nb, new_run_nb
from quantcore._kernels.backtest_orders import DIRECTION_BOTH, DIRECTION_LONG, SIZE_PERCENT
from quantcore._kernels.backtest_signals import (
    BLOCK,
    N_STATE,
    STRATEGY_MOVING_AVERAGE,
    constants_nb,
    ma_update_nb,
    signal_block_nb,
)
from quantcore._kernels.backtest_sweep_fast import (
    extrema_table_nb,
    ma_cross_row_nb,
    price_tree_nb,
    return_prefix_nb,
)

__all__ = [
    "N_OPT",
    "OPT_FEES",
    "OPT_SIZE",
    "OPT_SL",
    "OPT_TIME",
    "OPT_TP",
    "OPT_TRAIL",
    "fast_path_applies",
    "flat_next_nb",
    "ma_cross_rows_nb",
    "ma_fast_clean",
    "ma_table_nb",
    "run_sweep",
    "signal_row_nb",
    "sweep_general_nb",
    "sweep_ma_fast",
    "sweep_signals_nb",
]

# columns of a sweep's per-combination engine options (NaN: stop off)
OPT_SL = 0
OPT_TP = 1
OPT_TRAIL = 2
OPT_TIME = 3
OPT_FEES = 4
OPT_SIZE = 5
N_OPT = 6


@njit(cache=True)
def _run_one(
    strategy: int, o: np.ndarray, h: np.ndarray, lo: np.ndarray, x: np.ndarray, fill: np.ndarray,
    use_open: bool, first: int, p0: float, p1: float, p2: float, opt: np.ndarray,
    init_cash: float, slippage: float, size_type: int, leverage: float, borrow_bar: float,
    direction: int, integer_shares: bool, periods_per_year: float, out: np.ndarray,
) -> None:  # fmt: skip
    """One combination on one asset: signals block by block, then :func:`asset_bar_nb` per bar."""
    n = x.shape[0]
    st = np.zeros(N_STATE)
    cst = constants_nb(strategy, p0, p1)
    ent = np.zeros(BLOCK, dtype=np.bool_)
    ext = np.zeros(BLOCK, dtype=np.bool_)
    b = BLOCK - 1  # position in the signal buffers: refilled at the first valid bar
    pos, run = new_run_nb(init_cash)
    pend_e = False
    pend_x = False
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
            pend_e = se
            pend_x = sx
        else:
            e = se
            xs = sx
        asset_bar_nb(
            pos, run, t, o[t], h[t], lo[t], x[t], fill[t], e, xs, use_open, direction,
            opt[OPT_SL], opt[OPT_TP], opt[OPT_TRAIL], opt[OPT_TIME], opt[OPT_FEES], slippage,
            size_type, opt[OPT_SIZE], leverage, borrow_bar, integer_shares,
        )  # fmt: skip
    finish_run_nb(pos, run, init_cash, n, periods_per_year, out)


@njit(cache=True, parallel=True)
def sweep_general_nb(
    strategy: int,
    open_: np.ndarray,
    high: np.ndarray,
    low: np.ndarray,
    close: np.ndarray,
    use_open: bool,
    first: np.ndarray,
    params: np.ndarray,
    opts: np.ndarray,
    init_cash: float,
    slippage: float,
    size_type: int,
    leverage: float,
    borrow_bar: float,
    direction: int,
    integer_shares: bool,
    periods_per_year: float,
) -> np.ndarray:
    """Metrics of every (combination, asset) pair, simulated bar by bar, parallel over pairs.

    Price arrays are (n, k) (``open_``, ``high``, ``low`` are the closes for
    close-only data); ``params`` is (m, 3) (``p0, p1, p2`` of
    :func:`~quantcore._kernels.backtest_signals.signal_block_nb`) and ``opts`` the (m, N_OPT)
    engine options of each combination; ``first[j]`` is asset ``j``'s first valid
    bar. Row ``c * k + j`` of the (m * k, N_STATS) result is combination ``c`` on
    asset ``j``: the bars of :func:`~quantcore._kernels.backtest.asset_bar_nb` and
    the metrics of ``equity_stats_nb``. Any strategy and option.
    """
    m = params.shape[0]
    k = close.shape[1]
    out = np.empty((m * k, N_STATS))
    fill = open_ if use_open else close
    for task in prange(m * k):
        c = task // k
        j = task % k
        _run_one(
            strategy, open_[:, j], high[:, j], low[:, j], close[:, j], fill[:, j], use_open,
            first[j], params[c, 0], params[c, 1], params[c, 2], opts[c], init_cash, slippage,
            size_type, leverage, borrow_bar, direction, integer_shares, periods_per_year,
            out[task],
        )  # fmt: skip
    return out


@njit(cache=True)
def flat_next_nb(entries: np.ndarray, exits: np.ndarray, both: bool) -> np.ndarray:
    """``out[t]``: the next bar ``>= t`` whose signals a flat book acts on (``n`` if none).

    An entry alone; with ``both`` (reversing), either signal alone. Length n + 1.
    """
    n = entries.shape[0]
    nxt = np.empty(n + 1, dtype=np.int64)
    nxt[n] = n
    for t in range(n - 1, -1, -1):
        acts = entries[t] != exits[t] if both else entries[t] and not exits[t]
        nxt[t] = t if acts else nxt[t + 1]
    return nxt


@njit(cache=True)
def signal_row_nb(
    o: np.ndarray, h: np.ndarray, lo: np.ndarray, x: np.ndarray, fill: np.ndarray,
    use_open: bool, entries: np.ndarray, exits: np.ndarray, nxt: np.ndarray, opt: np.ndarray,
    init_cash: float, slippage: float, size_type: int, leverage: float, borrow_bar: float,
    direction: int, integer_shares: bool, periods_per_year: float, out: np.ndarray,
) -> None:  # fmt: skip
    """One asset's signals under one option row: :func:`asset_bar_nb` on the bars that
    matter (a flat stretch jumps to ``nxt``: its equity is constant), metrics into ``out``."""
    n = x.shape[0]
    pos, run = new_run_nb(init_cash)
    t = nxt[0]
    while t < n:
        asset_bar_nb(
            pos, run, t, o[t], h[t], lo[t], x[t], fill[t], entries[t], exits[t], use_open,
            direction, opt[OPT_SL], opt[OPT_TP], opt[OPT_TRAIL], opt[OPT_TIME], opt[OPT_FEES],
            slippage, size_type, opt[OPT_SIZE], leverage, borrow_bar, integer_shares,
        )  # fmt: skip
        t = t + 1 if pos[0] != 0.0 else nxt[t + 1]
    finish_run_nb(pos, run, init_cash, n, periods_per_year, out)


@njit(cache=True, parallel=True)
def sweep_signals_nb(
    open_: np.ndarray,
    high: np.ndarray,
    low: np.ndarray,
    close: np.ndarray,
    use_open: bool,
    entries: np.ndarray,
    exits: np.ndarray,
    opts: np.ndarray,
    init_cash: float,
    slippage: float,
    size_type: int,
    leverage: float,
    borrow_bar: float,
    direction: int,
    integer_shares: bool,
    periods_per_year: float,
) -> np.ndarray:
    """Metrics of given signals under every row of engine options, parallel over rows.

    ``entries`` and ``exits`` are (n, k) signals acted on at each bar (shifted one
    bar for next-open fills); ``opts`` is (m, N_OPT). Row ``c * k + j`` of the
    (m * k, N_STATS) result is option row ``c`` on column ``j``, each column on its
    own capital (:func:`signal_row_nb`), so a row costs the bars in a position.
    """
    m = opts.shape[0]
    n, k = close.shape
    out = np.empty((m * k, N_STATS))
    fill = open_ if use_open else close
    nxt = np.empty((n + 1, k), dtype=np.int64)
    for j in range(k):
        nxt[:, j] = flat_next_nb(entries[:, j], exits[:, j], direction == DIRECTION_BOTH)
    for task in prange(m * k):
        c = task // k
        j = task % k
        signal_row_nb(
            open_[:, j], high[:, j], low[:, j], close[:, j], fill[:, j], use_open,
            entries[:, j], exits[:, j], nxt[:, j], opts[c], init_cash, slippage, size_type,
            leverage, borrow_bar, direction, integer_shares, periods_per_year, out[task],
        )  # fmt: skip
    return out


@njit(cache=True)
def ma_table_nb(x: np.ndarray, first: int, keys: np.ndarray) -> np.ndarray:
    """Moving averages of one series for every distinct (window, type) of a sweep.

    ``keys[i] = 2 * window + ema`` (``ema`` 1 for an EMA, 0 for an SMA). Row ``i``
    of the (len(keys), n) result is that average at every bar, NaN before it is
    defined, computed by :func:`ma_update_nb`: the very recursion of
    :func:`~quantcore._kernels.backtest_signals.signal_block_nb`, so the values are bit-identical to the signal kernels'.
    Serial: a table is a few distinct windows times n, small beside the crossing scans.
    """
    n = x.shape[0]
    table = np.empty((keys.shape[0], n))  # and a fill: np.empty's code is shared
    table[:] = np.nan
    for i in range(keys.shape[0]):
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


def fast_path_applies(
    strategy: int,
    use_open: bool,
    opts: np.ndarray,
    size_type: int,
    leverage: float,
    direction: int,
    integer_shares: bool,
) -> bool:
    """Whether :func:`sweep_ma_fast` computes the sweep (else :func:`sweep_general_nb`).

    moving_average, fills at the close, long only, ``size_type`` percent with
    ``size >= 1`` and ``leverage == 1`` (an entry spends all the cash), fractional
    shares, no stop in any row.
    """
    return bool(
        strategy == STRATEGY_MOVING_AVERAGE
        and not use_open
        and direction == DIRECTION_LONG
        and size_type == SIZE_PERCENT
        and leverage == 1.0
        and not integer_shares
        and (opts[:, OPT_SIZE] >= 1.0).all()
        and np.isnan(opts[:, [OPT_SL, OPT_TP, OPT_TRAIL, OPT_TIME]]).all()
    )


@njit(cache=True, parallel=True)
def ma_cross_rows_nb(
    x: np.ndarray, first: int, table: np.ndarray, fi: np.ndarray, si: np.ndarray,
    pre: np.ndarray, ext: np.ndarray, idx: np.ndarray, mr: np.ndarray, init_cash: float,
    opts: np.ndarray, slippage: float, periods_per_year: float, out: np.ndarray, j: int, k: int,
    flags: np.ndarray, words: np.ndarray, acc: np.ndarray,
) -> None:  # fmt: skip
    """Rows ``c * k + j`` of :func:`ma_fast_clean` for one clean asset ``x``, parallel over combinations.

    ``table`` is :func:`ma_table_nb` of ``x`` and combination ``c`` crosses its rows
    ``fi[c]`` and ``si[c]``; ``pre``, ``ext`` and ``idx, mr`` are
    :func:`~quantcore._kernels.backtest_sweep_fast.return_prefix_nb`,
    :func:`~quantcore._kernels.backtest_sweep_fast.extrema_table_nb` and
    :func:`~quantcore._kernels.backtest_sweep_fast.price_tree_nb` of ``x``. Row ``lane``
    of ``flags`` (uint8), ``words`` (its uint64 view) and ``acc`` is a lane's scratch
    (:func:`~quantcore._kernels.backtest_sweep_fast.ma_cross_row_nb`), allocated by
    the caller: no allocation in the loop, and no array constructor or view to compile.
    """
    # lanes take every lanes-th block of 16 consecutive combinations: balanced (short
    # windows trade more) and cache-friendly (neighbours share their fast average)
    m = fi.shape[0]
    lanes = words.shape[0]
    blocks = -(-m // 16)
    for lane in prange(lanes):
        lane_flags = flags[lane]
        lane_words = words[lane]
        lane_acc = acc[lane]
        for b in range(lane, blocks, lanes):
            stop = 16 * b + 16  # not min(): one builtin less to compile, twice (parfor)
            if stop > m:
                stop = m
            for c in range(16 * b, stop):
                ma_cross_row_nb(
                    x, first, table, fi[c], si[c], pre, ext, idx, mr, init_cash,
                    opts[c, OPT_FEES], slippage, opts[c, OPT_SIZE], periods_per_year, out,
                    c * k + j, lane_flags, lane_words, lane_acc,
                )  # fmt: skip


def ma_fast_clean(
    close: np.ndarray,
    first: np.ndarray,
    params: np.ndarray,
    opts: np.ndarray,
    init_cash: float,
    slippage: float,
    periods_per_year: float,
) -> np.ndarray:
    """The moving-average sweep on the fast path (see :mod:`quantcore._kernels.backtest_sweep_fast`).

    Same arguments and (m * k, N_STATS) result as :func:`sweep_general_nb` under
    :func:`fast_path_applies`, for assets whose prices are finite and positive
    from their first valid bar on (:func:`sweep_ma_fast` sends the others to the
    general kernel). Per asset, the moving average of each distinct (window,
    type) of the grid (:func:`ma_table_nb`), the return prefix sums and the range
    structures are computed once; then, parallel over combinations
    (:func:`ma_cross_rows_nb`), one crossing scan per combination and O(log n) work
    per trade. Memory: O(distinct windows x n + m), never m x n.

    Notes
    -----
    A Python driver, so that every kernel it calls is entered from Python: numba
    caches a kernel with what must run when it is loaded (starting the thread
    pool of a ``prange`` kernel), but not what a callee loaded from its cache
    needed, so a jitted serial driver of a ``prange`` kernel, compiled in a process
    that loaded that kernel from the cache, was cached without it and crashed in
    the next process. Each argument is made one type (contiguous, writable
    float64 or int64) so that every kernel compiles once.
    """
    m = params.shape[0]
    k = close.shape[1]
    out = np.empty((m * k, N_STATS))
    ema = (params[:, 2] != 0.0).astype(np.int64)
    fk = params[:, 0].astype(np.int64) * 2 + ema
    sk = params[:, 1].astype(np.int64) * 2 + ema
    keys, rows = np.unique(np.concatenate((fk, sk)), return_inverse=True)
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    fi = np.ascontiguousarray(rows[:m], dtype=np.int64)
    si = np.ascontiguousarray(rows[m:], dtype=np.int64)
    table_opts = np.array(opts, dtype=np.float64, order="C")
    # per-lane scratch of the scans: crossing flags read as 64-bit words, and the
    # accumulators (a row of 16: lanes do not share a cache line)
    lanes = min(-(-m // 16), 64)
    words = np.empty((lanes, -(-close.shape[0] // 8)), dtype=np.uint64)
    flags = words.view(np.uint8)
    acc = np.empty((lanes, 16))
    for j in range(k):
        x = np.array(close[:, j], dtype=np.float64, order="C")  # a writable copy: one type
        f = int(first[j])
        table = ma_table_nb(x, f, keys)
        pre = return_prefix_nb(x, f)
        ext = extrema_table_nb(x)
        idx, mr = price_tree_nb(x, f)
        ma_cross_rows_nb(
            x, f, table, fi, si, pre, ext, idx, mr, float(init_cash), table_opts,
            float(slippage), float(periods_per_year), out, j, k, flags, words, acc,
        )  # fmt: skip
    return out


def sweep_ma_fast(
    close: np.ndarray,
    first: np.ndarray,
    params: np.ndarray,
    opts: np.ndarray,
    init_cash: float,
    slippage: float,
    periods_per_year: float,
) -> np.ndarray:
    """:func:`ma_fast_clean` on the clean assets, :func:`sweep_general_nb` on the others.

    An asset with a non-finite or non-positive price after its first valid bar
    goes through the general kernel (bar by bar, same result). The choice is made
    here, in Python, so that a sweep on clean prices never compiles the general kernel.
    """
    m = params.shape[0]
    k = close.shape[1]
    clean = np.array(
        [
            bool(np.all(np.isfinite(close[first[j] :, j]) & (close[first[j] :, j] > 0.0)))
            for j in range(k)
        ],
        dtype=np.bool_,
    )
    if clean.all():
        return ma_fast_clean(close, first, params, opts, init_cash, slippage, periods_per_year)
    out = np.empty((m, k, N_STATS))
    for keep, run_part in ((clean, True), (~clean, False)):
        if not keep.any():
            continue
        part = np.asfortranarray(close[:, keep])
        f = np.ascontiguousarray(first[keep])
        if run_part:
            rows = ma_fast_clean(part, f, params, opts, init_cash, slippage, periods_per_year)
        else:
            rows = sweep_general_nb(
                STRATEGY_MOVING_AVERAGE, part, part, part, part, False, f, params, opts, init_cash,
                slippage, SIZE_PERCENT, 1.0, 0.0, DIRECTION_LONG, False, periods_per_year,
            )  # fmt: skip
        out[:, keep] = rows.reshape(m, int(keep.sum()), N_STATS)
    return out.reshape(m * k, N_STATS)


def run_sweep(
    strategy: int,
    open_: np.ndarray,
    high: np.ndarray,
    low: np.ndarray,
    close: np.ndarray,
    use_open: bool,
    first: np.ndarray,
    params: np.ndarray,
    opts: np.ndarray,
    init_cash: float,
    slippage: float,
    size_type: int,
    leverage: float,
    borrow_bar: float,
    direction: int,
    integer_shares: bool,
    periods_per_year: float,
) -> np.ndarray:
    """Metrics of every (combination, asset) pair: the fast path where it applies.

    Arguments as :func:`sweep_general_nb`. Under :func:`fast_path_applies` the
    work goes to :func:`sweep_ma_fast`, otherwise to :func:`sweep_general_nb`;
    both equal a single run with the same parameters. The choice is made in
    Python so that only the kernel that runs is compiled.
    """
    if fast_path_applies(strategy, use_open, opts, size_type, leverage, direction, integer_shares):
        return sweep_ma_fast(close, first, params, opts, init_cash, slippage, periods_per_year)
    return sweep_general_nb(
        strategy, open_, high, low, close, use_open, first, params, opts, init_cash, slippage,
        size_type, leverage, borrow_bar, direction, integer_shares, periods_per_year,
    )  # fmt: skip
