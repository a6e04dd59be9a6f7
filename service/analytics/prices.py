"""Daily closes and exchange rates for analytics and backtests, cached briefly and aligned
on one calendar.

``MarketData.history`` builds a DataFrame per call (about 1 ms); a metrics request
over 50 positions would spend 50 ms there. :class:`CloseCache` keeps the close
column of each ``(symbol, start, end)`` window as NumPy arrays for a few seconds
(completed daily bars never change; an import replacing a file is seen after
the TTL). Cached arrays are shared and read-only.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from service.assets.market import MarketData

__all__ = ["CloseCache", "ClosePanel", "FxPanel", "closes", "fx_panel", "is_cached", "panel"]

Days = NDArray[np.datetime64]
F64 = NDArray[np.float64]


class _TTLCache:
    """A thread-safe LRU with a time-to-live, one per market object (held weakly, so a
    discarded ``MarketData`` never lends its entries to a new one at the same address)."""

    def __init__(self, ttl: float, size: int) -> None:
        self.ttl = ttl
        self.size = size
        self._lock = threading.Lock()
        self._by_market: weakref.WeakKeyDictionary[
            MarketData, OrderedDict[Hashable, tuple[float, Any]]
        ] = weakref.WeakKeyDictionary()

    def lookup(self, market: MarketData, key: Hashable) -> Any | None:
        with self._lock:
            items = self._by_market.get(market)
            hit = items.get(key) if items is not None else None
            if hit is None or time.monotonic() - hit[0] >= self.ttl:
                return None
            items.move_to_end(key)  # type: ignore[union-attr]
            return hit[1]

    def store(self, market: MarketData, key: Hashable, value: Any) -> None:
        with self._lock:
            items = self._by_market.setdefault(market, OrderedDict())
            items[key] = (time.monotonic(), value)
            items.move_to_end(key)
            while len(items) > self.size:
                items.popitem(last=False)


class CloseCache:
    """Daily ``(dates, closes)`` per ``(market, symbol, start, end)``, with a TTL.

    Args:
        ttl: seconds an entry is served.
        size: entries kept per market.
    """

    def __init__(self, ttl: float = 30.0, size: int = 1024) -> None:
        self._cache = _TTLCache(ttl, size)

    @property
    def ttl(self) -> float:
        return self._cache.ttl

    def has(self, market: MarketData, symbol: str, start: dt.date, end: dt.date) -> bool:
        """Whether a fresh entry is held (a hit costs no I/O)."""
        return self._cache.lookup(market, (symbol, start, end)) is not None

    def get(
        self, market: MarketData, symbol: str, start: dt.date, end: dt.date
    ) -> tuple[Days, F64]:
        """Daily dates (``datetime64[D]``) and closes of ``symbol``; unknown: ``KeyError``.

        The arrays are shared between callers and read-only.
        """
        hit = self._cache.lookup(market, (symbol, start, end))
        if hit is not None:
            return hit
        bars = market.history(symbol, start, end, "1d")
        index = pd.DatetimeIndex(bars.index)
        if index.tz is not None:
            index = index.tz_convert("UTC").tz_localize(None)
        days = np.asarray(index.values.astype("datetime64[D]"))
        close = np.ascontiguousarray(bars["close"].to_numpy(dtype=np.float64))
        days.setflags(write=False)
        close.setflags(write=False)
        self._cache.store(market, (symbol, start, end), (days, close))
        return days, close


_CACHE = CloseCache()
# whole panels on their own calendar (metrics of one portfolio ask for the same one)
_PANELS = _TTLCache(_CACHE.ttl, 64)


def is_cached(market: MarketData, symbol: str, start: dt.date, end: dt.date) -> bool:
    """Whether :func:`closes` would answer from the cache."""
    return _CACHE.has(market, symbol, start, end)


def closes(market: MarketData, symbol: str, start: dt.date, end: dt.date) -> tuple[Days, F64]:
    """Cached daily ``(dates, closes)`` of one symbol (``KeyError`` when unknown)."""
    return _CACHE.get(market, symbol, start, end)


class ClosePanel:
    """Closes of several symbols on the union of their trading days, forward-filled.

    Attributes:
        dates: the calendar (``datetime64[D]``, ascending).
        close: ``(n_dates, n_symbols)``; NaN before a symbol's first bar.
        symbols: column order.
    """

    __slots__ = ("close", "dates", "symbols")

    def __init__(self, dates: Days, close: F64, symbols: Sequence[str]) -> None:
        self.dates = dates
        self.close = close
        self.symbols = tuple(symbols)

    def column(self, symbol: str) -> F64:
        return self.close[:, self.symbols.index(symbol)]


def panel(
    market: MarketData,
    symbols: Sequence[str],
    start: dt.date,
    end: dt.date,
    *,
    calendar: Days | None = None,
) -> ClosePanel:
    """Align the closes of ``symbols`` on ``calendar`` (default: the union of their days).

    A symbol without bars in the window is an all-NaN column; an unknown symbol
    raises ``KeyError``. Values are carried forward over days a symbol did not trade.
    """
    key = (tuple(symbols), start, end)
    own_calendar = calendar is None
    if own_calendar:
        hit = _PANELS.lookup(market, key)
        if hit is not None:
            return hit
    series = [closes(market, s, start, end) for s in symbols]
    if calendar is None:
        calendar = (
            np.unique(np.concatenate([d for d, _ in series]))
            if series
            else np.empty(0, dtype="datetime64[D]")
        )
    out = np.full((calendar.size, len(symbols)), np.nan)
    for j, (days, close) in enumerate(series):
        if days.size == 0 or calendar.size == 0:
            continue
        # the last bar on or before each calendar day (forward fill)
        pos = np.searchsorted(days, calendar, side="right") - 1
        ok = pos >= 0
        out[ok, j] = close[pos[ok]]
    out.setflags(write=False)
    result = ClosePanel(calendar, out, symbols)
    if own_calendar:  # shared between requests (read-only arrays)
        _PANELS.store(market, key, result)
    return result


class FxPanel:
    """Rates of currencies in a base currency on a calendar (``MarketData.fx_rates``).

    Attributes:
        dates: the calendar (``datetime64[D]``).
        rates: ``(n_dates, n_codes)``: base currency per unit of each code; NaN where
            unknown (before the first close, or a currency the market has no rate for).
        codes: column order; ``codes[0]`` is the base currency (all 1.0).
    """

    __slots__ = ("codes", "dates", "rates")

    def __init__(self, dates: Days, rates: F64, codes: Sequence[str]) -> None:
        self.dates = dates
        self.rates = rates
        self.codes = tuple(codes)


_FX = _TTLCache(_CACHE.ttl, 64)


def _rates(market: MarketData, code: str, base: str, dates: Days) -> F64:
    try:
        return np.asarray(market.fx_rates(code, base, pd.DatetimeIndex(dates)), dtype=np.float64)
    except KeyError:  # a code the market does not support: values in it are unknown
        return np.full(dates.size, np.nan)


def fx_panel(market: MarketData, codes: Sequence[str], dates: Days) -> FxPanel:
    """Rates of ``codes`` in ``codes[0]`` (the base currency) on ``dates``, cached briefly."""
    base = codes[0]
    if len(codes) == 1:  # the common case: everything in the base currency
        return FxPanel(dates, np.ones((dates.size, 1)), codes)
    key = (tuple(codes), dates.tobytes())
    hit = _FX.lookup(market, key)
    if hit is not None:
        return hit
    rates = np.ones((dates.size, len(codes)))
    for j, code in enumerate(codes[1:], start=1):
        rates[:, j] = _rates(market, code, base, dates)
    rates.setflags(write=False)
    out = FxPanel(dates, rates, codes)
    _FX.store(market, key, out)
    return out
