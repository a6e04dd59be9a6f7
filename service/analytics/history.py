"""A portfolio's ledger valued on a calendar of closes (:func:`quantcore.valuation.ledger_value_history`).

This module turns ledger rows and a :class:`~service.analytics.prices.ClosePanel`
into the arrays ``quantcore`` takes; the method (holdings x closes, flows, daily
time-weighted returns) is documented there. Transactions dated on a non-trading
day apply on the next trading day.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from quantcore import valuation
from service.analytics.prices import ClosePanel

__all__ = ["LedgerRow", "ValueHistory", "value_history"]

F64 = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class LedgerRow:
    """One ledger entry as the history needs it (amounts as floats)."""

    symbol: str
    kind: str  # buy | sell | dividend
    quantity: float
    price: float
    fees: float
    date: dt.date


@dataclass(frozen=True, slots=True)
class ValueHistory:
    """Daily value, flows and returns of a portfolio on ``dates``."""

    dates: NDArray[np.datetime64]
    value: F64
    inflow: F64
    outflow: F64
    returns: F64
    holdings: F64  # (n_dates, n_symbols)


_KIND = {"buy": valuation.BUY, "sell": valuation.SELL, "dividend": valuation.DIVIDEND}


def value_history(rows: Sequence[LedgerRow], prices: ClosePanel) -> ValueHistory:
    """Holdings x closes and time-weighted daily returns of ``rows`` on ``prices``' calendar.

    Args:
        rows: the ledger in date order.
        prices: closes of every symbol in ``rows`` on the calendar to value.
    """
    col = {s: j for j, s in enumerate(prices.symbols)}
    days = np.array([r.date for r in rows], dtype="datetime64[D]")
    h = valuation.ledger_value_history(
        np.searchsorted(prices.dates, days, side="left").astype(np.int64),
        np.array([col[r.symbol] for r in rows], dtype=np.int64),
        np.array([_KIND.get(r.kind, -1) for r in rows], dtype=np.int64),
        np.array([r.quantity for r in rows], dtype=np.float64),
        np.array([r.price for r in rows], dtype=np.float64),
        np.array([r.fees for r in rows], dtype=np.float64),
        prices.close,
    )
    return ValueHistory(prices.dates, h.value, h.inflow, h.outflow, h.returns, h.holdings)
