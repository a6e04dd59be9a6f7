"""Plain-Python twin of the backtest simulation (``quantcore._kernels.backtest.simulate_nb``).

Written from the documented semantics, one order at a time, with Python floats
and dicts; slow and obvious on purpose. Tests load it by path.
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


def simulate(
    close: list[list[float]],
    fill: list[list[float]],
    entries: list[list[bool]],
    exits: list[list[bool]],
    *,
    init_cash: float,
    fees: float,
    slippage: float,
    max_size: float,
    direction: str,
    integer_shares: bool,
) -> tuple[list[float], list[dict]]:
    """Return ``(equity per bar, trades)``; rows are bars, inner lists assets."""
    n = len(close)
    k = len(close[0]) if n else 0
    book = Book(init_cash)
    marks = [math.nan] * k
    equity = []
    for t in range(n):
        # closes first
        for j in range(k):
            pos = book.positions.get(j)
            e, x, p = entries[t][j], exits[t][j], fill[t][j]
            if pos is None or e == x or not _valid(p):
                continue
            wants_close = x if direction != "both" else (x and pos.side > 0) or (e and pos.side < 0)
            if wants_close:
                px = p * (1.0 - slippage) if pos.side > 0 else p * (1.0 + slippage)
                value = pos.size * px
                fee = value * fees
                book.cash = book.cash + pos.value(px) - fee
                pnl = pos.side * (value - pos.size * pos.entry_fill) - pos.entry_fee - fee
                book.trades.append(
                    dict(column=j, direction=pos.side, status=1, entry_idx=pos.entry_idx,
                         exit_idx=t, size=pos.size, entry_price=pos.entry_fill, exit_price=px,
                         entry_fees=pos.entry_fee, exit_fees=fee, pnl=pnl)
                )  # fmt: skip
                del book.positions[j]
        # then opens
        for j in range(k):
            e, x, p = entries[t][j], exits[t][j], fill[t][j]
            if j in book.positions or e == x or not _valid(p):
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
            budget = min(max_size * eq, book.cash)
            px = p * (1.0 + slippage) if side > 0 else p * (1.0 - slippage)
            if not budget > 0.0:
                continue
            size = budget / (px * (1.0 + fees))
            if integer_shares:
                size = float(math.floor(size))
                if size <= 0:
                    continue
            value = size * px
            fee = value * fees
            book.cash -= value + fee
            book.positions[j] = Position(side, size, px, fee, t)
        eq = book.cash
        for j in range(k):
            if math.isfinite(close[t][j]):
                marks[j] = close[t][j]
            if j in book.positions:
                eq += book.positions[j].value(marks[j])
        equity.append(eq)
    for j, pos in sorted(book.positions.items()):
        m = marks[j]
        pnl = pos.side * (pos.size * m - pos.size * pos.entry_fill) - pos.entry_fee
        book.trades.append(
            dict(column=j, direction=pos.side, status=0, entry_idx=pos.entry_idx, exit_idx=-1,
                 size=pos.size, entry_price=pos.entry_fill, exit_price=m,
                 entry_fees=pos.entry_fee, exit_fees=0.0, pnl=pnl)
        )  # fmt: skip
    return equity, book.trades
