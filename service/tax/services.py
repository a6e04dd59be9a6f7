"""Tax figures from the ledger with ``quantcore.tax``: summaries, stored calculations,
loss harvesting and reports. Lot relief follows each portfolio's ``lot_method``;
rates come from the user's tax settings (see :mod:`service.ledger.lots`).

Every figure is in US dollars: assets quoted in other currencies enter the lots at the
rates of their transactions' dates (:mod:`service.ledger.usd`), and harvesting values
their open lots at the current rate."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from decimal import Decimal
from typing import Any

import msgspec
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from quantcore.tax import (
    Form1099Div,
    Form8949,
    HarvestInputError,
    ScheduleD,
    TaxRates,
    TaxSummary,
    form_1099_div,
    form_8949,
    harvest_inputs,
    harvest_opportunities,
    schedule_d,
    tax_summary,
)
from quantcore.tax.splice import GroupedLedger
from service import formatting as fmt
from service.assets.market import MarketData
from service.db import Database
from service.db.models import TaxRecord, TaxReport, UserTaxSettings, utcnow
from service.errors import NotFoundError, ValidationError
from service.ledger import positions as derive
from service.ledger.lots import display, load_ledger, split_symbol
from service.ledger.owned import get_owned
from service.ledger.usd import USD, foreign_currencies, usd_price
from service.pagination import PageParams
from service.tax.schemas import (
    CapitalGains,
    DividendIncomeRead,
    HarvestOpportunityRead,
    HarvestPosition,
    HarvestRead,
    PortfolioTaxSettings,
    ReportRead,
    TaxCalculationRead,
    TaxSettingsRead,
    TaxSettingsUpdate,
    TaxSummaryRead,
)

__all__ = [
    "calculate",
    "check_year",
    "generate_report",
    "get_report",
    "get_settings",
    "harvest",
    "list_reports",
    "portfolio_settings",
    "set_portfolio_lot_method",
    "summary",
    "update_settings",
]


def check_year(year: int) -> int:
    """A tax year from 1970 to the current (UTC) year; later years are ``max_value``."""
    this_year = dt.datetime.now(dt.UTC).year
    if year > this_year:
        raise ValidationError("year", "max_value", f"year must be at most {this_year}.")
    if year < 1970:
        raise ValidationError("year", "min_value", "year must be at least 1970.")
    return year


async def _settings_row(session: AsyncSession, user_id: int) -> UserTaxSettings | None:
    return await session.get(UserTaxSettings, user_id)


def _rates(row: UserTaxSettings | None) -> TaxRates:
    if row is None:
        return TaxRates()
    return TaxRates(
        ordinary_rate=row.short_term_rate,
        long_term_rate=row.long_term_rate,
        niit=bool(row.niit),
        loss_limit=row.loss_limit,
    )


def _settings_read(rates: TaxRates) -> TaxSettingsRead:
    return TaxSettingsRead(
        short_term_rate=fmt.plain(rates.ordinary_rate),
        long_term_rate=fmt.plain(rates.long_term_rate),
        niit=rates.niit,
        loss_limit=fmt.money(rates.loss_limit),
    )


async def get_settings(session: AsyncSession, user_id: int) -> TaxSettingsRead:
    """The user's rates (defaults: 24 % short-term, 15 % long-term, no NIIT, 3,000 limit)."""
    return _settings_read(_rates(await _settings_row(session, user_id)))


#: The largest loss limit: amounts stay below 1e20, the ledger's cap (``service.ledger.fixed``).
_MAX_LOSS_LIMIT = Decimal("99999999999999999999.99")


def _check_decimal(field: str, value: Decimal | None, *, high: Decimal | None) -> None:
    if value is None:
        return
    if not value.is_finite():
        raise ValidationError(field, "invalid", f"{field} must be a finite number.")
    if value < 0:
        raise ValidationError(field, "min_value", f"{field} must be at least 0.")
    if high is not None and value > high:
        raise ValidationError(field, "max_value", f"{field} must be at most {high}.")


