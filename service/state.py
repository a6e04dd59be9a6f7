"""The per-application container of shared resources, and the Litestar dependencies built on it.

Handlers never read ``app.state`` themselves: they name what they need and get it
as a dependency. Every dependency but ``session`` is an object that lives as long
as the application, provided as a constant (:func:`app_dependencies`), so naming
one costs a request nothing. The feature services among them (``portfolios``,
``asset_reads``) open at most one session per call. ``session`` is the session
of the request (a read session for safe methods, one write transaction for the
others, committed after the handler: :func:`provide_session`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from litestar import Request
from litestar.di import NamedDependency, Provide
from sqlalchemy.ext.asyncio import AsyncSession

from service.assets.directory import AssetDirectory
from service.assets.market import MarketData
from service.assets.services import AssetReads
from service.db import Database
from service.identity_cache import IdentityCache
from service.ledger.book import BookCache, PortfolioReads
from service.pagination import provide_page_params, windowed
from service.ratelimit import RateLimiter
from service.settings import Settings

__all__ = ["Resources", "app_dependencies", "provide_session", "resources_of"]

T = TypeVar("T")


@dataclass(slots=True)
class Resources:
    """What the handlers of every feature share (kept in ``app.state.resources``)."""

    settings: Settings
    db: Database
    limiter: RateLimiter
    market: MarketData
    assets: AssetDirectory
    identities: IdentityCache
    books: BookCache
    asset_reads: AssetReads = field(init=False)
    portfolio_reads: PortfolioReads = field(init=False)

    def __post_init__(self) -> None:
        self.asset_reads = AssetReads(self.assets, self.market)
        self.portfolio_reads = PortfolioReads(self.db, self.market, self.books)


def resources_of(app: Any) -> Resources:
    """The :class:`Resources` of a Litestar app (or of ``scope["app"]``)."""
    return app.state.resources


def _constant(value: T) -> Callable[[], T]:
    def provide() -> T:
        return value

    return provide


_READS = frozenset({"GET", "HEAD", "OPTIONS"})


async def provide_session(
    request: Request[Any, Any, Any], db: NamedDependency[Database]
) -> AsyncIterator[AsyncSession]:
    """Dependency ``session``: the request's one session; this is the place that commits.

    A safe method (``GET``, ``HEAD``) reads: the session is closed (whatever it began
    rolled back) after the handler. Any other method writes: the session is one
    transaction of :meth:`Database.write`, committed after the handler returns and
    before the response is sent, rolled back when the handler raises. The transaction
    begins with the first statement (``BEGIN IMMEDIATE`` on SQLite), so a handler that
    hashes a password or runs a backtest first holds no lock meanwhile. Services take
    the session and ``flush`` (never commit) when they need generated ids.
    """
    async with db.read() if request.method in _READS else db.write() as session:
        yield session


def app_dependencies(res: Resources) -> dict[str, Provide]:
    """The application-level dependencies.

    ``db`` (:class:`~service.db.Database`), ``session`` (a read session),
    ``market`` (quotes and bars), ``assets`` (the asset directory), ``books`` (the
    per-user portfolio books), ``asset_reads`` and ``portfolios`` (the read services
    of those features), ``resources`` (all of them) and ``paging`` (the validated
    ``limit``/``offset``/``page`` of a list endpoint, :mod:`service.pagination`).
    ``portfolio_list`` is ``portfolios`` with ``paging``, one dependency for the hot
    portfolio list (:func:`service.pagination.windowed`).
    """
    constants: dict[str, Any] = {
        "db": res.db,
        "market": res.market,
        "assets": res.assets,
        "books": res.books,
        "asset_reads": res.asset_reads,
        "portfolios": res.portfolio_reads,
        "resources": res,
    }
    deps = {k: Provide(_constant(v), sync_to_thread=False) for k, v in constants.items()}
    deps["session"] = Provide(provide_session)
    deps["paging"] = Provide(provide_page_params, sync_to_thread=False)
    deps["portfolio_list"] = Provide(windowed(res.portfolio_reads), sync_to_thread=False)
    return deps
