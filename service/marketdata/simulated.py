"""The default market-data provider: a deterministic simulated universe.

``SimulatedMarket`` serves the 47 assets of :mod:`service.marketdata.universe`:
daily bars from a factor model (:mod:`._daily`), 5-minute and hourly bars that
aggregate exactly to them (:mod:`._intraday`), and live quotes. Everything is a
function of the seed and the time: two instances with the same seed give the same
bars and the same quotes on every machine, and bars never change when "today"
advances (only completed bars are served).

Live prices: the price at time ``now`` lies on the simulated 5-minute path:
inside the current bar it is a Brownian-bridge draw between the bar's open and
close (seeded by symbol and ``now``, clipped to the bar's range), so every
:meth:`SimulatedMarket.tick` moves it a little while the price still meets the
bar's close at the bar's end. Outside trading hours (equities: nights and
weekends) the price stays at the last close.
"""

from __future__ import annotations

import datetime as dt
import math
import threading
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from service.caching import TTLCache
from service.marketdata._daily import DailyBars, simulate_daily
from service.marketdata._intraday import (
    BAR_MINUTES,
    IntradayBars,
    aggregate_hourly,
    five_minute_bars,
    session_bounds,
)
from service.marketdata._random import normals
from service.marketdata.provider import AssetInfo, Interval, Quote
from service.marketdata.universe import START_DATE, UNIVERSE, AssetSpec

__all__ = ["DEFAULT_SEED", "INTERVALS", "QUOTE_TTL", "SimulatedMarket", "empty_bars", "utc_now"]

DEFAULT_SEED = 42  # chosen for a plausible demo: SPY about 2.6x from 2015 to 2026, a 34 % crash
INTERVALS: tuple[Interval, ...] = ("1d", "1h", "5m")
_MINUTE_US = 60_000_000
_DAY_US = 1440 * _MINUTE_US
_EPOCH_DAY = (START_DATE - dt.date(1970, 1, 1)).days
_COLUMNS = ["open", "high", "low", "close", "volume"]
#: A held quote is served while younger than this (one 5-minute bar), then ticked again.
QUOTE_TTL = dt.timedelta(minutes=BAR_MINUTES)
_SESSIONS_KEPT = 512  # intraday sessions (symbol, day) kept for live quotes


def utc_now() -> dt.datetime:
    """The current time, timezone-aware UTC (the default clock)."""
    return dt.datetime.now(dt.UTC)


def empty_bars() -> pd.DataFrame:
    """A bar frame with no rows and the provider's columns and index type."""
    frame = pd.DataFrame(
        {name: np.empty(0, dtype=np.int64 if name == "volume" else np.float64) for name in _COLUMNS}
    )
    frame.index = pd.DatetimeIndex([], tz="UTC", name="timestamp")
    return frame