async def update_settings(
    s: AsyncSession, user_id: int, data: TaxSettingsUpdate
) -> TaxSettingsRead:
    row = await _settings_row(s, user_id)
    current = _rates(row)
    merged: dict[str, Any] = {
        "ordinary_rate": data.short_term_rate
        if data.short_term_rate is not None
        else current.ordinary_rate,
        "long_term_rate": data.long_term_rate
        if data.long_term_rate is not None
        else current.long_term_rate,
        "niit": data.niit if data.niit is not None else current.niit,
        "loss_limit": data.loss_limit if data.loss_limit is not None else current.loss_limit,
    }
    for field, value in (
        ("short_term_rate", data.short_term_rate),
        ("long_term_rate", data.long_term_rate),
    ):
        _check_decimal(field, value, high=Decimal(1))
    _check_decimal("loss_limit", data.loss_limit, high=_MAX_LOSS_LIMIT)
    rates = TaxRates(
        ordinary_rate=Decimal(merged["ordinary_rate"]),
        long_term_rate=Decimal(merged["long_term_rate"]),
        niit=bool(merged["niit"]),
        loss_limit=Decimal(merged["loss_limit"]),
    )
    if row is None:
        row = UserTaxSettings(user_id=user_id)
        s.add(row)
    row.short_term_rate = row.ordinary_dividend_rate = rates.ordinary_rate
    row.long_term_rate = row.qualified_dividend_rate = rates.long_term_rate
    row.niit, row.loss_limit, row.updated_at = rates.niit, rates.loss_limit, utcnow()
    return _settings_read(rates)


async def portfolio_settings(
    session: AsyncSession, user_id: int, portfolio_id: int
) -> PortfolioTaxSettings:
    p = await get_owned(session, user_id, portfolio_id)
    return PortfolioTaxSettings(portfolio_id=p.id, lot_method=p.lot_method)  # type: ignore[arg-type]


async def set_portfolio_lot_method(
    s: AsyncSession, user_id: int, portfolio_id: int, method: str
) -> PortfolioTaxSettings:
    """Set the lot relief method. Under ``specific`` a sell relieves the lot it names
    (``lot_id``), and a sell naming none the earliest lots (Treas. Reg. 1.1012-1(c)(1))."""
    p = await get_owned(s, user_id, portfolio_id)
    await derive.lock_user_ledger(s, user_id)
    p.lot_method = method
    p.updated_at = utcnow()
    await s.flush()
    await derive.sync_positions(s, user_id)  # positions are the lots under the method
    return PortfolioTaxSettings(portfolio_id=portfolio_id, lot_method=method)  # type: ignore[arg-type]


def _summary_read(s: TaxSummary, portfolio_id: int | None, rates: TaxRates) -> TaxSummaryRead:
    return TaxSummaryRead(
        tax_year=s.tax_year,
        portfolio_id=portfolio_id,
        capital_gains=CapitalGains(**{k: fmt.money(v) for k, v in s.capital_gains().items()}),
        dividend_income=DividendIncomeRead(
            **{k: fmt.money(v) for k, v in s.dividend_income().items()}
        ),
        estimated_tax_liability=fmt.money(s.estimated_tax_liability),
        short_term_carryover=fmt.money(s.short_term_carryover),
        long_term_carryover=fmt.money(s.long_term_carryover),
        capital_loss_deduction=fmt.money(s.capital_loss_deduction),
        short_term_carryforward=fmt.money(s.short_term_carryforward),
        long_term_carryforward=fmt.money(s.long_term_carryforward),
        rates=_settings_read(rates),
    )


async def _ledger(
    session: AsyncSession, market: MarketData, user_id: int, portfolio_id: int | None
) -> GroupedLedger | None:
    """The user's lot ledger in US dollars (one portfolio's, or all of them)."""
    if portfolio_id is not None:
        await get_owned(session, user_id, portfolio_id)
    return await load_ledger(session, user_id, portfolio_id, market=market)


def _empty_summary(year: int) -> TaxSummary:
    z = Decimal("0.00")
    return TaxSummary(year, z, z, z, z, z, z, z, z, z, z, z, z)


