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
from collections.abc import Sequence

import numpy as np
from sqlalchemy.ext.asyncio import AsyncSession

from quantcore import income as qincome
from quantcore import valuation
from service import formatting as fmt
from service.analytics.history import LedgerRow
from service.analytics.periods import WindowQuery, market_today, resolve
from service.analytics.prices import fx_panel
from service.analytics.schemas import IncomePeriod, IncomeRead, IncomeSymbol
from service.analytics.services import ledger_rows
from service.assets.market import MarketData
from service.portfolios.services import get_owned

__all__ = ["INCOME_KINDS", "income", "income_rows"]

#: Ledger rows that are income, and their column in the sums.
INCOME_KINDS = {"dividend": 0, "interest": 1}
_KIND = {"dividend": valuation.DIVIDEND, "interest": valuation.INTEREST}


def income_rows(rows: Sequence[LedgerRow], after: dt.date, end: dt.date) -> list[LedgerRow]:
    """The dividends and interest of ``rows`` dated ``after < date <= end``.

    A corporate action's cash comes from the ledger as a dividend row without a
    currency (:func:`service.transactions.actions.history_rows`), a recorded
    dividend always carries its asset's: the former is left out.
    """
    return [
        r
        for r in rows
        if r.kind in INCOME_KINDS and after < r.date <= end and (r.kind != "dividend" or r.currency)
    ]


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
    first = min(r.date for r in rows) if rows else None
    window = resolve(query, market_today(market), first)
    picked = income_rows(rows, window.after, window.end)
    start = window.after + dt.timedelta(days=1)
    days = np.array([r.date for r in picked], dtype="datetime64[D]")
    cash = valuation.cash_amounts(
        np.array([_KIND[r.kind] for r in picked], dtype=np.int64),
        np.array([r.quantity for r in picked], dtype=np.float64),
        np.array([r.price for r in picked], dtype=np.float64),
        np.array([r.fees for r in picked], dtype=np.float64),
    )
    codes = (base, *sorted({r.currency for r in picked if r.currency} - {base}))
    if len(codes) > 1 and picked:
        calendar = np.unique(days)
        rates = fx_panel(market, codes, calendar).rates
        col = {c: j for j, c in enumerate(codes)}
        at = np.searchsorted(calendar, days)
        cash = cash * rates[at, [col[r.currency or base] for r in picked]]
    amounts = np.zeros((len(picked), 2))
    amounts[np.arange(len(picked)), [INCOME_KINDS[r.kind] for r in picked]] = cash
    labels, sums = qincome.sum_by_period(
        days, amounts, group_by=group_by, span=(str(start), str(window.end))
    )
    dividends = amounts[:, 0]
    symbols = sorted({r.symbol for r in picked if r.kind == "dividend"})
    per_symbol = {s: 0.0 for s in symbols}
    for r, x in zip(picked, dividends, strict=True):
        if r.kind == "dividend":
            per_symbol[r.symbol] += float(x)
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
