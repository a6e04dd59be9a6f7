"""Portfolio CRUD and valuation; positions are read from the ledger-derived table."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import numpy as np
from sqlalchemy import Float, cast, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from service import formatting as fmt
from service.assets.market import MarketData
from service.assets.schemas import AssetRef
from service.db import Database
from service.db.models import Asset, Portfolio, Position, utcnow
from service.errors import NotFoundError
from service.pagination import PageParams
from service.portfolios.schemas import PortfolioCreate, PortfolioRead, PortfolioUpdate, PositionRead
from service.portfolios.valuation import PortfolioTotals, mark_positions, portfolio_totals

__all__ = [
    "create_portfolio",
    "delete_portfolio",
    "get_owned",
    "list_portfolios",
    "list_positions",
    "portfolio_reads",
    "update_portfolio",
]


async def get_owned(session: AsyncSession, user_id: int, portfolio_id: int) -> Portfolio:
    """The user's portfolio; another user's (or no) portfolio is a 404."""
    row = (
        await session.execute(
            select(Portfolio).where(Portfolio.id == portfolio_id, Portfolio.user_id == user_id)
        )
    ).scalar_one_or_none()
    if row is None:
        raise NotFoundError(f"Portfolio {portfolio_id} not found.")
    return row


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


def _prices(market: MarketData, assets: Sequence[Asset]) -> tuple[np.ndarray, np.ndarray]:
    symbols = sorted({a.symbol for a in assets})
    quotes = market.quotes(symbols)
    price = np.array([quotes[a.symbol].price if a.symbol in quotes else np.nan for a in assets])
    change = np.array([quotes[a.symbol].change if a.symbol in quotes else np.nan for a in assets])
    return price, change


def _position_columns() -> tuple[Any, ...]:
    return (
        Position.portfolio_id,
        cast(Position.quantity, Float),
        cast(Position.cost_basis, Float),
        Asset.symbol,
    )


def _value(
    market: MarketData, portfolios: Sequence[Portfolio], rows: Sequence[Any]
) -> PortfolioTotals:
    """Vectorized valuation of position rows ``(portfolio_id, quantity, cost_basis, symbol)``."""
    index = {p.id: i for i, p in enumerate(portfolios)}
    quotes = market.quotes(sorted({r[3] for r in rows}))
    nan = float("nan")
    price = np.array(
        [quotes[r[3]].price if r[3] in quotes else nan for r in rows], dtype=np.float64
    )
    change = np.array(
        [quotes[r[3]].change if r[3] in quotes else nan for r in rows], dtype=np.float64
    )
    marks = mark_positions(
        np.array([r[1] for r in rows], dtype=np.float64),
        np.array([r[2] for r in rows], dtype=np.float64),
        price,
        change,
    )
    group = np.array([index[r[0]] for r in rows], dtype=np.int64)
    return portfolio_totals(group, len(portfolios), marks)


async def _totals(
    session: AsyncSession, market: MarketData, portfolios: Sequence[Portfolio]
) -> PortfolioTotals:
    """Value every position of ``portfolios`` at once (one Core query, float columns)."""
    rows: list[Any] = []
    if portfolios:
        query = (
            select(*_position_columns())
            .join(Asset, Asset.id == Position.asset_id)
            .where(Position.portfolio_id.in_([p.id for p in portfolios]))
        )
        rows = list((await session.execute(query)).all())
    return _value(market, portfolios, rows)


def _read(p: Portfolio, totals: PortfolioTotals, i: int) -> PortfolioRead:
    return PortfolioRead(
        id=p.id,
        name=p.name,
        description=p.description,
        benchmark_symbol=p.benchmark_symbol,
        is_active=p.is_active,
        total_value=fmt.money(float(totals.total_value[i])) or "0.00",
        daily_change=fmt.money(float(totals.daily_change[i])) or "0.00",
        daily_change_percent=fmt.percent(float(totals.daily_change_percent[i])) or "0.00",
        position_count=int(totals.position_count[i]),
        created_at=p.created_at,
        updated_at=p.updated_at,
    )


async def portfolio_reads(
    session: AsyncSession, market: MarketData, portfolios: Sequence[Portfolio]
) -> list[PortfolioRead]:
    """Valued read models of ``portfolios`` (one positions query, one vectorized valuation)."""
    totals = await _totals(session, market, portfolios)
    return [_read(p, totals, i) for i, p in enumerate(portfolios)]


async def list_portfolios(
    session: AsyncSession,
    market: MarketData,
    user_id: int,
    page: PageParams,
    *,
    active_only: bool,
    ordering: str,
) -> tuple[list[PortfolioRead], int]:
    """The user's portfolios, ordered (``name``, ``created_at``, ``total_value``; ``-`` descending)."""
    query = select(Portfolio).where(Portfolio.user_id == user_id)
    if active_only:
        query = query.where(Portfolio.is_active.is_(True))
    key, desc = ordering.lstrip("-"), ordering.startswith("-")
    if key == "total_value":
        everything = list((await session.execute(query.order_by(Portfolio.id))).scalars())
        reads = await portfolio_reads(session, market, everything)
        reads.sort(key=lambda r: Decimal(r.total_value), reverse=desc)
        return reads[page.offset : page.offset + page.limit], len(everything)
    column = Portfolio.name if key == "name" else Portfolio.created_at
    order = [
        column.desc() if desc else column.asc(),
        Portfolio.id.desc() if desc else Portfolio.id.asc(),
    ]
    # One round trip: the page of portfolios (with the total count as a window, evaluated
    # before LIMIT) left-joined to their positions.
    page_q = (
        query.add_columns(func.count().over().label("total"))
        .order_by(*order)
        .limit(page.limit)
        .offset(page.offset)
        .subquery()
    )
    pf = aliased(Portfolio, page_q)
    ocol = pf.name if key == "name" else pf.created_at
    stmt = (
        select(pf, page_q.c.total, *_position_columns())
        .outerjoin(Position, Position.portfolio_id == pf.id)
        .outerjoin(Asset, Asset.id == Position.asset_id)
        .order_by(ocol.desc() if desc else ocol.asc(), pf.id.desc() if desc else pf.id.asc())
    )
    result = (await session.execute(stmt)).all()
    if not result:  # empty page: the window gives no count
        count = await session.execute(select(func.count()).select_from(query.subquery()))
        return [], int(count.scalar_one())
    portfolios: list[Portfolio] = []
    rows = []
    for r in result:
        if not portfolios or portfolios[-1].id != r[0].id:
            portfolios.append(r[0])
        if r[5] is not None:
            rows.append(r[2:])
    totals = _value(market, portfolios, rows)
    return [_read(p, totals, i) for i, p in enumerate(portfolios)], int(result[0][1])


