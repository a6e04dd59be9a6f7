"""``income/``: dividends and interest a portfolio received, by month, quarter or year.

The rows come from the ledger as the value history reads it
(:func:`service.analytics.services.ledger_rows`); each row's cash is what the ledger
books for it (:func:`quantcore.valuation.cash_amounts`: a dividend's
``quantity x price - fees``, interest's ``price - fees``), converted to the portfolio's
base currency at the rate of its day, and summed per period by
:func:`quantcore.income.sum_by_period`. Cash that corporate actions pay (cash in lieu
of fractional shares, a merger's cash, a return of capital) is not income.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
from numpy.typing import NDArray
from sqlalchemy.ext.asyncio import AsyncSession

from quantcore import income as qincome
from quantcore import valuation
from service import formatting as fmt
from service.analytics.history import HistoryInput
from service.analytics.periods import WindowQuery, market_today, resolve
from service.analytics.prices import fx_panel
from service.analytics.schemas import IncomePeriod, IncomeRead, IncomeSymbol
from service.analytics.services import ledger_rows
from service.assets.market import MarketData
from service.ledger.owned import get_owned

__all__ = ["INCOME_KINDS", "income", "income_rows"]

#: Valuation codes of the rows that are income -> their column in the sums.
INCOME_KINDS = {valuation.DIVIDEND: 0, valuation.INTEREST: 1}


def income_rows(rows: HistoryInput, after: dt.date, end: dt.date) -> NDArray[np.intp]:
    """Positions in ``rows`` of the dividends and interest dated ``after < date <= end``;
    cash a corporate action paid (booked like a dividend) is left out."""
    kind = np.isin(rows.kind, list(INCOME_KINDS)) & ~rows.from_action
    dated = (rows.date > np.datetime64(after, "D")) & (rows.date <= np.datetime64(end, "D"))
    return np.flatnonzero(kind & dated)


def _currencies(rows: HistoryInput, at: NDArray[np.intp], base: str) -> list[str]:
    """The currency each picked row's cash moves in: a security's own, else the row's or base."""
    out = []
    for s, c in zip(rows.symbol[at].tolist(), rows.currency[at].tolist(), strict=True):
        if s >= 0:
            out.append(rows.currency_of.get(rows.names[s], base) or base)
        else:
            out.append(rows.codes[c] if c >= 0 else base)
    return out


def _money(x: float) -> str:
    return fmt.money(x) or "0.00"


async def income(
    session: AsyncSession,
    market: MarketData,
    user_id: int,
    portfolio_id: int,
    query: WindowQuery,
    group_by: qincome.GroupBy,
) -> IncomeRead:
    """Income over the window, per period (every period of the window, zeros included) and
    dividends per symbol; amounts in the base currency, 2 fractional digits."""
    p = await get_owned(session, user_id, portfolio_id)
    base = (p.base_currency or "USD").upper()
    rows = await ledger_rows(session, p.id)
    window = resolve(query, market_today(market), rows.first_date)
    at = income_rows(rows, window.after, window.end)
    start = window.after + dt.timedelta(days=1)
    days = rows.date[at]
    kinds = rows.kind[at]
    cash = valuation.cash_amounts(kinds, rows.quantity[at], rows.price[at], rows.fees[at])
    currencies = _currencies(rows, at, base)
    codes = (base, *sorted(set(currencies) - {base}))
    if len(codes) > 1:
        calendar = np.unique(days)
        rates = fx_panel(market, codes, calendar).rates
        col = {c: j for j, c in enumerate(codes)}
        cash = cash * rates[np.searchsorted(calendar, days), [col[c] for c in currencies]]
    amounts = np.zeros((at.size, 2))
    amounts[np.arange(at.size), [INCOME_KINDS[int(k)] for k in kinds]] = cash
    labels, sums = qincome.sum_by_period(
        days, amounts, group_by=group_by, span=(str(start), str(window.end))
    )
    dividend = kinds == valuation.DIVIDEND
    symbols = rows.symbol[at][dividend]
    paid = np.bincount(symbols, weights=np.nan_to_num(amounts[dividend, 0]), minlength=len(rows.names))
    per_symbol = {rows.names[i]: float(paid[i]) for i in sorted(set(symbols.tolist()), key=lambda i: rows.names[i])}
    totals = np.nan_to_num(amounts).sum(axis=0)
    return IncomeRead(
        period=window.label,
        start_date=start,
        end_date=window.end,
        group_by=group_by,
        currency=base,
        periods=[
            IncomePeriod(
                period=str(label),
                dividends=_money(float(d)),
                interest=_money(float(i)),
                total=_money(float(d + i)),
            )
            for label, (d, i) in zip(labels, sums, strict=True)
        ],
        by_symbol=[
            IncomeSymbol(asset_symbol=s, dividends=_money(v)) for s, v in per_symbol.items()
        ],
        dividends=_money(float(totals[0])),
        interest=_money(float(totals[1])),
        total=_money(float(totals.sum())),
    )
