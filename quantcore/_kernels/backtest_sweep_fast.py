"""Fast path of the moving-average sweep: crossings scanned, trades accounted in O(log n).

A long-only, all-in (percent ``size >= 1``), fractional-share backtest filled
at the close is worth ``c + q * p_t`` while in a position, where the cash residue
``c`` left by the entry is a few ulps of the equity: equity is proportional to the
price. So a trade's interior bars need no simulation. With per-asset
precomputations shared by every combination,

* the prefix sums of the price returns ``r_t = p_t / p_{t-1} - 1``, ``r_t**2`` and
  ``min(r_t, 0)**2`` in double-double (TwoSum) arithmetic (:func:`return_prefix_nb`),
* a segment tree over the prices (:func:`price_tree_nb`) answering, for any bar
  range, the bars of its maximum and minimum and the pair of bars realising its
  inner maximum drawdown ``mr(A) = min_{t in A} p_t / max_{s in A, s <= t} p_s``,

a combination costs one branch-light scan of its two moving-average rows for
crossings (:func:`ma_cross_row_nb`) and O(log n) work per trade. Entry and exit
bars go through the order engine's own rules (:mod:`quantcore._kernels.backtest_orders`:
the signal decision, the sizing, the entry and exit fills); every equity value the
drawdown compares is recomputed exactly as the engine computes it (``c + q * p``).
The moving-average rows themselves are built by
:func:`quantcore._kernels.backtest_sweep.ma_table_nb` with the signal kernels' recursion.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from quantcore._kernels.backtest import finalize_stats_nb
from quantcore._kernels.backtest_orders import (
    DIRECTION_LONG,
    SIZE_PERCENT,
    close_position_nb,
    entry_fill_nb,
    open_position_nb,
    order_units_nb,
    signal_action_nb,
)

__all__ = [
    "extrema_nb",
    "extrema_table_nb",
    "fold_bar_nb",
    "fold_holding_nb",
    "ma_cross_row_nb",
    "price_tree_nb",
    "return_prefix_nb",
    "tree_query_nb",
]


@njit(cache=True)
def _two_sum(a: float, b: float) -> tuple[float, float]:
    """Knuth's TwoSum: ``s + e == a + b`` exactly, ``s = fl(a + b)``."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


@njit(cache=True)
def _dd_add(hi: float, lo: float, v: float) -> tuple[float, float]:
    """Add ``v`` to the double-double ``hi + lo``."""
    s, e = _two_sum(hi, v)
    return s, lo + e


@njit(cache=True)
def return_prefix_nb(x: np.ndarray, first: int) -> np.ndarray:
    """Double-double prefix sums of the price returns, their squares and downside squares.

    Parameters
    ----------
    x : ndarray
        (n,) prices, finite and positive from bar ``first`` on.
    first : int
        First valid bar.

    Returns
    -------
    ndarray
        (6, n): rows ``(hi, lo)`` of ``S1[t] = sum r_u``, ``S2[t] = sum r_u**2`` and
        ``S3[t] = sum min(r_u, 0)**2`` over ``first < u <= t`` (zero for
        ``t <= first``), with ``r_u = x[u] / x[u - 1] - 1``.

    Notes
    -----
    A segment's sum ``S[b] - S[a]`` is then exact to the rounding of the
    double-double, free of the cancellation a plain prefix sum would suffer.

    Examples
    --------
    >>> pre = return_prefix_nb(np.array([1.0, 2.0, 1.0]), 0)
    >>> pre[0] + pre[1]  # 0, +100 %, -50 %
    array([0. , 1. , 0.5])
    """
    n = x.shape[0]
    # np.empty, then a fill: numba compiles each array-constructor spelling (np.zeros,
    # np.full, a dtype) once per process; most kernels share np.empty's float64 one
    pre = np.empty((6, n))
    pre[:] = 0.0
    h1 = l1 = h2 = l2 = h3 = l3 = 0.0
    for t in range(first + 1, n):
        r = x[t] / x[t - 1] - 1.0
        d = min(r, 0.0)
        h1, l1 = _dd_add(h1, l1, r)
        h2, l2 = _dd_add(h2, l2, r * r)
        h3, l3 = _dd_add(h3, l3, d * d)
        pre[0, t] = h1
        pre[1, t] = l1
        pre[2, t] = h2
        pre[3, t] = l2
        pre[4, t] = h3
        pre[5, t] = l3
    return pre


