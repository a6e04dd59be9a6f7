"""Connections, their subscriptions, and the local fan-out of channel messages.

One :class:`Registry` per worker process. It knows every WebSocket connection of the
worker and what each is subscribed to, keeps one Litestar channels subscription per
channel that at least one local connection wants (``price:<SYMBOL>``,
``portfolio:<id>``), and copies every message of such a channel into the outbox of
each interested connection.

Each :class:`Connection` has its own writer, so a slow consumer only slows itself.
Its outbox holds control replies (``pong``, ``subscribed``, ``error``; never dropped,
and bounded by the per-connection message rate) and at most ``max_backlog``
updates: when full, the **oldest update is dropped** and counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from litestar.channels import ChannelsPlugin, Subscriber

__all__ = [
    "Connection",
    "LocalSnapshot",
    "Registry",
    "asset_channel",
    "portfolio_channel",
]

log = logging.getLogger("service.realtime")

Send = Callable[[str], Awaitable[None]]


def asset_channel(symbol: str, prefix: str = "") -> str:
    """The channel of ``symbol``'s price updates (``prefix``: the Redis key prefix)."""
    return f"{prefix}price:{symbol}"


def portfolio_channel(portfolio_id: int, prefix: str = "") -> str:
    """The channel of a portfolio's value updates."""
    return f"{prefix}portfolio:{portfolio_id}"


class Connection:
    """One WebSocket connection: who it is, what it wants, and its outbox.

    Args:
        conn_id: Unique within the worker.
        user_id: The authenticated user, ``None`` when anonymous.
        max_backlog: Most updates held for this connection before the oldest is dropped.
        rate: Client messages allowed per second (token bucket of that capacity).
    """

    def __init__(
        self,
        conn_id: int,
        user_id: int | None,
        *,
        max_backlog: int,
        rate: int,
        credential: tuple[str, int] | None = None,
        ip: str = "",
    ) -> None:
        self.id = conn_id
        self.user_id = user_id
        self.credential = credential  # (auth method, credential id) of the upgrade request
        self.ip = ip
        self.kicked = asyncio.Event()  # set by :meth:`kick`
        self.kick_code: int | None = None
        self.assets: set[str] = set()
        self.portfolios: set[int] = set()
        self.dropped = 0
        self.strikes = 0  # refused messages since the last accepted one
        self._control: deque[str] = deque()
        self._updates: deque[str] = deque(maxlen=max_backlog)
        self._ready = asyncio.Event()
        self._closed = False
        self._rate = float(rate)
        self._tokens = float(rate)
        self._stamp = time.monotonic()

    @property
    def subscription_count(self) -> int:
        return len(self.assets) + len(self.portfolios)

    @property
    def backlog(self) -> int:
        """Messages waiting to be written."""
        return len(self._control) + len(self._updates)

    def reply(self, text: str) -> None:
        """Queue a control message (never dropped)."""
        self._control.append(text)
        self._ready.set()

    def push(self, text: str) -> None:
        """Queue an update; when the backlog is full the oldest update is dropped. A
        connection being closed (:meth:`kick`) takes none: its error is its last message."""
        if self.kick_code is not None:
            return
        if len(self._updates) == self._updates.maxlen:
            self.dropped += 1
        self._updates.append(text)
        self._ready.set()

    def admit(self) -> bool:
        """Count one client message against the rate; ``False`` when over it."""
        now = time.monotonic()
        self._tokens = min(self._rate, self._tokens + (now - self._stamp) * self._rate)
        self._stamp = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            self.strikes = 0
            return True
        self.strikes += 1
        return False

    async def write(self, send: Send) -> None:
        """Write the outbox until :meth:`close` (control messages first, then updates)."""
        control, updates = self._control, self._updates
        while not self._closed:
            await self._ready.wait()
            self._ready.clear()
            while control or updates:
                await send(control.popleft() if control else updates.popleft())

    def kick(self, code: int, text: str) -> None:
        """Queue ``text`` (an ``error``) and ask the connection's handler to close with ``code``."""
        if self.kick_code is None:
            self.kick_code = code
            self._updates.clear()  # the error is the last message the client reads
            self.reply(text)
            self.kicked.set()

    def close(self) -> None:
        self._closed = True
        self._ready.set()


@dataclass(slots=True)
class LocalSnapshot:
    """What this worker's connections are subscribed to (the unit of the global stats)."""

    connections: int = 0
    anonymous_connections: int = 0
    portfolio_subscriptions: int = 0
    asset_subscriptions: int = 0
    dropped_updates: int = 0
    symbols: list[str] = field(default_factory=list)
    portfolios: list[int] = field(default_factory=list)
    #: user id -> (connection count, portfolio ids, symbols)
    users: dict[int, tuple[int, list[int], list[str]]] = field(default_factory=dict)


