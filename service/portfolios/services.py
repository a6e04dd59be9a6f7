"""Portfolio CRUD and valuation; positions are read from the ledger-derived table.

Lists and single portfolios are served from the user's in-memory book
(:mod:`service.ledger.book`), which one version read keeps current. Every
write here starts with :func:`~service.ledger.positions.lock_user_ledger` (the
lock, and the bump of the version that invalidates the books).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from quantcore.portfolio import mark_positions
from service import formatting as fmt
from service.assets.market import MarketData
from service.assets.schemas import AssetRef
from service.db.models import Asset, Portfolio, Position, utcnow
from service.errors import ValidationError
from service.ledger import cash
from service.ledger import positions as derive
from service.ledger.book import portfolio_reads
from service.ledger.owned import get_owned
from service.ledger.reads import PortfolioRead
from service.pagination import PageParams
from service.portfolios.schemas import PortfolioCreate, PortfolioUpdate, PositionRead

__all__ = [
    "create_portfolio",
    "delete_portfolio",
    "get_owned",
    "list_positions",
    "portfolio_reads",
    "position_reads",
    "update_portfolio",
]


async def _positions(
    session: AsyncSession, portfolio_ids: Sequence[int]
) -> list[tuple[Position, Asset]]:
    if not portfolio_ids:
        return []
    rows = await session.execute(
        select(Position, Asset)
        .join(Asset, Asset.id == Position.asset_id)
        .where(Position.portfolio_id.in_(portfolio_ids))
        .order_by(Position.portfolio_id, Asset.symbol)
    )
    return list(rows.tuples())


def _prices(market: MarketData, symbols: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Last price and change of each entry of ``symbols`` (NaN when no quote).

    Each distinct symbol is quoted once; the rows gather from those by index.
    """
    distinct = sorted(set(symbols))
    quotes = market.quotes(distinct)
    nan = float("nan")
    price = np.array([q.price if (q := quotes.get(s)) else nan for s in distinct], np.float64)
    change = np.array([q.change if (q := quotes.get(s)) else nan for s in distinct], np.float64)
    where = {s: i for i, s in enumerate(distinct)}
    take = np.fromiter(map(where.__getitem__, symbols), np.intp, len(symbols))
    return price[take], change[take]


async def _benchmark(s: AsyncSession, symbol: str) -> str:
    """``symbol`` upper-cased when it is a known asset (a benchmark must have prices)."""
    symbol = symbol.strip().upper()
    if (await s.execute(select(Asset.id).where(Asset.symbol == symbol))).first() is None:
        raise ValidationError(
            "benchmark_symbol", "not_found", f"Unknown asset symbol {symbol!r} for a benchmark."
        )
    return symbol


async def create_portfolio(
    s: AsyncSession, market: MarketData, user_id: int, data: PortfolioCreate
) -> PortfolioRead:
    """A new portfolio of the user, in the write transaction ``s``."""
    now = utcnow()
    await derive.lock_user_ledger(s, user_id)
    p = Portfolio(
        user_id=user_id,
        name=data.name,
        description=data.description,
        benchmark_symbol=await _benchmark(s, data.benchmark_symbol),
        is_active=data.is_active,
        base_currency=cash.check_currency(market, data.base_currency, "base_currency"),
        cash_policy=data.cash_policy,
        created_at=now,
        updated_at=now,
    )
    s.add(p)
    await s.flush()
    return (await portfolio_reads(s, market, [p], cached=False))[0]


async def update_portfolio(
    s: AsyncSession, market: MarketData, user_id: int, portfolio_id: int, data: PortfolioUpdate
) -> PortfolioRead:
    """Change one of the user's portfolios, in the write transaction ``s``."""
    await derive.lock_user_ledger(s, user_id)
    p = await get_owned(s, user_id, portfolio_id)
    p.name = data.name
    if data.description is not None:
        p.description = data.description
    if data.benchmark_symbol is not None:
        p.benchmark_symbol = await _benchmark(s, data.benchmark_symbol)
    if data.is_active is not None:
        p.is_active = data.is_active
    if data.base_currency is not None:
        p.base_currency = cash.check_currency(market, data.base_currency, "base_currency")
    if data.cash_policy is not None:
        p.cash_policy = data.cash_policy
    if p.cash_policy == "strict":  # the history so far must keep to it
        rows = await cash.read_cash_rows(await s.connection(), portfolio_ids=[p.id])
        cash.check_strict(rows, p.base_currency, "cash_policy", "Making the cash policy strict")
    p.updated_at = utcnow()
    await s.flush()
    return (await portfolio_reads(s, market, [p], cached=False))[0]


async def delete_portfolio(s: AsyncSession, user_id: int, portfolio_id: int) -> None:
    """Delete the portfolio with its ledger and positions, in the write transaction ``s``.

    The other portfolios' positions are re-derived: their wash-sale adjustments may
    have come from this portfolio's purchases.
    """
    await derive.lock_user_ledger(s, user_id)
    p = await get_owned(s, user_id, portfolio_id)
    await s.delete(p)
    await s.flush()
    await derive.sync_positions(s, user_id)


def _rates(
    market: MarketData, currencies: Sequence[str], base: str
) -> tuple[np.ndarray, np.ndarray]:
    """Latest rate and previous close into ``base`` of each entry of ``currencies`` (NaN: unknown)."""
    known: dict[str, tuple[float, float]] = {}
    for code in set(currencies):
        fx = market.fx_quote(code, base)
        known[code] = (fx.rate, fx.previous_close) if fx is not None else (np.nan, np.nan)
    rate = np.array([known[c][0] for c in currencies], np.float64)
    previous = np.array([known[c][1] for c in currencies], np.float64)
    return rate, previous


def position_reads(
    rows: Sequence[tuple[Position, Asset]], market: MarketData, base: str = "USD"
) -> list[PositionRead]:
    """Marked read models of positions in the ``base`` currency (vectorized over the rows)."""
    price, change = _prices(market, [a.symbol for _, a in rows])
    rate, previous = _rates(market, [a.currency for _, a in rows], base)
    qty = np.array([float(p.quantity) for p, _ in rows], np.float64)
    cost = np.array([float(p.cost_basis) for p, _ in rows], np.float64)
    marks = mark_positions(qty, cost, price, change, rate=rate, previous_rate=previous)
    out = []
    for i, (pos, asset) in enumerate(rows):
        out.append(
            PositionRead(
                id=pos.id,
                asset=AssetRef(
                    id=asset.id,
                    symbol=asset.symbol,
                    name=asset.name,
                    current_price=fmt.price(float(price[i])),
                ),
                quantity=fmt.quantity(pos.quantity),
                average_cost=fmt.price(pos.cost_basis / pos.quantity) or "0.0000",
                cost_basis=fmt.money(pos.cost_basis) or "0.00",
                currency=asset.currency,
                fx_rate=fmt.fx_rate(float(rate[i])),
                current_value=fmt.money(float(marks.value[i])),
                unrealized_gain_loss=fmt.money(float(marks.gain[i])),
                unrealized_gain_loss_percent=fmt.percent(float(marks.gain_percent[i])),
                last_updated=pos.updated_at,
            )
        )
    return out


async def list_positions(
    session: AsyncSession, market: MarketData, user_id: int, portfolio_id: int, page: PageParams
) -> tuple[list[PositionRead], int]:
    portfolio = await get_owned(session, user_id, portfolio_id)
    rows = await _positions(session, [portfolio_id])
    page_rows = rows[page.offset : page.offset + page.limit]
    return position_reads(page_rows, market, portfolio.base_currency), len(rows)
