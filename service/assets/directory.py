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
from decimal import Decimal
from typing import Any

import msgspec
from sqlalchemy import select

from service.caching import TTLCache
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


def _log_failure(f: asyncio.Future[Any]) -> None:
    if not f.cancelled() and (exc := f.exception()) is not None:
        log.warning("asset directory: background reload failed: %r", exc)


class _Table(msgspec.Struct, frozen=True):
    """The whole asset table, by id and by (upper-case) symbol."""

    by_id: dict[int, AssetRow]
    by_symbol: dict[str, AssetRow]


_EMPTY = _Table({}, {})


class AssetDirectory:
    """Assets by id and symbol, reloaded from the database at most every ``ttl`` seconds.

    The table is the one entry of a :class:`~service.caching.TTLCache` kept without
    expiry, because a table past ``ttl`` is still served while one background task
    reloads it. Invalidation: its age (past ``ttl``: reload in the background), a miss
    (an unknown id or symbol: reload now), and :meth:`invalidate` (this process changed
    the table: drop it, the next lookup reloads).
    """

    def __init__(self, db: Database, ttl: float = 30.0) -> None:
        self._db = db
        self._ttl = ttl
        self._table: TTLCache[None, _Table] = TTLCache(1)
        self._lock = asyncio.Lock()
        self._refresh: asyncio.Future[_Table] | None = None

    def invalidate(self) -> None:
        """Force a reload on the next lookup."""
        self._table.clear()

    def _current(self) -> tuple[_Table | None, float]:
        found = self._table.entry(None)
        return (None, float("inf")) if found is None else found

    async def _reload(self, seen: _Table | None) -> _Table:
        """Reload the table unless another request did since it saw ``seen``.

        Requests that find the table stale together wait for one reload instead of
        reloading it one after another behind the lock.
        """
        async with self._lock:
            current = self._current()[0]
            if current is not None and current is not seen:
                return current
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
            table = _Table({r.id: r for r in rows}, {r.symbol: r for r in rows})
            self._table.put(None, table)
            return table

    async def _fresh(self) -> _Table:
        """The table; one older than ``ttl`` is reloaded in the background.

        Requests go on with the table they have while one task reloads it, so none
        of them waits for the reload's trips through the event loop's queue.
        """
        table, age = self._current()
        if table is None:  # first load, or invalidated
            return await self._reload(None)
        if age > self._ttl and (self._refresh is None or self._refresh.done()):
            self._refresh = asyncio.ensure_future(self._reload(table))
            self._refresh.add_done_callback(_log_failure)
        return table

    async def by_id(self, asset_id: int) -> AssetRow | None:
        table = await self._fresh()
        row = table.by_id.get(asset_id)
        if row is None:  # maybe created since the last load (a miss costs what no cache would)
            row = (await self._reload(table)).by_id.get(asset_id)
        return row

    async def by_symbol(self, symbol: str) -> AssetRow | None:
        table = await self._fresh()
        row = table.by_symbol.get(symbol.upper())
        if row is None:
            row = (await self._reload(table)).by_symbol.get(symbol.upper())
        return row
