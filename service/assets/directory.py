"""An in-process, read-through cache of the asset table (reference data, read on every request).

Assets change only when the provider's universe is synced at startup or when prices
are imported, so each worker keeps the whole table in memory and reloads it every
``ttl`` seconds, when an unknown id or symbol is asked for, or when this process
changed it (:meth:`AssetDirectory.invalidate`).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
from decimal import Decimal

import msgspec
from sqlalchemy import select

from service.db import Database
from service.db.models import Asset

__all__ = ["AssetDirectory", "AssetRow"]

log = logging.getLogger("service")


class AssetRow(msgspec.Struct, frozen=True):
    """An immutable copy of one asset row."""

    id: int
    symbol: str
    name: str
    asset_type: str
    sector: str
    market_cap: Decimal | None
    data_source: str
    updated_at: dt.datetime
    currency: str = "USD"  # ISO 4217


def _log_failure(f: asyncio.Future[None]) -> None:
    if not f.cancelled() and (exc := f.exception()) is not None:
        log.warning("asset directory: background reload failed: %r", exc)


class AssetDirectory:
    """Assets by id and symbol, reloaded from the database at most every ``ttl`` seconds."""

    def __init__(self, db: Database, ttl: float = 30.0) -> None:
        self._db = db
        self._ttl = ttl
        self._by_id: dict[int, AssetRow] = {}
        self._by_symbol: dict[str, AssetRow] = {}
        self._loaded_at = -float("inf")
        self._lock = asyncio.Lock()
        self._refresh: asyncio.Future[None] | None = None

    def invalidate(self) -> None:
        """Force a reload on the next lookup."""
        self._loaded_at = -float("inf")

    async def _reload(self, seen: float) -> None:
        """Reload the table unless another request did since ``seen`` (a ``_loaded_at``).

        Requests that find the table stale together wait for one reload instead of
        reloading it one after another behind the lock.
        """
        async with self._lock:
            if self._loaded_at != seen:
                return
            async with self._db.read() as s:
                rows = [
                    AssetRow(
                        a.id,
                        a.symbol,
                        a.name,
                        a.asset_type,
                        a.sector,
                        a.market_cap,
                        a.data_source,
                        a.updated_at,
                        a.currency,
                    )
                    for a in (await s.execute(select(Asset))).scalars()
                ]
            self._by_id = {r.id: r for r in rows}
            self._by_symbol = {r.symbol: r for r in rows}
            self._loaded_at = time.monotonic()

    async def _fresh(self) -> None:
        """Reload a table older than ``ttl``: in the background once one is loaded.

        Requests go on with the table they have while one task reloads it, so none
        of them waits for the reload's trips through the event loop's queue.
        """
        if time.monotonic() - self._loaded_at <= self._ttl:
            return
        if not self._by_id or self._loaded_at == -float("inf"):  # first load, or invalidated
            await self._reload(self._loaded_at)
        elif self._refresh is None or self._refresh.done():
            self._refresh = asyncio.ensure_future(self._reload(self._loaded_at))
            self._refresh.add_done_callback(_log_failure)

    async def by_id(self, asset_id: int) -> AssetRow | None:
        await self._fresh()
        row = self._by_id.get(asset_id)
        if row is None:  # maybe created since the last load (a miss costs what no cache would)
            await self._reload(self._loaded_at)
            row = self._by_id.get(asset_id)
        return row

    async def by_symbol(self, symbol: str) -> AssetRow | None:
        await self._fresh()
        row = self._by_symbol.get(symbol.upper())
        if row is None:
            await self._reload(self._loaded_at)
            row = self._by_symbol.get(symbol.upper())
        return row
