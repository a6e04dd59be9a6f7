"""Fast path of a stop grid: one signal set, many fixed stop levels, O(log n) per trade.

For a long-only, all-in, fractional-share backtest filled at the close (the case of
:func:`quantcore._kernels.backtest_sweep_fast.ma_cross_row_nb`) with fixed ``sl_stop``,
``tp_stop``, ``trail_stop`` and ``time_stop`` levels, a trade entered at bar ``t``
ends at the first of: the first bar after ``t`` whose low reaches the loss level
(fixed, or trailing below the highest high since the entry), the first whose high
reaches the profit level, the time stop, the next exit signal.

* The first fixed-level hits are found by binary lifting over sparse tables of
  range minima of the lows and maxima of the highs (:func:`first_at_or_below_nb`).
* The first trailing hit, ``lo[u] <= max(p_t, max h[t+1 .. u-1]) * (1 - trail)``,
  by binary lifting over the same tables plus a sparse table of each block's
  inner ratio ``min_{v} lo[v] / max_{s < v} h[s]`` (:func:`trail_table_nb`,
  :func:`first_trail_hit_nb`); the block test is conservative and a single bar is
  checked with the engine's own expression, so the hit bar is the engine's.
* Every (entry signal, distinct level) pair's first hit is computed once and
  shared by the rows, and so is the rest of what the trade needs that does not
  depend on the cash or the fees (:func:`trade_summary_nb`): the exit price, the
  interior bars' return sums and the bars of their highest and lowest close and
  of their inner drawdown. A row then costs, per trade, the engine's own entry
  and exit (:mod:`quantcore._kernels.backtest_orders`) and the same folds as the direct
  accounting with the range queries already answered: O(1).

Trades the summaries do not cover (a time stop before the exit signal, a fixed
and a trailing stop hit on the same bar, a position open at the end, or grids
whose summaries would take too much memory) are accounted directly: the fill at
the stop bar from :func:`~quantcore._kernels.backtest_orders.stop_price_nb`, the holding's
returns and drawdown from the close-price prefix sums and trees of
:mod:`quantcore._kernels.backtest_sweep_fast`. Both give the same numbers.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from quantcore._kernels.backtest import N_STATS, finalize_stats_nb
from quantcore._kernels.backtest_orders import (
    SIZE_PERCENT,
    close_position_nb,
    entry_fill_nb,
    open_position_nb,
    order_units_nb,
    stop_price_nb,
)
from quantcore._kernels.backtest_sweep_fast import (
    _dd_add,
    extrema_nb,
    extrema_table_nb,
    fold_bar_nb,
    fold_holding_nb,
    price_tree_nb,
    return_prefix_nb,
    tree_query_nb,
)

__all__ = [
    "MAX_SUMMARIES",
    "first_at_or_below_nb",
    "first_trail_hit_nb",
    "next_signal_nb",
    "stop_grid_nb",
    "trade_summary_nb",
    "trail_table_nb",
]

#: Largest number of trade summaries (entry signals x (distinct stop levels + 1))
#: a stop grid precomputes; above it every trade is accounted directly (the same
#: results, more work per row). 96 bytes each: 96 MB at the cap.
MAX_SUMMARIES = 1_000_000

# fields of a trade summary (:func:`trade_summary_nb`)
_S_SUMS = 0  # 6: double-double (hi, lo) interior sums of r, r**2, min(r, 0)**2
_S_MAX = 6  # bar of the interior's highest close (-1: no interior bar)
_S_MIN = 7  # bar of its lowest close
_S_MT = 8  # bars of its inner drawdown's trough and peak (-1: none)
_S_MS = 9
_S_PRICE = 10  # exit order price
_S_SLIP = 11  # slippage the exit pays
N_SUMMARY = 12


@njit(cache=True)
def next_signal_nb(sig: np.ndarray, other: np.ndarray) -> np.ndarray:
    """``out[t]``: first bar ``>= t`` with ``sig`` and not ``other`` (``n`` if none); length n + 1."""
    n = sig.shape[0]
    out = np.empty(n + 1, dtype=np.int64)
    out[n] = n
    for t in range(n - 1, -1, -1):
        out[t] = t if sig[t] and not other[t] else out[t + 1]
    return out


@njit(cache=True)
def first_at_or_below_nb(
    x: np.ndarray, ext: np.ndarray, which: int, sign: float, a: int, b: int, level: float
) -> int:
    """First bar ``u`` in ``[a, b]`` with ``sign * x[u] <= sign * level`` (``b + 1`` if none).

    ``ext`` is :func:`~quantcore._kernels.backtest_sweep_fast.extrema_table_nb` of ``x``;
    ``which`` 1 (minima) with ``sign = 1`` finds a low at or below ``level``,
    ``which`` 0 (maxima) with ``sign = -1`` a high at or above it. Binary lifting:
    whole blocks that stay on the far side of ``level`` are skipped, largest first.

    Examples
    --------
    >>> x = np.array([5.0, 4.0, 6.0, 2.0, 7.0])
    >>> ext = extrema_table_nb(x)
    >>> first_at_or_below_nb(x, ext, 1, 1.0, 1, 4, 3.0), first_at_or_below_nb(x, ext, 0, -1.0, 0, 4, 6.5)
    (3, 4)
    """
    u = a
    lv = ext.shape[1] - 1
    while lv >= 0 and u <= b:
        span = 1 << lv
        if u + span - 1 <= b and sign * x[ext[which, lv, u]] > sign * level:
            u += span
        else:
            lv -= 1
    return u


@njit(cache=True)
def trail_table_nb(
    h: np.ndarray, lo: np.ndarray, ext_h: np.ndarray, ext_lo: np.ndarray
) -> np.ndarray:
    """Sparse table of inner ratios: ``[l, s] = min lo[v] / max h[s .. v - 1]`` over ``v`` in
    ``(s, s + 2**l)`` (``inf`` for one bar), for the trailing-stop search.

    ``ext_h``/``ext_lo`` are :func:`~quantcore._kernels.backtest_sweep_fast.extrema_table_nb`
    of the highs and the lows. Two halves combine as ``min(A, B, min lo(B) / max h(A))``.

    Examples
    --------
    >>> h = np.array([10.0, 12.0, 11.0, 13.0]); lo = np.array([9.0, 10.0, 9.0, 12.0])
    >>> tab = trail_table_nb(h, lo, extrema_table_nb(h), extrema_table_nb(lo))
    >>> float(tab[2, 0])  # 9 (bar 2) under the high 12 (bar 1)
    0.75
    """
    n = h.shape[0]
    levels = ext_h.shape[1]
    tab = np.full((levels, n + 1), np.inf)
    for lv in range(1, levels):
        half = 1 << (lv - 1)
        for s in range(n - (1 << lv) + 1):
            cross = lo[ext_lo[1, lv - 1, s + half]] / h[ext_h[0, lv - 1, s]]
            tab[lv, s] = min(tab[lv - 1, s], tab[lv - 1, s + half], cross)
    return tab


@njit(cache=True)
def first_trail_hit_nb(
    h: np.ndarray, lo: np.ndarray, ext_h: np.ndarray, ext_lo: np.ndarray, tab: np.ndarray,
    t: int, anchor: float, trail: float,
) -> int:  # fmt: skip
    """First bar ``u > t`` whose low reaches a long's trailing level (``n`` if none).

    The level on bar ``u`` is ``M * (1 - trail)``, ``M = max(anchor, h[t + 1 .. u - 1])``
    (the engine updates its extreme after each bar's check). Whole blocks are
    skipped, largest first, when neither their lowest low reaches the level of
    the running ``M`` nor their inner ratio (:func:`trail_table_nb`) comes within
    rounding of ``1 - trail``; a single bar is decided with the engine's
    expression ``lo[u] <= M * (1 - trail)``, so a block let through by the
    rounding margin costs a restart, never a wrong bar. O(log n).
    """
    n = h.shape[0]
    c = 1.0 - trail
    screen = c * (1.0 + 1e-12)
    top = tab.shape[0] - 1
    lv = top
    cm = anchor
    u = t + 1
    while u < n:
        span = 1 << lv
        if u + span > n:
            lv -= 1
            continue
        level = cm * c
        if lv == 0:
            if lo[u] <= level:
                return u
            if h[u] > cm:
                cm = h[u]
            u += 1
            lv = top
            continue
        if lo[ext_lo[1, lv, u]] <= level or tab[lv, u] <= screen:
            lv -= 1
        else:
            hm = h[ext_h[0, lv, u]]
            if hm > cm:
                cm = hm
            u += span
    return int(n)


@njit(cache=True)
def _extreme(h: np.ndarray, ext_h: np.ndarray, t: int, u: int, anchor: float) -> float:
    """The engine's trailing extreme checked on bar ``u``: ``max(anchor, h[t + 1 .. u - 1])``."""
    if u - 1 >= t + 1:
        i_max, _ = extrema_nb(h, ext_h, t + 1, u - 1)
        if h[i_max] > anchor:
            return float(h[i_max])
    return anchor


@njit(cache=True)
def trade_summary_nb(
    x: np.ndarray, pre: np.ndarray, ext: np.ndarray, idx: np.ndarray, mr: np.ndarray, t: int,
    u: int, price: float, slip: float, out: np.ndarray,
) -> None:  # fmt: skip
    """What a trade entered at bar ``t``'s close and left at bar ``u`` needs, looked up once.

    Writes the fields ``_S_*``: the double-double sums of the price returns, their
    squares and downside squares over the interior bars ``t + 1 .. u - 1`` (from
    the prefix sums ``pre``), the bars of the interior's highest and lowest close
    and of its inner drawdown (the tree's pair, -1 when there is none), the exit
    price and its slippage. None of it depends on the cash or the fees, so
    :func:`_fold_trade` folds the trade exactly as
    :func:`~quantcore._kernels.backtest_sweep_fast.fold_holding_nb` does, without its range
    queries.
    """
    last = u - 1
    for k in range(6):
        out[k] = 0.0
    out[_S_MAX] = -1.0
    out[_S_MT] = -1.0
    if last > t:
        for row in range(0, 6, 2):
            hi, lo = _dd_add(pre[row, last], pre[row + 1, last], -pre[row, t])
            out[_S_SUMS + row] = hi
            out[_S_SUMS + row + 1] = lo - pre[row + 1, t]
        i_max, i_min = extrema_nb(x, ext, t + 1, last)
        out[_S_MAX] = i_max
        out[_S_MIN] = i_min
        _, _, m, mt, ms = tree_query_nb(x, idx, mr, t + 1, last)
        if m < 1.0:
            out[_S_MT] = mt
            out[_S_MS] = ms
    out[_S_PRICE] = price
    out[_S_SLIP] = slip


@njit(cache=True)
def _fold_trade(acc: np.ndarray, s: np.ndarray, x: np.ndarray, cash: float, size: float) -> None:
    """:func:`~quantcore._kernels.backtest_sweep_fast.fold_holding_nb` of a summarised trade.

    The same expressions on the same bars (equity ``cash + size * x[.]``), the
    range queries replaced by the summary's bars.
    """
    if s[_S_MAX] < 0.0:
        return
    for k in range(0, 6, 2):
        acc[k], acc[k + 1] = _dd_add(acc[k], acc[k + 1], s[_S_SUMS + k])
        acc[k + 1] += s[_S_SUMS + k + 1]
    peak = acc[6]
    best = acc[7]
    bottom = cash + size * x[int(s[_S_MIN])]
    low = bottom / peak
    if low < best:
        best = low
    top = cash + size * x[int(s[_S_MAX])]
    if top > peak and bottom / top < best and s[_S_MT] >= 0.0:
        inner = (cash + size * x[int(s[_S_MT])]) / (cash + size * x[int(s[_S_MS])])
        if inner < best:
            best = inner
    if top > peak:
        peak = top
    acc[6] = peak
    acc[7] = best


@njit(cache=True)
def _row(
    o: np.ndarray, h: np.ndarray, lo: np.ndarray, x: np.ndarray, nxt_e: np.ndarray,
    nxt_x: np.ndarray, slot: np.ndarray, hit_sl: np.ndarray, hit_tp: np.ndarray,
    hit_tr: np.ndarray, a_sl: int, a_tp: int, a_tr: int, summ: np.ndarray,
    w_tp: int, w_tr: int, n_e: int, pre: np.ndarray, ext: np.ndarray, ext_h: np.ndarray,
    idx: np.ndarray, mr: np.ndarray, first: int, sl: float, tp: float, trail: float,
    time_stop: float, fees: float, size: float, init_cash: float, slippage: float,
    periods_per_year: float, out: np.ndarray, acc: np.ndarray,
) -> None:  # fmt: skip
    n = x.shape[0]
    use_summ = summ.shape[0] > 0
    acc[:6] = 0.0
    acc[6] = init_cash
    acc[7] = 1.0
    cash = init_cash
    prev = init_cash
    n_closed = 0
    n_wins = 0
    gross_profit = 0.0
    gross_loss = 0.0
    exposed = 0
    held = 0.0
    entry = -1
    t = nxt_e[first]
    while t < n:
        p = x[t]
        f = entry_fill_nb(p, 1, slippage)
        q = order_units_nb(SIZE_PERCENT, size, cash, cash, 1.0, f, fees, False)
        if not q > 0.0:
            t = nxt_e[t + 1]
            continue
        cash, entry_fee = open_position_nb(cash, q, f, fees)
        i = slot[t]
        # the bar the position would leave on without price stops
        sig_end = nxt_x[t + 1]
        end = sig_end
        if time_stop == time_stop and t + time_stop < end:
            end = t + int(time_stop)
        last = min(end, n - 1)
        ls = n
        lt = n
        lp = n
        if sl == sl:
            ls = int(hit_sl[a_sl, i])
        if trail == trail:
            lt = int(hit_tr[a_tr, i])
        if tp == tp:
            lp = int(hit_tp[a_tp, i])
        loss = min(ls, lt)
        hit = min(loss, lp)
        col = -1  # the summary column of this trade's exit, -1: account it directly
        if hit <= last:
            u = hit
            if loss > lp:
                col = 1 + w_tp + a_tp
            elif ls < lt:
                col = 1 + a_sl
            elif lt < ls:
                col = 1 + w_tr + a_tr
        elif end < n:
            u = end
            if end == sig_end:
                col = 0
        else:  # open at the end: marked to market at the last close
            fold_bar_nb(cash + q * p, prev, acc)
            held = q
            entry = t
            break
        if use_summ and col >= 0:
            s = summ[col * n_e + i]
            fold_bar_nb(cash + q * p, prev, acc)
            _fold_trade(acc, s, x, cash, q)
            prev = cash + q * x[u - 1]
            cash, pnl, _, _ = close_position_nb(
                cash, q, 1, f, entry_fee, s[_S_PRICE], fees, s[_S_SLIP]
            )
            fold_bar_nb(cash, prev, acc)
        else:
            eq = cash + q * p
            fold_bar_nb(eq, prev, acc)
            if hit <= last:
                price, _ = stop_price_nb(
                    1, p, _extreme(h, ext_h, t, u, p), o[u], h[u], lo[u], sl, tp, trail
                )
                slip = 0.0
            else:
                price = x[u]
                slip = slippage
            fold_holding_nb(x, pre, ext, idx, mr, t, u - 1, cash, q, acc)
            prev = cash + q * x[u - 1]
            cash, pnl, _, _ = close_position_nb(cash, q, 1, f, entry_fee, price, fees, slip)
            fold_bar_nb(cash, prev, acc)
        prev = cash
        n_closed += 1
        if pnl > 0.0:
            n_wins += 1
            gross_profit += pnl
        elif pnl < 0.0:
            gross_loss -= pnl
        exposed += u - t
        t = nxt_e[u + 1]
    n_trades = n_closed
    if held != 0.0:
        fold_holding_nb(x, pre, ext, idx, mr, entry, n - 1, cash, held, acc)
        prev = cash + held * x[n - 1]
        exposed += n - entry
        n_trades += 1
    max_dd = min(acc[7] - 1.0, 0.0)
    finalize_stats_nb(
        out, init_cash, prev, n, acc[0] + acc[1], acc[2] + acc[3], acc[4] + acc[5], 1.0, 1.0,
        max_dd, n_trades, n_closed, n_wins, gross_profit, gross_loss, exposed, periods_per_year,
    )  # fmt: skip


@njit(cache=True, parallel=True)
def stop_grid_nb(
    o: np.ndarray,
    h: np.ndarray,
    lo: np.ndarray,
    x: np.ndarray,
    first: int,
    entries: np.ndarray,
    exits: np.ndarray,
    sl: np.ndarray,
    tp: np.ndarray,
    trail: np.ndarray,
    time_stop: np.ndarray,
    fees: np.ndarray,
    size: np.ndarray,
    init_cash: float,
    slippage: float,
    periods_per_year: float,
    max_summaries: int = MAX_SUMMARIES,
) -> np.ndarray:
    """Metrics rows of one asset's signals under ``m`` rows of stop levels, fees and sizes.

    Long only, ``size >= 1`` percent of equity, leverage 1, fractional shares,
    fills at the close; prices finite and positive from ``first`` on (the lows
    and highs too). ``sl, tp, trail, time_stop`` are NaN where off. Equals
    :func:`~quantcore._kernels.backtest_sweep.sweep_signals_nb` row for row (the per-bar
    engine) to rounding. Tables shared by all rows are built once; memory
    O(n log n + entries x distinct levels + m). Trade summaries
    are precomputed when there are at most ``max_summaries`` of them (0: every
    trade accounted directly).
    """
    m = sl.shape[0]
    n = x.shape[0]
    out = np.empty((m, N_STATS))
    nxt_e = next_signal_nb(entries, exits)
    nxt_x = next_signal_nb(exits, entries)
    pre = return_prefix_nb(x, first)
    ext = extrema_table_nb(x)
    idx, mr = price_tree_nb(x, first)
    ext_h = extrema_table_nb(h)
    ext_lo = extrema_table_nb(lo)
    # the first stop bar of every (entry bar, distinct level), shared by the rows
    slot = np.full(n + 1, -1, dtype=np.int64)
    bars = np.empty(n, dtype=np.int64)
    n_e = 0
    t = nxt_e[first]
    while t < n:
        slot[t] = n_e
        bars[n_e] = t
        n_e += 1
        t = nxt_e[t + 1]
    bars = bars[:n_e]
    sl_levels, a_sl = _levels(sl)
    tp_levels, a_tp = _levels(tp)
    tr_levels, a_tr = _levels(trail)
    hit_sl = _hits(lo, ext_lo, 1, 1.0, bars, x, sl_levels, -1.0)
    hit_tp = _hits(h, ext_h, 0, -1.0, bars, x, tp_levels, 1.0)
    if np.isnan(trail).all():
        hit_tr = np.full((1, n_e), n, dtype=np.int32)
    else:
        hit_tr = _trail_hits(h, lo, ext_h, ext_lo, bars, x, tr_levels)
    # trade summaries per (exit column, entry): the signal exit, then one column
    # per stop-loss, take-profit and trailing level; a row's trades walk each
    # column's entries in order
    w_tp = sl_levels.shape[0]
    w_tr = w_tp + tp_levels.shape[0]
    width = 1 + w_tr + tr_levels.shape[0]
    if n_e * width <= max_summaries:
        summ = _summaries(
            o, h, lo, x, pre, ext, ext_h, idx, mr, bars, nxt_x, hit_sl, hit_tp, hit_tr,
            sl_levels, tp_levels, tr_levels, slippage, width,
        )  # fmt: skip
    else:
        summ = np.empty((0, N_SUMMARY))
    # lanes take consecutive rows (neighbours share stop levels, so their trades
    # read the same summary columns); rows cost alike (the same entry signals)
    lanes = min(m, 64)
    per = -(-m // lanes)
    for lane in prange(lanes):
        acc = np.empty(8)
        for c in range(lane * per, min(lane * per + per, m)):
            _row(
                o, h, lo, x, nxt_e, nxt_x, slot, hit_sl, hit_tp, hit_tr, a_sl[c], a_tp[c],
                a_tr[c], summ, w_tp, w_tr, n_e, pre, ext, ext_h, idx, mr,
                first, sl[c], tp[c], trail[c], time_stop[c], fees[c], size[c], init_cash,
                slippage, periods_per_year, out[c], acc,
            )  # fmt: skip
    return out


@njit(cache=True, parallel=True)
def _summaries(
    o: np.ndarray, h: np.ndarray, lo: np.ndarray, x: np.ndarray, pre: np.ndarray,
    ext: np.ndarray, ext_h: np.ndarray, idx: np.ndarray, mr: np.ndarray, bars: np.ndarray,
    nxt_x: np.ndarray, hit_sl: np.ndarray, hit_tp: np.ndarray, hit_tr: np.ndarray,
    sl_levels: np.ndarray, tp_levels: np.ndarray, tr_levels: np.ndarray, slippage: float,
    width: int,
) -> np.ndarray:  # fmt: skip
    """Row ``col * n_e + i`` is :func:`trade_summary_nb` of entry ``i`` leaving by exit
    column ``col`` (see :func:`stop_grid_nb`); zeros where that exit never happens."""
    n = x.shape[0]
    n_e = bars.shape[0]
    w_tp = sl_levels.shape[0]
    w_tr = w_tp + tp_levels.shape[0]
    nan = np.nan
    summ = np.zeros((n_e * width, N_SUMMARY))
    for i in prange(n_e):
        t = bars[i]
        p = x[t]
        u = nxt_x[t + 1]
        if u < n:
            trade_summary_nb(x, pre, ext, idx, mr, t, u, x[u], slippage, summ[i])
        for a in range(sl_levels.shape[0]):
            u = hit_sl[a, i]
            if u < n:
                price, _ = stop_price_nb(1, p, p, o[u], h[u], lo[u], sl_levels[a], nan, nan)
                trade_summary_nb(x, pre, ext, idx, mr, t, u, price, 0.0, summ[(1 + a) * n_e + i])
        for a in range(tp_levels.shape[0]):
            u = hit_tp[a, i]
            if u < n:
                price, _ = stop_price_nb(1, p, p, o[u], h[u], lo[u], nan, tp_levels[a], nan)
                trade_summary_nb(
                    x, pre, ext, idx, mr, t, u, price, 0.0, summ[(1 + w_tp + a) * n_e + i]
                )
        for a in range(hit_tr.shape[0]):
            u = hit_tr[a, i]
            if u < n:
                price, _ = stop_price_nb(
                    1, p, _extreme(h, ext_h, t, u, p), o[u], h[u], lo[u], nan, nan, tr_levels[a]
                )
                trade_summary_nb(
                    x, pre, ext, idx, mr, t, u, price, 0.0, summ[(1 + w_tr + a) * n_e + i]
                )
    return summ


@njit(cache=True)
def _levels(stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct finite values of ``stop`` and each row's index among them (0 when off)."""
    finite = stop[stop == stop]
    levels = np.unique(finite) if finite.size else np.zeros(1)
    where = np.zeros(stop.shape[0], dtype=np.int64)
    for c in range(stop.shape[0]):
        if stop[c] == stop[c]:
            where[c] = np.searchsorted(levels, stop[c])
    return levels, where


@njit(cache=True, parallel=True)
def _hits(
    y: np.ndarray, ext: np.ndarray, which: int, sign: float, bars: np.ndarray, x: np.ndarray,
    levels: np.ndarray, direction: float,
) -> np.ndarray:  # fmt: skip
    """``[a, i]``: first bar after entry ``bars[i]`` reaching ``x * (1 + direction * levels[a])``."""
    n = y.shape[0]
    out = np.empty((levels.shape[0], bars.shape[0]), dtype=np.int32)
    for i in prange(bars.shape[0]):
        t = bars[i]
        for a in range(levels.shape[0]):
            level = x[t] * (1.0 + direction * levels[a])
            out[a, i] = first_at_or_below_nb(y, ext, which, sign, t + 1, n - 1, level)
    return out


@njit(cache=True, parallel=True)
def _trail_hits(
    h: np.ndarray, lo: np.ndarray, ext_h: np.ndarray, ext_lo: np.ndarray, bars: np.ndarray,
    x: np.ndarray, levels: np.ndarray,
) -> np.ndarray:  # fmt: skip
    """``[a, i]``: first bar after entry ``bars[i]`` hitting the trailing stop ``levels[a]``."""
    tab = trail_table_nb(h, lo, ext_h, ext_lo)
    out = np.empty((levels.shape[0], bars.shape[0]), dtype=np.int32)
    for i in prange(bars.shape[0]):
        t = bars[i]
        for a in range(levels.shape[0]):
            out[a, i] = first_trail_hit_nb(h, lo, ext_h, ext_lo, tab, t, x[t], levels[a])
    return out
