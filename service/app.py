"""The finance service application: ``create_app(settings) -> Litestar``.

Features plug in as routers: a feature package ``service/<feature>/`` exposes its
controllers, and :data:`FEATURE_ROUTERS` lists them. Everything a handler needs
comes from dependencies: ``db`` (:class:`~service.db.Database`), ``market``
(:class:`~service.assets.market.MarketData`), ``resources`` (all shared
resources), ``page`` (pagination); ``request.user`` is the
:class:`~service.auth.Identity` (``None`` when anonymous) and the
:func:`~service.auth.requires_user` guard makes a route require one.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from litestar import Litestar, Router
from litestar.config.cors import CORSConfig
from litestar.datastructures import State
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import ScalarRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme
from litestar.types import ControllerRouterHandler

from quantcore.warmup import warm as warm_kernels
from service.analytics.controllers import AnalyticsController
from service.assets.controllers import AssetController
from service.assets.directory import AssetDirectory
from service.assets.market import MarketData
from service.auth.controllers import AuthController
from service.backtesting import worker as backtest_worker
from service.backtesting.controllers import BacktestingController
from service.db import Database
from service.demo import sync_assets
from service.errors import check_request, exception_handlers
from service.health import health, ready
from service.identity_cache import IdentityCache
from service.imports.controllers import ImportController
from service.ledger.book import BookCache
from service.ledger.book import warm_up as warm_up_books
from service.marketdata.provider import MarketDataProvider
from service.openapi_ui import swagger_assets_router, swagger_plugin
from service.pipeline import request_pipeline
from service.portfolios.controllers import PortfolioController
from service.ratelimit import RateLimiter, Window, make_store
from service.realtime.plugin import realtime_plugins
from service.settings import Settings
from service.state import Resources, app_dependencies
from service.tax.controllers import TaxController
from service.transactions.controllers import TransactionController
from service.web import web_router

__all__ = ["CORE_ROUTERS", "FEATURE_ROUTERS", "app_from_env", "create_app", "default_provider"]

log = logging.getLogger("service")

#: The resources of this issue (service core).
CORE_ROUTERS: list[ControllerRouterHandler] = [
    AuthController,
    PortfolioController,
    TransactionController,
    AssetController,
]

#: Feature routers (analytics, backtesting, tax, realtime):
#: append ``service.<feature>.controllers.<X>Controller`` here.
FEATURE_ROUTERS: list[ControllerRouterHandler] = [
    AnalyticsController,
    BacktestingController,
    TaxController,
    ImportController,
]


def default_provider(settings: Settings) -> tuple[MarketDataProvider, Any]:
    """The simulated universe and the Parquet store under ``<data_dir>/prices``."""
    from service.marketdata.simulated import SimulatedMarket
    from service.marketdata.store import PriceStore

    store = PriceStore(settings.prices_dir)
    return SimulatedMarket(), store


def _limiter(settings: Settings) -> RateLimiter:
    """Fixed windows, in Redis (``QC_REDIS_URL``, keys ``<QC_REDIS_PREFIX>rl:``) or in memory."""
    return RateLimiter(make_store(settings.redis_url, f"{settings.redis_prefix}rl"), Window.FIXED)


def create_app(
    settings: Settings | None = None,
    *,
    provider: MarketDataProvider | None = None,
    store: Any | None = None,
    extra_routers: Sequence[ControllerRouterHandler] = (),
) -> Litestar:
    """Build the application.

    Args:
        settings: defaults to :meth:`Settings.from_env`.
        provider: market data source; defaults to the simulated universe.
        store: price store for imported assets (used with ``provider``).
        extra_routers: more route handlers (tests, plug-ins).

    The database schema must be migrated beforehand (``python -m service migrate``;
    ``serve`` does it). On startup the asset table is synced from the provider.
    """
    settings = settings or Settings.from_env()
    if provider is None:
        provider, store = default_provider(settings)
    db = Database(
        settings.database,
        pool_size=settings.db_pool_size,
        busy_timeout=settings.sqlite_busy_timeout_seconds,
    )
    resources = Resources(
        settings=settings,
        db=db,
        limiter=_limiter(settings),
        market=MarketData(provider, store),
        assets=AssetDirectory(db, settings.asset_cache_seconds),
        identities=IdentityCache(settings.auth_cache_seconds),
        books=BookCache(settings.portfolio_cache_users),
    )

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        backtest_worker.configure(settings.backtest_workers)  # the pool is process-wide
        added = await sync_assets(db, provider)
        if added:
            log.info("asset table: %d assets added from the provider", added)
        warm_up_books()
        if settings.warm_up:
            # Compile (empty cache) or load the kernels the endpoints use before the first
            # request: until the lifespan finishes, uvicorn answers nothing, /ready included.
            warm_kernels(progress=False)
            backtest_worker.start()
        _freeze_startup_heap()
        try:
            yield
        finally:
            backtest_worker.shutdown()
            await resources.limiter.close()
            await db.dispose()

    api = Router(path="/", route_handlers=[*CORE_ROUTERS, *FEATURE_ROUTERS, *extra_routers])
    cors = (
        CORSConfig(allow_origins=[o.strip() for o in settings.cors_origins.split(",") if o.strip()])
        if settings.cors_origins
        else None
    )
    app = Litestar(
        route_handlers=[health, ready, api, swagger_assets_router(), web_router()],
        state=State({"resources": resources}),
        dependencies=app_dependencies(resources),
        exception_handlers=exception_handlers,
        before_request=check_request,
        lifespan=[lifespan],
        openapi_config=_openapi(),
        cors_config=cors,
        request_max_body_size=settings.max_body_bytes,
        debug=False,
        logging_config=None,
        plugins=realtime_plugins(settings),
    )
    # The request pipeline wraps the whole ASGI handler, not each route: Litestar's
    # route middleware never sees the 404/405 its router answers, and those API
    # responses need their request id and rate-limit headers (and count) too.
    app.asgi_handler = request_pipeline(app.asgi_handler, resources)
    return app


def _freeze_startup_heap() -> None:
    """Move what startup allocated out of the garbage collector's sight (``gc.freeze``).

    The libraries a worker imports (numba, llvmlite, pandas, SQLAlchemy, Litestar)
    leave millions of long-lived objects; every full collection walked all of them,
    a pause of a few hundred milliseconds that the requests in flight then waited out
    (the p99 of ``GET /api/portfolios/`` under 64 connections, see docs/service.md).
    Frozen objects are never collected, which is what they are for anyway.
    """
    gc.collect()
    gc.freeze()


def _openapi() -> OpenAPIConfig:
    return OpenAPIConfig(
        title="quantcore finance API",
        version="0.1.0",
        description="Portfolios, transactions, assets and market data over quantcore. See docs/service.md.",
        path="/schema",
        render_plugins=[swagger_plugin("/swagger"), ScalarRenderPlugin(path="/scalar")],
        components=Components(
            security_schemes={
                "TokenAuth": SecurityScheme(
                    type="apiKey",
                    name="Authorization",
                    security_scheme_in="header",
                    description="`Authorization: Token <key>` (POST /api/auth/token/).",
                ),
                "ApiKeyAuth": SecurityScheme(
                    type="apiKey",
                    name="X-API-Key",
                    security_scheme_in="header",
                    description="Service-to-service key (POST /api/auth/api-keys/).",
                ),
                "SessionCookie": SecurityScheme(
                    type="apiKey",
                    name="qc_session",
                    security_scheme_in="cookie",
                    description="Browser session (POST /api/auth/login/); unsafe methods need X-CSRFToken.",
                ),
            }
        ),
        security=[{"TokenAuth": []}, {"ApiKeyAuth": []}, {"SessionCookie": []}],
    )


def app_from_env() -> Litestar:
    """Factory for ``uvicorn --factory service.app:app_from_env`` (settings from ``QC_*``)."""
    return create_app(Settings.from_env())
