"""A portfolio's ledger valued on a calendar of closes (:func:`quantcore.valuation.ledger_value_history`).

This module turns ledger rows, a :class:`~service.analytics.prices.ClosePanel` and an
:class:`~service.analytics.prices.FxPanel` into the arrays ``quantcore`` takes; the
method (holdings x closes x rates, cash per currency, external flows, daily
time-weighted returns) is documented there. Transactions dated on a non-trading day
apply on the next trading day.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from quantcore import valuation
from service.analytics.prices import ClosePanel, FxPanel
from service.ledger.actions import LedgerRow

__all__ = [
    "CASH_KINDS",
    "LedgerRow",
    "ValueHistory",
    "row_currencies",
    "value_history",
]

F64 = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class ValueHistory:
    """Daily value, external flows and returns of a portfolio on ``dates`` (in its base currency)."""

    dates: NDArray[np.datetime64]
    value: F64
    inflow: F64
    outflow: F64
    returns: F64
    holdings: F64  # (n_dates, n_symbols)


_KIND = {
    "buy": valuation.BUY,
    "sell": valuation.SELL,
    "dividend": valuation.DIVIDEND,
    "deposit": valuation.DEPOSIT,
    "withdrawal": valuation.WITHDRAWAL,
    "interest": valuation.INTEREST,
    "fee": valuation.FEE,
}
#: Rows without an asset.
CASH_KINDS = frozenset({"deposit", "withdrawal", "interest", "fee"})


def _currency_of(row: LedgerRow, asset_currency: Mapping[str, str], base: str) -> str:
    if row.currency:
        return row.currency
    return asset_currency.get(row.symbol, base) if row.symbol else base


def row_currencies(
    rows: Iterable[LedgerRow], asset_currency: Mapping[str, str], base: str
) -> tuple[str, ...]:
    """The currencies ``rows`` hold cash or securities in, ``base`` first, then sorted."""
    seen = {_currency_of(r, asset_currency, base) for r in rows}
    seen |= {asset_currency.get(r.symbol, base) for r in rows if r.symbol}
    return (base, *sorted(seen - {base}))


def value_history(
    rows: Sequence[LedgerRow],
    prices: ClosePanel,
    *,
    fx: FxPanel | None = None,
    asset_currency: Mapping[str, str] | None = None,
) -> ValueHistory:
    """Securities and cash in the base currency and time-weighted daily returns of ``rows``
    on ``prices``' calendar.

    Args:
        rows: the ledger in date order (cash rows have an empty ``symbol``).
        prices: closes of every symbol in ``rows`` on the calendar to value.
        fx: rates of every currency of ``rows`` on the same calendar (``fx.codes[0]`` is
            the base currency). Without it every amount counts as in one currency.
        asset_currency: symbol -> the currency its closes and cash are in (default: base).
    """
    of_asset = asset_currency or {}
    col = {s: j for j, s in enumerate(prices.symbols)}
    days = np.array([r.date for r in rows], dtype="datetime64[D]")
    rates: F64 | None = None
    cur_col: NDArray[np.int64] | None = None
    asset_cur: NDArray[np.int64] | None = None
    if fx is not None:
        base = fx.codes[0]
        fx_col = {c: i for i, c in enumerate(fx.codes)}
        rates = fx.rates
        cur_col = np.array([fx_col[_currency_of(r, of_asset, base)] for r in rows], dtype=np.int64)
        asset_cur = np.array(
            [fx_col[of_asset.get(s, base)] for s in prices.symbols], dtype=np.int64
        )
    h = valuation.ledger_value_history(
        np.searchsorted(prices.dates, days, side="left").astype(np.int64),
        np.array([col[r.symbol] if r.symbol else -1 for r in rows], dtype=np.int64),
        np.array([_KIND.get(r.kind, -1) for r in rows], dtype=np.int64),
        np.array([r.quantity for r in rows], dtype=np.float64),
        np.array([r.price for r in rows], dtype=np.float64),
        np.array([r.fees for r in rows], dtype=np.float64),
        prices.close,
        currency=cur_col,
        rates=rates,
        asset_currency=asset_cur,
    )
    return ValueHistory(prices.dates, h.value, h.inflow, h.outflow, h.returns, h.holdings)
