"""Wire shapes of ``/api/assets/``."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

import msgspec

__all__ = [
    "AssetRead",
    "AssetRef",
    "AssetType",
    "BulkPrice",
    "BulkPricesRead",
    "BulkPricesRequest",
    "Interval",
    "PriceBar",
    "PriceHistoryRead",
]

AssetType = Literal["stock", "etf", "bond", "crypto"]
Interval = Literal["1d", "1h", "5m"]
Symbol = Annotated[str, msgspec.Meta(min_length=1, max_length=32)]


class AssetRef(msgspec.Struct, kw_only=True):
    """The asset as embedded in a position."""

    id: int
    symbol: str
    name: str
    current_price: str | None


class AssetRead(msgspec.Struct, kw_only=True):
    id: int
    symbol: str
    name: str
    asset_type: str
    sector: str
    current_price: str | None
    price_change: str | None
    price_change_percent: str | None
    volume: int | None
    market_cap: str | None  # in ``currency``
    data_source: str
    currency: str  # ISO 4217 code of the prices, e.g. "USD", "EUR"
    last_updated: dt.datetime | None


class PriceBar(msgspec.Struct, kw_only=True, array_like=False):
    date: str  # YYYY-MM-DD for 1d, ISO date-time (UTC) for intraday bars
    open: str
    high: str
    low: str
    close: str
    volume: int


class PriceHistoryRead(msgspec.Struct, kw_only=True):
    symbol: str
    interval: str
    data: list[PriceBar]


class BulkPricesRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    symbols: Annotated[list[Symbol], msgspec.Meta(min_length=1, max_length=100)]


class BulkPrice(msgspec.Struct, kw_only=True):
    price: str | None
    change: str | None
    change_percent: str | None
    timestamp: dt.datetime


class BulkPricesRead(msgspec.Struct, kw_only=True):
    prices: dict[str, BulkPrice]
