"""The real-time service: one :class:`Realtime` per worker (``app.state.realtime``).

It owns the :class:`~service.realtime.registry.Registry` (connections), the
:class:`~service.realtime.cluster.Cluster` view (global figures, feed lease) and the
:class:`~service.realtime.feed.PriceFeed`, answers the client messages of each
connection, and backs the three REST endpoints.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
from collections.abc import Sequence

from litestar.channels import ChannelsPlugin
from sqlalchemy import select

from service.assets.market import MarketData
from service.auth.identity import AuthMethod
from service.auth.services import live_credentials
from service.db import Database
from service.db.models import Asset, LedgerVersion, Portfolio
from service.errors import NotFoundError, ValidationError
from service.ledger.book import portfolio_reads
from service.ledger.owned import get_owned
from service.ledger.reads import PortfolioRead
from service.marketdata.provider import Quote
from service.realtime.cluster import Cluster, ClusterView, LocalCluster, RedisCluster, merge
from service.realtime.feed import PriceFeed, price_update
from service.realtime.messages import (
    MESSAGE_TYPES,
    ClientMessage,
    Error,
    MessageError,
    Ping,
    Pong,
    PortfolioUpdate,
    ServerMessage,
    SubscribeAsset,
    SubscribeAssets,
    Subscribed,
    SubscribePortfolio,
    UnsubscribeAsset,
    Unsubscribed,
    UnsubscribePortfolio,
    decode,
    encode,
)
from service.realtime.registry import Connection, Registry, portfolio_channel
from service.realtime.schemas import (
    ConnectionInfo,
    ForcePriceUpdateRead,
    GlobalStats,
    PriceRead,
    StatusRead,
    UserStats,
    UserSubscriptions,
    WebSocketInfoRead,
)
from service.settings import Settings
from service.state import Resources

__all__ = ["AUTHENTICATION", "MAX_MESSAGE_BYTES", "WS_PATH", "CloseCode", "Realtime", "error_text"]

log = logging.getLogger("service.realtime")

WS_PATH = "/ws/realtime/"
MAX_MESSAGE_BYTES = 16384  # a subscribe_assets of a few hundred symbols
AUTHENTICATION = (
    "session: the qc_session cookie of POST /api/auth/login/ (browsers; the Origin must be "
    "this host or a QC_CORS_ORIGINS entry). Non-browser clients: ?token=<API token> in the "
    "URL, or `Authorization: Token <key>` / `X-API-Key: <key>` on the upgrade request. "
    "Anonymous connections may subscribe to assets only."
)


class CloseCode:
    """WebSocket close codes used by the server (RFC 6455, section 7.4.1)."""

    POLICY_VIOLATION = 1008
    MESSAGE_TOO_BIG = 1009
    TRY_AGAIN_LATER = 1013


def _text(message: ServerMessage) -> str:
    return encode(message).decode()


def error_text(code: str, message: str) -> str:
    """A JSON ``error`` message for a WebSocket client."""
    return _text(Error(error=code, message=message))


class Realtime:
    """Per-worker real-time state and behaviour.

    Args:
        settings: ``realtime_*`` settings and ``redis_url``.
        channels: The channels plugin the updates travel through.
    """

    def __init__(self, settings: Settings, channels: ChannelsPlugin) -> None:
        self.settings = settings
        self.channels = channels
        self.registry = Registry(
            channels,
            prefix=settings.redis_prefix if settings.redis_url else "",
            max_backlog=settings.realtime_max_backlog,
            rate=settings.realtime_messages_per_second,
            on_change=self._changed,
        )
        self.cluster: Cluster = LocalCluster(self.registry.snapshot)
        self._feed: PriceFeed | None = None
        self._feed_task: asyncio.Task[None] | None = None
        self._guard_task: asyncio.Task[None] | None = None
        self._versions: dict[int, int] = {}  # user id -> ledger version last pushed
        self._resources: Resources | None = None

    def _changed(self) -> None:
        self.cluster.changed()

    @property
    def feed(self) -> PriceFeed:
        if self._feed is None:
            raise RuntimeError("the real-time service has not started")
        return self._feed

    @property
    def db(self) -> Database:
        assert self._resources is not None, "the real-time service has not started"
        return self._resources.db

    @property
    def market(self) -> MarketData:
        assert self._resources is not None, "the real-time service has not started"
        return self._resources.market

    async def start(self, resources: Resources) -> None:
        """Connect to Redis (if configured) and start the price feed."""
        self._resources = resources
        if self.settings.redis_url:
            lease = max(3.0 * self.settings.realtime_tick_seconds, 5.0)
            self.cluster = RedisCluster(
                self.settings.redis_url,
                self.settings.redis_prefix,
                self.registry.snapshot,
                lease=lease,
            )
        await self.cluster.start()
        self._feed = PriceFeed(
            resources.market,
            resources.db,
            self.channels,
            self.cluster,
            self.settings.realtime_tick_seconds,
            self.registry.prefix,
        )
        self._feed_task = asyncio.create_task(self._feed.run(), name="rt:feed")
        self._guard_task = asyncio.create_task(self._guard(), name="rt:credentials")

    async def stop(self) -> None:
        for task in (self._feed_task, self._guard_task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await self.registry.shutdown()
        await self.cluster.close()

    async def _guard(self) -> None:
        """Run :meth:`watch_credentials` every ``QC_REALTIME_AUTH_CHECK_SECONDS`` (cancel to stop)."""
        while True:
            await asyncio.sleep(self.settings.realtime_auth_check_seconds)
            try:
                await self.watch_credentials()
                await self.watch_ledgers()
            except asyncio.CancelledError:
                raise
            except Exception:  # the database is away: check again on the next beat
                log.exception("realtime: credential or ledger check failed")

    async def watch_ledgers(self) -> int:
        """Push a ``portfolio_update`` after every write to a subscribed portfolio.

        Every write to a user's portfolios, transactions or positions bumps the
        user's ``ledger_versions`` row in its transaction
        (:func:`service.ledger.positions.lock_user_ledger`), whichever path wrote
        it: the API, the CLI, another worker. Each worker compares the versions
        of the users its connections follow (one query) and revalues their subscribed
        portfolios when one moved; a portfolio that no longer exists is dropped from
        its subscriptions (an ``unsubscribed`` is sent).

        Returns:
            How many portfolios were revalued or dropped.
        """
        followed: dict[int, set[int]] = {}
        for conn in self.registry.connections.values():
            if conn.user_id is not None and conn.portfolios:
                followed.setdefault(conn.user_id, set()).update(conn.portfolios)
        for gone in set(self._versions) - set(followed):
            del self._versions[gone]
        if not followed:
            return 0
        async with self.db.read() as s:
            rows = await s.execute(
                select(LedgerVersion.user_id, LedgerVersion.version).where(
                    LedgerVersion.user_id.in_(list(followed))
                )
            )
            versions = {int(u): int(v) for u, v in rows.all()}
        moved = [u for u in followed if versions.get(u) != self._versions.get(u)]
        self._versions.update(versions)
        ids = sorted({pid for u in moved for pid in followed[u]})
        if not ids:
            return 0
        async with self.db.read() as s:
            found = list(
                (
                    await s.execute(
                        select(Portfolio)
                        .where(Portfolio.id.in_(ids), Portfolio.user_id.in_(moved))
                        .order_by(Portfolio.id)
                    )
                ).scalars()
            )
            reads = await portfolio_reads(s, self.market, found)
        now = dt.datetime.now(dt.UTC)
        for r in reads:
            self.registry.dispatch(
                portfolio_channel(r.id, self.registry.prefix), _text(_portfolio_update(r, now))
            )
        deleted = set(ids) - {p.id for p in found}
        for conn in list(self.registry.connections.values()):
            for pid in deleted & conn.portfolios:
                await self.registry.unsubscribe_portfolio(conn, pid)
                conn.reply(_text(Unsubscribed(channel="portfolio", portfolio_id=pid)))
        return len(ids)

    async def watch_credentials(self) -> int:
        """Close (1008) the connections whose credential was revoked or has expired.

        Polling the credential tables (one query per kind of credential) sees every
        way a credential ends, on every worker: a revocation through the API, a
        password change, an expiry, a deactivated user, a row deleted by hand.

        Returns:
            How many connections were closed.
        """
        wanted: dict[AuthMethod, set[int]] = {}
        for conn in self.registry.connections.values():
            if conn.credential is not None and conn.kick_code is None:
                wanted.setdefault(AuthMethod(conn.credential[0]), set()).add(conn.credential[1])
        if not wanted:
            return 0
        live = await live_credentials(self.db, wanted)
        closed = 0
        for conn in list(self.registry.connections.values()):
            cred = conn.credential
            if cred is None or conn.kick_code is not None:
                continue
            method = AuthMethod(cred[0])
            if method in live and cred[1] not in live[method]:
                conn.kick(
                    CloseCode.POLICY_VIOLATION,
                    error_text(
                        "credential_revoked", "The credential of this connection was revoked."
                    ),
                )
                closed += 1
        return closed

    # -- the WebSocket conversation ----------------------------------------------------------

    async def handle(self, conn: Connection, data: str | bytes) -> int | None:
        """Answer one client message; returns a close code when the client is abusive."""
        if (len(data) if isinstance(data, bytes) else len(data.encode())) > MAX_MESSAGE_BYTES:
            conn.reply(
                error_text(
                    "message_too_large", f"Messages are limited to {MAX_MESSAGE_BYTES} bytes."
                )
            )
            return CloseCode.MESSAGE_TOO_BIG
        if not conn.admit():
            rate = self.settings.realtime_messages_per_second
            if conn.strikes > max(10, rate):
                conn.reply(
                    error_text("policy_violation", "Too many messages; closing the connection.")
                )
                return CloseCode.POLICY_VIOLATION
            conn.reply(
                error_text("rate_limited", f"At most {rate} messages per second; message ignored.")
            )
            return None
        try:
            message = decode(data)
            await self._dispatch(conn, message)
        except MessageError as exc:
            conn.reply(error_text(exc.code, exc.message))
        except Exception:  # the database or Redis failed: say so, keep the connection
            log.exception("realtime: message of connection %d failed", conn.id)
            conn.reply(error_text("server_error", "The message could not be processed; try again."))
        return None

    async def _dispatch(self, conn: Connection, message: ClientMessage) -> None:
        if isinstance(message, Ping):
            conn.reply(_text(Pong(timestamp=dt.datetime.now(dt.UTC))))
        elif isinstance(message, SubscribeAsset):
            await self._subscribe_asset(conn, message.symbol.strip().upper())
        elif isinstance(message, SubscribeAssets):
            await self._subscribe_assets(conn, message.symbols)
        elif isinstance(message, UnsubscribeAsset):
            symbol = message.symbol.strip().upper()
            await self.registry.unsubscribe_asset(conn, symbol)
            conn.reply(_text(Unsubscribed(channel="asset", symbol=symbol)))
        elif isinstance(message, SubscribePortfolio):
            await self._subscribe_portfolio(conn, message.portfolio_id)
        elif isinstance(message, UnsubscribePortfolio):
            await self.registry.unsubscribe_portfolio(conn, message.portfolio_id)
            conn.reply(_text(Unsubscribed(channel="portfolio", portfolio_id=message.portfolio_id)))

    def _check_room(self, conn: Connection) -> None:
        limit = self.settings.realtime_max_subscriptions
        if conn.subscription_count >= limit:
            raise MessageError(
                "too_many_subscriptions", f"At most {limit} subscriptions per connection."
            )

    async def _subscribe_asset(self, conn: Connection, symbol: str) -> None:
        if symbol not in conn.assets:
            self._check_room(conn)
            if not await self.known_symbols([symbol]):
                raise MessageError("unknown_symbol", f"Unknown symbol {symbol!r}.")
            await self.registry.subscribe_asset(conn, symbol)
        conn.reply(_text(Subscribed(channel="asset", symbol=symbol)))
        quote = await asyncio.to_thread(self.market.quote, symbol)
        if quote is not None:
            conn.push(_text(price_update(quote)))

    async def _subscribe_assets(self, conn: Connection, symbols: Sequence[str]) -> None:
        """Subscribe to every symbol or, if one is unknown or they do not fit, to none."""
        wanted = list(dict.fromkeys(s.strip().upper() for s in symbols))
        new = [s for s in wanted if s not in conn.assets]
        limit = self.settings.realtime_max_subscriptions
        if conn.subscription_count + len(new) > limit:
            raise MessageError(
                "too_many_subscriptions",
                f"At most {limit} subscriptions per connection; nothing was subscribed.",
            )
        known = await self.known_symbols(new) if new else set()
        missing = [s for s in new if s not in known]
        if missing:
            raise MessageError(
                "unknown_symbol", f"Unknown symbols {', '.join(missing)}; nothing was subscribed."
            )
        for symbol in new:
            await self.registry.subscribe_asset(conn, symbol)
        for symbol in wanted:
            conn.reply(_text(Subscribed(channel="asset", symbol=symbol)))
        quotes = await asyncio.to_thread(self.market.quotes, wanted)
        for symbol in wanted:
            if (quote := quotes.get(symbol)) is not None:
                conn.push(_text(price_update(quote)))

    async def _subscribe_portfolio(self, conn: Connection, portfolio_id: int) -> None:
        if conn.user_id is None:
            raise MessageError(
                "authentication_required", "Sign in (session or token) to subscribe to portfolios."
            )
        if portfolio_id not in conn.portfolios:
            self._check_room(conn)
        async with self.db.read() as s:
            # The version first: a write landing after it is pushed by watch_ledgers.
            version = (
                await s.execute(
                    select(LedgerVersion.version).where(LedgerVersion.user_id == conn.user_id)
                )
            ).scalar_one_or_none()
            try:
                portfolio = await get_owned(s, conn.user_id, portfolio_id)
            except NotFoundError as exc:
                raise MessageError("not_found", exc.message) from None
            read = (await portfolio_reads(s, self.market, [portfolio]))[0]
        if version is not None:
            self._versions.setdefault(conn.user_id, int(version))
        await self.registry.subscribe_portfolio(conn, portfolio_id)
        conn.reply(_text(Subscribed(channel="portfolio", portfolio_id=portfolio_id)))
        conn.push(_text(_portfolio_update(read, dt.datetime.now(dt.UTC))))

    async def known_symbols(self, symbols: Sequence[str]) -> set[str]:
        """Which of the upper-case ``symbols`` are assets of the service (one query)."""
        async with self.db.read() as s:
            rows = await s.execute(select(Asset.symbol).where(Asset.symbol.in_(list(symbols))))
            return set(rows.scalars())

    # -- REST ------------------------------------------------------------------------------

    @staticmethod
    def websocket_info(scheme: str, host: str) -> WebSocketInfoRead:
        """The channel's address for a request that came over ``scheme`` to ``host``."""
        protocol = "wss" if scheme in ("https", "wss") else "ws"
        return WebSocketInfoRead(
            websocket_url=f"{protocol}://{host}{WS_PATH}",
            connection_info=ConnectionInfo(
                protocol=protocol, host=host, path=WS_PATH, authentication=AUTHENTICATION
            ),
            message_types=dict(MESSAGE_TYPES),
        )

    async def status(self, user_id: int | None) -> StatusRead:
        """Global figures (every worker when Redis is configured) and the caller's own."""
        state = "running"
        try:
            view: ClusterView = await self.cluster.view()
        except Exception as exc:
            log.warning("realtime: cluster stats unavailable, local figures only: %s", exc)
            view, state = merge([self.registry.snapshot()]), "degraded"
        count, portfolios, assets = (
            view.users.get(user_id, (0, [], [])) if user_id is not None else (0, [], [])
        )
        return StatusRead(
            service_status=state,
            global_stats=GlobalStats(
                total_connections=view.total_connections,
                authenticated_users=view.authenticated_users,
                portfolio_subscriptions=view.portfolio_subscriptions,
                asset_subscriptions=view.asset_subscriptions,
                dropped_updates=view.dropped_updates,
                workers=view.workers,
            ),
            user_stats=UserStats(
                connection_count=count,
                subscriptions=UserSubscriptions(portfolios=list(portfolios), assets=list(assets)),
            ),
        )

    async def force(self, symbols: Sequence[str]) -> ForcePriceUpdateRead:
        """Tick ``symbols`` now and push their updates.

        Raises:
            ValidationError: ``symbols`` names an unknown asset (``details.values`` lists them).
        """
        wanted = list(dict.fromkeys(s.strip().upper() for s in symbols))
        known = await self.known_symbols(wanted)
        missing = [s for s in wanted if s not in known]
        if missing:
            raise ValidationError(
                "symbols", "not_found", f"Unknown symbols: {', '.join(missing)}.", values=missing
            )
        quotes = await self.feed.update(wanted)
        return ForcePriceUpdateRead(updated=[_price_read(q) for q in quotes])


def _portfolio_update(read: PortfolioRead, now: dt.datetime) -> PortfolioUpdate:
    return PortfolioUpdate(
        portfolio_id=read.id,
        total_value=read.total_value,
        daily_change=read.daily_change,
        daily_change_percent=read.daily_change_percent,
        timestamp=now,
    )


def _price_read(quote: Quote) -> PriceRead:
    u = price_update(quote)
    return PriceRead(
        symbol=u.symbol,
        price=u.price,
        change=u.change,
        change_percent=u.change_percent,
        volume=u.volume,
        timestamp=u.timestamp,
    )
