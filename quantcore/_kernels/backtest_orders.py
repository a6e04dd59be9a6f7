"""The order engine: the per-bar order and fill rules every backtest kernel calls.

One asset's position lives in a small float64 array (the ``POS_*`` slots below).
Each bar, for each asset, a kernel calls, in this order:

1. :func:`borrow_step_nb` (shorts pay ``borrow_rate`` per bar held),
2. :func:`exit_step_nb` (stops and signal exits, in the time order within the bar),
   then :func:`close_position_nb` at the price it returns,
3. :func:`signal_action_nb` and, when it says open, :func:`order_units_nb` and
   :func:`open_position_nb`,
4. marking to market with :func:`mark_value_nb`.

:func:`quantcore._kernels.backtest.simulate_nb` (several assets, shared cash) calls
them asset by asset; :func:`asset_bar_nb` strings them together for one asset on its
own capital, and is the bar step of the sweeps. A new kind of order (rebalancing to
target weights, say) is a new caller of these functions, not a copy of them.

Cash model: an entry of ``size`` units at fill price ``f`` debits ``size * f`` plus
the fee ``size * f * fees`` from cash, long or short (a short's proceeds are held as
collateral). A position is worth ``size * p`` (long) or ``size * (2 f - p)`` (short)
at price ``p``; equity is cash plus the positions' worth. With ``leverage > 1``
cash may go negative (borrowed) as long as gross exposure stays within
``leverage * equity`` at the entry.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "DIRECTION_BOTH",
    "DIRECTION_LONG",
    "DIRECTION_SHORT",
    "EXIT_SIGNAL",
    "EXIT_SL",
    "EXIT_TIME",
    "EXIT_TP",
    "EXIT_TRAIL",
    "N_POS",
    "POS_ANCHOR",
    "POS_BORROW",
    "POS_ENTRY_FEE",
    "POS_ENTRY_FILL",
    "POS_ENTRY_IDX",
    "POS_EXTREME",
    "POS_SIDE",
    "POS_SIZE",
    "SIZE_AMOUNT",
    "SIZE_PERCENT",
    "SIZE_TARGET_PERCENT",
    "SIZE_UNITS",
    "borrow_step_nb",
    "close_position_nb",
    "entry_fill_nb",
    "exit_step_nb",
    "mark_value_nb",
    "open_position_nb",
    "order_units_nb",
    "signal_action_nb",
    "stop_price_nb",
]

#: ``direction`` codes: entries open longs, exits close them.
DIRECTION_LONG = 0
#: entries open shorts, exits cover them.
DIRECTION_SHORT = 1
#: entries go long and exits go short, reversing an open position.
DIRECTION_BOTH = 2

#: ``size_type`` codes: ``size`` is a fraction of equity spent, fees included.
SIZE_PERCENT = 0
#: ``size`` is an amount of cash spent, fees included.
SIZE_AMOUNT = 1
#: ``size`` is a number of units.
SIZE_UNITS = 2
#: ``size`` is the position's value as a fraction of equity, fees on top.
SIZE_TARGET_PERCENT = 3

#: Exit reasons (:func:`exit_step_nb`): no exit, signal, stop loss, take profit,
#: trailing stop, time stop.
EXIT_NONE = 0
EXIT_SIGNAL = 1
EXIT_SL = 2
EXIT_TP = 3
EXIT_TRAIL = 4
EXIT_TIME = 5

# slots of a position array
POS_SIZE = 0  # units, > 0; 0 when flat
POS_SIDE = 1  # +1 long, -1 short
POS_ENTRY_FILL = 2  # entry fill price (slippage included)
POS_ENTRY_FEE = 3
POS_ENTRY_IDX = 4
POS_ANCHOR = 5  # price the stop levels are measured from (the entry's order price)
POS_EXTREME = 6  # highest high (long) / lowest low (short) since the entry bar, for trailing
POS_BORROW = 7  # borrow cost paid so far
N_POS = 8


@njit(cache=True)
def entry_fill_nb(price: float, side: int, slippage: float) -> float:
    """Fill price of an order at ``price`` moved against a trader opening ``side``."""
    return price * (1.0 + slippage) if side > 0 else price * (1.0 - slippage)


@njit(cache=True)
def order_units_nb(
    size_type: int,
    size: float,
    cash: float,
    equity: float,
    leverage: float,
    fill: float,
    fees: float,
    integer_shares: bool,
) -> float:
    """Units an entry at ``fill`` buys (or shorts); 0 when nothing can be.

    The spend ``units * fill * (1 + fees)`` is what ``size_type`` asks (percent:
    ``size * equity``; amount: ``size``; target_percent: ``size * equity * (1 +
    fees)``, a position worth ``size * equity``; units: ``size`` units), capped at
    ``cash + (leverage - 1) * equity`` (gross exposure within ``leverage * equity``).
    """
    if not fill > 0.0:
        return 0.0
    cap = cash + (leverage - 1.0) * equity
    per_unit = fill * (1.0 + fees)
    if size_type == SIZE_UNITS:
        units = size
        if units * per_unit > cap:
            units = cap / per_unit
    else:
        if size_type == SIZE_PERCENT:
            budget = size * equity
        elif size_type == SIZE_AMOUNT:
            budget = size
        else:
            budget = size * equity * (1.0 + fees)
        budget = min(budget, cap)
        if not budget > 0.0:
            return 0.0
        units = budget / per_unit
    if integer_shares:
        units = np.floor(units)
    return units if units > 0.0 else 0.0


@njit(cache=True)
def open_position_nb(cash: float, units: float, fill: float, fees: float) -> tuple[float, float]:
    """Debit an entry of ``units`` at ``fill``: returns ``(cash, fee)``."""
    value = units * fill
    fee = value * fees
    return cash - (value + fee), fee


@njit(cache=True)
def mark_value_nb(size: float, side: int, entry_fill: float, price: float) -> float:
    """Worth of a position at ``price``: ``size * price`` long, ``size * (2 f - price)`` short."""
    if side > 0:
        return size * price
    return size * (2.0 * entry_fill - price)


@njit(cache=True)
def close_position_nb(
    cash: float,
    size: float,
    side: int,
    entry_fill: float,
    entry_fee: float,
    price: float,
    fees: float,
    slippage: float,
) -> tuple[float, float, float, float]:
    """Close a position at ``price`` moved against the trader by ``slippage``.

    Returns ``(cash, pnl, fill, fee)``; ``pnl`` is net of the entry and exit fees
    (the caller subtracts any borrow cost).
    """
    fill = price * (1.0 - slippage) if side > 0 else price * (1.0 + slippage)
    value = size * fill
    fee = value * fees
    cash = cash + mark_value_nb(size, side, entry_fill, fill) - fee
    pnl = side * (value - size * entry_fill) - entry_fee - fee
    return cash, pnl, fill, fee


@njit(cache=True)
def signal_action_nb(side: int, e: bool, x: bool, direction: int) -> tuple[bool, int]:
    """What an entry/exit signal pair does to a position on ``side`` (0 flat).

    Returns ``(close, open_side)``: whether the position closes, and the side a
    flat (or just closed) book opens (0: none). Both signals, or neither, do
    nothing; an entry while holding and an exit while flat are ignored, except
    that with ``DIRECTION_BOTH`` the opposite signal reverses the position.
    """
    if e == x:
        return False, 0
    close = False
    if side != 0:
        if direction == DIRECTION_BOTH:
            close = (x and side > 0) or (e and side < 0)
        else:
            close = x
        if not close:
            return False, 0
    if direction == DIRECTION_LONG:
        new_side = 1 if e else 0
    elif direction == DIRECTION_SHORT:
        new_side = -1 if e else 0
    else:
        new_side = 1 if e else -1
    return close, new_side


@njit(cache=True)
def stop_price_nb(
    side: int,
    anchor: float,
    extreme: float,
    o: float,
    h: float,
    lo: float,
    sl: float,
    tp: float,
    trail: float,
) -> tuple[float, int]:
    """Price and reason of a stop hit during a bar with open ``o``, high ``h``, low ``lo``.

    Long: the stop-loss level is the higher of ``anchor * (1 - sl)`` and ``extreme *
    (1 - trail)``; hit when the low reaches it, filled at the level, or at the
    open when the bar opens through it. Then the take profit ``anchor * (1 + tp)``
    against the high. Shorts mirror (levels above for losses). A loss level is
    checked before the profit level: when one bar spans both, the loss is taken.
    NaN stops are off. Returns ``(nan, EXIT_NONE)`` when nothing is hit.
    """
    if side > 0:
        level = np.nan
        why = EXIT_NONE
        if sl == sl:
            level = anchor * (1.0 - sl)
            why = EXIT_SL
        if trail == trail:
            tl = extreme * (1.0 - trail)
            if not tl <= level:
                level = tl
                why = EXIT_TRAIL
        if level == level and lo <= level:
            return (o if o <= level else level), why
        if tp == tp:
            level = anchor * (1.0 + tp)
            if h >= level:
                return (o if o >= level else level), EXIT_TP
    else:
        level = np.nan
        why = EXIT_NONE
        if sl == sl:
            level = anchor * (1.0 + sl)
            why = EXIT_SL
        if trail == trail:
            tl = extreme * (1.0 + trail)
            if not tl >= level:
                level = tl
                why = EXIT_TRAIL
        if level == level and h >= level:
            return (o if o >= level else level), why
        if tp == tp:
            level = anchor * (1.0 - tp)
            if lo <= level:
                return (o if o <= level else level), EXIT_TP
    return np.nan, EXIT_NONE


@njit(cache=True)
def borrow_step_nb(pos: np.ndarray, cash: float, t: int, mark: float, rate: float) -> float:
    """Charge a short held into bar ``t`` one bar of borrow: ``rate * size * mark``.

    ``rate`` is the per-bar rate (``borrow_rate / periods_per_year``) and ``mark``
    the last close; returns the new cash. Longs and flat books pay nothing.
    """
    if rate > 0.0 and pos[POS_SIZE] != 0.0 and pos[POS_SIDE] < 0.0 and t > pos[POS_ENTRY_IDX]:
        cost = rate * pos[POS_SIZE] * mark
        pos[POS_BORROW] += cost
        return float(cash - cost)
    return cash


@njit(cache=True)
def exit_step_nb(
    pos: np.ndarray,
    t: int,
    o: float,
    h: float,
    lo: float,
    p: float,
    e: bool,
    x: bool,
    use_open: bool,
    direction: int,
    sl: float,
    tp: float,
    trail: float,
    time_stop: float,
) -> tuple[float, int]:
    """Whether (and at what price) an open position exits during bar ``t``.

    ``p`` is the bar's order price (the close, or the open for next-open fills),
    ``e, x`` the signals acted on at this bar. Orders follow the clock: with
    next-open fills a signal exit or a due time stop fills at the open first;
    then the price stops (from the bar after the entry bar on, see
    :func:`stop_price_nb`); then, with close fills, a due time stop or a signal
    exit at the close. The trailing extreme is updated with the bar's high (low)
    after the check. Returns ``(price, reason)``; ``(nan, EXIT_NONE)`` to hold.
    Stop fills carry no slippage (a resting stop order at its level); the caller
    passes slippage only for ``EXIT_SIGNAL`` and ``EXIT_TIME``.
    """
    if pos[POS_SIZE] == 0.0:
        return np.nan, EXIT_NONE
    side = int(pos[POS_SIDE])
    entry = int(pos[POS_ENTRY_IDX])
    valid = p == p and p > 0.0
    sig, _ = signal_action_nb(side, e, x, direction)
    due = time_stop == time_stop and t - entry >= time_stop
    if use_open and valid:
        if sig:
            return p, EXIT_SIGNAL
        if due:
            return p, EXIT_TIME
    if t > entry and lo == lo and h == h:
        price, why = stop_price_nb(side, pos[POS_ANCHOR], pos[POS_EXTREME], o, h, lo, sl, tp, trail)
        if side > 0:
            if h > pos[POS_EXTREME]:
                pos[POS_EXTREME] = h
        elif lo < pos[POS_EXTREME]:
            pos[POS_EXTREME] = lo
        if why != EXIT_NONE:
            return price, why
    if not use_open and valid:
        if due:
            return p, EXIT_TIME
        if sig:
            return p, EXIT_SIGNAL
    return np.nan, EXIT_NONE