async def summary(
    session: AsyncSession,
    market: MarketData,
    user_id: int,
    year: int | None,
    portfolio_id: int | None,
) -> TaxSummaryRead:
    """``quantcore.tax.tax_summary`` of one portfolio, or of all the user's portfolios
    (``year`` defaults to the current UTC year)."""
    year = check_year(dt.datetime.now(dt.UTC).year if year is None else year)
    rates = _rates(await _settings_row(session, user_id))
    ledger = await _ledger(session, market, user_id, portfolio_id)
    if ledger is None:
        return _summary_read(_empty_summary(year), portfolio_id, rates)
    # the summary reads dividends and yearly gains only: the parts' sums, no piece copied
    s = tax_summary(ledger.ledger, year, rates=rates, gains=ledger.yearly_gains())
    return _summary_read(s, portfolio_id, rates)


async def calculate(
    s: AsyncSession,
    market: MarketData,
    user_id: int,
    year: int,
    portfolio_id: int | None,
    reprocess: bool,
) -> TaxCalculationRead:
    """The summary of (year, portfolio), stored; never stale.

    The figures are computed from the ledger on every call; the stored record is
    returned as it is (``reprocessed`` false, same ``id`` and ``calculated_at``) only
    while they equal it, else (or with ``reprocess``) it is rewritten. Records of a
    deleted portfolio go with it (foreign key ``ON DELETE CASCADE``); the all-portfolio
    record is recomputed without it.
    """
    check_year(year)
    if portfolio_id is not None:
        await get_owned(s, user_id, portfolio_id)
    where = [TaxRecord.user_id == user_id, TaxRecord.tax_year == year]
    where.append(
        TaxRecord.portfolio_id.is_(None)
        if portfolio_id is None
        else TaxRecord.portfolio_id == portfolio_id
    )
    record = (
        await s.execute(select(TaxRecord).where(*where).order_by(TaxRecord.id.desc()).limit(1))
    ).scalar_one_or_none()
    result = await summary(s, market, user_id, year, portfolio_id)
    payload = msgspec.to_builtins(result)
    if record is not None and not reprocess and record.summary == payload:
        return TaxCalculationRead(
            id=record.id, tax_year=year, portfolio_id=portfolio_id, reprocessed=False,
            calculated_at=record.created_at, summary=result,
        )  # fmt: skip
    if record is None:
        record = TaxRecord(user_id=user_id, portfolio_id=portfolio_id, tax_year=year)
        s.add(record)
    record.summary = payload
    record.created_at = utcnow()
    await s.flush()
    return TaxCalculationRead(
        id=record.id,
        tax_year=year,
        portfolio_id=portfolio_id,
        reprocessed=True,
        calculated_at=record.created_at,
        summary=result,
    )


def _as_of(market: MarketData, symbols: list[str]) -> dt.date:
    quotes = market.quotes(symbols or ["SPY"])
    stamps = [q.timestamp for q in quotes.values()]
    return max(stamps).date() if stamps else dt.datetime.now(dt.UTC).date()


def _closes_on(market: MarketData, symbols: list[str], day: dt.date) -> dict[str, float]:
    """The last daily close on or before ``day`` of each symbol that has one (within the
    month before: a symbol not trading then has no price that day)."""
    out: dict[str, float] = {}
    for symbol in symbols:
        try:
            bars = market.history(symbol, day - dt.timedelta(days=31), day)
        except (KeyError, ValueError):
            continue
        if len(bars):
            out[symbol] = float(bars["close"].iloc[-1])
    return out


