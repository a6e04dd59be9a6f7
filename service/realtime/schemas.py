"""Wire shapes of the real-time REST endpoints."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import msgspec

__all__ = [
    "ConnectionInfo",
    "ForcePriceUpdate",
    "ForcePriceUpdateRead",
    "GlobalStats",
    "PriceRead",
    "StatusRead",
    "UserStats",
    "UserSubscriptions",
    "WebSocketInfoRead",
]

Symbol = Annotated[str, msgspec.Meta(min_length=1, max_length=32)]


class ConnectionInfo(msgspec.Struct, kw_only=True):
    protocol: str  # "ws" or "wss"
    host: str
    path: str
    authentication: str


class WebSocketInfoRead(msgspec.Struct, kw_only=True):
    websocket_url: str
    connection_info: ConnectionInfo
    message_types: dict[str, str]


class GlobalStats(msgspec.Struct, kw_only=True):
    total_connections: int
    authenticated_users: int
    portfolio_subscriptions: int
    asset_subscriptions: int
    dropped_updates: int
    workers: int


class UserSubscriptions(msgspec.Struct, kw_only=True):
    portfolios: list[int]
    assets: list[str]


class UserStats(msgspec.Struct, kw_only=True):
    connection_count: int
    subscriptions: UserSubscriptions


class StatusRead(msgspec.Struct, kw_only=True):
    service_status: str  # "running", or "degraded" when Redis cannot be read
    global_stats: GlobalStats
    user_stats: UserStats


class ForcePriceUpdate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    symbols: Annotated[list[Symbol], msgspec.Meta(min_length=1, max_length=100)]


class PriceRead(msgspec.Struct, kw_only=True):
    symbol: str
    price: str
    change: str
    change_percent: str
    volume: int
    timestamp: dt.datetime


class ForcePriceUpdateRead(msgspec.Struct, kw_only=True):
    updated: list[PriceRead]
