"""The one rate-limit mechanism of both servers: a window algorithm over a Litestar store.

Counters live in a Litestar :class:`~litestar.stores.base.Store`: a
:class:`LocalStore` (one process) or a :class:`~litestar.stores.redis.RedisStore`
(shared by every worker and instance; each hit is one atomic Lua script on Redis's
own clock). Any other store works too (get then set under a lock). What differs between the
two servers is configuration, not code:

* the **window** (:class:`Window`). ``FIXED``: windows aligned on multiples of the
  period since the Unix epoch, so every worker agrees on when one ends; every
  request is counted, refused ones too; the reset is the time until the window
  ends. ``SLIDING``: a log of the allowed requests of the last period; a refused
  request is not counted; the reset is the time until every counted request has
  left the window, and a refusal's retry-after the time until the oldest one has
  (the true wait);
* the **headers** (:class:`HeaderStyle`). The finance API's ``X-RateLimit-Limit``,
  ``-Remaining`` and ``-Reset`` (seconds, a delta as in the IETF RateLimit header
  draft): :data:`FINANCE_HEADERS`; the Responses server's OpenAI-style
  ``x-ratelimit-limit-requests``, ``-remaining-requests`` and ``-reset-requests``
  (``"6m0s"``, ``"250ms"``): :data:`OPENAI_HEADERS`. A refusal carries
  ``Retry-After`` (whole seconds, at least 1) in both.

This module imports nothing else of the service, so that the text-generation server
uses it as it is.
"""

from __future__ import annotations

import asyncio
import enum
import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import msgspec
from litestar.stores.base import Store
from litestar.stores.memory import MemoryStore
from litestar.stores.redis import RedisStore

__all__ = [
    "FINANCE_HEADERS",
    "OPENAI_HEADERS",
    "HeaderStyle",
    "Hit",
    "LocalStore",
    "RateLimit",
    "RateLimiter",
    "Window",
    "duration_text",
    "make_store",
    "seconds_text",
]


class LocalStore(Store):
    """Litestar's :class:`~litestar.stores.base.Store` over a dict of this process.

    Litestar's ``MemoryStore`` takes an anyio lock per call (a trip through the event
    loop each) and builds datetimes: about 55 us per rate-limit hit, half of a
    request's CPU budget in the load benchmark, against 3 us here. No method awaits
    anything, so each is atomic on the event loop; expiry is on the monotonic clock.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._items: dict[str, tuple[float, bytes]] = {}
        self._clock = clock

    @staticmethod
    def _seconds(expires_in: int | timedelta | None) -> float | None:
        return expires_in.total_seconds() if isinstance(expires_in, timedelta) else expires_in

    async def set(
        self, key: str, value: str | bytes, expires_in: int | timedelta | None = None
    ) -> None:
        seconds = self._seconds(expires_in)
        until = self._clock() + seconds if seconds else math.inf
        self._items[key] = (until, value.encode() if isinstance(value, str) else value)

    async def get(self, key: str, renew_for: int | timedelta | None = None) -> bytes | None:
        item = self._items.get(key)
        if item is None:
            return None
        now = self._clock()
        if item[0] <= now:
            del self._items[key]
            return None
        renew = self._seconds(renew_for)
        if renew and item[0] != math.inf:
            self._items[key] = (now + renew, item[1])
        return item[1]

    async def delete(self, key: str) -> None:
        self._items.pop(key, None)

    async def delete_all(self) -> None:
        self._items.clear()

    async def exists(self, key: str) -> bool:
        return await self.get(key) is not None

    async def expires_in(self, key: str) -> int | None:
        item = self._items.get(key)
        if item is None or item[0] == math.inf:
            return None
        return max(0, math.ceil(item[0] - self._clock()))

    async def delete_expired(self) -> None:
        """Forget the expired entries (the rate limiter calls it now and then)."""
        now = self._clock()
        for key in [k for k, (until, _) in self._items.items() if until <= now]:
            del self._items[key]


class RateLimit(msgspec.Struct, frozen=True):
    """``limit`` requests per ``period`` seconds."""

    limit: int
    period: int


class Window(enum.Enum):
    """How requests are counted (module docstring)."""

    FIXED = "fixed"
    SLIDING = "sliding"


@dataclass(frozen=True, slots=True)
class Hit:
    """The outcome of counting one request against a limit.

    Attributes:
        allowed: whether the request is within the limit.
        limit: the limit.
        remaining: requests left in the window.
        reset: seconds until the window ends (fixed) or is empty again (sliding).
        retry_after: seconds until a request would be allowed (0 when allowed).
    """

    allowed: bool
    limit: int
    remaining: int
    reset: float
    retry_after: float


def seconds_text(seconds: float) -> str:
    """Whole seconds, rounded up: ``"42"``."""
    return str(math.ceil(seconds))


def duration_text(seconds: float) -> str:
    """OpenAI's reset format: ``"1s"``, ``"6m0s"``, ``"250ms"``."""
    if seconds < 1:
        return f"{math.ceil(seconds * 1000)}ms"
    minutes, rest = divmod(math.ceil(seconds), 60)
    return f"{minutes}m{rest}s" if minutes else f"{rest}s"