async def _usd_prices(
    session: AsyncSession,
    market: MarketData,
    symbols: tuple[str, ...],
    bare: list[str],
    day: dt.date | None = None,
) -> dict[str, float]:
    """The price of each ledger symbol in US dollars: the current quote, or with ``day``
    the close of that day (the last on or before it); a non-USD asset's at the rate of
    the same moment (the lots' basis is in dollars at their purchase rates, so the
    unrealized gain includes the currency's move, as a sale's would)."""
    if day is None:
        local = {symbol: quote.price for symbol, quote in market.quotes(bare).items()}
    else:
        local = _closes_on(market, bare, day)
    currency_of = await foreign_currencies(session)
    usd: dict[str, float] = {}
    for symbol, price in local.items():
        currency = currency_of.get(symbol, USD)
        if currency == USD:
            usd[symbol] = round(price, 8)
            continue
        if day is None:
            fx = market.fx_quote(currency, USD)
            rate = None if fx is None else fx.rate
        else:
            rate = float(market.fx_rates(currency, USD, [day])[0])
        if rate is not None and rate == rate and rate > 0:  # no rate: no dollar value, no proposal
            usd[symbol] = usd_price(price, rate)
    return {s: usd[split_symbol(s)[1]] for s in symbols if split_symbol(s)[1] in usd}


def _harvest_inputs(min_loss: Decimal, min_loss_pct: Decimal, as_of: dt.date | None) -> None:
    """400 naming ``as_of``, ``min_loss`` or ``min_loss_pct`` out of their domain
    (:func:`quantcore.tax.harvesting.harvest_inputs`)."""
    try:
        harvest_inputs(as_of or dt.date(2000, 1, 1), min_loss, min_loss_pct)
    except HarvestInputError as exc:
        raise ValidationError(exc.field, exc.code, f"{exc}.") from None


async def harvest(
    session: AsyncSession,
    market: MarketData,
    user_id: int,
    portfolio_id: int | None,
    *,
    min_loss: Decimal,
    min_loss_pct: Decimal,
    as_of: dt.date | None,
) -> HarvestRead:
    """``quantcore.tax.harvest_opportunities`` over the lots held on ``as_of`` (default: the
    market's current day), valued at that day's prices (current quotes for today)."""
    _harvest_inputs(min_loss, min_loss_pct, as_of)
    rates = _rates(await _settings_row(session, user_id))
    grouped = await _ledger(session, market, user_id, portfolio_id)
    ledger = None if grouped is None else grouped.ledger  # lots and buys: no realized piece read
    out: list[HarvestOpportunityRead] = []
    bare = sorted({split_symbol(s)[1] for s in ledger.symbols}) if ledger is not None else []
    today = _as_of(market, bare)
    day = as_of or today
    if grouped is not None and ledger is not None and ledger.open_lots.size + grouped.pieces:
        prices = await _usd_prices(session, market, ledger.symbols, bare, None if day >= today else day)
        for o in harvest_opportunities(
            ledger, prices, day, rates=rates, min_loss=min_loss, min_loss_pct=min_loss_pct
        ):
            pid, symbol = split_symbol(o.symbol)
            out.append(
                HarvestOpportunityRead(
                    id=o.id,
                    portfolio_id=pid,
                    position=HarvestPosition(
                        asset_symbol=symbol,
                        quantity=fmt.quantity(o.quantity),
                        average_cost=fmt.money(o.average_cost),
                        current_price=fmt.price(o.current_price),
                    ),
                    lots=list(o.lots),
                    loss_quantity=fmt.quantity(o.loss_quantity),
                    potential_loss_amount=fmt.money(o.potential_loss_amount),
                    short_term_loss=fmt.money(o.short_term_loss),
                    long_term_loss=fmt.money(o.long_term_loss),
                    tax_benefit_estimate=fmt.money(o.tax_benefit_estimate),
                    wash_sale_risk=o.wash_sale_risk,
                    earliest_safe_sale=o.earliest_safe_sale,
                    earliest_safe_repurchase=o.earliest_safe_repurchase,
                    # quantcore names the ledger's internal "portfolio:symbol" key: say the symbol
                    recommendation=o.recommendation.replace(o.symbol, symbol),
                )
            )
    return HarvestRead(
        as_of=day,
        min_loss=fmt.money(min_loss),
        min_loss_pct=fmt.plain(min_loss_pct),
        opportunities=out,
    )


