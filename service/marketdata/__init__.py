"""Market data: the provider protocol, the simulated universe, the Parquet store, importers.

The service uses :class:`SimulatedMarket` as its default :class:`MarketDataProvider`,
keeps price history in a :class:`PriceStore` (``<QC_DATA_DIR>/prices``) and loads
real files with :func:`import_prices`.
"""

from service.marketdata.fx import FX_PAIRS, SimulatedFX
from service.marketdata.importers import ImportResult, PriceImportError, import_prices
from service.marketdata.provider import AssetInfo, AssetType, Interval, MarketDataProvider, Quote
from service.marketdata.simulated import SimulatedMarket
from service.marketdata.store import PriceStore
from service.marketdata.universe import UNIVERSE, AssetSpec

__all__ = [
    "FX_PAIRS",
    "UNIVERSE",
    "AssetInfo",
    "AssetSpec",
    "AssetType",
    "ImportResult",
    "Interval",
    "MarketDataProvider",
    "PriceImportError",
    "PriceStore",
    "Quote",
    "SimulatedFX",
    "SimulatedMarket",
    "import_prices",
]