@dataclass(frozen=True, slots=True)
class HeaderStyle:
    """The names of the three headers and how the reset is written."""

    limit: str
    remaining: str
    reset: str
    reset_text: Callable[[float], str]

    def headers(self, hit: Hit) -> dict[str, str]:
        """The headers of ``hit`` (and ``Retry-After`` when refused)."""
        out = {
            self.limit: str(hit.limit),
            self.remaining: str(hit.remaining),
            self.reset: self.reset_text(hit.reset),
        }
        if not hit.allowed:
            out["Retry-After"] = str(max(1, math.ceil(hit.retry_after)))
        return out

    def pairs(self, hit: Hit) -> list[tuple[bytes, bytes]]:
        """:meth:`headers` as raw ASGI header pairs (lower-case names)."""
        return [(k.lower().encode(), v.encode()) for k, v in self.headers(hit).items()]


FINANCE_HEADERS = HeaderStyle(
    "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", seconds_text
)
OPENAI_HEADERS = HeaderStyle(
    "x-ratelimit-limit-requests",
    "x-ratelimit-remaining-requests",
    "x-ratelimit-reset-requests",
    duration_text,
)


# KEYS[1]: the counter's key without its window; ARGV: period in ms.
# Returns {count after, now ms}, on Redis's clock.
_FIXED_SCRIPT = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local period = tonumber(ARGV[1])
local key = KEYS[1] .. ':' .. math.floor(now / period)
local count = redis.call('INCR', key)
if count == 1 then redis.call('PEXPIRE', key, period + 5000) end
return {count, now}
"""

# KEYS[1]: the key's sorted set; ARGV: limit, window in ms, a unique member.
# Returns {allowed, count after, oldest ms, newest ms, now ms}, all on Redis's clock.
_SLIDING_SCRIPT = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local allowed = 0
if count < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  count = count + 1
  allowed = 1
end
redis.call('PEXPIRE', KEYS[1], window)
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
return {allowed, count, oldest[2] or tostring(now), newest[2] or tostring(now), now}
"""


def _fixed(rate: RateLimit, count: int, now: float) -> Hit:
    end = (math.floor(now / rate.period) + 1) * rate.period
    reset = max(1, math.ceil(end - now))
    allowed = count <= rate.limit
    return Hit(allowed, rate.limit, max(rate.limit - count, 0), reset, 0.0 if allowed else reset)


def _sliding(
    rate: RateLimit, count: int, oldest: float, newest: float, now: float, allowed: bool
) -> Hit:
    reset = max(0.0, newest + rate.period - now) if count else 0.0
    retry = 0.0 if allowed else max(0.0, oldest + rate.period - now)
    return Hit(allowed, rate.limit, max(0, rate.limit - count), reset, retry)


