"""The one derivation cache: a user's ledger columns and what is derived from them,
keyed by the ledger version.

The rule is the one the books already follow: every write of a user's portfolios or
ledger bumps the user's ``ledger_versions`` row in its own transaction
(:func:`service.ledger.positions.lock_user_ledger`), so "same version" means "same
ledger", in whichever process the write ran. A reader reads the version on its
request's connection, then asks :meth:`DerivationCache.get` for a named derivation
at that version: a value kept for it is returned; otherwise the derivation runs
once, and concurrent requests for the same (user, version, name) wait on that one
run (single flight) instead of each running it. A newer version replaces the user's
entry; the ``max_users`` most recently used users are kept (LRU).

There is one cache per database engine (:func:`cache_for`), held weakly: two
applications on two databases never share entries, whatever their user ids.
``tests/service/test_ledger_columns.py`` proves a cached value equal to a fresh
derivation.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

__all__ = ["DerivationCache", "cache_for"]

T = TypeVar("T")


class _Entry:
    __slots__ = ("flights", "hints", "values", "version")

    def __init__(self, version: int) -> None:
        self.version = version
        self.values: dict[str, Any] = {}
        self.flights: dict[str, asyncio.Future[Any]] = {}
        # name -> a cheaper way to the same value (or None: derive), left by a write
        self.hints: dict[str, Callable[[], Any]] = {}


class DerivationCache:
    """Values derived from one user's ledger at one version, by name; single flight per miss.

    ``max_users=0`` keeps nothing (every call derives; concurrent calls still share
    one run).
    """

    def __init__(self, max_users: int = 1_000) -> None:
        self.max_users = max_users
        self._users: OrderedDict[int, _Entry] = OrderedDict()
        self.derivations = 0  # runs started, for tests and benchmarks
        self.advances = 0  # values moved along by a write (advance)
        self.hinted = 0  # values a write's hint gave instead of a derivation

    def _entry(self, user_id: int, version: int) -> _Entry | None:
        """The user's entry at ``version`` (a new one replaces an older version's);
        ``None`` when a newer version is kept (the caller read a stale version)."""
        entry = self._users.get(user_id)
        if entry is not None and entry.version > version:
            return None
        if entry is None or entry.version < version:
            entry = self._users[user_id] = _Entry(version)
        self._users.move_to_end(user_id)
        while len(self._users) > max(self.max_users, 1):
            self._users.popitem(last=False)
        return entry

    async def get(
        self, user_id: int, version: int, name: str, derive: Callable[[], Awaitable[T]]
    ) -> T:
        """The value of ``name`` at ``version``: kept, being derived (wait for it), or derived now.

        ``version < 0`` (no ledger row yet) is never kept. An exception of the
        derivation reaches its caller and every waiter; nothing is kept then.
        """
        entry = self._entry(user_id, version) if version >= 0 else None
        if entry is None:
            self.derivations += 1
            return await derive()
        if name in entry.values:
            return entry.values[name]
        flight = entry.flights.get(name)
        if flight is not None:
            return await asyncio.shield(flight)
        flight = asyncio.get_running_loop().create_future()
        entry.flights[name] = flight
        self.derivations += 1
        hint = entry.hints.pop(name, None)
        try:
            value = hint() if hint is not None else None
            hint = None  # one that gave up holds the previous version's values: not while deriving
            if value is None:
                value = await derive()
            else:
                self.hinted += 1
        except BaseException as exc:
            entry.flights.pop(name, None)
            if isinstance(exc, Exception):
                flight.set_exception(exc)
                flight.exception()  # retrieved: no "never retrieved" warning without waiters
            else:
                flight.cancel()
            raise
        entry.flights.pop(name, None)
        if self.max_users > 0:
            entry.values[name] = value
        flight.set_result(value)
        return value

    def advance(
        self,
        user_id: int,
        version: int,
        name: str,
        fn: Callable[[Any], Any],
        hints: Callable[
            [dict[str, Any], dict[str, Callable[[], Any]], Any], dict[str, Callable[[], Any]]
        ]
        | None = None,
    ) -> bool:
        """Keep ``fn(value)`` under ``version`` when ``value`` is kept under ``version - 1``
        (a write of this process just moved the ledger by one known change: the value at
        the new version follows from the old without a read). Nothing happens when the
        user's entry is at another version (a write elsewhere came between, or nothing was
        kept); the next read derives afresh then. Returns whether it advanced.

        ``hints(old values, old hints, new value)``: for other names, a cheaper way to their
        value at ``version`` from the old version's values, or from its hints not yet run (a
        chain of writes nobody read between), returning ``None`` when it cannot; run by the
        first :meth:`get` of that name in place of its derivation, and equal to it (the
        caller proves it by a test)."""
        entry = self._users.get(user_id)
        if entry is None or entry.version != version - 1 or name not in entry.values:
            return False
        value = fn(entry.values[name])
        fresh = self._users[user_id] = _Entry(version)
        fresh.values[name] = value
        if hints is not None:
            fresh.hints = hints(entry.values, entry.hints, value)
        self._users.move_to_end(user_id)
        self.advances += 1
        return True

    def clear(self) -> None:
        """Forget every kept value (flights in progress finish for their waiters)."""
        self._users.clear()


_CACHES: weakref.WeakKeyDictionary[Any, DerivationCache] = weakref.WeakKeyDictionary()


def cache_for(engine: Any) -> DerivationCache:
    """The derivation cache of a database engine (created on first use).

    Keyed by the engine's connection pool: one database, one cache, whichever engine
    object reaches it (the SQLite writer is the engine with other execution options)."""
    cache = _CACHES.get(engine.pool)
    if cache is None:
        cache = _CACHES[engine.pool] = DerivationCache()
    return cache
