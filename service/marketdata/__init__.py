"""Market data: the provider protocol, the simulated universe, the Parquet store, importers.

The service uses :class:`SimulatedMarket` as its default :class:`MarketDataProvider`,
keeps price history in a :class:`PriceStore` (``<QC_DATA_DIR>/prices``), loads
real files with :func:`import_prices` and simulates FX rates with :class:`SimulatedFX`
(the :data:`CURRENCIES` it connects).
"""

from service.marketdata.fx import CURRENCIES, FX_PAIRS, SimulatedFX, fx_pair
from service.marketdata.importers import ImportResult, PriceImportError, import_prices
from service.marketdata.provider import AssetInfo, AssetType, Interval, MarketDataProvider, Quote
from service.marketdata.simulated import SimulatedMarket
from service.marketdata.store import PriceStore
from service.marketdata.universe import UNIVERSE, AssetSpec

__all__ = [
    "CURRENCIES",
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
    "fx_pair",
    "import_prices",
]