class SimulatedMarket:
    """Deterministic simulated market data (implements ``MarketDataProvider``).

    Args:
        seed: Fixes every price; the same seed gives the same market everywhere.
        clock: Returns the current time (timezone-aware UTC); bars that have not
            completed at that time are not served. Tests inject a fixed clock.
        universe: The assets to simulate.

    Example:
        >>> market = SimulatedMarket(clock=lambda: dt.datetime(2024, 1, 6, tzinfo=dt.UTC))
        >>> bars = market.history("SPY", dt.date(2024, 1, 2), dt.date(2024, 1, 5))
        >>> list(bars.columns), len(bars)
        (['open', 'high', 'low', 'close', 'volume'], 4)
    """

    def __init__(
        self,
        *,
        seed: int = DEFAULT_SEED,
        clock: Callable[[], dt.datetime] = utc_now,
        universe: Sequence[AssetSpec] = UNIVERSE,
    ) -> None:
        self.seed = int(seed)
        self._clock = clock
        self._specs = {spec.symbol: spec for spec in universe}
        self._universe = tuple(universe)
        self._lock = threading.Lock()
        self._daily: dict[str, DailyBars] = {}
        self._horizon = 0  # day numbers 0 .. _horizon - 1 are simulated
        # live quotes' intraday bars; invalidation: none needed (a simulated day never
        # changes for a seed), least recently used sessions are evicted
        self._sessions: TTLCache[tuple[str, int], IntradayBars] = TTLCache(_SESSIONS_KEPT)
        self._live: dict[str, Quote] = {}

    @property
    def clock(self) -> Callable[[], dt.datetime]:
        """The market's clock (the FX rates of the same market share it)."""
        return self._clock

    # -- static data -------------------------------------------------------------------

    def spec(self, symbol: str) -> AssetSpec:
        """The model parameters of ``symbol`` (case-insensitive); unknown: ``KeyError``."""
        try:
            return self._specs[symbol.strip().upper()]
        except KeyError:
            raise KeyError(f"unknown symbol {symbol!r}") from None

    def assets(self) -> list[AssetInfo]:
        """Every asset; ``market_cap`` is units outstanding times the latest close."""
        now = self._now()
        return [self._info(spec, now) for spec in self._universe]

    def asset(self, symbol: str) -> AssetInfo:
        """One asset (see :meth:`assets`); unknown symbol: ``KeyError``."""
        return self._info(self.spec(symbol), self._now())

    # -- bars --------------------------------------------------------------------------

    def history(
        self, symbol: str, start: dt.date, end: dt.date, interval: Interval = "1d"
    ) -> pd.DataFrame:
        """Completed bars from ``start`` to ``end`` inclusive (UTC dates).

        Daily bars are indexed at midnight UTC and served once the session has
        closed; intraday bars are indexed by their start and served once they end
        (so today's 5m/1h bars appear as the session goes on). Nothing before the
        simulation's start date (2015-01-02) exists.

        Raises:
            KeyError: Unknown symbol.
            ValueError: Unknown ``interval`` or ``start`` after ``end``.
        """
        spec = self.spec(symbol)
        if interval not in INTERVALS:
            raise ValueError(f"interval must be one of {', '.join(INTERVALS)}, got {interval!r}")
        first, last = _as_date(start, "start"), _as_date(end, "end")
        if first > last:
            raise ValueError(f"start ({first}) is after end ({last})")
        now = self._now()
        d0 = max((first - START_DATE).days, 0)
        d1 = min((last - START_DATE).days, (now.date() - START_DATE).days)
        if d1 < d0:
            return empty_bars()
        bars = self._bars(spec, d1 + 1)
        lo, hi = np.searchsorted(bars.days, [d0, d1 + 1])
        days = bars.days[lo:hi]
        now_us = _to_us(now)
        if interval == "1d":
            _, close_min = session_bounds(spec)
            keep = _day_us(days) + close_min * _MINUTE_US <= now_us
            return _frame(
                _day_us(days)[keep],
                bars.open[lo:hi][keep],
                bars.high[lo:hi][keep],
                bars.low[lo:hi][keep],
                bars.close[lo:hi][keep],
                bars.volume[lo:hi][keep],
            )
        intraday = five_minute_bars(
            self.seed,
            spec,
            days,
            (bars.open[lo:hi], bars.high[lo:hi], bars.low[lo:hi], bars.close[lo:hi]),
            bars.volume[lo:hi],
        )
        if interval == "1h":
            intraday = aggregate_hourly(intraday)
        starts = _day_us(days)[:, None] + intraday.offsets[None, :] * _MINUTE_US
        keep = (starts + intraday.minutes[None, :] * _MINUTE_US <= now_us).ravel()
        return _frame(
            starts.ravel()[keep],
            intraday.open.ravel()[keep],
            intraday.high.ravel()[keep],
            intraday.low.ravel()[keep],
            intraday.close.ravel()[keep],
            intraday.volume.ravel()[keep],
        )

    # -- live quotes -------------------------------------------------------------------

    def quote(self, symbol: str) -> Quote:
        """The latest quote: the last tick unless it is 5 minutes or more old, else a fresh tick."""
        spec = self.spec(symbol)
        now = self._now()
        with self._lock:
            last = self._live.get(spec.symbol)
        if last is not None and now - last.timestamp < QUOTE_TTL:
            return last
        return self.tick([spec.symbol], now)[0]

    def quotes(self, symbols: Iterable[str]) -> dict[str, Quote]:
        """:meth:`quote` for many symbols at once (one clock read, one lock); unknown ones left out."""
        now = self._now()
        fresh = QUOTE_TTL
        out: dict[str, Quote] = {}
        stale: list[str] = []
        with self._lock:
            for symbol in symbols:
                spec = self._specs.get(symbol.strip().upper())
                if spec is None:
                    continue
                last = self._live.get(spec.symbol)
                if last is not None and now - last.timestamp < fresh:
                    out[symbol] = last
                else:
                    stale.append(symbol)
        if stale:
            out.update(zip(stale, self.tick(stale, now), strict=True))
        return out

    def tick(self, symbols: Iterable[str], now: dt.datetime) -> list[Quote]:
        """Advance the live price of ``symbols`` to ``now`` and return their quotes.

        The quote is remembered (thread-safe) unless a later one is already held.

        Raises:
            KeyError: An unknown symbol (nothing is updated).
            ValueError: ``now`` is not timezone-aware.
        """
        if now.tzinfo is None or now.utcoffset() is None:
            raise ValueError("now must be a timezone-aware datetime")
        now = now.astimezone(dt.UTC)
        if isinstance(symbols, str):
            symbols = [symbols]
        specs = [self.spec(symbol) for symbol in symbols]
        quotes = [self._price_at(spec, now) for spec in specs]
        with self._lock:
            for quote in quotes:
                held = self._live.get(quote.symbol)
                if held is None or held.timestamp <= quote.timestamp:
                    self._live[quote.symbol] = quote
        return quotes

    def previous_close(self, symbol: str, at: dt.datetime) -> float:
        """The close before the session current at ``at`` (what a quote at ``at`` changes from).

        Raises:
            KeyError: Unknown symbol.
            ValueError: ``at`` is not timezone-aware.
        """
        if at.tzinfo is None or at.utcoffset() is None:
            raise ValueError("at must be a timezone-aware datetime")
        spec = self.spec(symbol)
        at = at.astimezone(dt.UTC)
        if at.date() < START_DATE:
            return spec.price0
        return self._session_state(spec, at)[1]

    # -- internals ---------------------------------------------------------------------

    def _now(self) -> dt.datetime:
        now = self._clock()
        if now.tzinfo is None:
            raise ValueError("the market clock must return a timezone-aware datetime")
        return now.astimezone(dt.UTC)

    def _bars(self, spec: AssetSpec, n_days: int) -> DailyBars:
        """Daily bars of ``spec`` covering at least day numbers ``0 .. n_days - 1``."""
        with self._lock:
            if n_days > self._horizon:
                # Simulate to the end of the year after: one pass serves a long time.
                year_end = dt.date((START_DATE + dt.timedelta(days=n_days)).year + 1, 12, 31)
                horizon = (year_end - START_DATE).days + 1
                self._daily = simulate_daily(self.seed, self._universe, horizon)
                self._horizon = horizon
            return self._daily[spec.symbol]

    def _info(self, spec: AssetSpec, now: dt.datetime) -> AssetInfo:
        price = self._session_state(spec, now)[0] if now.date() >= START_DATE else spec.price0
        return AssetInfo(
            symbol=spec.symbol,
            name=spec.name,
            asset_type=spec.asset_type,
            sector=spec.sector,
            market_cap=float(spec.shares * price),
            data_source="simulated",
            currency=spec.currency,
        )

    def _session(self, spec: AssetSpec, day: int) -> IntradayBars:
        """Five-minute bars of one trading day (small LRU cache for live quotes)."""
        key = (spec.symbol, day)
        cached = self._sessions.get(key)
        if cached is not None:
            return cached
        bars = self._bars(spec, day + 1)
        i = int(np.searchsorted(bars.days, day))
        sl = slice(i, i + 1)
        session = five_minute_bars(
            self.seed,
            spec,
            bars.days[sl],
            (bars.open[sl], bars.high[sl], bars.low[sl], bars.close[sl]),
            bars.volume[sl],
        )
        self._sessions.put(key, session)
        return session

    def _session_state(self, spec: AssetSpec, now: dt.datetime) -> tuple[float, float, int]:
        """Price, previous close and session volume at ``now`` (before any live noise)."""
        now_us = _to_us(now)
        open_min, close_min = session_bounds(spec)
        today = max((now.date() - START_DATE).days, 0)
        bars = self._bars(spec, today + 1)
        # The current session: the last trading day whose session has opened.
        i = int(np.searchsorted(bars.days, today, side="right")) - 1
        if int(_day_us(bars.days[i])) + open_min * _MINUTE_US > now_us and i > 0:
            i -= 1
        prev_close = float(bars.close[i - 1]) if i > 0 else float(bars.open[0])
        day = int(bars.days[i])
        elapsed = (now_us - int(_day_us(day))) / _MINUTE_US - open_min
        if elapsed >= close_min - open_min or elapsed < 0:
            return float(bars.close[i]), prev_close, int(bars.volume[i])
        session = self._session(spec, day)
        k = int(elapsed // BAR_MINUTES)
        f = (elapsed - k * BAR_MINUTES) / BAR_MINUTES
        o, c = float(session.open[0, k]), float(session.close[0, k])
        hi, lo = float(session.high[0, k]), float(session.low[0, k])
        z = float(normals(self.seed, spec.symbol, 2, np.array([now_us]), 1)[0, 0])
        spread = 0.5 * (math.log(hi) - math.log(lo)) * math.sqrt(f * (1.0 - f))
        price = min(max((o + (c - o) * f) * math.exp(spread * z), lo), hi)
        volume = int(session.volume[0, :k].sum()) + round(f * int(session.volume[0, k]))
        return price, prev_close, volume

    def _price_at(self, spec: AssetSpec, now: dt.datetime) -> Quote:
        price, prev_close, volume = self._session_state(spec, now)
        change = price - prev_close
        return Quote(
            symbol=spec.symbol,
            price=float(price),
            change=float(change),
            change_percent=float(100.0 * change / prev_close),
            volume=int(volume),
            timestamp=now,
        )


def _as_date(value: dt.date, name: str) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).date() if value.tzinfo else value.date()
    if isinstance(value, dt.date):
        return value
    raise ValueError(f"{name} must be a date, got {type(value).__name__}")


def _to_us(moment: dt.datetime) -> int:
    delta = moment - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _day_us(days: NDArray[np.int64] | int) -> NDArray[np.int64]:
    return (np.asarray(days, dtype=np.int64) + _EPOCH_DAY) * _DAY_US


def _frame(
    stamps_us: NDArray[np.int64],
    open_: NDArray[np.float64],
    high: NDArray[np.float64],
    low: NDArray[np.float64],
    close: NDArray[np.float64],
    volume: NDArray[np.int64],
) -> pd.DataFrame:
    index = pd.DatetimeIndex(stamps_us.astype("datetime64[us]"), name="timestamp").tz_localize(
        "UTC"
    )
    return pd.DataFrame(
        {"open": open_, "high": high, "low": low, "close": close, "volume": volume},
        index=index,
    )
