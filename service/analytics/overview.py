"""``GET /api/analytics/overview/``: every portfolio of the user as one account, in one currency.

* ``total_value``, ``cash_balance``, ``daily_change``: each portfolio's figures as the
  portfolio list shows them (:meth:`service.portfolios.book.Book.reads`), converted from
  its base currency at the latest rate (``MarketData.fx_quote``) and rounded to the cent,
  then summed: ``total_value`` is exactly the sum of the portfolios' ``total_value`` in
  ``currency``.
* ``metrics`` and ``performance``: each portfolio's value history
  (:func:`service.analytics.history.value_history`) converted to ``currency`` at each
  day's rate, put on the union of their calendars (a value carried forward over days a
  portfolio has no close), and summed with each portfolio's external flows as the
  account's flows (:func:`quantcore.accounts.combine_accounts`); then the same figures as
  one portfolio's (:func:`service.analytics.services.metrics_of`, ``performance_of``).
* ``allocation``: every portfolio's positions and positive cash at current quotes, in
  ``currency``, a symbol held in several portfolios (or a currency's cash) one line.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from quantcore.accounts import combine_accounts
from service import formatting as fmt
from service.analytics.history import HistoryInput, ValueHistory
from service.analytics.periods import WindowQuery, market_today, resolve
from service.analytics.prices import fx_panel, panel
from service.analytics.schemas import OverviewRead
from service.analytics.services import (
    _benchmark,
    _history,
    _in_base,
    _Ledger,
    _ledger,
    _Line,
    _marked_book,
    allocation_of,
    metrics_of,
    performance_of,
)
from service.assets.market import MarketData
from service.db.models import Portfolio
from service.ledger.book import load_book
from service.ledger.cash import check_currency
from service.ledger.reads import PortfolioRead

__all__ = ["DEFAULT_BENCHMARK", "account_sums", "overview"]

F64 = NDArray[np.float64]
DEFAULT_BENCHMARK = "SPY"
_CENT = Decimal("0.01")


def _rate(market: MarketData, base: str, code: str) -> Decimal | None:
    """The latest rate of ``base`` in ``code`` as a Decimal (1 when equal, None: unknown)."""
    if base == code:
        return Decimal(1)
    quote = market.fx_quote(base, code)
    return None if quote is None else Decimal(repr(quote.rate))


def account_sums(
    reads: list[PortfolioRead], market: MarketData, code: str
) -> dict[str, Decimal | None]:
    """``total_value``, ``cash_balance`` and ``daily_change`` of ``reads`` summed in ``code``
    (each portfolio's figure converted and rounded to the cent first; None: a rate is unknown)."""
    out: dict[str, Decimal | None] = {}
    rates = [_rate(market, r.base_currency.upper(), code) for r in reads]
    for field in ("total_value", "cash_balance", "daily_change"):
        total: Decimal | None = Decimal("0.00")
        for read, rate in zip(reads, rates, strict=True):
            if rate is None or total is None:
                total = None
                continue
            total += (Decimal(getattr(read, field)) * rate).quantize(_CENT)
        out[field] = total
    return out


def _percent(change: Decimal | None, total: Decimal | None) -> str | None:
    if change is None or total is None or total - change == 0:
        return None
    return fmt.percent(float(change / (total - change) * 100))


def _on(days: NDArray[np.datetime64], hist: ValueHistory, rate: F64) -> tuple[F64, F64, F64]:
    """``hist`` times ``rate`` on the calendar ``days`` (a superset of its dates): values
    carried forward (0 before its first day), flows on their own days."""
    pos = np.searchsorted(hist.dates, days, side="right") - 1
    value = np.where(pos >= 0, (hist.value * rate)[np.maximum(pos, 0)], 0.0)
    inflow = np.zeros(days.size)
    outflow = np.zeros(days.size)
    at = np.searchsorted(days, hist.dates)
    inflow[at] = hist.inflow * rate
    outflow[at] = hist.outflow * rate
    return value, inflow, outflow


async def overview(
    session: AsyncSession,
    market: MarketData,
    user_id: int,
    query: WindowQuery,
    currency: str,
    interval: str,
    benchmark: str | None,
) -> OverviewRead:
    """The account overview (see the module docstring)."""
    code = check_currency(market, currency.strip().upper(), "currency")
    bench = _benchmark(market, benchmark or DEFAULT_BENCHMARK)
    reads = (await load_book(await session.connection(), user_id, market.today())).reads(market)
    sums = account_sums(reads, market, code)
    portfolios = (
        (
            await session.execute(
                select(Portfolio).where(Portfolio.user_id == user_id).order_by(Portfolio.id)
            )
        )
        .scalars()
        .all()
    )
    ledgers = [await _ledger(session, p, [bench]) for p in portfolios]
    firsts = [d for lg in ledgers if (d := lg.rows.first_date) is not None]
    window = resolve(query, market_today(market), min(firsts) if firsts else None)
    # allocation: every line at current quotes, in ``code``, merged by symbol
    merged: dict[str, tuple[_Line, float]] = {}
    for p, lg in zip(portfolios, ledgers, strict=True):
        lines, values = await _marked_book(session, market, lg, p.id)
        rate = _rate(market, lg.base, code)
        factor = float(rate) if rate is not None else float("nan")
        for line, v in zip(lines, values * factor, strict=True):
            old = merged.get(line.symbol)
            merged[line.symbol] = (line, float(v) + (old[1] if old else 0.0))
    ordered = sorted(merged)
    allocation = allocation_of(
        [merged[s][0] for s in ordered], np.array([merged[s][1] for s in ordered], dtype=np.float64)
    )
    hist, bench_close = _combined(market, ledgers, window.after, window.end, code, bench)
    return OverviewRead(
        period=window.label,
        currency=code,
        total_value=None if sums["total_value"] is None else fmt.money(sums["total_value"]),
        cash_balance=None if sums["cash_balance"] is None else fmt.money(sums["cash_balance"]),
        daily_change=None if sums["daily_change"] is None else fmt.money(sums["daily_change"]),
        daily_change_percent=_percent(sums["daily_change"], sums["total_value"]),
        portfolio_count=len(reads),
        metrics=metrics_of(hist, bench_close, window, bench),
        allocation=allocation,
        performance=performance_of(hist, bench_close, window, interval, bench),
    )


def _combined(
    market: MarketData,
    ledgers: list[_Ledger],
    after: dt.date,
    end: dt.date,
    code: str,
    bench: str,
) -> tuple[ValueHistory | None, F64 | None]:
    """The account's value history in ``code`` and the benchmark's closes in ``code`` on
    its calendar (None, None: no portfolio has a transaction)."""
    parts = [(lg, _history(market, lg, after, end, [bench])[0]) for lg in ledgers if len(lg.rows)]
    if not parts:
        return None, None
    days = np.unique(np.concatenate([h.dates for _, h in parts]))
    columns = []
    for lg, h in parts:
        rate = np.ones(h.dates.size)
        if lg.base != code:
            rate = fx_panel(market, (code, lg.base), h.dates).rates[:, 1]
        columns.append(_on(days, h, rate))
    value, inflow, outflow = (np.column_stack([c[i] for c in columns]) for i in range(3))
    account = combine_accounts(value, inflow, outflow)
    hist = ValueHistory(
        days,
        account.value,
        account.inflow,
        account.outflow,
        account.returns,
        np.empty((days.size, 0)),
    )
    lo = min(d for lg, _ in parts if (d := lg.rows.first_date) is not None)
    close = panel(market, [bench], min(lo, after), end, calendar=days).column(bench)
    currency_of = {bench: parts[0][0].currency_of.get(bench, code)}
    return hist, _in_base(market, _Ledger(HistoryInput.from_rows([]), code, currency_of, parts[0][0].user_id), bench, close, days)
