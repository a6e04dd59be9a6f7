"""Prices for the service: imported Parquet history first, then the market-data provider.

A symbol with daily bars in the :class:`~service.marketdata.store.PriceStore`
(``import-prices``) is priced from them only, whether or not the provider knows it:
real bars replace the simulated series for quotes, price history, analytics and
backtests. Its quote is the last daily close against the one before it; an interval
it has no bars for is :class:`IntervalUnavailable` (a 400 naming ``interval``).
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

import numpy as np
import pandas as pd

from service.marketdata.provider import Interval, MarketDataProvider, Quote

__all__ = ["IntervalUnavailable", "MarketData"]


class IntervalUnavailable(KeyError):
    """The symbol's bars are imported, and none are stored at the asked interval."""


class MarketData:
    """Quotes and bars by symbol.

    Args:
        provider: the live source (the simulated universe by default).
        store: optional price store with ``read(symbol, interval, start, end)``.
    """

    def __init__(self, provider: MarketDataProvider, store: Any | None = None) -> None:
        self.provider = provider
        self.store = store
        root = getattr(store, "root", None)
        # a plain string: the hot paths stat it on every quote (no Path building there)
        self._daily_dir = None if root is None else os.path.join(root, "1d")
        self._imported_stamp: int | None = None
        self._imported: frozenset[str] = frozenset()

    def imported(self, symbol: str) -> bool:
        """Whether ``symbol`` has imported daily bars (they then win over the provider).

        The stored symbols are listed again only when the store's daily folder changed
        (its mtime: a file added or removed), so the hot paths pay one ``stat``.
        """
        if self._daily_dir is None:
            return False
        try:
            stamp = os.stat(self._daily_dir).st_mtime_ns
        except OSError:
            return False
        if stamp != self._imported_stamp:
            self._imported = frozenset(self.store.symbols("1d"))  # type: ignore[union-attr]
            self._imported_stamp = stamp
        return symbol in self._imported

    def quote(self, symbol: str) -> Quote | None:
        """The latest quote, ``None`` when no source knows the symbol."""
        if not self.imported(symbol):
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
        live = [s for s in symbols if not self.imported(s)]
        batch = getattr(self.provider, "quotes", None)
        out: dict[str, Quote] = dict(batch(live)) if batch is not None else {}
        for symbol in symbols:
            if symbol not in out and (quote := self.quote(symbol)) is not None:
                out[symbol] = quote
        return out

    def history(
        self, symbol: str, start: dt.date, end: dt.date, interval: Interval = "1d"
    ) -> pd.DataFrame:
        """Bars from ``start`` to ``end`` inclusive (``KeyError`` when no source has the symbol).

        Raises:
            IntervalUnavailable: imported bars, none at ``interval``.
        """
        if self.imported(symbol):
            bars = self._stored(symbol, interval, start, end)
            if bars is None:
                raise IntervalUnavailable(symbol)
            return bars
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
