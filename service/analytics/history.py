"""A portfolio's ledger valued on a calendar of closes (:func:`quantcore.valuation.ledger_value_history`).

This module turns ledger rows, a :class:`~service.analytics.prices.ClosePanel` and an
:class:`~service.analytics.prices.FxPanel` into the arrays ``quantcore`` takes; the
method (holdings x closes x rates, cash per currency, external flows, daily
time-weighted returns) is documented there. Transactions dated on a non-trading day
apply on the next trading day.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from quantcore import valuation
from service.analytics.prices import ClosePanel, FxPanel
from service.ledger.derived import HistoryInput, LedgerRow

__all__ = [
    "CASH_KINDS",
    "HistoryInput",
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


#: Rows without an asset.
CASH_KINDS = frozenset({"deposit", "withdrawal", "interest", "fee"})


def _input(rows: HistoryInput | Sequence[LedgerRow]) -> HistoryInput:
    return rows if isinstance(rows, HistoryInput) else HistoryInput.from_rows(rows)


def _currencies(h: HistoryInput, asset_currency: Mapping[str, str], base: str) -> list[str]:
    """Per row, the currency its cash moves in: its own; else its asset's; else ``base``."""
    per_symbol = np.array([*(asset_currency.get(s, base) for s in h.names), base], dtype=object)
    per_code = np.array([*h.codes, ""], dtype=object)
    own = per_code[h.currency]  # -1 picks ""
    asset = per_symbol[h.symbol]  # -1 picks base
    return np.where(own != "", own, asset).tolist() if len(h) else []


def row_currencies(
    rows: HistoryInput | Sequence[LedgerRow], asset_currency: Mapping[str, str], base: str
) -> tuple[str, ...]:
    """The currencies ``rows`` hold cash or securities in, ``base`` first, then sorted."""
    h = _input(rows)
    seen = set(_currencies(h, asset_currency, base))
    seen |= {asset_currency.get(h.names[s], base) for s in np.unique(h.symbol).tolist() if s >= 0}
    return (base, *sorted(seen - {base}))


def value_history(
    rows: HistoryInput | Sequence[LedgerRow],
    prices: ClosePanel,
    *,
    fx: FxPanel | None = None,
    asset_currency: Mapping[str, str] | None = None,
) -> ValueHistory:
    """Securities and cash in the base currency and time-weighted daily returns of ``rows``
    on ``prices``' calendar.

    Args:
        rows: the ledger in date order, as columns (:class:`service.ledger.derived.HistoryInput`)
            or as rows (cash rows have an empty ``symbol``).
        prices: closes of every symbol in ``rows`` on the calendar to value.
        fx: rates of every currency of ``rows`` on the same calendar (``fx.codes[0]`` is
            the base currency). Without it every amount counts as in one currency.
        asset_currency: symbol -> the currency its closes and cash are in (default: base).
    """
    h = _input(rows)
    of_asset = asset_currency or {}
    col = {s: j for j, s in enumerate(prices.symbols)}
    rates: F64 | None = None
    cur_col: NDArray[np.int64] | None = None
    asset_cur: NDArray[np.int64] | None = None
    if fx is not None:
        base = fx.codes[0]
        fx_col = {c: i for i, c in enumerate(fx.codes)}
        rates = fx.rates
        per_symbol = np.array(
            [*(fx_col.get(of_asset.get(s, base), 0) for s in h.names), 0], dtype=np.int64
        )
        per_code = np.array([*(fx_col.get(c, -1) for c in h.codes), -1], dtype=np.int64)
        own = per_code[h.currency]  # -1 (none) picks -1
        cur_col = np.where(own >= 0, own, per_symbol[h.symbol]).astype(np.int64)
        asset_cur = np.array(
            [fx_col[of_asset.get(s, base)] for s in prices.symbols], dtype=np.int64
        )
    # each of the rows' symbols -> its column of closes (then -1 for cash rows)
    column = np.array([*(col.get(s, -1) for s in h.names), -1], dtype=np.int64)
    out = valuation.ledger_value_history(
        np.searchsorted(prices.dates, h.date, side="left").astype(np.int64),
        column[h.symbol] if len(h) else np.zeros(0, np.int64),
        h.kind,
        h.quantity,
        h.price,
        h.fees,
        prices.close,
        currency=cur_col,
        rates=rates,
        asset_currency=asset_cur,
    )
    return ValueHistory(prices.dates, out.value, out.inflow, out.outflow, out.returns, out.holdings)
