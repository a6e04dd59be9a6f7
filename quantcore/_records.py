"""Structured record dtypes, defined once, and small integer enums numba can read."""

from __future__ import annotations

import numpy as np

__all__ = [
    "TRADE_CLOSED",
    "TRADE_LONG",
    "TRADE_OPEN",
    "TRADE_SHORT",
    "dividend_dt",
    "drawdown_dt",
    "lot_dt",
    "realized_dt",
    "trade_dt",
]

#: One drawdown period of a series: indices are positions on axis 0.
#: ``recovery`` is -1 while the drawdown is still open at the end of the series.
drawdown_dt = np.dtype(
    [
        ("column", np.int64),
        ("peak", np.int64),
        ("valley", np.int64),
        ("recovery", np.int64),
        ("depth", np.float64),
        ("duration", np.int64),
    ],
    align=True,
)

#: ``trade_dt["status"]``: the position is still open at the end (marked to market).
TRADE_OPEN = 0
#: ``trade_dt["status"]``: the position was closed by an exit (or a reversal).
TRADE_CLOSED = 1
#: ``trade_dt["direction"]``: a long position (bought, then sold).
TRADE_LONG = 1
#: ``trade_dt["direction"]``: a short position (sold, then bought back).
TRADE_SHORT = -1

#: One round trip of a backtest. Indices are positions on axis 0 (bars), ``column``
#: is the asset's column. Prices are fill prices (slippage included); ``size`` is
#: positive (the side is ``direction``). For an open trade ``exit_idx`` is -1,
#: ``exit_price`` is the last close it was marked at, ``exit_fees`` is 0 and
#: ``pnl``/``ret`` are unrealized. ``pnl`` is net of entry and exit fees and
#: ``ret = pnl / (size * entry_price)``. ``exit_reason`` is the engine's code
#: (``quantcore._kernels.backtest_orders.EXIT_*``; names in ``quantcore.backtest.EXIT_REASONS``):
#: 0 still open at the end, 1 signal, 2 stop loss, 3 take profit, 4 trailing stop, 5 time stop.
trade_dt = np.dtype(
    [
        ("column", np.int64),
        ("direction", np.int64),
        ("status", np.int64),
        ("entry_idx", np.int64),
        ("exit_idx", np.int64),
        ("size", np.float64),
        ("entry_price", np.float64),
        ("exit_price", np.float64),
        ("entry_fees", np.float64),
        ("exit_fees", np.float64),
        ("pnl", np.float64),
        ("ret", np.float64),
        ("exit_reason", np.int64),
    ],
    align=True,
)


#: Tax records (``quantcore.tax``). ``symbol`` is a code into the ledger's symbols,
#: ``lot`` the row of the buy that created the shares, days are days since
#: 1970-01-01, and quantities and money are exact int64 counts of 1e-8 units.
#: Every field is int64 (flags are 0/1) so the kernel's output is viewed, not copied.
#: One open tax lot; ``acquired`` is earlier than ``purchased`` after a wash sale.
lot_dt = np.dtype(
    [
        ("symbol", np.int64),
        ("lot", np.int64),
        ("purchased", np.int64),
        ("acquired", np.int64),
        ("quantity", np.int64),
        ("basis", np.int64),
        ("adjustment", np.int64),
        ("replacement", np.int64),
    ],
    align=True,
)

#: One realized piece: the part of a sell (``row``) taken from one lot.
#: ``disallowed`` is the wash-sale loss added back (Form 8949 code W).
realized_dt = np.dtype(
    [
        ("symbol", np.int64),
        ("lot", np.int64),
        ("row", np.int64),
        ("purchased", np.int64),
        ("acquired", np.int64),
        ("sold", np.int64),
        ("quantity", np.int64),
        ("proceeds", np.int64),
        ("basis", np.int64),
        ("disallowed", np.int64),
        ("long_term", np.int64),
    ],
    align=True,
)

#: One dividend row: ``amount`` = shares x dividend per share, ``qualified`` its
#: qualified part; ``ex_date`` the day used for the holding-period test.
dividend_dt = np.dtype(
    [
        ("symbol", np.int64),
        ("row", np.int64),
        ("date", np.int64),
        ("ex_date", np.int64),
        ("amount", np.int64),
        ("qualified", np.int64),
    ],
    align=True,
)
