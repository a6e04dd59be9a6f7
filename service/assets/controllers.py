"""``/api/assets/``: readable anonymously (anonymous rate limit applies)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from litestar import Controller, Request, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery, JSONBody, QueryParameter
from sqlalchemy.ext.asyncio import AsyncSession

from service.assets import services
from service.assets.market import MarketData
from service.assets.schemas import (
    AssetRead,
    AssetType,
    BulkPricesRead,
    BulkPricesRequest,
    Interval,
    PriceHistoryRead,
)
from service.assets.services import AssetReads
from service.pagination import Page, PageParams

__all__ = ["AssetController"]


class AssetController(Controller):
    path = "/api/assets"
    tags = ["assets"]  # noqa: RUF012

    @get("/", summary="List assets")
    async def list_assets(
        self,
        request: Request,
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
        paging: NamedDependency[PageParams],
        symbol: FromQuery[str | None] = None,
        asset_type: FromQuery[AssetType | None] = None,
        sector: FromQuery[str | None] = None,
        search: Annotated[str | None, QueryParameter(description="Matches symbol or name.")] = None,
    ) -> Page[AssetRead]:
        items, count = await services.list_assets(
            session,
            market,
            paging,
            symbol=symbol,
            asset_type=asset_type,
            sector=sector,
            search=search,
        )
        return Page.build(request, items, count, paging)

    @get("/{asset_id:int}/", summary="Retrieve an asset")
    async def get_asset(
        self, asset_id: FromPath[int], asset_reads: NamedDependency[AssetReads]
    ) -> AssetRead:
        return await asset_reads.get(asset_id)

    @get("/{asset_id:int}/price-history/", summary="Price history (OHLCV bars)")
    async def price_history(
        self,
        asset_id: FromPath[int],
        asset_reads: NamedDependency[AssetReads],
        days: Annotated[
            int, QueryParameter(ge=1, description="Trading days (daily bars) to cover.")
        ] = 252,
        interval: FromQuery[Interval] = "1d",
    ) -> PriceHistoryRead:
        today = dt.datetime.now(dt.UTC).date()
        return await asset_reads.price_history(asset_id, days, interval, today)

    @post("/bulk-prices/", summary="Latest prices of several assets", status_code=200)
    async def bulk_prices(
        self, data: JSONBody[BulkPricesRequest], asset_reads: NamedDependency[AssetReads]
    ) -> BulkPricesRead:
        return await asset_reads.bulk_prices(data.symbols)