async def analyze(
    db: Database,
    market: MarketData,
    user_id: int,
    portfolio_id: int | None,
    *,
    min_loss: Decimal,
    min_loss_pct: Decimal,
    as_of: dt.date | None,
) -> HarvestRead:
    """:func:`harvest` in a read session of its own: ``POST .../analyze/`` only reads, and
    the request's session of a POST is a write transaction (SQLite's write lock)."""
    async with db.read() as s:
        return await harvest(
            s, market, user_id, portfolio_id, min_loss=min_loss, min_loss_pct=min_loss_pct, as_of=as_of
        )


def _figures(ledger: GroupedLedger | None, year: int, report_type: str, rates: TaxRates) -> dict[str, Any]:
    """A report's figures, stored once (JSON-ready): Form 8949 as packed columns
    (:meth:`Form8949.columns`; version 2 held a list of numbers per column), Schedule D,
    1099-DIV and the summary as decimal strings. :func:`_render` makes the CSV or JSON.
    Form 8949 reads the parts' pieces sold in ``year`` (never gathered as records), the
    rest the parts' yearly gains and the dividends."""
    led = display(ledger.ledger) if ledger is not None else None  # no realized pieces
    gains = ledger.yearly_gains() if ledger is not None else None
    out: dict[str, Any] = {"version": 3, "report_type": report_type, "tax_year": year}
    if report_type in ("all", "schedule_d"):
        out["form_8949"] = out["schedule_d"] = None
        if ledger is not None and led is not None:
            f8949 = dataclasses.replace(form_8949(ledger, year), symbols=led.symbols)
            out["form_8949"] = f8949.columns()
            out["schedule_d"] = _strings(
                schedule_d(led, year, rates=rates, form=f8949, gains=gains).to_dict()
            )
    if report_type in ("all", "form_1099_div"):
        out["form_1099_div"] = None if led is None else _strings(form_1099_div(led, year).to_dict())
    if report_type == "all" and led is not None:
        s = tax_summary(led, year, rates=rates, gains=gains)
        out["summary"] = {
            k: fmt.money(v) if isinstance(v, Decimal) else v for k, v in s.__dict__.items()
        }
    return out


