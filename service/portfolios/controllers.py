"""``/api/portfolios/``: the user's portfolios and their positions."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, delete, get, post, put
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery, JSONBody
from litestar.response import Stream
from sqlalchemy.ext.asyncio import AsyncSession

from service.assets.market import MarketData
from service.auth.guards import requires_user
from service.auth.identity import Identity
from service.csvexport import ExportFormat, csv_requested
from service.errors import NotFoundError
from service.ledger.book import PortfolioReads
from service.ledger.writes import LedgerEntry, record
from service.pagination import Page, PageParams, Windowed
from service.portfolios import services
from service.portfolios.export import position_csv
from service.portfolios.schemas import (
    Ordering,
    PortfolioCreate,
    PortfolioRead,
    PortfolioUpdate,
    PositionCreate,
    PositionRead,
)

__all__ = ["PortfolioController"]

Req = Request[Identity, Any, State]


class PortfolioController(Controller):
    path = "/api/portfolios"
    tags = ["portfolios"]  # noqa: RUF012
    guards = [requires_user]  # noqa: RUF012

    @get("/", summary="List portfolios")
    async def list_portfolios(
        self,
        request: Req,
        portfolio_list: NamedDependency[Windowed[PortfolioReads]],
        active_only: FromQuery[bool] = False,
        ordering: FromQuery[Ordering] = "-created_at",
    ) -> Page[PortfolioRead]:
        paging = portfolio_list.paging
        items, count = await portfolio_list.reads.listing(
            request.user.id, paging, active_only=active_only, ordering=ordering
        )
        return Page.build(request, items, count, paging)

    @post("/", summary="Create a portfolio")
    async def create_portfolio(
        self,
        request: Req,
        data: JSONBody[PortfolioCreate],
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
    ) -> PortfolioRead:
        return await services.create_portfolio(session, market, request.user.id, data)

    @get("/{portfolio_id:int}/", summary="Retrieve a portfolio")
    async def get_portfolio(
        self, request: Req, portfolio_id: FromPath[int], portfolios: NamedDependency[PortfolioReads]
    ) -> PortfolioRead:
        return await portfolios.get(request.user.id, portfolio_id)

    @put("/{portfolio_id:int}/", summary="Update a portfolio")
    async def update_portfolio(
        self,
        request: Req,
        portfolio_id: FromPath[int],
        data: JSONBody[PortfolioUpdate],
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
    ) -> PortfolioRead:
        return await services.update_portfolio(session, market, request.user.id, portfolio_id, data)

    @delete("/{portfolio_id:int}/", summary="Delete a portfolio and its ledger")
    async def delete_portfolio(
        self, request: Req, portfolio_id: FromPath[int], session: NamedDependency[AsyncSession]
    ) -> None:
        await services.delete_portfolio(session, request.user.id, portfolio_id)

    @get("/{portfolio_id:int}/positions/", summary="List positions")
    async def list_positions(
        self,
        request: Req,
        portfolio_id: FromPath[int],
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
        paging: NamedDependency[PageParams],
        format: ExportFormat = None,
    ) -> Page[PositionRead] | Stream:
        every = csv_requested(request, format)
        window = PageParams(limit=1 << 31, offset=0) if every else paging
        items, count = await services.list_positions(
            session, market, request.user.id, portfolio_id, window
        )
        if every:
            return position_csv(items, portfolio_id)
        return Page.build(request, items, count, paging)

    @post("/{portfolio_id:int}/positions/", summary="Add to a position (records a buy)")
    async def add_position(
        self,
        request: Req,
        portfolio_id: FromPath[int],
        data: JSONBody[PositionCreate],
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
    ) -> PositionRead:
        entry = LedgerEntry(
            data.asset_symbol,
            "buy",
            data.quantity,
            data.purchase_price,
            data.fees,
            data.purchase_date,
            price_field="purchase_price",
            date_field="purchase_date",
        )
        _, asset, position = await record(
            session, request.user.id, portfolio_id, entry, missing_portfolio=NotFoundError
        )
        assert position is not None and asset is not None  # a buy leaves an open position
        base = (await services.get_owned(session, request.user.id, portfolio_id)).base_currency
        return services.position_reads([(position, asset)], market, base)[0]
