"""The market-data contract the service depends on.

The default implementation is the deterministic simulated universe
(:mod:`service.marketdata.simulated`); a real feed implements the same Protocol.
Prices are float64 here (they come from a model or a file); the service turns
them into decimal strings at the HTTP edge.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

import pandas as pd

__all__ = ["AssetInfo", "AssetType", "Interval", "MarketDataProvider", "Quote"]

AssetType = Literal["stock", "etf", "bond", "crypto"]
Interval = Literal["1d", "1h", "5m"]


@dataclass(frozen=True, slots=True)
class AssetInfo:
    """Static description of one asset."""

    symbol: str
    name: str
    asset_type: AssetType
    sector: str
    market_cap: float  # in ``currency``
    data_source: str  # "simulated", "import", ...
    currency: str = "USD"  # ISO 4217 code of the asset's prices


@dataclass(frozen=True, slots=True)
class Quote:
    """The latest price of one asset and its change against the previous close."""

    symbol: str
    price: float
    change: float
    change_percent: float  # percent, e.g. 1.25 for +1.25 %
    volume: int
    timestamp: dt.datetime  # timezone-aware UTC


@runtime_checkable
class MarketDataProvider(Protocol):
    """Where asset descriptions, bars and live quotes come from."""

    def assets(self) -> list[AssetInfo]:
        """Every asset the provider knows."""
        ...

    def history(
        self, symbol: str, start: dt.date, end: dt.date, interval: Interval = "1d"
    ) -> pd.DataFrame:
        """Bars from ``start`` to ``end`` inclusive.

        Columns ``open, high, low, close`` (float64) and ``volume`` (int64), indexed by
        a tz-aware UTC ``DatetimeIndex`` (the bar's start; daily bars at midnight).
        Unknown symbol: ``KeyError``.
        """
        ...

    def quote(self, symbol: str) -> Quote:
        """The latest quote. Unknown symbol: ``KeyError``."""
        ...

    def tick(self, symbols: list[str], now: dt.datetime) -> list[Quote]:
        """Advance the live price of ``symbols`` to ``now`` and return their new quotes."""
        ...