def _strings(value: Any) -> Any:
    """Decimals as their text, through dicts, lists and tuples."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict):
        return {k: _strings(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strings(v) for v in value]
    return value


def _schedule_d_of(data: dict[str, Any]) -> ScheduleD:
    amounts: dict[str, Any] = {k: Decimal(v) for k, v in data.items() if k != "tax_year"}
    return ScheduleD(tax_year=int(data["tax_year"]), **amounts)


def _form_1099_div_of(data: dict[str, Any]) -> Form1099Div:
    rows = tuple(
        {"symbol": r["symbol"], "box_1a": Decimal(r["box_1a"]), "box_1b": Decimal(r["box_1b"])}
        for r in data["rows"]
    )
    return Form1099Div(
        tax_year=int(data["tax_year"]),
        box_1a_total_ordinary_dividends=Decimal(data["box_1a_total_ordinary_dividends"]),
        box_1b_qualified_dividends=Decimal(data["box_1b_qualified_dividends"]),
        rows=rows,
    )


def _render(content: dict[str, Any], fmt_name: str) -> str:
    """The stored report as CSV (one ``# <title>`` section per form) or JSON."""
    year = int(content["tax_year"])
    form = content.get("form_8949")
    f8949 = Form8949.from_columns(form) if form is not None else None
    if fmt_name == "csv":
        parts: list[str] = []
        if f8949 is not None:
            parts.append(f"# Form 8949 ({year})\n{f8949.to_csv()}")
            parts.append(f"# Schedule D ({year})\n{_schedule_d_of(content['schedule_d']).to_csv()}")
        if content.get("form_1099_div") is not None:
            parts.append(f"# Form 1099-DIV ({year})\n{_form_1099_div_of(content['form_1099_div']).to_csv()}")
        return "\n".join(part.rstrip("\n") + "\n" for part in parts)
    doc: dict[str, Any] = {"report_type": content["report_type"], "tax_year": year}
    rows_8949 = None
    if "form_8949" in content:
        doc["form_8949"] = form_8949_empty(year) if f8949 is None else "\x00form_8949\x00"
        rows_8949 = None if f8949 is None else f8949.json_text(indent=2)
        doc["schedule_d"] = content["schedule_d"]
    if "form_1099_div" in content:
        doc["form_1099_div"] = content["form_1099_div"]
    if "summary" in content:
        doc["summary"] = content["summary"]
    doc["portfolio_id"] = content.get("portfolio_id")
    text = json.dumps(doc, indent=2)
    if rows_8949 is not None:
        text = text.replace(json.dumps("\x00form_8949\x00"), rows_8949, 1)
    return text


def form_8949_empty(year: int) -> dict[str, Any]:
    zero = {"proceeds": "0.00", "cost_basis": "0.00", "adjustment": "0.00", "gain_or_loss": "0.00"}
    return {
        "tax_year": year,
        "part_i": {"rows": [], "totals": zero},
        "part_ii": {"rows": [], "totals": zero},
    }


def _report_read(r: TaxReport, base_url: str) -> ReportRead:
    link = f"{base_url}/api/tax/reports/{r.id}/download/?format="
    return ReportRead(
        id=r.id, tax_year=r.tax_year, report_type=r.report_type, portfolio_id=r.content.get("portfolio_id"),
        size_bytes=r.size_bytes, created_at=r.created_at, download={"csv": link + "csv", "json": link + "json"},
    )  # fmt: skip


async def generate_report(
    s: AsyncSession,
    market: MarketData,
    user_id: int,
    year: int,
    report_type: str,
    portfolio_id: int | None,
    base_url: str,
) -> ReportRead:
    """Compute and store a report's figures (amounts in US dollars), once: its CSV and JSON
    are rendered when downloaded (:func:`get_report`). ``size_bytes`` is the size of what
    is stored."""
    check_year(year)
    rates = _rates(await _settings_row(s, user_id))
    ledger = await _ledger(s, market, user_id, portfolio_id)
    content = {"portfolio_id": portfolio_id, **_figures(ledger, year, report_type, rates)}
    row = TaxReport(
        user_id=user_id, tax_year=year, report_type=report_type, content=content,
        size_bytes=len(msgspec.json.encode(content)), created_at=utcnow(),  # compact JSON, UTF-8
    )  # fmt: skip
    s.add(row)
    await s.flush()
    return _report_read(row, base_url)


async def list_reports(
    session: AsyncSession,
    user_id: int,
    page: PageParams,
    base_url: str,
    *,
    year: int | None,
    report_type: str | None,
) -> tuple[list[ReportRead], int]:
    query = select(TaxReport).where(TaxReport.user_id == user_id)
    if year is not None:
        query = query.where(TaxReport.tax_year == year)
    if report_type is not None:
        query = query.where(TaxReport.report_type == report_type)
    count = int(
        (await session.execute(select(func.count()).select_from(query.subquery()))).scalar_one()
    )
    rows = await session.execute(
        query.order_by(TaxReport.id.desc()).limit(page.limit).offset(page.offset)
    )
    return [_report_read(r, base_url) for r in rows.scalars()], count


async def get_report(
    session: AsyncSession, user_id: int, report_id: int, fmt: str
) -> tuple[str, str, str]:
    """``(body, media type, file name)`` of a stored report."""
    row = (
        await session.execute(
            select(TaxReport).where(TaxReport.id == report_id, TaxReport.user_id == user_id)
        )
    ).scalar_one_or_none()
    if row is None:
        raise NotFoundError(f"Tax report {report_id} not found.")
    name = f"tax-{row.report_type}-{row.tax_year}-{row.id}.{fmt}"
    # text/csv without a charset: Litestar adds "; charset=utf-8" (once) to text types
    media = "text/csv" if fmt == "csv" else "application/json"
    content = row.content
    if "version" not in content:  # stored rendered, before reports kept their figures only
        legacy = content.get("csv", "") if fmt == "csv" else json.dumps(content.get("json", {}), indent=2)
        return str(legacy), media, name
    return _render(content, fmt), media, name
