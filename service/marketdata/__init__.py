"""Market data: the provider protocol, the simulated universe, the Parquet store, importers."""

from service.marketdata.provider import AssetInfo, AssetType, Interval, MarketDataProvider, Quote
from service.marketdata.simulated import SimulatedMarket

__all__ = [
    "AssetInfo",
    "AssetType",
    "Interval",
    "MarketDataProvider",
    "Quote",
    "SimulatedMarket",
]
