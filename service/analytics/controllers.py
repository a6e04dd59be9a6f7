"""``/api/analytics/``: metrics, performance, allocation and risk of a portfolio; technicals of an asset."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from litestar import Controller, Request, get
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import FromPath, QueryParameter
from sqlalchemy.ext.asyncio import AsyncSession

from quantcore.income import GroupBy
from service.analytics import income as income_service
from service.analytics import overview as overview_service
from service.analytics import services
from service.analytics.periods import PeriodName, window_query
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
PeriodQ = Annotated[
    PeriodName | None,
    QueryParameter(
        description=(
            "Look-back: 1m, 3m, 6m, ytd, 1y (default), 2y, 3y, 5y or max (from the first "
            "transaction). Not with start_date/end_date."
        )
    ),
]
StartQ = Annotated[
    dt.date | None,
    QueryParameter(description="First day of the window (default: the first transaction)."),
]
EndQ = Annotated[
    dt.date | None,
    QueryParameter(description="Last day of the window (default: the market's current day)."),
]
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

    @get("/portfolio/{portfolio_id:int}/metrics/", summary="Portfolio performance metrics")
    async def metrics(
        self,
        request: Req,
        portfolio_id: FromPath[int],
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
        period: PeriodQ = None,
        start_date: StartQ = None,
        end_date: EndQ = None,
        benchmark: BenchmarkQ = None,
    ) -> MetricsRead:
        query = window_query(period, start_date, end_date)
        return await services.portfolio_metrics(
            session, market, request.user.id, portfolio_id, query, benchmark
        )

    @get("/portfolio/{portfolio_id:int}/performance/", summary="Portfolio performance series")
    async def performance(
        self,
        request: Req,
        portfolio_id: FromPath[int],
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
        period: PeriodQ = None,
        start_date: StartQ = None,
        end_date: EndQ = None,
        interval: Annotated[
            Interval, QueryParameter(description="Point spacing: 1d, 1w or 1m.")
        ] = "1d",
        benchmark: BenchmarkQ = None,
    ) -> PerformanceRead:
        query = window_query(period, start_date, end_date)
        return await services.performance(
            session, market, request.user.id, portfolio_id, query, interval, benchmark
        )

    @get("/overview/", summary="All portfolios as one account, in one currency")
    async def overview(
        self,
        request: Req,
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
        period: PeriodQ = None,
        start_date: StartQ = None,
        end_date: EndQ = None,
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
        query = window_query(period, start_date, end_date)
        return await overview_service.overview(
            session, market, request.user.id, query, currency, interval, benchmark
        )

    @get("/portfolio/{portfolio_id:int}/income/", summary="Dividends and interest by period")
    async def income(
        self,
        request: Req,
        portfolio_id: FromPath[int],
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
        period: PeriodQ = None,
        start_date: StartQ = None,
        end_date: EndQ = None,
        group_by: Annotated[
            GroupBy, QueryParameter(description="Sum per month (default), quarter or year.")
        ] = "month",
    ) -> IncomeRead:
        query = window_query(period, start_date, end_date)
        return await income_service.income(
            session, market, request.user.id, portfolio_id, query, group_by
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