_hits = msgspec.json.Decoder(list[float])
_encode = msgspec.json.Encoder().encode


class RateLimiter:
    """Counts requests per key in a store, by a window algorithm.

    Args:
        store: where counters live (a ``RedisStore`` shares them between processes).
        window: :attr:`Window.FIXED` or :attr:`Window.SLIDING`.
        clock: seconds since the epoch, for stores other than Redis (tests inject
            their own; on Redis the server's clock is used).
    """

    def __init__(
        self, store: Store, window: Window, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.store = store
        self.window = window
        self.clock = clock
        self._lock = asyncio.Lock()  # a get-then-set of another store is one step
        self._atomic = isinstance(store, LocalStore)
        self._sweep_at = 0.0
        self._script: Any = None
        if isinstance(store, RedisStore):
            redis: Any = store._redis  # the store's client: one pool for the store and the script
            self._script = redis.register_script(
                _FIXED_SCRIPT if window is Window.FIXED else _SLIDING_SCRIPT
            )

    async def hit(self, key: str, rate: RateLimit) -> Hit:
        """Count one request for ``key`` and say whether it is within ``rate``."""
        if self._script is not None:
            return await self._redis_hit(key, rate)
        if self._atomic:  # a LocalStore never yields: the get-then-set is one step
            return await self._count(key, rate)
        async with self._lock:
            return await self._count(key, rate)

    async def _count(self, key: str, rate: RateLimit) -> Hit:
        now = self.clock()
        if now >= self._sweep_at:  # drop the counters of past windows now and then
            self._sweep_at = now + 60
            if isinstance(self.store, (LocalStore, MemoryStore)):
                await self.store.delete_expired()
        if self.window is Window.FIXED:
            name = f"{key}:{rate.period}:{math.floor(now / rate.period)}"
            count = int(await self.store.get(name) or 0) + 1
            await self.store.set(name, str(count), expires_in=rate.period + 5)
            return _fixed(rate, count, now)
        raw = await self.store.get(key)
        log = [t for t in (_hits.decode(raw) if raw else []) if t > now - rate.period]
        allowed = len(log) < rate.limit
        if allowed:
            log.append(now)
        await self.store.set(key, _encode(log), expires_in=rate.period)
        first, last = (log[0], log[-1]) if log else (now, now)
        return _sliding(rate, len(log), first, last, now, allowed)

    async def _redis_hit(self, key: str, rate: RateLimit) -> Hit:
        store: Any = self.store
        name = store._make_key(key)
        if self.window is Window.FIXED:
            count, now_ms = await self._script(
                keys=[f"{name}:{rate.period}"], args=[rate.period * 1000]
            )
            return _fixed(rate, int(count), int(now_ms) / 1000)
        member = f"{time.time_ns()}-{secrets.token_hex(4)}"
        allowed, count, oldest, newest, now = await self._script(
            keys=[name], args=[rate.limit, rate.period * 1000, member]
        )
        return _sliding(
            rate,
            int(count),
            float(oldest) / 1000,
            float(newest) / 1000,
            float(now) / 1000,
            bool(int(allowed)),
        )

    async def ping(self) -> None:
        """Check that a shared store answers (nothing to check in memory)."""
        if isinstance(self.store, RedisStore):
            redis: Any = self.store._redis
            await redis.ping()

    @property
    def shared(self) -> bool:
        """Whether the counters are shared between processes (Redis)."""
        return isinstance(self.store, RedisStore)

    async def close(self) -> None:
        """Release the store's connections."""
        await self.store.__aexit__(None, None, None)


def make_store(redis_url: str, namespace: str) -> Store:
    """A Redis store of ``redis_url`` whose keys start ``<namespace>:``, or a :class:`LocalStore`."""
    if redis_url:
        return RedisStore.with_client(url=redis_url, namespace=namespace)
    return LocalStore()
