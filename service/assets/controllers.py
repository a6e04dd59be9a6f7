"""``/api/assets/``: readable anonymously (anonymous rate limit applies)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from litestar import Controller, Request, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.params import FromPath, FromQuery, JSONBody, QueryParameter

from service.assets import services
from service.assets.directory import AssetDirectory
from service.assets.market import MarketData
from service.assets.schemas import (
    AssetRead,
    AssetType,
    BulkPricesRead,
    BulkPricesRequest,
    Interval,
    PriceHistoryRead,
)
from service.db import Database
from service.pagination import Page, PageParams, provide_page_params
from service.state import Resources

__all__ = ["AssetController"]


class AssetController(Controller):
    path = "/api/assets"
    tags = ["assets"]  # noqa: RUF012
    dependencies = {"paging": Provide(provide_page_params)}  # noqa: RUF012

    @get("/", summary="List assets")
    async def list_assets(
        self,
        request: Request,
        db: NamedDependency[Database],
        market: NamedDependency[MarketData],
        paging: NamedDependency[PageParams],
        symbol: FromQuery[str | None] = None,
        asset_type: FromQuery[AssetType | None] = None,
        sector: FromQuery[str | None] = None,
        search: Annotated[str | None, QueryParameter(description="Matches symbol or name.")] = None,
    ) -> Page[AssetRead]:
        async with db.read() as s:
            items, count = await services.list_assets(
                s,
                market,
                paging,
                symbol=symbol,
                asset_type=asset_type,
                sector=sector,
                search=search,
            )
        return Page.build(request, items, count, paging)

    @get("/{asset_id:int}/", summary="Retrieve an asset")
    async def get_asset(self, asset_id: FromPath[int], state: State) -> AssetRead:
        # resources from ``state``, a reserved argument: even one dependency costs
        # Litestar a signature-model pass per request on this hot path
        res: Resources = state.resources
        asset = await services.get_asset(res.assets, asset_id)
        return services.asset_read(asset, res.market)

    @get("/{asset_id:int}/price-history/", summary="Price history (OHLCV bars)")
    async def price_history(
        self,
        asset_id: FromPath[int],
        assets: NamedDependency[AssetDirectory],
        market: NamedDependency[MarketData],
        days: Annotated[
            int, QueryParameter(ge=1, description="Trading days (daily bars) to cover.")
        ] = 252,
        interval: FromQuery[Interval] = "1d",
    ) -> PriceHistoryRead:
        asset = await services.get_asset(assets, asset_id)
        return services.price_history(asset, market, days, interval, dt.datetime.now(dt.UTC).date())

    @post("/bulk-prices/", summary="Latest prices of several assets", status_code=200)
    async def bulk_prices(
        self,
        data: JSONBody[BulkPricesRequest],
        assets: NamedDependency[AssetDirectory],
        market: NamedDependency[MarketData],
    ) -> BulkPricesRead:
        return await services.bulk_prices(assets, market, data.symbols)
