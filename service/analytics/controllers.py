"""``/api/analytics/``: metrics, performance, allocation and risk of a portfolio; technicals of an asset."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Request, get
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.params import FromPath, QueryParameter
from sqlalchemy.ext.asyncio import AsyncSession

from quantcore.income import GroupBy
from service.analytics import income as income_service
from service.analytics import overview as overview_service
from service.analytics import services
from service.analytics.periods import WindowParams, provide_window
from service.analytics.schemas import (
    AllocationRead,
    IncomeRead,
    Interval,
    MetricsRead,
    OverviewRead,
    PerformanceRead,
    RiskRead,
    TechnicalRead,
)
from service.assets.market import MarketData
from service.auth.guards import requires_user
from service.auth.identity import Identity

__all__ = ["AnalyticsController"]

Req = Request[Identity, str, State]
BenchmarkQ = Annotated[
    str | None,
    QueryParameter(
        min_length=1, max_length=32, description="Benchmark symbol (default: the portfolio's)."
    ),
]


class AnalyticsController(Controller):
    path = "/api/analytics"
    tags = ["analytics"]  # noqa: RUF012
    guards = [requires_user]  # noqa: RUF012
    # period, start_date, end_date of the endpoints that cover a window
    dependencies = {"window": Provide(provide_window, sync_to_thread=False)}  # noqa: RUF012

    @get("/portfolio/{portfolio_id:int}/metrics/", summary="Portfolio performance metrics")
    async def metrics(
        self,
        request: Req,
        portfolio_id: FromPath[int],
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
        window: NamedDependency[WindowParams],
        benchmark: BenchmarkQ = None,
    ) -> MetricsRead:
        return await services.portfolio_metrics(
            session, market, request.user.id, portfolio_id, window.query(), benchmark
        )

    @get("/portfolio/{portfolio_id:int}/performance/", summary="Portfolio performance series")
    async def performance(
        self,
        request: Req,
        portfolio_id: FromPath[int],
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
        window: NamedDependency[WindowParams],
        interval: Annotated[
            Interval, QueryParameter(description="Point spacing: 1d, 1w or 1m.")
        ] = "1d",
        benchmark: BenchmarkQ = None,
    ) -> PerformanceRead:
        return await services.performance(
            session, market, request.user.id, portfolio_id, window.query(), interval, benchmark
        )

    @get("/overview/", summary="All portfolios as one account, in one currency")
    async def overview(
        self,
        request: Req,
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
        window: NamedDependency[WindowParams],
        currency: Annotated[
            str,
            QueryParameter(min_length=3, max_length=3, description="ISO 4217 code (default USD)."),
        ] = "USD",
        interval: Annotated[
            Interval, QueryParameter(description="Point spacing of performance: 1d, 1w or 1m.")
        ] = "1d",
        benchmark: Annotated[
            str | None,
            QueryParameter(min_length=1, max_length=32, description="Benchmark (default SPY)."),
        ] = None,
    ) -> OverviewRead:
        return await overview_service.overview(
            session, market, request.user.id, window.query(), currency, interval, benchmark
        )

    @get("/portfolio/{portfolio_id:int}/income/", summary="Dividends and interest by period")
    async def income(
        self,
        request: Req,
        portfolio_id: FromPath[int],
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
        window: NamedDependency[WindowParams],
        group_by: Annotated[
            GroupBy, QueryParameter(description="Sum per month (default), quarter or year.")
        ] = "month",
    ) -> IncomeRead:
        return await income_service.income(
            session, market, request.user.id, portfolio_id, window.query(), group_by
        )

    @get("/portfolio/{portfolio_id:int}/allocation/", summary="Portfolio allocation")
    async def allocation(
        self,
        request: Req,
        portfolio_id: FromPath[int],
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
    ) -> AllocationRead:
        return await services.allocation(session, market, request.user.id, portfolio_id)

    @get("/portfolio/{portfolio_id:int}/risk/", summary="Portfolio risk")
    async def risk(
        self,
        request: Req,
        portfolio_id: FromPath[int],
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
        lookback: Annotated[
            int, QueryParameter(ge=20, le=2520, description="Daily returns used (trading days).")
        ] = 252,
    ) -> RiskRead:
        return await services.portfolio_risk(
            session, market, request.user.id, portfolio_id, lookback
        )

    @get("/assets/{asset_id:int}/technical/", summary="Technical indicators of an asset")
    async def technical(
        self,
        asset_id: FromPath[int],
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
        indicators: Annotated[
            list[str] | None,
            QueryParameter(
                description="Repeat or comma-separate: sma_20, ema_50, rsi, macd, bollinger_20_2, ..."
            ),
        ] = None,
        period: Annotated[
            int, QueryParameter(ge=1, le=5000, description="Daily bars returned.")
        ] = 252,
    ) -> TechnicalRead:
        return await services.technical_indicators(
            session, market, asset_id, indicators or [], period
        )
