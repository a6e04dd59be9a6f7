"""``/api/backtesting/``: strategies, backtests, runs and quick backtests."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Request, delete, get, post, put
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody, QueryParameter
from sqlalchemy.ext.asyncio import AsyncSession

from service.assets.market import MarketData
from service.auth.guards import requires_user
from service.auth.identity import Identity
from service.backtesting import services
from service.backtesting.params import required_parameters, strategy_types
from service.backtesting.schemas import (
    BacktestCreate,
    BacktestDetail,
    BacktestRead,
    BacktestStatus,
    QuickBacktestCreate,
    QuickBacktestRead,
    RunResult,
    StrategyCreate,
    StrategyRead,
    StrategyTypeRead,
    StrategyUpdate,
    TradeRead,
)
from service.db import Database
from service.pagination import Page, PageParams

__all__ = ["BacktestingController"]

Req = Request[Identity, str, State]


class BacktestingController(Controller):
    path = "/api/backtesting"
    tags = ["backtesting"]  # noqa: RUF012
    guards = [requires_user]  # noqa: RUF012

    @get("/strategy-types/", summary="Registered strategy types and their parameters")
    async def list_types(self) -> list[StrategyTypeRead]:
        return [
            StrategyTypeRead(strategy_type=k, parameters=v, required=required_parameters(k))
            for k, v in strategy_types().items()
        ]

    @get("/strategies/", summary="List strategies")
    async def list_strategies(
        self,
        request: Req,
        session: NamedDependency[AsyncSession],
        paging: NamedDependency[PageParams],
    ) -> Page[StrategyRead]:
        items, count = await services.list_strategies(session, request.user.id, paging)
        return Page.build(request, items, count, paging)

    @post("/strategies/", summary="Create a strategy")
    async def create_strategy(
        self,
        request: Req,
        data: JSONBody[StrategyCreate],
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
    ) -> StrategyRead:
        return await services.create_strategy(session, market, request.user.id, data)

    @get("/strategies/{strategy_id:int}/", summary="Retrieve a strategy")
    async def get_strategy(
        self, request: Req, strategy_id: FromPath[int], session: NamedDependency[AsyncSession]
    ) -> StrategyRead:
        return await services.get_strategy(session, request.user.id, strategy_id)

    @put("/strategies/{strategy_id:int}/", summary="Update a strategy")
    async def update_strategy(
        self,
        request: Req,
        strategy_id: FromPath[int],
        data: JSONBody[StrategyUpdate],
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
    ) -> StrategyRead:
        return await services.update_strategy(session, market, request.user.id, strategy_id, data)

    @delete("/strategies/{strategy_id:int}/", summary="Delete a strategy and its backtests")
    async def delete_strategy(
        self, request: Req, strategy_id: FromPath[int], session: NamedDependency[AsyncSession]
    ) -> None:
        await services.delete_strategy(session, request.user.id, strategy_id)

    @get("/backtests/", summary="List backtests")
    async def list_backtests(
        self,
        request: Req,
        session: NamedDependency[AsyncSession],
        paging: NamedDependency[PageParams],
        strategy: Annotated[
            int | None, QueryParameter(description="Only this strategy's backtests.")
        ] = None,
        status: Annotated[
            BacktestStatus | None, QueryParameter(description="Only backtests in this status.")
        ] = None,
    ) -> Page[BacktestRead]:
        items, count = await services.list_backtests(
            session, request.user.id, paging, strategy_id=strategy, status=status
        )
        return Page.build(request, items, count, paging)

    @post("/backtests/", summary="Create a backtest of one of your strategies")
    async def create_backtest(
        self,
        request: Req,
        data: JSONBody[BacktestCreate],
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
    ) -> BacktestRead:
        return await services.create_backtest(session, market, request.user.id, data)

    @get(
        "/backtests/{backtest_id:int}/",
        summary="Retrieve a backtest with its equity curve and trades",
    )
    async def get_backtest(
        self, request: Req, backtest_id: FromPath[int], session: NamedDependency[AsyncSession]
    ) -> BacktestDetail:
        return await services.get_backtest(session, request.user.id, backtest_id)

    @get("/backtests/{backtest_id:int}/trades/", summary="List a backtest's trades, paginated")
    async def list_trades(
        self,
        request: Req,
        backtest_id: FromPath[int],
        session: NamedDependency[AsyncSession],
        paging: NamedDependency[PageParams],
    ) -> Page[TradeRead]:
        items, count = await services.list_trades(session, request.user.id, backtest_id, paging)
        return Page.build(request, items, count, paging)

    @post("/backtests/{backtest_id:int}/run/", summary="Run a backtest (no body)", status_code=200)
    async def run_backtest(
        self,
        request: Req,
        backtest_id: FromPath[int],
        db: NamedDependency[Database],
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
    ) -> RunResult:
        return await services.run_backtest(db, session, market, request.user.id, backtest_id)

    @post("/quick-backtest/", summary="Create and run a backtest in one call")
    async def quick_backtest(
        self,
        request: Req,
        data: JSONBody[QuickBacktestCreate],
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
    ) -> QuickBacktestRead:
        return await services.quick_backtest(session, market, request.user.id, data)
