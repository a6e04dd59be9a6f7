"""What every worker's connections want, and which worker runs the price feed.

* :class:`LocalCluster` (no Redis): one worker; the global figures are its own.
* :class:`RedisCluster` (``QC_REDIS_URL`` set): each worker keeps its
  :class:`~service.realtime.registry.LocalSnapshot` in a Redis key that expires
  (``<prefix>rt:worker:<id>``, refreshed on every change and by a heartbeat), and a
  set ``<prefix>rt:workers`` lists the workers. A worker that dies without cleaning
  up disappears from the figures when its key expires. The feed runs on one worker
  at a time, the holder of the lease ``<prefix>rt:feed-leader``.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

import msgspec

from service.realtime.registry import LocalSnapshot

__all__ = ["Cluster", "ClusterView", "LocalCluster", "RedisCluster", "merge"]

log = logging.getLogger("service.realtime")


@dataclass(frozen=True, slots=True)
class ClusterView:
    """The merged figures of every live worker."""

    workers: int
    total_connections: int
    authenticated_users: int
    portfolio_subscriptions: int
    asset_subscriptions: int
    dropped_updates: int
    symbols: frozenset[str]
    portfolios: frozenset[int]
    users: dict[int, tuple[int, list[int], list[str]]]


def merge(snapshots: Iterable[LocalSnapshot]) -> ClusterView:
    """Sum counts, unite subscriptions; a user connected to two workers counts once."""
    snaps = list(snapshots)
    users: dict[int, tuple[int, list[int], list[str]]] = {}
    for snap in snaps:
        for uid, (count, pids, syms) in snap.users.items():
            c0, p0, s0 = users.get(uid, (0, [], []))
            users[uid] = (c0 + count, sorted({*p0, *pids}), sorted({*s0, *syms}))
    return ClusterView(
        workers=len(snaps),
        total_connections=sum(s.connections for s in snaps),
        authenticated_users=len(users),
        portfolio_subscriptions=sum(s.portfolio_subscriptions for s in snaps),
        asset_subscriptions=sum(s.asset_subscriptions for s in snaps),
        dropped_updates=sum(s.dropped_updates for s in snaps),
        symbols=frozenset(sym for s in snaps for sym in s.symbols),
        portfolios=frozenset(p for s in snaps for p in s.portfolios),
        users=users,
    )


class Cluster(Protocol):
    """Global view and feed leadership (see the module docstring)."""

    def changed(self) -> None:
        """The local snapshot changed (publish it soon)."""
        ...

    async def view(self) -> ClusterView:
        """The merged figures of every live worker (raises when the store is unreachable)."""
        ...

    async def lead(self) -> bool:
        """Take or keep the feed lease; ``True`` when this worker runs the feed."""
        ...

    async def start(self) -> None: ...

    async def close(self) -> None: ...


class LocalCluster:
    """A single worker: the view is the local snapshot and the feed always runs here."""

    def __init__(self, snapshot: Callable[[], LocalSnapshot]) -> None:
        self._snapshot = snapshot

    def changed(self) -> None:
        pass

    async def view(self) -> ClusterView:
        return merge([self._snapshot()])

    async def lead(self) -> bool:
        return True

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass


# Take the lease if free, or extend it if it is ours; 1 when we hold it afterwards.
_LEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 1
end
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0
"""
# Give the lease up only if it is ours.
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(LocalSnapshot)


class RedisCluster:
    """Worker snapshots and the feed lease in Redis.

    Args:
        url: Redis URL.
        prefix: Key prefix (``QC_REDIS_PREFIX``).
        snapshot: Returns this worker's current snapshot.
        ttl: Seconds a worker's snapshot outlives its last refresh.
        lease: Seconds the feed lease lasts without renewal.
    """

    def __init__(
        self,
        url: str,
        prefix: str,
        snapshot: Callable[[], LocalSnapshot],
        *,
        ttl: float = 15.0,
        lease: float = 10.0,
    ) -> None:
        import redis.asyncio as redis

        self.worker = uuid.uuid4().hex
        self._redis = redis.from_url(url)
        self._snapshot = snapshot
        self._workers_key = f"{prefix}rt:workers"
        self._worker_prefix = f"{prefix}rt:worker:"
        self._leader_key = f"{prefix}rt:feed-leader"
        self._ttl_ms = int(ttl * 1000)
        self._lease_ms = int(lease * 1000)
        self._dirty = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._lease_script = self._redis.register_script(_LEASE)
        self._release_script = self._redis.register_script(_RELEASE)

    def changed(self) -> None:
        self._dirty.set()

    async def start(self) -> None:
        await self._publish()
        self._task = asyncio.create_task(self._run(), name="rt:cluster")

    async def _run(self) -> None:
        heartbeat = self._ttl_ms / 3000
        while True:
            try:
                await asyncio.wait_for(self._dirty.wait(), heartbeat)
            except TimeoutError:
                pass
            self._dirty.clear()
            try:
                await self._publish()
            except Exception as exc:  # Redis away: keep serving, retry on the next beat
                log.warning("realtime: cannot publish worker stats to Redis: %s", exc)

    async def _publish(self) -> None:
        key = self._worker_prefix + self.worker
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.set(key, _encoder.encode(self._snapshot()), px=self._ttl_ms)
            pipe.sadd(self._workers_key, self.worker)
            await pipe.execute()

    async def view(self) -> ClusterView:
        members = await self._redis.smembers(self._workers_key)
        workers = sorted(w.decode() if isinstance(w, bytes) else str(w) for w in members)
        others = [w for w in workers if w != self.worker]
        raws = await self._redis.mget([self._worker_prefix + w for w in others]) if others else []
        snaps = [self._snapshot()]
        gone = []
        for worker, raw in zip(others, raws, strict=True):
            if raw is None:
                gone.append(worker)
            else:
                snaps.append(_decoder.decode(raw))
        if gone:
            await self._redis.srem(self._workers_key, *gone)
        return merge(snaps)

    async def lead(self) -> bool:
        return bool(
            await self._lease_script(keys=[self._leader_key], args=[self.worker, self._lease_ms])
        )

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        try:
            await self._release_script(keys=[self._leader_key], args=[self.worker])
            await self._redis.delete(self._worker_prefix + self.worker)
            await self._redis.srem(self._workers_key, self.worker)
        except Exception as exc:
            log.warning("realtime: cannot remove worker stats from Redis: %s", exc)
        await self._redis.aclose()
