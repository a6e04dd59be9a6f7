"""The tax ledger in US dollars: rows of assets quoted in other currencies, converted.

The rule (quoted in ``docs/tax.md``): "all determinations under this subtitle shall be
made in the taxpayer's functional currency" (26 U.S.C. 985(a)), the dollar
(985(b)(1)(A)); "If your functional currency is the U.S. dollar, you must immediately
translate into dollars all items of income, expense, etc. (including taxes), that you
receive, pay, or accrue in a foreign currency [...]. Use the exchange rate prevailing
when you receive, pay, or accrue the item." (IRS Publication 54, chapter 1, "Foreign
Currency"). A stock is not one of the section 988 transactions (26 U.S.C. 988(c)(1)(B)
lists debt instruments, accrued payables and receivables, forwards, futures and
options), so the currency's move over the holding period is part of the stock's capital
gain, not a separate ordinary gain.

Each money field of a row of a non-USD asset (``price``, ``fees``, an action's ``cash``;
all in the asset's currency) is therefore converted at the rate of the row's own date
*before* the lots are matched: a buy's cost and commission at the purchase date's rate,
a sale's price and commission at the sale date's, a dividend at its payment date's, a
return of capital or a merger's cash at the action's date. The lots then carry US-dollar
basis, so everything ``quantcore.tax`` derives is in dollars and follows the rule:

* a realized piece's basis is ``(q x cost + buy fee) x rate(purchased)`` and its proceeds
  ``(q x price - sell fee) x rate(sold)`` (:func:`quantcore.fx.realized_in_base`);
* a loss is a loss in dollars: the wash-sale rule (IRC 1091) judges and disallows the
  dollar loss and moves it into the replacement shares' dollar basis;
* ``hifo`` ranks lots by their dollar unit cost and ``average`` averages dollar basis.

The rates are those of the trade dates (the ledger has no settlement dates; see the
caveats in ``docs/tax.md``). Converted amounts are rounded half-up to 1e-8 (the ledger's unit). USD assets' rows
are passed through untouched, so their figures are exactly those of the USD ledger.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from service.db.models import Asset
from service.errors import ValidationError

if TYPE_CHECKING:
    from service.assets.market import MarketData
    from service.ledger.rows import Action, LedgerRow

__all__ = ["USD", "foreign_currencies", "in_usd", "rows_in_usd", "usd_price", "usd_rates"]

#: The currency of every tax figure.
USD = "USD"
_UNIT = Decimal("1E-8")

#: ``(currency, date) -> US dollars per unit`` of that currency on that date.
RateTable = Mapping[tuple[str, dt.date], Decimal]


async def foreign_currencies(session: AsyncSession) -> dict[str, str]:
    """``symbol -> currency`` of every asset not quoted in US dollars (few rows)."""
    rows = await session.execute(select(Asset.symbol, Asset.currency).where(Asset.currency != USD))
    return dict(rows.tuples().all())


def _decimal_rate(rate: float) -> Decimal:
    # the shortest repr of the market's float: the digits it serves, nothing invented
    return Decimal(repr(float(rate)))


def usd_rates(
    market: MarketData, needed: Mapping[str, Collection[dt.date]]
) -> dict[tuple[str, dt.date], Decimal]:
    """The rate of each ``(currency, date)``: the market's daily close on or before the date.

    Raises:
        ValidationError: ``currency`` ``unsupported`` when the market has no rate for the
            currency, ``unavailable`` when it has none on or before a date.
    """
    out: dict[tuple[str, dt.date], Decimal] = {}
    for currency, days in needed.items():
        ordered = sorted(days)
        try:
            values = np.asarray(market.fx_rates(currency, USD, ordered), dtype=np.float64)
        except KeyError:
            raise ValidationError(
                "currency", "unsupported",
                f"No {currency}{USD} exchange rate is available: tax figures in US dollars "
                f"cannot be computed for assets quoted in {currency}.",
                currency=currency,
            ) from None  # fmt: skip
        for day, rate in zip(ordered, values.tolist(), strict=True):
            if not np.isfinite(rate) or rate <= 0:
                raise ValidationError(
                    "currency", "unavailable",
                    f"No {currency}{USD} rate on or before {day.isoformat()}: the US-dollar "
                    "amounts of that date's transactions cannot be computed.",
                    currency=currency, date=day.isoformat(),
                )  # fmt: skip
            out[(currency, day)] = _decimal_rate(rate)
    return out


def _usd(amount: Decimal, rate: Decimal) -> Decimal:
    return (amount * rate).quantize(_UNIT, rounding=ROUND_HALF_UP)


def usd_price(price: float, rate: float) -> float:
    """A current price in the asset's currency in US dollars, at 1e-8 (for harvesting)."""
    return float(_usd(Decimal(repr(float(price))), _decimal_rate(rate)))


def rows_in_usd(
    rows: Iterable[LedgerRow],
    actions: Mapping[int, Action],
    currency_of: Mapping[str, str],
    rates: RateTable,
) -> tuple[list[LedgerRow], dict[int, Action]]:
    """``rows`` and ``actions`` with the money of non-USD assets' rows in US dollars.

    ``currency_of``: the currency of each non-USD symbol (others are USD and unchanged);
    ``rates``: the rate of each such row's ``(currency, date)``.
    """
    out: list[LedgerRow] = []
    acts = dict(actions)
    for row in rows:
        tid, pid, sym, day, kind, qty, price, fees, lot = row
        currency = currency_of.get(sym)
        if currency is None or currency == USD:
            out.append(row)
            continue
        rate = rates[(currency, day)]
        usd_px, usd_fees = _usd(price, rate), _usd(fees, rate)
        if kind == "dividend":  # rounding must not make the fees exceed the amount
            usd_fees = min(usd_fees, _usd(qty * usd_px, Decimal(1)))
        out.append((tid, pid, sym, day, kind, qty, usd_px, usd_fees, lot))
        act = acts.get(tid)
        if act is not None and act.cash is not None:
            acts[tid] = dataclasses.replace(act, cash=_usd(act.cash, rate))
    return out, acts


async def in_usd(
    session: AsyncSession, market: MarketData, rows: list[LedgerRow], actions: dict[int, Action]
) -> tuple[list[LedgerRow], dict[int, Action]]:
    """:func:`rows_in_usd` with the assets' currencies and the market's rates (no rate is
    read when every row is of a USD asset).

    Raises:
        ValidationError: as :func:`usd_rates`.
    """
    currency_of = await foreign_currencies(session)
    needed: dict[str, set[dt.date]] = defaultdict(set)
    for row in rows:
        currency = currency_of.get(row[2])
        if currency is not None:
            needed[currency].add(row[3])
    if not needed:
        return rows, actions
    return rows_in_usd(rows, actions, currency_of, usd_rates(market, needed))
