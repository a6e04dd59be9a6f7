"""The per-application container of shared resources, and the Litestar dependencies built on it.

Handlers never read ``app.state`` themselves: they name what they need and get it
from these providers (``db``, ``session``, ``market``, ``assets``, ``books``).
``session`` is the request's one :class:`~sqlalchemy.ext.asyncio.AsyncSession` for
reads: created on first use, closed (its transaction rolled back) after the handler.
Writes are transactions of :meth:`service.db.Database.write`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from litestar.datastructures import State
from sqlalchemy.ext.asyncio import AsyncSession

from service.assets.directory import AssetDirectory
from service.assets.market import MarketData
from service.assets.services import AssetReads
from service.auth.services import IdentityCache
from service.db import Database
from service.portfolios.book import BookCache
from service.portfolios.services import PortfolioReads
from service.ratelimit import RateLimiter
from service.settings import Settings

__all__ = [
    "Resources",
    "provide_asset_reads",
    "provide_assets",
    "provide_books",
    "provide_db",
    "provide_market",
    "provide_portfolio_reads",
    "provide_resources",
    "provide_session",
    "resources_of",
]


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


def resources_of(app: Any) -> Resources:
    """The :class:`Resources` of a Litestar app (or of ``scope["app"]``)."""
    return app.state.resources


async def provide_resources(state: State) -> Resources:
    return state.resources


async def provide_db(state: State) -> Database:
    """Dependency ``db``: the application's :class:`~service.db.Database`."""
    return state.resources.db


async def provide_session(state: State) -> AsyncIterator[AsyncSession]:
    """Dependency ``session``: the request's read session (closed after the handler)."""
    async with state.resources.db.sessions() as session:
        yield session


async def provide_assets(state: State) -> AssetDirectory:
    """Dependency ``assets``: the in-process asset directory."""
    return state.resources.assets


async def provide_asset_reads(state: State) -> AssetReads:
    """Dependency ``asset_reads``: asset lookups with live quotes."""
    res: Resources = state.resources
    return AssetReads(res.assets, res.market)


async def provide_market(state: State) -> MarketData:
    """Dependency ``market``: prices and quotes (provider + imported Parquet files)."""
    return state.resources.market


async def provide_portfolio_reads(state: State) -> AsyncIterator[PortfolioReads]:
    """Dependency ``portfolios``: the request's portfolio reads (its session closed after)."""
    res: Resources = state.resources
    async with res.db.sessions() as session:
        yield PortfolioReads(res.db, session, res.market, res.books)


async def provide_books(state: State) -> BookCache:
    """Dependency ``books``: the per-user portfolio books of this process."""
    return state.resources.books
