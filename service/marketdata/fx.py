"""Simulated FX pairs: correlated daily and intraday bars for EURUSD, GBPUSD and USDJPY.

The pairs come from the same factor model and the same seed as the simulated
universe (:mod:`service.marketdata._daily`), so they move with it: besides a
small market beta, each pair loads on the ``Rates`` group factor, the one the
bond ETFs load on. A rally in bonds (lower US yields) weakens the dollar:
EURUSD and GBPUSD load positively, USDJPY negatively. EURUSD and GBPUSD are
therefore positively correlated with each other and negatively with USDJPY,
as the real pairs are.

A pair's price is the quote currency per unit of the base currency (EURUSD
1.08: one euro costs 1.08 dollars). Bars are served on business days, in the
equity session of the simulation (14:30-21:00 UTC for 5m and 1h bars), so every
equity bar has a rate; a weekend or holiday date takes the last completed
daily close before it (:meth:`SimulatedFX.rates`). ``volume`` is an activity
index, not a traded amount. Other pairs are crosses of these
(:func:`quantcore.fx.cross_rate`); :data:`CURRENCIES` are the codes they connect,
the ones the service supports.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from service.marketdata.provider import Interval, Quote
from service.marketdata.simulated import DEFAULT_SEED, SimulatedMarket, utc_now
from service.marketdata.universe import AssetSpec

__all__ = ["CURRENCIES", "FX_PAIRS", "FX_UNIVERSE", "SimulatedFX", "closes_as_of", "fx_pair"]


def _pair(symbol: str, name: str, beta: float, loading: float, idio: float, price0: float) -> AssetSpec:
    # no drift: a currency pair has no expected return to speak of
    return AssetSpec(symbol, name, "stock", "FX", "Rates", beta, loading, idio, 0.0, price0, 0.0, 1e6)


FX_UNIVERSE: tuple[AssetSpec, ...] = (
    # symbol, name, market beta, loading on Rates, idio vol, rate on 2015-01-02
    _pair("EURUSD", "Euro / US Dollar", 0.05, 0.60, 0.040, 1.2005),
    _pair("GBPUSD", "British Pound / US Dollar", 0.08, 0.55, 0.050, 1.5270),
    _pair("USDJPY", "US Dollar / Japanese Yen", 0.10, -0.55, 0.060, 120.50),
)
FX_PAIRS: tuple[str, ...] = tuple(spec.symbol for spec in FX_UNIVERSE)

#: The ISO 4217 codes the service supports: USD and the other side of each pair.
CURRENCIES: tuple[str, ...] = ("USD", "EUR", "GBP", "JPY")


def fx_pair(symbol: str) -> tuple[str, str] | None:
    """``("EUR", "USD")`` for ``"eurusd"``: the two codes of a pair symbol, else ``None``.

    A pair symbol is two different supported codes (:data:`CURRENCIES`), six letters.
    """
    text = symbol.strip().upper()
    first, second = text[:3], text[3:]
    if len(text) == 6 and first != second and first in CURRENCIES and second in CURRENCIES:
        return first, second
    return None


class SimulatedFX:
    """Deterministic FX rates consistent with :class:`SimulatedMarket` of the same seed.

    Args:
        seed: The market's seed (the same seed gives the same rates everywhere).
        clock: The current time (timezone-aware UTC); bars not completed then are not served.
        pairs: The pairs to simulate (default :data:`FX_UNIVERSE`).
    """

    def __init__(
        self,
        *,
        seed: int = DEFAULT_SEED,
        clock: Callable[[], dt.datetime] = utc_now,
        pairs: Sequence[AssetSpec] = FX_UNIVERSE,
    ) -> None:
        self._market = SimulatedMarket(seed=seed, clock=clock, universe=pairs)
        self.pairs = tuple(spec.symbol for spec in pairs)

    def history(self, pair: str, start: dt.date, end: dt.date, interval: Interval = "1d") -> pd.DataFrame:
        """Bars of ``pair`` (``open, high, low, close, volume``, tz-aware UTC index).

        Raises:
            KeyError: Unknown pair.
            ValueError: Unknown interval, or ``start`` after ``end``.
        """
        return self._market.history(pair, start, end, interval)

    def quote(self, pair: str) -> Quote:
        """The live rate of ``pair``: it moves inside the session as asset quotes do.

        Cached like :meth:`SimulatedMarket.quote` (a tick under 5 minutes old is reused).

        Raises:
            KeyError: Unknown pair.
        """
        return self._market.quote(pair)

    def previous_close(self, pair: str, at: dt.datetime) -> float:
        """The daily close a quote of ``pair`` at ``at`` changes from (the session before).

        Raises:
            KeyError: Unknown pair.
        """
        return self._market.previous_close(pair, at)

    def rates(self, pair: str, dates: Sequence[dt.date] | pd.DatetimeIndex) -> pd.Series:
        """Daily close of ``pair`` as of each date (the last close on or before it; NaN before the first).

        Raises:
            KeyError: Unknown pair.
        """
        when = pd.DatetimeIndex(pd.to_datetime(list(dates))).normalize()
        if len(when) == 0:
            return pd.Series([], dtype=np.float64, name=pair.upper())
        first = when.min().date() - dt.timedelta(days=10)  # a weekend or holiday looks back
        bars = self.history(pair, first, when.max().date())
        return pd.Series(closes_as_of(bars["close"], when), index=when, name=pair.upper())


def closes_as_of(closes: pd.Series, when: pd.DatetimeIndex) -> NDArray[np.float64]:
    """The last of ``closes`` (a UTC-stamped daily series) on or before each naive day of
    ``when``; NaN before the first."""
    stamps = pd.DatetimeIndex(closes.index).tz_convert("UTC").tz_localize(None).normalize()
    pos = np.searchsorted(stamps.as_unit("us").to_numpy(), when.as_unit("us").to_numpy(), "right") - 1
    known = closes.to_numpy(dtype=np.float64)
    out = np.full(len(when), np.nan)
    out[pos >= 0] = known[pos[pos >= 0]]
    return out
