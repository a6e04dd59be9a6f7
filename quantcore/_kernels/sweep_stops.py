"""Fast path of a stop grid: one signal set, many fixed stop levels, O(log n) per trade.

For a long-only, all-in, fractional-share backtest filled at the close (the case of
:func:`quantcore._kernels.sweep_fast.ma_cross_row_nb`) with fixed ``sl_stop``,
``tp_stop`` and ``time_stop`` levels, a trade entered at bar ``t`` ends at the first
of: the first bar after ``t`` whose low reaches the loss level, the first whose
high reaches the profit level, the time stop, the next exit signal. The first two
are found by binary lifting over sparse tables of range minima of the lows and
maxima of the highs (:func:`first_at_or_below_nb`), so a row costs O(log n) per
trade, not a bar-by-bar scan. The fill at the stop bar comes from the engine's own
:func:`~quantcore._kernels.orders.stop_price_nb`; entries and exits go through
the order engine's sizing and fills; the holding's returns and drawdown come from
the close-price prefix sums and trees of :mod:`quantcore._kernels.sweep_fast`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from quantcore._kernels.backtest import N_STATS, finalize_stats_nb
from quantcore._kernels.orders import (
    SIZE_PERCENT,
    close_position_nb,
    entry_fill_nb,
    open_position_nb,
    order_units_nb,
    stop_price_nb,
)
from quantcore._kernels.sweep_fast import (
    extrema_table_nb,
    fold_bar_nb,
    fold_holding_nb,
    price_tree_nb,
    return_prefix_nb,
)

__all__ = ["first_at_or_below_nb", "next_signal_nb", "stop_grid_nb"]


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

    ``ext`` is :func:`~quantcore._kernels.sweep_fast.extrema_table_nb` of ``x``;
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
def _row(
    o: np.ndarray, h: np.ndarray, lo: np.ndarray, x: np.ndarray, nxt_e: np.ndarray,
    nxt_x: np.ndarray, slot: np.ndarray, hit_sl: np.ndarray, hit_tp: np.ndarray, a_sl: int,
    a_tp: int, pre: np.ndarray, ext: np.ndarray, idx: np.ndarray, mr: np.ndarray, first: int,
    sl: float, tp: float,
    time_stop: float, fees: float, size: float, init_cash: float, slippage: float,
    periods_per_year: float, out: np.ndarray, acc: np.ndarray,
) -> None:  # fmt: skip
    n = x.shape[0]
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
        eq = cash + q * p
        fold_bar_nb(eq, prev, acc)
        prev = eq
        # the bar the position would leave on without price stops
        end = nxt_x[t + 1]
        if time_stop == time_stop and t + time_stop < end:
            end = t + int(time_stop)
        last = min(end, n - 1)
        hit = n
        if sl == sl:
            hit = int(hit_sl[slot[t], a_sl])
        if tp == tp:
            hit = min(hit, int(hit_tp[slot[t], a_tp]))
        if hit <= last:
            oh, hh, lh = float(o[hit]), float(h[hit]), float(lo[hit])
            price, _ = stop_price_nb(1, p, p, oh, hh, lh, sl, tp, np.nan)
            u = hit
            slip = 0.0
        elif end < n:
            price = x[end]
            u = end
            slip = slippage
        else:  # open at the end: marked to market at the last close
            held = q
            entry = t
            break
        fold_holding_nb(x, pre, ext, idx, mr, t, u - 1, cash, q, acc)
        prev = cash + q * x[u - 1]
        cash, pnl, _, _ = close_position_nb(cash, q, 1, f, entry_fee, price, fees, slip)
        n_closed += 1
        if pnl > 0.0:
            n_wins += 1
            gross_profit += pnl
        elif pnl < 0.0:
            gross_loss -= pnl
        exposed += u - t
        fold_bar_nb(cash, prev, acc)
        prev = cash
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
    time_stop: np.ndarray,
    fees: np.ndarray,
    size: np.ndarray,
    init_cash: float,
    slippage: float,
    periods_per_year: float,
) -> np.ndarray:
    """Metrics rows of one asset's signals under ``m`` rows of stop levels, fees and sizes.

    Long only, ``size >= 1`` percent of equity, leverage 1, fractional shares,
    fills at the close, no trailing stop; prices finite and positive from
    ``first`` on (the lows and highs too). ``sl, tp, time_stop`` are NaN where off.
    Equals :func:`~quantcore._kernels.sweep.sweep_signals_nb` row for row (the
    per-bar engine) to rounding. Tables shared by all rows are built once;
    memory O(n log n + m).
    """
    m = sl.shape[0]
    n = x.shape[0]
    out = np.empty((m, N_STATS))
    nxt_e = next_signal_nb(entries, exits)
    nxt_x = next_signal_nb(exits, entries)
    pre = return_prefix_nb(x, first)
    ext = extrema_table_nb(x)
    idx, mr = price_tree_nb(x, first)
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
    sl_levels, a_sl = _levels(sl)
    tp_levels, a_tp = _levels(tp)
    hit_sl = _hits(lo, extrema_table_nb(lo), 1, 1.0, bars[:n_e], x, sl_levels, -1.0)
    hit_tp = _hits(h, extrema_table_nb(h), 0, -1.0, bars[:n_e], x, tp_levels, 1.0)
    lanes = min(m, 64)
    for lane in prange(lanes):
        acc = np.empty(8)
        for c in range(lane, m, lanes):
            _row(
                o, h, lo, x, nxt_e, nxt_x, slot, hit_sl, hit_tp, a_sl[c], a_tp[c], pre, ext,
                idx, mr, first, sl[c], tp[c], time_stop[c], fees[c], size[c], init_cash,
                slippage, periods_per_year, out[c], acc,
            )  # fmt: skip
    return out


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
    """``[i, a]``: first bar after entry ``bars[i]`` reaching ``x * (1 + direction * levels[a])``."""
    n = y.shape[0]
    out = np.empty((bars.shape[0], levels.shape[0]), dtype=np.int64)
    for i in prange(bars.shape[0]):
        t = bars[i]
        for a in range(levels.shape[0]):
            level = x[t] * (1.0 + direction * levels[a])
            out[i, a] = first_at_or_below_nb(y, ext, which, sign, t + 1, n - 1, level)
    return out
