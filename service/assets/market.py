"""Prices for the service: the market-data provider, plus imported Parquet history.

Assets created by ``import-prices`` are not known to the provider; their bars come
from the :class:`~service.marketdata.store.PriceStore` and their quote is the last
daily close against the one before it.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pandas as pd

from service.marketdata.provider import Interval, MarketDataProvider, Quote

__all__ = ["MarketData"]


class MarketData:
    """Quotes and bars by symbol.

    Args:
        provider: the live source (the simulated universe by default).
        store: optional price store with ``read(symbol, interval, start, end)``.
    """

    def __init__(self, provider: MarketDataProvider, store: Any | None = None) -> None:
        self.provider = provider
        self.store = store

    def quote(self, symbol: str) -> Quote | None:
        """The latest quote, ``None`` when no source knows the symbol."""
        try:
            return self.provider.quote(symbol)
        except KeyError:
            pass
        bars = self._stored(symbol, "1d", None, None)
        if bars is None or bars.empty:
            return None
        close = bars["close"].to_numpy(dtype=np.float64)
        last = float(close[-1])
        prev = float(close[-2]) if close.size > 1 else last
        ts = bars.index[-1]
        return Quote(
            symbol=symbol,
            price=last,
            change=last - prev,
            change_percent=(last / prev - 1.0) * 100.0 if prev else 0.0,
            volume=int(bars["volume"].iloc[-1]),
            timestamp=ts.to_pydatetime() if hasattr(ts, "to_pydatetime") else ts,
        )

    def quotes(self, symbols: list[str]) -> dict[str, Quote]:
        """Quotes for every known symbol of ``symbols`` (unknown ones are left out).

        Uses the provider's batch ``quotes(symbols)`` when it has one (the simulated
        market does: one clock read and one lock for the lot).
        """
        batch = getattr(self.provider, "quotes", None)
        out: dict[str, Quote] = dict(batch(symbols)) if batch is not None else {}
        for symbol in symbols:
            if symbol not in out and (quote := self.quote(symbol)) is not None:
                out[symbol] = quote
        return out

    def history(
        self, symbol: str, start: dt.date, end: dt.date, interval: Interval = "1d"
    ) -> pd.DataFrame:
        """Bars from ``start`` to ``end`` inclusive (``KeyError`` when no source has the symbol)."""
        try:
            return self.provider.history(symbol, start, end, interval)
        except KeyError:
            bars = self._stored(symbol, interval, start, end)
            if bars is None:
                raise
            return bars

    def _stored(
        self, symbol: str, interval: str, start: dt.date | None, end: dt.date | None
    ) -> pd.DataFrame | None:
        if self.store is None:
            return None
        try:
            return self.store.read(symbol, interval, start, end)
        except (KeyError, ValueError, FileNotFoundError):
            return None
