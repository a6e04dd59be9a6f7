"""Everything ``create_app`` adds for real time: ``plugins=realtime_plugins(settings)``.

* a Litestar :class:`~litestar.channels.ChannelsPlugin`: memory backend by default,
  the Redis Pub/Sub backend (``litestar.channels.backends.redis``) when
  ``QC_REDIS_URL`` is set, so an update published by any worker reaches the
  subscribers of every worker;
* :class:`RealtimePlugin`: the routes (``/ws/realtime/``, ``/realtime/...``,
  ``/api/realtime/...``) and a lifespan entered after the channels plugin's, which
  starts the :class:`~service.realtime.services.Realtime` service of the worker
  (``app.state.realtime``) and its price feed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from litestar import Litestar
from litestar.channels import ChannelsPlugin
from litestar.channels.backends.base import ChannelsBackend
from litestar.channels.backends.memory import MemoryChannelsBackend
from litestar.config.app import AppConfig
from litestar.plugins import InitPluginProtocol

from service.realtime.controllers import RealtimeController
from service.realtime.services import Realtime
from service.realtime.websocket import realtime_socket
from service.settings import Settings
from service.state import resources_of

__all__ = ["RealtimePlugin", "channels_backend", "realtime_plugins"]

#: Channel messages buffered per worker-level subscriber before the oldest is dropped.
_SUBSCRIBER_BACKLOG = 10_000


def channels_backend(settings: Settings) -> ChannelsBackend:
    """Redis Pub/Sub when ``redis_url`` is set, else process memory."""
    if settings.redis_url:
        from litestar.channels.backends.redis import RedisChannelsPubSubBackend
        from redis.asyncio import Redis

        return RedisChannelsPubSubBackend(
            redis=Redis.from_url(settings.redis_url),
            key_prefix=f"{settings.redis_prefix}rt",
            stream_sleep_no_subscriptions=50,
        )
    return MemoryChannelsBackend()


class RealtimePlugin(InitPluginProtocol):
    """Adds the real-time routes and starts/stops the worker's :class:`Realtime`."""

    def __init__(self, settings: Settings, channels: ChannelsPlugin) -> None:
        self.realtime = Realtime(settings, channels)

    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        app_config.route_handlers.extend([RealtimeController, realtime_socket])
        app_config.lifespan.append(self._lifespan)
        return app_config

    @asynccontextmanager
    async def _lifespan(self, app: Litestar) -> AsyncIterator[None]:
        app.state.realtime = self.realtime
        await self.realtime.start(resources_of(app))
        try:
            yield
        finally:
            await self.realtime.stop()


def realtime_plugins(settings: Settings) -> list[ChannelsPlugin | RealtimePlugin]:
    """The channels plugin, then the real-time plugin (order matters: see the module docstring)."""
    channels = ChannelsPlugin(
        backend=channels_backend(settings),
        arbitrary_channels_allowed=True,
        subscriber_max_backlog=_SUBSCRIBER_BACKLOG,
        subscriber_backlog_strategy="dropleft",
    )
    return [channels, RealtimePlugin(settings, channels)]