class Registry:
    """This worker's connections and channel subscriptions.

    Args:
        channels: The Litestar channels plugin (memory or Redis backend).
        prefix: Prepended to channel names (Redis Pub/Sub channels are server-wide).
        max_backlog: Per-connection update backlog.
        rate: Per-connection client messages per second.
        on_change: Called (synchronously) after connections or subscriptions change.
    """

    def __init__(
        self,
        channels: ChannelsPlugin,
        *,
        prefix: str = "",
        max_backlog: int,
        rate: int,
        on_change: Callable[[], None] = lambda: None,
    ) -> None:
        self.channels = channels
        self.prefix = prefix
        self.max_backlog = max_backlog
        self.rate = rate
        self.on_change = on_change
        self.connections: dict[int, Connection] = {}
        self.dropped_closed = 0  # drops of connections that are gone
        self._ids = itertools.count(1)
        self._per_ip: dict[str, int] = {}
        self._members: dict[str, set[Connection]] = {}
        self._subscribers: dict[str, tuple[Subscriber, asyncio.Task[None]]] = {}
        self._lock = asyncio.Lock()

    def open(
        self, user_id: int | None, *, credential: tuple[str, int] | None = None, ip: str = ""
    ) -> Connection:
        """Register a new connection."""
        conn = Connection(
            next(self._ids),
            user_id,
            max_backlog=self.max_backlog,
            rate=self.rate,
            credential=credential,
            ip=ip,
        )
        self.connections[conn.id] = conn
        self._per_ip[ip] = self._per_ip.get(ip, 0) + 1
        self.on_change()
        return conn

    def connections_from(self, ip: str) -> int:
        """Open connections of this worker from ``ip``."""
        return self._per_ip.get(ip, 0)

    async def close(self, conn: Connection) -> None:
        """Forget a connection and its subscriptions."""
        conn.close()
        if self.connections.pop(conn.id, None) is None:
            return
        left = self._per_ip.get(conn.ip, 1) - 1
        if left > 0:
            self._per_ip[conn.ip] = left
        else:
            self._per_ip.pop(conn.ip, None)
        self.dropped_closed += conn.dropped
        p = self.prefix
        for channel in [asset_channel(s, p) for s in conn.assets] + [
            portfolio_channel(i, p) for i in conn.portfolios
        ]:
            await self._leave(conn, channel)
        conn.assets.clear()
        conn.portfolios.clear()
        self.on_change()

    async def subscribe_asset(self, conn: Connection, symbol: str) -> None:
        if symbol not in conn.assets:
            conn.assets.add(symbol)
            await self._join(conn, asset_channel(symbol, self.prefix))
            self.on_change()

    async def unsubscribe_asset(self, conn: Connection, symbol: str) -> None:
        if symbol in conn.assets:
            conn.assets.discard(symbol)
            await self._leave(conn, asset_channel(symbol, self.prefix))
            self.on_change()

    async def subscribe_portfolio(self, conn: Connection, portfolio_id: int) -> None:
        if portfolio_id not in conn.portfolios:
            conn.portfolios.add(portfolio_id)
            await self._join(conn, portfolio_channel(portfolio_id, self.prefix))
            self.on_change()

    async def unsubscribe_portfolio(self, conn: Connection, portfolio_id: int) -> None:
        if portfolio_id in conn.portfolios:
            conn.portfolios.discard(portfolio_id)
            await self._leave(conn, portfolio_channel(portfolio_id, self.prefix))
            self.on_change()

    def dispatch(self, channel: str, text: str) -> int:
        """Queue ``text`` for every local member of ``channel``; returns how many."""
        members = self._members.get(channel, ())
        for conn in members:
            conn.push(text)
        return len(members)

    def snapshot(self) -> LocalSnapshot:
        """Counts and subscriptions of this worker's connections."""
        snap = LocalSnapshot(dropped_updates=self.dropped_closed)
        symbols: set[str] = set()
        portfolios: set[int] = set()
        users: dict[int, tuple[int, set[int], set[str]]] = {}
        for conn in self.connections.values():
            snap.connections += 1
            snap.asset_subscriptions += len(conn.assets)
            snap.portfolio_subscriptions += len(conn.portfolios)
            snap.dropped_updates += conn.dropped
            symbols |= conn.assets
            portfolios |= conn.portfolios
            if conn.user_id is None:
                snap.anonymous_connections += 1
                continue
            count, pids, syms = users.get(conn.user_id, (0, set(), set()))
            users[conn.user_id] = (count + 1, pids | conn.portfolios, syms | conn.assets)
        snap.symbols = sorted(symbols)
        snap.portfolios = sorted(portfolios)
        snap.users = {u: (c, sorted(p), sorted(s)) for u, (c, p, s) in users.items()}
        return snap

    async def shutdown(self) -> None:
        """Stop every channel subscription (the connections are closed by the server)."""
        for conn in list(self.connections.values()):
            conn.close()
        async with self._lock:
            for _, task in self._subscribers.values():
                task.cancel()
            for _, task in self._subscribers.values():
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            self._subscribers.clear()

    # -- channel membership ----------------------------------------------------------------

    async def _join(self, conn: Connection, channel: str) -> None:
        async with self._lock:
            self._members.setdefault(channel, set()).add(conn)
            if channel not in self._subscribers:
                subscriber = await self.channels.subscribe(channel)
                task = asyncio.create_task(self._pump(channel, subscriber), name=f"rt:{channel}")
                self._subscribers[channel] = (subscriber, task)

    async def _leave(self, conn: Connection, channel: str) -> None:
        async with self._lock:
            members = self._members.get(channel)
            if members is None:
                return
            members.discard(conn)
            if members:
                return
            del self._members[channel]
            entry = self._subscribers.pop(channel, None)
            if entry is not None:
                subscriber, task = entry
                await self.channels.unsubscribe(subscriber, channel)
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _pump(self, channel: str, subscriber: Subscriber) -> None:
        async for payload in subscriber.iter_events():
            try:
                self.dispatch(channel, payload.decode())
            except Exception:  # never let one bad payload end the channel
                log.exception("realtime: cannot dispatch a message of %s", channel)
