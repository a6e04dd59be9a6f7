"""The per-application container of shared resources, and its Litestar dependencies."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from litestar.datastructures import State

from service.assets.directory import AssetDirectory
from service.assets.market import MarketData
from service.auth.services import IdentityCache
from service.db import Database
from service.portfolios.book import BookCache
from service.ratelimit import RateLimiter
from service.settings import Settings

__all__ = [
    "Resources",
    "provide_assets",
    "provide_db",
    "provide_market",
    "provide_resources",
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


async def provide_assets(state: State) -> AssetDirectory:
    """Dependency ``assets``: the in-process asset directory."""
    return state.resources.assets


async def provide_market(state: State) -> MarketData:
    """Dependency ``market``: prices and quotes (provider + imported Parquet files)."""
    return state.resources.market
