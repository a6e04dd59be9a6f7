"""The caches on the hot paths never make a request wait for a refresh, and never serve stale data too long.

``IdentityCache``: concurrent misses of one credential share one lookup; past half
its TTL an entry is served while one background lookup renews it; an entry is never
served past its TTL; a credential refused by the renewal is dropped; ``clear()``
(a revocation) also discards a lookup in flight. ``AssetDirectory``: requests that
find the table stale share one reload, in the background once a table is loaded.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from service.assets.directory import AssetDirectory
from service.auth.identity import AuthMethod, Identity
from service.errors import AuthenticationRequired
from service.identity_cache import IdentityCache

ALICE = Identity(1, "alice", AuthMethod.TOKEN, 7)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_concurrent_misses_share_one_lookup() -> None:
    cache = IdentityCache(ttl=5.0, clock=Clock())
    calls = 0

    async def fetch() -> Identity:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0.01)
        return ALICE

    async def main() -> list[Identity | None]:
        return list(await asyncio.gather(*(cache.load("k", fetch) for _ in range(20))))

    assert asyncio.run(main()) == [ALICE] * 20
    assert calls == 1


def test_renewal_in_the_background_and_never_past_the_ttl() -> None:
    clock = Clock()
    cache = IdentityCache(ttl=10.0, clock=clock)
    answers: list[Any] = [ALICE, ALICE, AuthenticationRequired("Invalid token.")]
    started = 0

    async def fetch() -> Identity:
        nonlocal started
        started += 1
        answer = answers.pop(0)
        await asyncio.sleep(0)
        if isinstance(answer, Exception):
            raise answer
        return answer  # type: ignore[no-any-return]

    async def main() -> None:
        nonlocal started
        assert await cache.load("k", fetch) is ALICE and started == 1
        clock.now += 3  # fresh: no lookup
        assert await cache.load("k", fetch) is ALICE and started == 1
        clock.now += 3  # past half the TTL: served at once, renewed in the background
        assert await cache.load("k", fetch) is ALICE
        await asyncio.sleep(0.01)
        assert started == 2
        clock.now += 6  # 6 s after the renewal: still fresh, half-life passed again
        assert await cache.load("k", fetch) is ALICE
        await asyncio.sleep(0.01)  # this renewal is refused: the entry is dropped
        assert started == 3
        assert cache.get("k") is None
        with pytest.raises(AuthenticationRequired):
            await cache.load("k", _refuse)

    asyncio.run(main())


async def _refuse() -> Identity:
    raise AuthenticationRequired("Invalid token.")


def test_an_entry_past_its_ttl_is_looked_up_again() -> None:
    clock = Clock()
    cache = IdentityCache(ttl=5.0, clock=clock)

    async def main() -> None:
        async def ok() -> Identity:
            return ALICE

        await cache.load("k", ok)
        clock.now += 5.5
        with pytest.raises(AuthenticationRequired):  # waited for, not served stale
            await cache.load("k", _refuse)

    asyncio.run(main())


def test_clear_discards_a_lookup_in_flight() -> None:
    cache = IdentityCache(ttl=5.0, clock=Clock())

    async def main() -> None:
        gate = asyncio.Event()

        async def slow() -> Identity:
            await gate.wait()
            return ALICE

        task = asyncio.ensure_future(cache.load("k", slow))
        await asyncio.sleep(0)
        cache.clear()  # a credential was revoked meanwhile
        gate.set()
        assert await task is ALICE  # the request that asked still gets its answer
        assert cache.get("k") is None  # but it is not kept

    asyncio.run(main())


class _Session:
    def __init__(self, db: _Db) -> None:
        self.db = db

    async def __aenter__(self) -> _Session:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def execute(self, _stmt: object) -> Any:
        self.db.reloads += 1
        await asyncio.sleep(0.01)
        return self

    def scalars(self) -> list[Any]:
        return []


class _Db:
    def __init__(self) -> None:
        self.reloads = 0

    def read(self) -> _Session:
        return _Session(self)


def test_stale_asset_directory_requests_share_one_reload() -> None:
    db = _Db()
    directory = AssetDirectory(db, ttl=0.0)  # type: ignore[arg-type]

    async def main() -> None:
        await asyncio.gather(*(directory.by_id(1) for _ in range(10)))

    asyncio.run(main())
    # each miss reloads (an unknown id might be new), but concurrent ones share a reload:
    # the first load, then one reload for the ten misses that queued behind it
    assert db.reloads <= 2