@njit(cache=True)
def _merge(
    x: np.ndarray, a_max: int, a_min: int, a_mr: float, a_t: int, a_s: int,
    b_max: int, b_min: int, b_mr: float, b_t: int, b_s: int,
) -> tuple[int, int, float, int, int]:  # fmt: skip
    """Summary of block A followed by the disjoint block B (index -1: empty block)."""
    if a_max < 0:
        return b_max, b_min, b_mr, b_t, b_s
    if b_max < 0:
        return a_max, a_min, a_mr, a_t, a_s
    i_max = a_max if x[a_max] >= x[b_max] else b_max
    i_min = a_min if x[a_min] <= x[b_min] else b_min
    mr = a_mr
    mt = a_t
    ms = a_s
    if b_mr < mr:
        mr = b_mr
        mt = b_t
        ms = b_s
    cross = x[b_min] / x[a_max]
    if cross < mr:
        mr = cross
        mt = b_min
        ms = a_max
    return i_max, i_min, mr, mt, ms


@njit(cache=True)
def price_tree_nb(x: np.ndarray, first: int) -> tuple[np.ndarray, np.ndarray]:
    """Segment tree of range maxima, minima and inner drawdowns over ``x[first:]``.

    Parameters
    ----------
    x : ndarray
        (n,) prices, finite and positive from bar ``first`` on.
    first : int
        First valid bar; earlier leaves are empty.

    Returns
    -------
    idx : ndarray
        (4, 2N) int64, ``N`` the power of two ``>= n``, node ``v`` (root 1, leaves
        ``N + t``): bar of the maximum, bar of the minimum, and the bars ``(t, s)``
        of the inner drawdown; -1 for an empty node.
    mr : ndarray
        (2N,) ``mr(A) = min_{t in A} x[t] / max_{s in A, s <= t} x[s]``, 1 at a leaf.

    Notes
    -----
    For consecutive disjoint blocks ``mr(A B) = min(mr(A), mr(B), min(B) / max(A))``,
    so aligned power-of-two blocks combine; overlapping blocks (a sparse table)
    would not.

    Examples
    --------
    >>> idx, mr = price_tree_nb(np.array([4.0, 2.0, 3.0, 1.0]), 0)
    >>> float(mr[1]), int(idx[2, 1]), int(idx[3, 1])  # 1 / 4 at bar 3, peak at bar 0
    (0.25, 3, 0)
    """
    n = x.shape[0]
    size = 1
    while size < max(n, 1):
        size *= 2
    idx = np.empty((4, 2 * size), dtype=np.int64)  # and fills: see return_prefix_nb
    idx[:] = -1
    mr = np.empty(2 * size)
    mr[:] = 1.0
    for t in range(first, n):
        v = size + t
        idx[0, v] = t
        idx[1, v] = t
        idx[2, v] = t
        idx[3, v] = t
    for v in range(size - 1, 0, -1):
        a = 2 * v
        b = a + 1
        i_max, i_min, m, mt, ms = _merge(
            x, idx[0, a], idx[1, a], mr[a], idx[2, a], idx[3, a],
            idx[0, b], idx[1, b], mr[b], idx[2, b], idx[3, b],
        )  # fmt: skip
        idx[0, v] = i_max
        idx[1, v] = i_min
        idx[2, v] = mt
        idx[3, v] = ms
        mr[v] = m
    return idx, mr


@njit(cache=True)
def tree_query_nb(
    x: np.ndarray, idx: np.ndarray, mr: np.ndarray, lo: int, hi: int
) -> tuple[int, int, float, int, int]:
    """Summary of bars ``lo..hi`` (inclusive): ``(i_max, i_min, mr, t, s)``, O(log n).

    Examples
    --------
    >>> x = np.array([4.0, 2.0, 3.0, 1.0, 5.0])
    >>> idx, mr = price_tree_nb(x, 0)
    >>> tree_query_nb(x, idx, mr, 1, 3)  # max 3 at bar 2, min 1 at bar 3, 1 / 3
    (2, 3, 0.3333333333333333, 3, 2)
    """
    size = mr.shape[0] // 2
    # int(np.int64(-1)), not -1: numba would also compile _merge for the literal -1
    l_max = l_min = l_t = l_s = int(np.int64(-1))
    r_max = r_min = r_t = r_s = int(np.int64(-1))
    l_mr = 1.0
    r_mr = 1.0
    lo += size
    hi += size + 1
    while lo < hi:
        if lo & 1:
            l_max, l_min, l_mr, l_t, l_s = _merge(
                x, l_max, l_min, l_mr, l_t, l_s, idx[0, lo], idx[1, lo], mr[lo], idx[2, lo],
                idx[3, lo],
            )  # fmt: skip
            lo += 1
        if hi & 1:
            hi -= 1
            r_max, r_min, r_mr, r_t, r_s = _merge(
                x, idx[0, hi], idx[1, hi], mr[hi], idx[2, hi], idx[3, hi], r_max, r_min, r_mr,
                r_t, r_s,
            )  # fmt: skip
        lo >>= 1
        hi >>= 1
    return _merge(x, l_max, l_min, l_mr, l_t, l_s, r_max, r_min, r_mr, r_t, r_s)


