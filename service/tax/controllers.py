"""``/api/tax/``: settings, summaries, stored calculations, loss harvesting and reports
(every amount in US dollars)."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

from litestar import Controller, Request, Response, get, post, put
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery, JSONBody, QueryParameter
from sqlalchemy.ext.asyncio import AsyncSession

from service.assets.market import MarketData
from service.auth.guards import requires_user
from service.auth.identity import Identity
from service.db import Database
from service.pagination import Page, PageParams
from service.tax import services
from service.tax.schemas import (
    HarvestAnalyze,
    HarvestRead,
    PortfolioTaxSettings,
    PortfolioTaxSettingsUpdate,
    ReportCreate,
    ReportFormat,
    ReportRead,
    ReportType,
    TaxCalculate,
    TaxCalculationRead,
    TaxSettingsRead,
    TaxSettingsUpdate,
    TaxSummaryRead,
)

__all__ = ["TaxController"]

Req = Request[Identity, str, State]
YearQ = Annotated[
    int | None,
    QueryParameter(ge=1970, le=9999, description="Tax year (default: the current year)."),
]
PortfolioQ = Annotated[
    int | None, QueryParameter(description="One portfolio (default: all of yours).")
]


def _base(request: Req) -> str:
    return str(request.base_url).rstrip("/")


class TaxController(Controller):
    path = "/api/tax"
    tags = ["tax"]  # noqa: RUF012
    guards = [requires_user]  # noqa: RUF012

    @get("/settings/", summary="Your tax rates")
    async def get_settings(
        self, request: Req, session: NamedDependency[AsyncSession]
    ) -> TaxSettingsRead:
        return await services.get_settings(session, request.user.id)

    @put("/settings/", summary="Update your tax rates")
    async def update_settings(
        self, request: Req, data: JSONBody[TaxSettingsUpdate], session: NamedDependency[AsyncSession]
    ) -> TaxSettingsRead:
        return await services.update_settings(session, request.user.id, data)

    @get("/portfolios/{portfolio_id:int}/settings/", summary="A portfolio's lot method")
    async def get_portfolio_settings(
        self, request: Req, portfolio_id: FromPath[int], session: NamedDependency[AsyncSession]
    ) -> PortfolioTaxSettings:
        return await services.portfolio_settings(session, request.user.id, portfolio_id)

    @put("/portfolios/{portfolio_id:int}/settings/", summary="Set a portfolio's lot method")
    async def set_portfolio_settings(
        self,
        request: Req,
        portfolio_id: FromPath[int],
        data: JSONBody[PortfolioTaxSettingsUpdate],
        session: NamedDependency[AsyncSession],
    ) -> PortfolioTaxSettings:
        return await services.set_portfolio_lot_method(
            session, request.user.id, portfolio_id, data.lot_method
        )

    @get("/analytics/summary/", summary="Tax summary of a year")
    async def summary(
        self,
        request: Req,
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
        year: YearQ = None,
        portfolio_id: PortfolioQ = None,
    ) -> TaxSummaryRead:
        return await services.summary(session, market, request.user.id, year, portfolio_id)

    @post(
        "/analytics/calculate/", summary="Calculate and store a year's tax figures", status_code=200
    )
    async def calculate(
        self,
        request: Req,
        data: JSONBody[TaxCalculate],
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
    ) -> TaxCalculationRead:
        return await services.calculate(
            session, market, request.user.id, data.year, data.portfolio_id, data.reprocess
        )

    @get("/loss-harvesting/", summary="Tax-loss-harvesting opportunities")
    async def loss_harvesting(
        self,
        request: Req,
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
        portfolio_id: PortfolioQ = None,
        min_loss: Annotated[
            Decimal, QueryParameter(description="Smallest loss in dollars.")
        ] = Decimal(0),
        min_loss_pct: Annotated[
            Decimal, QueryParameter(description="Smallest loss as a fraction of basis.")
        ] = Decimal(0),
    ) -> HarvestRead:
        return await services.harvest(
            session,
            market,
            request.user.id,
            portfolio_id,
            min_loss=min_loss,
            min_loss_pct=min_loss_pct,
            as_of=None,
        )

    @post(
        "/loss-harvesting/analyze/", summary="Opportunities with your thresholds", status_code=200
    )
    async def analyze(
        self,
        request: Req,
        data: JSONBody[HarvestAnalyze],
        db: NamedDependency[Database],
        market: NamedDependency[MarketData],
    ) -> HarvestRead:
        # a POST that only reads: the request's session would be a write transaction
        return await services.analyze(
            db, market, request.user.id, data.portfolio_id,
            min_loss=data.min_loss, min_loss_pct=data.min_loss_pct, as_of=data.as_of,
        )  # fmt: skip

    @get("/reports/", summary="List generated tax reports")
    async def list_reports(
        self,
        request: Req,
        session: NamedDependency[AsyncSession],
        paging: NamedDependency[PageParams],
        year: Annotated[int | None, QueryParameter(ge=1970, le=9999)] = None,
        report_type: FromQuery[ReportType | None] = None,
    ) -> Page[ReportRead]:
        items, count = await services.list_reports(
            session, request.user.id, paging, _base(request), year=year, report_type=report_type
        )
        return Page.build(request, items, count, paging)

    @post("/reports/generate/", summary="Generate and store a tax report")
    async def generate(
        self,
        request: Req,
        data: JSONBody[ReportCreate],
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
    ) -> ReportRead:
        return await services.generate_report(
            session, market, request.user.id, data.year, data.report_type, data.portfolio_id,
            _base(request),
        )  # fmt: skip

    @get("/reports/{report_id:int}/download/", summary="Download a report as CSV or JSON")
    async def download(
        self,
        request: Req,
        report_id: FromPath[int],
        session: NamedDependency[AsyncSession],
        format: Annotated[ReportFormat, QueryParameter(description="csv or json")] = "json",
    ) -> Response[str]:
        body, media_type, name = await services.get_report(
            session, request.user.id, report_id, format
        )
        return Response(
            body,
            media_type=media_type,
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )
