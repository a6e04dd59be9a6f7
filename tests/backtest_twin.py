"""Plain-Python twin of the backtest simulation (``quantcore._kernels.backtest.simulate_nb``).

Written from the documented semantics (docs/backtest.md, "Order of operations"), one
order at a time, with Python floats and dicts; slow and obvious on purpose. Tests
load it by path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["Position", "simulate"]


@dataclass
class Position:
    side: int  # +1 long, -1 short
    size: float
    entry_fill: float
    entry_fee: float
    entry_idx: int
    anchor: float  # order price the stop levels are measured from
    extreme: float  # highest high (long) / lowest low (short) seen after the entry bar
    borrow: float = 0.0

    def value(self, price: float) -> float:
        if self.side > 0:
            return self.size * price
        return self.size * (2.0 * self.entry_fill - price)


@dataclass
class Book:
    cash: float
    positions: dict[int, Position] = field(default_factory=dict)
    trades: list[dict] = field(default_factory=list)


def _valid(p: float) -> bool:
    return math.isfinite(p) and p > 0.0


def _stop_hit(
    pos: Position, o: float, h: float, lo: float, stops: dict
) -> tuple[float, str] | None:
    """The stop fill of this bar and its reason, if any: the loss side (fixed or
    trailing, the trailing one when its level is the tighter) first."""
    sl, tp, trail = stops["sl"], stops["tp"], stops["trail"]
    if pos.side > 0:
        levels = []
        if sl is not None:
            levels.append(pos.anchor * (1.0 - sl))
        if trail is not None:
            levels.append(pos.extreme * (1.0 - trail))
        if levels and lo <= max(levels):
            level = max(levels)
            why = (
                "trailing_stop"
                if (trail is not None and level > levels[0]) or sl is None
                else "stop_loss"
            )
            return (o if o <= level else level), why
        if tp is not None and h >= pos.anchor * (1.0 + tp):
            level = pos.anchor * (1.0 + tp)
            return (o if o >= level else level), "take_profit"
    else:
        levels = []
        if sl is not None:
            levels.append(pos.anchor * (1.0 + sl))
        if trail is not None:
            levels.append(pos.extreme * (1.0 + trail))
        if levels and h >= min(levels):
            level = min(levels)
            why = (
                "trailing_stop"
                if (trail is not None and level < levels[0]) or sl is None
                else "stop_loss"
            )
            return (o if o >= level else level), why
        if tp is not None and lo <= pos.anchor * (1.0 - tp):
            level = pos.anchor * (1.0 - tp)
            return (o if o <= level else level), "take_profit"
    return None


def _units(size_type: str, size: float, cash: float, equity: float, leverage: float,
           px: float, fees: float, integer_shares: bool) -> float:  # fmt: skip
    cap = cash + (leverage - 1.0) * equity
    if size_type == "units":
        units = size if size * px * (1.0 + fees) <= cap else cap / (px * (1.0 + fees))
    else:
        spend = {
            "percent": size * equity,
            "amount": size,
            "target_percent": size * equity * (1.0 + fees),
        }[size_type]
        spend = min(spend, cap)
        if not spend > 0.0:
            return 0.0
        units = spend / (px * (1.0 + fees))
    if integer_shares:
        units = float(math.floor(units))
    return max(units, 0.0)


def simulate(
    close: list[list[float]],
    fill: list[list[float]],
    entries: list[list[bool]],
    exits: list[list[bool]],
    *,
    init_cash: float,
    fees: float,
    slippage: float,
    direction: str,
    integer_shares: bool,
    size_type: str = "percent",
    size: float = 1.0,
    leverage: float = 1.0,
    borrow_per_bar: float = 0.0,
    use_open: bool = False,
    ohlc: tuple[list[list[float]], list[list[float]], list[list[float]]] | None = None,
    sl: float | None = None,
    tp: float | None = None,
    trail: float | None = None,
    time_stop: int | None = None,
) -> tuple[list[float], list[dict]]:
    """Return ``(equity per bar, trades)``; rows are bars, inner lists assets.

    ``fill`` is the order price of each bar (signals already shifted for next-open
    fills, ``use_open`` set); ``ohlc`` the opens, highs and lows the stops see
    (default: the closes for all three).
    """
    n = len(close)
    k = len(close[0]) if n else 0
    opens, highs, lows = ohlc if ohlc is not None else (close, close, close)
    stops = {"sl": sl, "tp": tp, "trail": trail}
    book = Book(init_cash)
    marks = [math.nan] * k
    equity = []

    def exit_(j: int, t: int, price: float, slip: float, reason: str) -> None:
        pos = book.positions.pop(j)
        px = price * (1.0 - slip) if pos.side > 0 else price * (1.0 + slip)
        value = pos.size * px
        fee = value * fees
        book.cash = book.cash + pos.value(px) - fee
        pnl = pos.side * (value - pos.size * pos.entry_fill) - pos.entry_fee - fee - pos.borrow
        book.trades.append(
            dict(column=j, direction=pos.side, status=1, entry_idx=pos.entry_idx, exit_idx=t,
                 size=pos.size, entry_price=pos.entry_fill, exit_price=px,
                 entry_fees=pos.entry_fee, exit_fees=fee, pnl=pnl, exit_reason=reason)
        )  # fmt: skip

    for t in range(n):
        # borrow: a short held into this bar pays one bar on its last mark
        for j, pos in book.positions.items():
            if pos.side < 0 and t > pos.entry_idx and borrow_per_bar > 0.0:
                cost = borrow_per_bar * pos.size * marks[j]
                pos.borrow += cost
                book.cash -= cost
        # exits, in the order of the clock within the bar
        stopped = set()
        for j in range(k):
            pos = book.positions.get(j)
            if pos is None:
                continue
            e, x, p = entries[t][j], exits[t][j], fill[t][j]
            signal = e != x and (
                x if direction != "both" else (x and pos.side > 0) or (e and pos.side < 0)
            )
            due = time_stop is not None and t - pos.entry_idx >= time_stop
            if use_open and _valid(p) and (signal or due):
                exit_(j, t, p, slippage, "signal" if signal else "time_stop")
                if not signal:
                    stopped.add(j)
                continue
            o, h, lo = opens[t][j], highs[t][j], lows[t][j]
            if t > pos.entry_idx and not math.isnan(h) and not math.isnan(lo):
                hit = _stop_hit(pos, o, h, lo, stops)
                pos.extreme = max(pos.extreme, h) if pos.side > 0 else min(pos.extreme, lo)
                if hit is not None:
                    exit_(j, t, hit[0], 0.0, hit[1])
                    stopped.add(j)
                    continue
            if not use_open and _valid(p) and (due or signal):
                exit_(j, t, p, slippage, "time_stop" if due else "signal")
                if due:
                    stopped.add(j)
        # then entries
        for j in range(k):
            e, x, p = entries[t][j], exits[t][j], fill[t][j]
            if j in book.positions or j in stopped or e == x or not _valid(p):
                continue
            side = {"long": 1 if e else 0, "short": -1 if e else 0, "both": 1 if e else -1}[
                direction
            ]
            if side == 0:
                continue
            eq = book.cash
            for i, other in book.positions.items():
                q = fill[t][i] if _valid(fill[t][i]) else marks[i]
                eq += other.value(q)
            px = p * (1.0 + slippage) if side > 0 else p * (1.0 - slippage)
            units = _units(size_type, size, book.cash, eq, leverage, px, fees, integer_shares)
            if units <= 0.0:
                continue
            value = units * px
            fee = value * fees
            book.cash -= value + fee
            book.positions[j] = Position(side, units, px, fee, t, p, p)
        eq = book.cash
        for j in range(k):
            if math.isfinite(close[t][j]):
                marks[j] = close[t][j]
            if j in book.positions:
                eq += book.positions[j].value(marks[j])
        equity.append(eq)
    for j, pos in sorted(book.positions.items()):
        m = marks[j]
        pnl = pos.side * (pos.size * m - pos.size * pos.entry_fill) - pos.entry_fee - pos.borrow
        book.trades.append(
            dict(column=j, direction=pos.side, status=0, entry_idx=pos.entry_idx, exit_idx=-1,
                 size=pos.size, entry_price=pos.entry_fill, exit_price=m,
                 entry_fees=pos.entry_fee, exit_fees=0.0, pnl=pnl, exit_reason="end")
        )  # fmt: skip
    return equity, book.trades