@njit(cache=True)
def extrema_table_nb(x: np.ndarray) -> np.ndarray:
    """Sparse table of the bars of range maxima and minima of ``x``.

    Parameters
    ----------
    x : ndarray
        (n,) prices.

    Returns
    -------
    ndarray
        (3, L, n + 1) int32, ``L = floor(log2(n)) + 1``: ``[0, l, t]`` is the bar of the
        maximum of ``x[t : t + 2**l]``, ``[1, l, t]`` of the minimum (first
        occurrence), ``[2, 0, s] = floor(log2(s))`` for ``1 <= s <= n``. Ranges holding a
        NaN give meaningless bars; the sweep only queries ranges after an asset's
        first valid bar.

    Notes
    -----
    Maxima and minima tolerate overlap, so any range is two lookups
    (:func:`extrema_nb`); the inner drawdown does not, hence :func:`price_tree_nb`.

    Examples
    --------
    >>> ext = extrema_table_nb(np.array([4.0, 2.0, 3.0, 1.0, 5.0]))
    >>> extrema_nb(np.array([4.0, 2.0, 3.0, 1.0, 5.0]), ext, 1, 4)
    (4, 3)
    """
    n = x.shape[0]
    levels = 1
    while (1 << levels) <= n:
        levels += 1
    ext = np.empty((3, levels, n + 1), dtype=np.int32)  # and a fill: see return_prefix_nb
    ext[:] = 0
    for t in range(n):
        ext[0, 0, t] = t
        ext[1, 0, t] = t
    for s in range(2, n + 1):
        ext[2, 0, s] = ext[2, 0, s // 2] + 1
    for lv in range(1, levels):
        half = 1 << (lv - 1)
        for t in range(n - (1 << lv) + 1):
            a = ext[0, lv - 1, t]
            b = ext[0, lv - 1, t + half]
            ext[0, lv, t] = a if not x[b] > x[a] else b
            a = ext[1, lv - 1, t]
            b = ext[1, lv - 1, t + half]
            ext[1, lv, t] = a if not x[b] < x[a] else b
    return ext


@njit(cache=True)
def extrema_nb(x: np.ndarray, ext: np.ndarray, lo: int, hi: int) -> tuple[int, int]:
    """Bars of the maximum and the minimum of ``x[lo : hi + 1]``, O(1) (``lo <= hi``)."""
    lv = ext[2, 0, hi - lo + 1]
    off = hi - (1 << lv) + 1
    a = ext[0, lv, lo]
    b = ext[0, lv, off]
    i_max = a if not x[b] > x[a] else b
    a = ext[1, lv, lo]
    b = ext[1, lv, off]
    i_min = a if not x[b] < x[a] else b
    return i_max, i_min


@njit(cache=True)
def fold_holding_nb(
    x: np.ndarray, pre: np.ndarray, ext: np.ndarray, idx: np.ndarray, mr: np.ndarray,
    entry: int, last: int, cash: float, size: float, acc: np.ndarray,
) -> None:  # fmt: skip
    """Fold the bars ``entry + 1 .. last`` of a position into ``acc``.

    ``acc`` holds the double-double return sums (6), the equity peak and the
    lowest equity / peak ratio. Equity at bar ``t`` is ``cash + size * x[t]``.
    """
    if last <= entry:
        return
    for row in range(0, 6, 2):
        acc[row], acc[row + 1] = _dd_add(acc[row], acc[row + 1], pre[row, last])
        acc[row], acc[row + 1] = _dd_add(acc[row], acc[row + 1], -pre[row, entry])
        acc[row + 1] += pre[row + 1, last] - pre[row + 1, entry]
    i_max, i_min = extrema_nb(x, ext, entry + 1, last)
    peak = acc[6]
    best = acc[7]
    bottom = cash + size * x[i_min]
    low = bottom / peak  # below the peak carried in
    if low < best:
        best = low
    top = cash + size * x[i_max]
    # a new peak inside the position: drawdowns from it count too, but none can
    # go below bottom / top, so the tree is asked only when that could set a record
    if top > peak and bottom / top < best:
        _, _, m, mt, ms = tree_query_nb(x, idx, mr, entry + 1, last)
        if m < 1.0:
            inner = (cash + size * x[mt]) / (cash + size * x[ms])
            if inner < best:
                best = inner
    if top > peak:
        peak = top
    acc[6] = peak
    acc[7] = best


@njit(cache=True)
def fold_bar_nb(equity: float, prev: float, acc: np.ndarray) -> None:
    """Fold one exactly computed bar equity (an entry or an exit bar) into ``acc``."""
    if equity == prev:
        return
    r = equity / prev - 1.0
    d = min(r, 0.0)
    acc[0], acc[1] = _dd_add(acc[0], acc[1], r)
    acc[2], acc[3] = _dd_add(acc[2], acc[3], r * r)
    acc[4], acc[5] = _dd_add(acc[4], acc[5], d * d)
    if equity > acc[6]:
        acc[6] = equity
    else:
        ratio = equity / acc[6]
        if ratio < acc[7]:
            acc[7] = ratio


@njit(cache=True)
def ma_cross_row_nb(
    x: np.ndarray,
    first: int,
    table: np.ndarray,
    i_fast: int,
    i_slow: int,
    pre: np.ndarray,
    ext: np.ndarray,
    idx: np.ndarray,
    mr: np.ndarray,
    init_cash: float,
    fees: float,
    slippage: float,
    max_size: float,
    periods_per_year: float,
    out: np.ndarray,
    row: int,
    flags: np.ndarray,
    words: np.ndarray,
    acc: np.ndarray,
) -> None:
    """Metrics row of one long-only moving-average crossover, filled at the close.

    Parameters
    ----------
    x : ndarray
        (n,) closes, finite and positive from ``first`` on.
    first : int
        First valid bar.
    table : ndarray
        (w, n) moving averages (NaN where undefined).
    i_fast, i_slow : int
        Rows of ``table`` holding the fast and the slow average.
    pre : ndarray
        :func:`return_prefix_nb` of ``x``.
    ext : ndarray
        :func:`extrema_table_nb` of ``x``.
    idx, mr : ndarray
        :func:`price_tree_nb` of ``x``.
    init_cash, fees, slippage, max_size, periods_per_year : float
        Engine options; ``max_size >= 1``.
    out : ndarray
        (m, N_STATS); row ``row`` receives the metrics of :func:`finalize_stats_nb`.
    flags, words, acc : ndarray
        Scratch space reused across calls: uint8 of length ``8 * ceil(n / 8)``, the
        same memory as uint64 (``words = flags.view(np.uint64)``, made by the caller),
        and float64 of length at least 8 (no allocation, hence no shared allocator or
        reference count, per combination).

    Notes
    -----
    Entry at ``t > first`` when ``fast[t-1] < slow[t-1]`` and ``fast[t] > slow[t]``,
    exit when ``fast[t-1] > slow[t-1]`` and ``fast[t] < slow[t]`` (the signals of
    :func:`quantcore._kernels.backtest_signals.signal_block_nb`). While holding ``q`` units
    with residue ``c``, equity is ``E_t = c + q p_t`` and, with the peak ``P``
    carried in, the lowest ``E_t / max(P, max_{s <= t} E_s)`` over the holding is
    ``min(min E / P, mr(holding))``. Interior returns come from the prefix sums;
    flat bars have ``r = 0`` but count in ``n``, as in the engine.

    Examples
    --------
    >>> from quantcore._kernels.backtest import N_STATS
    >>> x = np.array([3.0, 1.0, 3.0, 4.0, 1.0])
    >>> out = np.empty((1, N_STATS))
    >>> idx, mr = price_tree_nb(x, 0)
    >>> flags = np.empty(8, np.uint8)
    >>> ma_cross_row_nb(x, 0, np.stack([x, np.full(5, 2.0)]), 0, 1, return_prefix_nb(x, 0),
    ...                 extrema_table_nb(x), idx, mr, 300.0, 0.0, 0.0, 1.0, 252.0, out, 0,
    ...                 flags, flags.view(np.uint64), np.empty(8))
    >>> float(out[0, 6]), float(out[0, 9]), float(out[0, 4])  # bought at 3 (bar 2), sold at 1 (bar 4)
    (1.0, 100.0, -0.75)
    """
    n = x.shape[0]
    acc[:6] = 0.0
    acc[6] = init_cash
    acc[7] = 1.0
    cash = init_cash
    prev = init_cash
    size = 0.0
    entry_fill = 0.0
    entry_fee = 0.0
    # typed int64 from the start: integer literals would make numba compile the callees
    # once more for them while it infers the loop's types
    entry = int(np.int64(-1))
    n_closed = int(np.int64(0))
    n_wins = int(np.int64(0))
    gross_profit = 0.0
    gross_loss = 0.0
    exposed = int(np.int64(0))
    # the order engine's helpers typed as run_strategy calls them (int64 side and size
    # type, a bool), so a sweep after a backtest reuses their compiled code
    long_side = int(np.int64(1))
    flat = int(np.int64(0))
    long_only = int(np.int64(DIRECTION_LONG))
    percent = int(np.int64(SIZE_PERCENT))
    whole_shares = bool(np.bool_(False))
    # pass 1, vectorised: flag every strict crossing, either way (NaN compares false;
    # the averages are NaN before ``first``, so no bar up to ``first`` is flagged)
    width = (n + 7) // 8
    flags[0] = 0
    flags[n:] = 0
    for u in range(1, n):
        f0 = table[i_fast, u - 1]
        s0 = table[i_slow, u - 1]
        f1 = table[i_fast, u]
        s1 = table[i_slow, u]
        flags[u] = ((f0 < s0) & (f1 > s1)) | ((f0 > s0) & (f1 < s1))
    # pass 2: visit the flagged bars, eight at a time; a crossing up enters when
    # flat, a crossing down exits when holding, the others are ignored
    for i in range(width):
        if words[i] == 0:
            continue
        for u in range(8 * i, 8 * i + 8):
            if flags[u] == 0:
                continue
            up = table[i_fast, u] > table[i_slow, u]
            down = table[i_fast, u] < table[i_slow, u]
            close, new_side = signal_action_nb(
                long_side if size != 0.0 else flat, up, down, long_only
            )
            if close:
                fold_holding_nb(x, pre, ext, idx, mr, entry, u - 1, cash, size, acc)
                prev = cash + size * x[u - 1]
                cash, pnl, _, _ = close_position_nb(
                    cash, size, long_side, entry_fill, entry_fee, x[u], fees, slippage
                )
                n_closed += 1
                if pnl > 0.0:
                    n_wins += 1
                    gross_profit += pnl
                elif pnl < 0.0:
                    gross_loss -= pnl
                exposed += u - entry
                size = 0.0
                fold_bar_nb(cash, prev, acc)
                prev = cash
            elif size == 0.0 and new_side > 0:
                p = x[u]
                f = entry_fill_nb(p, long_side, slippage)
                q = order_units_nb(percent, max_size, cash, cash, 1.0, f, fees, whole_shares)
                if q > 0.0:
                    cash, fee = open_position_nb(cash, q, f, fees)
                    size = q
                    entry_fill = f
                    entry_fee = fee
                    entry = u
                    eq = cash + size * p
                    fold_bar_nb(eq, prev, acc)
                    prev = eq
    n_trades = n_closed
    if size != 0.0:  # open at the end: marked to market at the last close
        fold_holding_nb(x, pre, ext, idx, mr, entry, n - 1, cash, size, acc)
        prev = cash + size * x[n - 1]
        exposed += n - entry
        n_trades += 1
    max_dd = min(acc[7] - 1.0, 0.0)
    finalize_stats_nb(
        out[row], init_cash, prev, n, acc[0] + acc[1], acc[2] + acc[3], acc[4] + acc[5], 1.0, 1.0,
        max_dd, n_trades, n_closed, n_wins, gross_profit, gross_loss, exposed, periods_per_year,
    )  # fmt: skip
