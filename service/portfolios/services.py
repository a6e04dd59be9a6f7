"""Portfolio CRUD and valuation; positions are read from the ledger-derived table."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import numpy as np
from sqlalchemy import Connection, Float, Integer, Select, bindparam, cast, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from quantcore.portfolio import PortfolioTotals, mark_positions, portfolio_totals
from service import formatting as fmt
from service.assets.market import MarketData
from service.assets.schemas import AssetRef
from service.db import Database
from service.db.models import Asset, Portfolio, Position, utcnow
from service.errors import NotFoundError
from service.pagination import PageParams
from service.portfolios.schemas import PortfolioCreate, PortfolioRead, PortfolioUpdate, PositionRead

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


_P = Portfolio.__table__.c
_POS = Position.__table__.c
_ASSET = Asset.__table__.c
#: Read-model columns of a portfolio, in :func:`_read`'s order (Core: no ORM hydration).
_PORTFOLIO_COLUMNS = (
    _P.id,
    _P.name,
    _P.description,
    _P.benchmark_symbol,
    _P.is_active,
    _P.created_at,
    _P.updated_at,
)
#: ``(portfolio_id, quantity, cost_basis, symbol)`` of every position of some portfolios.
_POSITIONS = (
    select(
        _POS.portfolio_id,
        cast(_POS.quantity, Float),
        cast(_POS.cost_basis, Float),
        _ASSET.symbol,
    )
    .join_from(Position.__table__, Asset.__table__, _ASSET.id == _POS.asset_id)
    .where(_POS.portfolio_id.in_(bindparam("ids", expanding=True)))
)


@functools.cache
def _page_statement(key: str, desc: bool, active_only: bool, paged: bool) -> Select[Any]:
    """The user's portfolios with the total count (a window, evaluated before LIMIT).

    Built once per variant with bound parameters (``user_id``, ``limit``, ``offset``),
    so a request only binds values.
    """
    query = select(*_PORTFOLIO_COLUMNS, func.count().over().label("total")).where(
        _P.user_id == bindparam("user_id")
    )
    if active_only:
        query = query.where(_P.is_active.is_(True))
    column = _P.name if key == "name" else _P.created_at if key == "created_at" else _P.id
    query = query.order_by(
        column.desc() if desc else column.asc(), _P.id.desc() if desc else _P.id.asc()
    )
    if paged:
        query = query.limit(bindparam("limit", type_=Integer)).offset(
            bindparam("offset", type_=Integer)
        )
    return query


def _value(market: MarketData, ids: Sequence[int], rows: Sequence[Any]) -> PortfolioTotals:
    """Vectorized valuation of position rows ``(portfolio_id, quantity, cost_basis, symbol)``."""
    index = {pid: i for i, pid in enumerate(ids)}
    pid, qty, cost, symbol = zip(*rows, strict=True) if rows else ((), (), (), ())
    price, change = _prices(market, symbol)
    marks = mark_positions(np.array(qty, np.float64), np.array(cost, np.float64), price, change)
    group = np.fromiter(map(index.__getitem__, pid), np.int64, len(pid))
    return portfolio_totals(group, len(ids), marks)


async def _totals(session: AsyncSession, market: MarketData, ids: Sequence[int]) -> PortfolioTotals:
    """Value every position of the portfolios ``ids`` at once (one Core query, float columns)."""
    rows: Sequence[Any] = []
    if ids:
        conn = await session.connection()
        rows = (await conn.execute(_POSITIONS, {"ids": list(ids)})).all()
    return _value(market, ids, rows)


def _read(row: Any, totals: PortfolioTotals, i: int) -> PortfolioRead:
    """Read model of a ``_PORTFOLIO_COLUMNS`` row (or a :class:`Portfolio`) valued at ``i``."""
    if isinstance(row, Portfolio):
        row = (
            row.id,
            row.name,
            row.description,
            row.benchmark_symbol,
            row.is_active,
            row.created_at,
            row.updated_at,
        )
    return PortfolioRead(
        id=row[0],
        name=row[1],
        description=row[2],
        benchmark_symbol=row[3],
        is_active=bool(row[4]),
        total_value=fmt.money(float(totals.total_value[i])) or "0.00",
        daily_change=fmt.money(float(totals.daily_change[i])) or "0.00",
        daily_change_percent=fmt.percent(float(totals.daily_change_percent[i])) or "0.00",
        position_count=int(totals.position_count[i]),
        created_at=row[5],
        updated_at=row[6],
    )


async def portfolio_reads(
    session: AsyncSession, market: MarketData, portfolios: Sequence[Portfolio]
) -> list[PortfolioRead]:
    """Valued read models of ``portfolios`` (one positions query, one vectorized valuation)."""
    totals = await _totals(session, market, [p.id for p in portfolios])
    return [_read(p, totals, i) for i, p in enumerate(portfolios)]


def _page_rows(
    conn: Connection,
    user_id: int,
    page: PageParams,
    *,
    active_only: bool,
    key: str,
    desc: bool,
) -> tuple[Sequence[Any], Sequence[Any], int]:
    """In one snapshot: the page of portfolio rows, their position rows and the total count.

    ``total_value`` ordering needs every portfolio valued first, so it reads them all.
    """
    by_value = key == "total_value"
    stmt = _page_statement(key, desc and not by_value, active_only, not by_value)
    params: dict[str, Any] = {"user_id": user_id}
    if not by_value:
        params.update(limit=page.limit, offset=page.offset)
    result = conn.execute(stmt, params).all()
    if not result:
        if by_value or page.offset == 0:
            return [], [], 0
        # past the end: the window gives no count
        counted = select(func.count()).select_from(stmt.limit(None).offset(None).subquery())
        return [], [], int(conn.execute(counted, {"user_id": user_id}).scalar_one())
    positions = conn.execute(_POSITIONS, {"ids": [r[0] for r in result]}).all()
    return result, positions, int(result[0][7])


async def list_portfolios(
    db: Database,
    market: MarketData,
    user_id: int,
    page: PageParams,
    *,
    active_only: bool,
    ordering: str,
) -> tuple[list[PortfolioRead], int]:
    """The user's portfolios, ordered (``name``, ``created_at``, ``total_value``; ``-`` descending).

    Two Core queries in one read snapshot (:meth:`Database.run_read`): the page of
    portfolios with the total count, then all their positions; valued in one
    vectorized pass (:mod:`quantcore.portfolio`).
    """
    key, desc = ordering.lstrip("-"), ordering.startswith("-")
    result, positions, count = await db.run_read(
        functools.partial(
            _page_rows, user_id=user_id, page=page, active_only=active_only, key=key, desc=desc
        )
    )
    totals = _value(market, [r[0] for r in result], positions)
    reads = [_read(r, totals, i) for i, r in enumerate(result)]
    if key == "total_value":
        reads.sort(key=lambda r: Decimal(r.total_value), reverse=desc)
        reads = reads[page.offset : page.offset + page.limit]
    return reads, count


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
    price, change = _prices(market, [a.symbol for _, a in rows])
    qty = np.array([float(p.quantity) for p, _ in rows], np.float64)
    cost = np.array([float(p.cost_basis) for p, _ in rows], np.float64)
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
