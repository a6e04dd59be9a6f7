"""Prices for the service: imported Parquet history first, then the market-data provider.

A symbol with daily bars in the :class:`~service.marketdata.store.PriceStore`
(``import-prices``) is priced from them only, whether or not the provider knows it:
real bars replace the simulated series for quotes, price history, analytics and
backtests. Its quote is the last daily close against the one before it; an interval
it has no bars for is :class:`IntervalUnavailable` (a 400 naming ``interval``).

FX rates follow the same rule. A rate is the price of one unit of a currency in the
base currency (EURUSD 1.08: 1 EUR = 1.08 USD). The pairs are the simulated ones
(:class:`~service.marketdata.fx.SimulatedFX`, same seed and clock as a simulated
provider) and any pair imported under its six-letter symbol (``EURUSD``); an imported
pair replaces the simulated one, in either orientation. Other rates are inverses and
crosses of those (:func:`quantcore.fx.cross_rate`).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Collection, Sequence
from typing import Any, NamedTuple, TypeVar

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from quantcore.fx import cross_rate
from service.caching import TTLCache
from service.marketdata.fx import CURRENCIES, SimulatedFX, closes_as_of, fx_pair
from service.marketdata.provider import Interval, MarketDataProvider, Quote
from service.marketdata.simulated import QUOTE_TTL, SimulatedMarket, utc_now

__all__ = ["FxQuote", "IntervalUnavailable", "MarketData"]


class FxQuote(NamedTuple):
    """The latest rate of a currency in a base currency, and the previous daily close.

    ``rate`` and ``previous_close`` are base currency per unit of the currency;
    ``timestamp`` (UTC) is when the rate was taken (for a rate from imported daily
    bars, the last bar's date).
    """

    rate: float
    previous_close: float
    timestamp: dt.datetime


T = TypeVar("T")

#: A cache entry: (imported-folder stamp, expiry or None until the stamp changes, quote).
_FxEntry = tuple[int | None, dt.datetime | None, FxQuote | None]


class IntervalUnavailable(KeyError):
    """The symbol's bars are imported, and none are stored at the asked interval."""


class MarketData:
    """Quotes and bars by symbol.

    Args:
        provider: the live source (the simulated universe by default).
        store: optional price store with ``read(symbol, interval, start, end)``.
        fx: simulated FX pairs; default: those of the provider's seed and clock when it
            is a :class:`SimulatedMarket`, else none (only imported pairs).
    """

    def __init__(
        self, provider: MarketDataProvider, store: Any | None = None, fx: SimulatedFX | None = None
    ) -> None:
        self.provider = provider
        self.store = store
        root = getattr(store, "root", None)
        # a plain string: the hot paths stat it on every quote (no Path building there)
        self._daily_dir = None if root is None else os.path.join(root, "1d")
        self._imported_stamp: int | None = None
        self._imported: frozenset[str] = frozenset()
        if fx is None and isinstance(provider, SimulatedMarket):
            fx = SimulatedFX(seed=provider.seed, clock=provider.clock)
        self.fx = fx
        self._clock: Callable[[], dt.datetime] = getattr(provider, "clock", None) or utc_now
        # per pair of codes; invalidation beside the use (fx_quote): the imported-folder
        # stamp and the quote's expiry are stored in the entry and compared on read
        self._fx_quotes: TTLCache[tuple[str, str], _FxEntry] = TTLCache(256)
        self._attached: dict[str, Any] = {}

    def today(self) -> dt.date:
        """The market clock's day (UTC): the wall clock's unless the provider runs its own."""
        return self._clock().date()

    def attached(self, name: str, factory: Callable[[], T]) -> T:
        """The object ``name`` kept with this market, made by ``factory()`` on first use.

        For caches of data derived from this market's prices
        (:mod:`service.analytics.prices`): they live and die with the market, so a
        discarded market never lends its entries to another, and no module keeps a
        global one.
        """
        found = self._attached.get(name)
        if found is None:
            found = self._attached.setdefault(name, factory())
        return found

    def imported(self, symbol: str) -> bool:
        """Whether ``symbol`` has imported daily bars (they then win over the provider).

        The stored symbols are listed again only when the store's daily folder changed
        (its mtime: a file added or removed), so the hot paths pay one ``stat``.
        """
        return symbol in self._imported_state()[1]

    def _imported_state(self) -> tuple[int | None, frozenset[str]]:
        """The daily folder's stamp (``None``: no folder) and the symbols stored in it."""
        if self._daily_dir is None:
            return None, frozenset()
        try:
            stamp = os.stat(self._daily_dir).st_mtime_ns
        except OSError:
            return None, frozenset()
        if stamp != self._imported_stamp:
            self._imported = frozenset(self.store.symbols("1d"))  # type: ignore[union-attr]
            self._imported_stamp = stamp
        return stamp, self._imported

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

    # -- FX ----------------------------------------------------------------------------

    def currencies(self) -> tuple[str, ...]:
        """The supported ISO 4217 codes (``USD``, ``EUR``, ``GBP``, ``JPY``)."""
        return CURRENCIES

    def fx_rates(
        self, currency: str, base: str, dates: Sequence[dt.date] | pd.DatetimeIndex
    ) -> NDArray[np.float64]:
        """The daily close rate of ``currency`` in ``base`` as of each date.

        The last close on or before each date (a weekend takes Friday's); all 1.0 when
        the codes are equal; NaN before the first close or when no pair connects them.
        Codes are case-insensitive.

        Raises:
            KeyError: An unsupported currency.
        """
        cur, bas = _currency(currency), _currency(base)
        when = _as_days(dates)
        if cur == bas:
            return np.ones(len(when))
        route = _route(cur, bas, self._fx_pairs(self._imported_state()[1]))
        if route is None or len(when) == 0:
            return np.full(len(when), np.nan)
        legs = {pair: self._pair_closes(pair, when) for pair in route}
        return np.asarray(cross_rate(legs, cur, bas), dtype=np.float64)

    def fx_quote(self, currency: str, base: str) -> FxQuote | None:
        """The latest rate of ``currency`` in ``base`` and the previous daily close.

        ``None`` when no pair connects them or a code is not supported (its amounts are
        then of unknown value). A simulated rate moves inside the session like an asset
        quote and is reused while under 5 minutes old (the quote path's rule); a rate
        from imported bars until the imports change. Cached per pair of codes: a
        repeated call costs a dictionary lookup, a clock read and one ``stat``.
        """
        try:
            cur, bas = _currency(currency), _currency(base)
        except KeyError:
            return None
        now = self._clock()
        if cur == bas:
            return FxQuote(1.0, 1.0, now)
        stamp, imported = self._imported_state()
        held = self._fx_quotes.get((cur, bas))
        if held is not None and held[0] == stamp and (held[1] is None or now < held[1]):
            return held[2]
        quote, expires = self._fresh_fx_quote(cur, bas, imported)
        self._fx_quotes.put((cur, bas), (stamp, expires, quote))
        return quote

    def _fx_pairs(self, imported: Collection[str]) -> frozenset[str]:
        """Pairs with rates: the imported ones, and the simulated ones not imported either way."""
        mine = {p for p in imported if fx_pair(p) is not None}
        simulated = () if self.fx is None else self.fx.pairs
        return frozenset(
            mine | {p for p in simulated if p not in mine and p[3:] + p[:3] not in mine}
        )

    def _pair_closes(self, pair: str, when: pd.DatetimeIndex) -> NDArray[np.float64]:
        if self.imported(pair):
            bars = self._stored(pair, "1d", None, when.max().date())
            if bars is None or bars.empty:
                return np.full(len(when), np.nan)
            return closes_as_of(bars["close"], when)
        assert self.fx is not None  # a pair neither imported nor simulated has no route
        return self.fx.rates(pair, when).to_numpy(dtype=np.float64)

    def _fresh_fx_quote(
        self, cur: str, bas: str, imported: Collection[str]
    ) -> tuple[FxQuote | None, dt.datetime | None]:
        """The quote and when it expires (``None``: when the imports change)."""
        route = _route(cur, bas, self._fx_pairs(imported))
        if route is None:
            return None, None
        rates: dict[str, float] = {}
        closes: dict[str, float] = {}
        stamps: list[dt.datetime] = []
        live: list[dt.datetime] = []
        for pair in route:
            if pair in imported:
                bars = self._stored(pair, "1d", None, None)
                if bars is None or bars.empty:
                    return None, None
                close = bars["close"].to_numpy(dtype=np.float64)
                rates[pair] = float(close[-1])
                closes[pair] = float(close[-2]) if close.size > 1 else float(close[-1])
                stamps.append(bars.index[-1].to_pydatetime())
            else:
                assert self.fx is not None
                tick = self.fx.quote(pair)
                rates[pair] = tick.price
                closes[pair] = self.fx.previous_close(pair, tick.timestamp)
                stamps.append(tick.timestamp)
                live.append(tick.timestamp)
        quote = FxQuote(
            rate=float(cross_rate(rates, cur, bas)),
            previous_close=float(cross_rate(closes, cur, bas)),
            timestamp=min(stamps),
        )
        return quote, (min(live) + QUOTE_TTL if live else None)


def _currency(code: str) -> str:
    text = code.strip().upper() if isinstance(code, str) else code
    if text not in CURRENCIES:
        raise KeyError(f"unsupported currency {code!r} (supported: {', '.join(CURRENCIES)})")
    return text


def _route(cur: str, bas: str, pairs: Collection[str]) -> tuple[str, ...] | None:
    """The pairs that convert ``cur`` into ``bas``: direct or inverse, else through one code.

    :func:`quantcore.fx.cross_rate` given exactly these pairs takes the same way.
    """

    def leg(a: str, b: str) -> str | None:
        return a + b if a + b in pairs else b + a if b + a in pairs else None

    direct = leg(cur, bas)
    if direct is not None:
        return (direct,)
    for middle in CURRENCIES:
        if middle in (cur, bas):
            continue
        first, second = leg(cur, middle), leg(middle, bas)
        if first is not None and second is not None:
            return first, second
    return None


def _as_days(dates: Sequence[dt.date] | pd.DatetimeIndex) -> pd.DatetimeIndex:
    """Dates as a naive (UTC) midnight index."""
    when = dates if isinstance(dates, pd.DatetimeIndex) else pd.DatetimeIndex(list(dates))
    if when.tz is not None:
        when = when.tz_convert("UTC").tz_localize(None)
    return when.normalize()
