"""Recently verified credentials, kept per process: the authentication middleware's cache.

It sits below :mod:`service.state` (which holds the app's one instance) and beside the
other shared modules, so that the auth feature, which is above the state, is not
imported by it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from service.caching import TTLCache

if TYPE_CHECKING:
    from service.auth.identity import Identity

__all__ = ["IdentityCache"]


class IdentityCache:
    """Recently verified credentials (by SHA-256) -> identity, for ``ttl`` seconds.

    Saves a database round trip per request. Revoking a credential clears this
    process's cache at once; other workers notice within ``ttl`` seconds (set
    ``QC_AUTH_CACHE_SECONDS=0`` to disable caching).

    No request waits for a lookup of a credential that is still cached: past half
    its ``ttl`` an entry is served while one background lookup renews it (a refused
    credential is dropped), and it is never served past ``ttl``. Concurrent misses
    of one credential share one lookup. A request that waits for a lookup under load
    waits for every hop of it through the event loop's queue, so this keeps those
    waits off the hot path.
    """

    def __init__(
        self, ttl: float, max_size: int = 10_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl = ttl
        # invalidation: the TTL, clear() on a revocation in this process, and a refused
        # renewal drops its entry (_start)
        self._items: TTLCache[str, Identity] = TTLCache(max_size, ttl, clock)
        self._pending: dict[str, asyncio.Future[Identity | None]] = {}
        self._generation = 0

    def get(self, key: str) -> Identity | None:
        return self._items.get(key)

    def put(self, key: str, identity: Identity) -> None:
        self._items.put(key, identity)

    async def load(
        self, key: str, fetch: Callable[[], Awaitable[Identity | None]]
    ) -> Identity | None:
        """The cached identity of ``key``, else ``fetch()`` (one call for concurrent misses)."""
        found = self._items.entry(key)
        if found is not None:
            identity, age = found
            if age > self.ttl / 2 and key not in self._pending:
                self._start(key, fetch)  # renew in the background
            return identity
        pending = self._pending.get(key) or self._start(key, fetch)
        return await asyncio.shield(pending)

    def _start(
        self, key: str, fetch: Callable[[], Awaitable[Identity | None]]
    ) -> asyncio.Future[Identity | None]:
        pending = self._pending[key] = asyncio.ensure_future(fetch())
        generation = self._generation

        def done(f: asyncio.Future[Identity | None]) -> None:
            self._pending.pop(key, None)
            if f.cancelled():
                return
            if f.exception() is not None:
                self._items.pop(key)  # refused now: not served from the cache either
                return
            identity = f.result()
            if identity is not None and generation == self._generation:
                self.put(key, identity)

        pending.add_done_callback(done)
        return pending

    def clear(self) -> None:
        """Forget every identity (a lookup in flight is not kept either)."""
        self._items.clear()
        self._generation += 1
