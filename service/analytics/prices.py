"""Daily closes for analytics and backtests, cached briefly and aligned on one calendar.

``MarketData.history`` builds a DataFrame per call (about 1 ms); a metrics request
over 50 positions would spend 50 ms there. :class:`CloseCache` keeps the close
column of each ``(symbol, start, end)`` window as NumPy arrays for a few seconds
(completed daily bars never change; an import replacing a file is seen after
the TTL).
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from service.assets.market import MarketData

__all__ = ["CloseCache", "ClosePanel", "closes", "is_cached", "panel"]

Days = NDArray[np.datetime64]
F64 = NDArray[np.float64]


class CloseCache:
    """A small thread-safe LRU of ``(dates, closes)`` per window, with a TTL.

    Args:
        ttl: seconds an entry is served.
        size: entries kept.
    """

    def __init__(self, ttl: float = 30.0, size: int = 1024) -> None:
        self.ttl = ttl
        self.size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple[int, str, dt.date, dt.date], tuple[float, Days, F64]] = (
            OrderedDict()
        )

    def has(self, market: MarketData, symbol: str, start: dt.date, end: dt.date) -> bool:
        """Whether a fresh entry is held (a hit costs no I/O)."""
        with self._lock:
            hit = self._items.get((id(market), symbol, start, end))
        return hit is not None and time.monotonic() - hit[0] < self.ttl

    def get(
        self, market: MarketData, symbol: str, start: dt.date, end: dt.date
    ) -> tuple[Days, F64]:
        """Daily dates (``datetime64[D]``) and closes of ``symbol``; unknown: ``KeyError``."""
        key = (id(market), symbol, start, end)
        now = time.monotonic()
        with self._lock:
            hit = self._items.get(key)
            if hit is not None and now - hit[0] < self.ttl:
                self._items.move_to_end(key)
                return hit[1], hit[2]
        bars = market.history(symbol, start, end, "1d")
        index = pd.DatetimeIndex(bars.index)
        if index.tz is not None:
            index = index.tz_convert("UTC").tz_localize(None)
        days = np.asarray(index.values.astype("datetime64[D]"))
        close = np.ascontiguousarray(bars["close"].to_numpy(dtype=np.float64))
        with self._lock:
            self._items[key] = (now, days, close)
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return days, close


_CACHE = CloseCache()
# whole panels on their own calendar (metrics of one portfolio ask for the same one)
_PANELS: OrderedDict[tuple[int, tuple[str, ...], dt.date, dt.date], tuple[float, ClosePanel]] = (
    OrderedDict()
)
_PANELS_LOCK = threading.Lock()
_PANELS_SIZE = 64


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
    key = (id(market), tuple(symbols), start, end)
    own_calendar = calendar is None
    if own_calendar:
        with _PANELS_LOCK:
            hit = _PANELS.get(key)
        if hit is not None and time.monotonic() - hit[0] < _CACHE.ttl:
            return hit[1]
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
    result = ClosePanel(calendar, out, symbols)
    if own_calendar:  # shared between requests: callers only read it
        with _PANELS_LOCK:
            _PANELS[key] = (time.monotonic(), result)
            while len(_PANELS) > _PANELS_SIZE:
                _PANELS.popitem(last=False)
    return result
