"""Portfolio value history and time-weighted daily returns from the ledger.

For trading day :math:`t` of the calendar (the union of the held assets' trading
days), with holdings :math:`q_{t,i}` (the ledger's cumulative buys minus sells of
asset *i* dated on or before *t*) and closes :math:`p_{t,i}` (carried forward over
days an asset did not trade):

* value :math:`V_t = \\sum_i q_{t,i} p_{t,i}`;
* inflows :math:`B_t`: the cost of the day's buys (quantity x price + fees), invested
  at the start of the day;
* outflows :math:`W_t`: the day's sale proceeds and dividends (quantity x price -
  fees, the cash received, as the tax figures count them), withdrawn at the end of the day;
* daily return :math:`r_t = (V_t + W_t) / (V_{t-1} + B_t) - 1` (undefined, NaN,
  when :math:`V_{t-1} + B_t \\le 0`: no capital at work).

The chained product of :math:`1 + r_t` is the time-weighted return: deposits and
withdrawals are not gains. It equals ``quantcore.returns.time_weighted_return`` on
the day split in two sub-periods (values :math:`V_t + W_t` then :math:`V_t`,
flows :math:`B_t` then :math:`-W_t`). A dividend is income, so it counts as return.
Transactions dated on a non-trading day apply on the next trading day.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

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


def value_history(rows: Sequence[LedgerRow], prices: ClosePanel) -> ValueHistory:
    """Holdings x closes and time-weighted daily returns (see the module notes).

    Args:
        rows: the ledger in date order.
        prices: closes of every symbol in ``rows`` on the calendar to value.
    """
    n, k = prices.close.shape
    col = {s: j for j, s in enumerate(prices.symbols)}
    delta = np.zeros((n + 1, k))
    inflow = np.zeros(n + 1)
    outflow = np.zeros(n + 1)
    if rows:
        days = np.array([r.date for r in rows], dtype="datetime64[D]")
        idx = np.searchsorted(prices.dates, days, side="left")
        j = np.array([col[r.symbol] for r in rows], dtype=np.int64)
        qty = np.array([r.quantity for r in rows])
        amount = qty * np.array([r.price for r in rows])
        fees = np.array([r.fees for r in rows])
        kind = np.array([r.kind for r in rows])
        buy, sell, div = kind == "buy", kind == "sell", kind == "dividend"
        np.add.at(delta, (idx[buy], j[buy]), qty[buy])
        np.add.at(delta, (idx[sell], j[sell]), -qty[sell])
        np.add.at(inflow, idx[buy], amount[buy] + fees[buy])
        np.add.at(outflow, idx[sell], amount[sell] - fees[sell])
        np.add.at(outflow, idx[div], amount[div] - fees[div])
    # row n collects what is dated after the calendar: ignored
    holdings = np.cumsum(delta[:n], axis=0)
    held = np.abs(holdings) > 1e-12
    priced = np.where(held, holdings * prices.close, 0.0)
    value = priced.sum(axis=1)  # NaN when a held asset has no price yet
    inflow, outflow = inflow[:n], outflow[:n]
    base = np.concatenate(([0.0], value[:-1])) + inflow
    with np.errstate(divide="ignore", invalid="ignore"):
        returns = np.where(base > 1e-9, (value + outflow) / base - 1.0, np.nan)
    return ValueHistory(prices.dates, value, inflow, outflow, returns, holdings)