async def create_portfolio(
    db: Database, market: MarketData, user_id: int, data: PortfolioCreate
) -> PortfolioRead:
    now = utcnow()
    p = Portfolio(
        user_id=user_id,
        name=data.name,
        description=data.description,
        benchmark_symbol=data.benchmark_symbol.upper(),
        is_active=data.is_active,
        created_at=now,
        updated_at=now,
    )
    async with db.write() as s:
        s.add(p)
    async with db.read() as s:
        return (await portfolio_reads(s, market, [p]))[0]


async def update_portfolio(
    db: Database, market: MarketData, user_id: int, portfolio_id: int, data: PortfolioUpdate
) -> PortfolioRead:
    async with db.write() as s:
        p = await get_owned(s, user_id, portfolio_id)
        p.name = data.name
        if data.description is not None:
            p.description = data.description
        if data.benchmark_symbol is not None:
            p.benchmark_symbol = data.benchmark_symbol.upper()
        if data.is_active is not None:
            p.is_active = data.is_active
        p.updated_at = utcnow()
    async with db.read() as s:
        return (await portfolio_reads(s, market, [p]))[0]


async def delete_portfolio(db: Database, user_id: int, portfolio_id: int) -> None:
    """Delete the portfolio with its ledger and positions."""
    async with db.write() as s:
        p = await get_owned(s, user_id, portfolio_id)
        await s.delete(p)


def position_reads(
    rows: Sequence[tuple[Position, Asset]], market: MarketData
) -> list[PositionRead]:
    """Marked read models of positions (vectorized over the rows)."""
    assets = [a for _, a in rows]
    price, change = _prices(market, assets)
    qty = np.array([float(p.quantity) for p, _ in rows])
    cost = np.array([float(p.cost_basis) for p, _ in rows])
    marks = mark_positions(qty, cost, price, change)
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
    await get_owned(session, user_id, portfolio_id)
    rows = await _positions(session, [portfolio_id])
    return position_reads(rows[page.offset : page.offset + page.limit], market), len(rows)
