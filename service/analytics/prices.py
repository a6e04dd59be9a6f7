"""Daily closes and exchange rates for analytics and backtests, cached briefly and aligned
on one calendar.

``MarketData.history`` builds a DataFrame per call (about 1 ms); a metrics request
over 50 positions would spend 50 ms there. The market keeps the close column of
each ``(symbol, start, end)`` window as NumPy arrays for a few seconds, and the
aligned panels (:class:`_PriceCaches`: invalidation beside it). Cached arrays are
shared and read-only.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from service.assets.market import MarketData
from service.caching import TTLCache

__all__ = ["ClosePanel", "FxPanel", "closes", "fx_panel", "is_cached", "panel"]

Days = NDArray[np.datetime64]
F64 = NDArray[np.float64]


_TTL = 30.0  # seconds


class _PriceCaches:
    """This module's caches of one market (kept by it: :meth:`MarketData.attached`).

    Invalidation, for all three: a TTL of 30 s. Completed daily bars never change;
    an import replacing a file is seen after the TTL. Values are read-only arrays.
    """

    def __init__(self) -> None:
        #: daily ``(dates, closes)`` per ``(symbol, start, end)``
        self.closes: TTLCache[tuple[str, dt.date, dt.date], tuple[Days, F64]] = TTLCache(1024, _TTL)
        #: whole panels on their own calendar (metrics of one portfolio ask for the same one)
        self.panels: TTLCache[tuple[tuple[str, ...], dt.date, dt.date], ClosePanel] = TTLCache(
            64, _TTL
        )
        #: FX panels per ``(codes, calendar bytes)``
        self.fx: TTLCache[tuple[tuple[str, ...], bytes], FxPanel] = TTLCache(64, _TTL)


def _caches(market: MarketData) -> _PriceCaches:
    return market.attached("analytics.prices", _PriceCaches)


def is_cached(market: MarketData, symbol: str, start: dt.date, end: dt.date) -> bool:
    """Whether :func:`closes` would answer from the cache (a hit costs no I/O)."""
    return _caches(market).closes.get((symbol, start, end)) is not None


def closes(market: MarketData, symbol: str, start: dt.date, end: dt.date) -> tuple[Days, F64]:
    """Cached daily ``(dates, closes)`` of one symbol (``KeyError`` when unknown).

    The arrays are shared between callers and read-only.
    """
    cache = _caches(market).closes
    hit = cache.get((symbol, start, end))
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
    cache.put((symbol, start, end), (days, close))
    return days, close


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
        hit = _caches(market).panels.get(key)
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
        _caches(market).panels.put(key, result)
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
    hit = _caches(market).fx.get(key)
    if hit is not None:
        return hit
    rates = np.ones((dates.size, len(codes)))
    for j, code in enumerate(codes[1:], start=1):
        rates[:, j] = _rates(market, code, base, dates)
    rates.setflags(write=False)
    out = FxPanel(dates, rates, codes)
    _caches(market).fx.put(key, out)
    return out
