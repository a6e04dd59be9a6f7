"""Simulated FX pairs: deterministic, correlated, daily and intraday bars that agree."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from quantcore import fx
from service.marketdata import CURRENCIES, FX_PAIRS, SimulatedFX, SimulatedMarket, fx_pair

NOW = dt.datetime(2025, 6, 2, 12, 0, tzinfo=dt.UTC)  # a Monday, before the session opens


def _clock() -> dt.datetime:
    return NOW


@pytest.fixture(scope="module")
def closes() -> pd.DataFrame:
    market = SimulatedFX(clock=_clock)
    return pd.DataFrame(
        {p: market.history(p, dt.date(2015, 1, 1), dt.date(2025, 5, 30))["close"] for p in FX_PAIRS}
    )


def test_pairs_are_deterministic_and_start_at_their_2015_levels(closes: pd.DataFrame) -> None:
    again = SimulatedFX(clock=_clock).history("EURUSD", dt.date(2020, 1, 1), dt.date(2020, 3, 31))
    assert again["close"].equals(closes["EURUSD"].loc["2020-01-01":"2020-03-31"])
    other_seed = SimulatedFX(seed=7, clock=_clock).history("EURUSD", dt.date(2020, 1, 1), dt.date(2020, 3, 31))
    assert not np.allclose(other_seed["close"].to_numpy(), again["close"].to_numpy())
    assert closes.iloc[0].to_dict() == pytest.approx({"EURUSD": 1.2005, "GBPUSD": 1.527, "USDJPY": 120.5})
    # business days only
    assert set(pd.DatetimeIndex(closes.index).day_of_week) == {0, 1, 2, 3, 4}


def test_pairs_are_correlated_like_the_real_ones(closes: pd.DataFrame) -> None:
    r = closes.apply(np.log).diff().dropna()
    assert list(r.columns) == ["EURUSD", "GBPUSD", "USDJPY"]
    corr = r.corr().to_numpy()
    assert corr[0, 1] > 0.4
    assert corr[0, 2] < -0.3
    assert corr[1, 2] < -0.2
    vol = r.std().to_numpy() * np.sqrt(252)
    assert ((vol > 0.04) & (vol < 0.12)).all(), vol  # major pairs: 5-10 % a year


def test_the_dollar_factor_is_the_bond_market_s(closes: pd.DataFrame) -> None:
    # same seed, same Rates factor: a bond rally weakens the dollar
    tlt = SimulatedMarket(clock=_clock).history("TLT", dt.date(2015, 1, 1), dt.date(2025, 5, 30))["close"]
    both = pd.concat([tlt, closes["EURUSD"]], axis=1).dropna().to_numpy()
    r = np.diff(np.log(both), axis=0)
    assert np.corrcoef(r[:, 0], r[:, 1])[0, 1] > 0.2


@pytest.mark.parametrize("interval", ["1h", "5m"])
def test_intraday_bars_aggregate_to_the_daily_bar(interval: str) -> None:
    market = SimulatedFX(clock=_clock)
    day = dt.date(2025, 5, 30)
    daily = market.history("GBPUSD", day, day).iloc[0]
    bars = market.history("GBPUSD", day, day, interval)  # type: ignore[arg-type]
    assert len(bars) == (7 if interval == "1h" else 78)
    assert bars.index[0] == pd.Timestamp("2025-05-30 14:30", tz="UTC")
    assert bars["open"].iloc[0] == daily["open"] and bars["close"].iloc[-1] == daily["close"]
    assert bars["high"].max() == daily["high"] and bars["low"].min() == daily["low"]
    assert bars["volume"].sum() == daily["volume"]


def test_rates_as_of_dates_take_the_last_close() -> None:
    market = SimulatedFX(clock=_clock)
    friday = market.history("USDJPY", dt.date(2025, 5, 30), dt.date(2025, 5, 30))["close"].iloc[0]
    got = market.rates("USDJPY", [dt.date(2025, 5, 30), dt.date(2025, 5, 31), dt.date(2025, 6, 2)])
    # Saturday, and Monday before its session closes, still use Friday's close
    assert got.tolist() == [friday, friday, friday]
    assert np.isnan(market.rates("USDJPY", [dt.date(2014, 12, 31)]).iloc[0])
    assert market.rates("USDJPY", []).empty
    with pytest.raises(KeyError):
        market.rates("EURCHF", [dt.date(2025, 5, 30)])


def test_crosses_come_from_quantcore_fx(closes: pd.DataFrame) -> None:
    pairs = {p: closes[p] for p in FX_PAIRS}
    eurgbp = fx.cross_rate(pairs, "EUR", "GBP")
    np.testing.assert_allclose(eurgbp.to_numpy(), (closes["EURUSD"] / closes["GBPUSD"]).to_numpy(), rtol=1e-15)
    eurjpy = fx.cross_rate(pairs, "EUR", "JPY")
    np.testing.assert_allclose(eurjpy.to_numpy(), (closes["EURUSD"] * closes["USDJPY"]).to_numpy(), rtol=1e-15)


def test_pair_symbols_are_two_supported_codes() -> None:
    assert fx_pair("eurusd") == ("EUR", "USD") and fx_pair(" USDJPY ") == ("USD", "JPY")
    assert fx_pair("EURGBP") == ("EUR", "GBP")  # not simulated, still a pair
    for symbol in ("EURCHF", "USDUSD", "EURUS", "EURUSD1", "AAPL", "BTC-USD"):
        assert fx_pair(symbol) is None, symbol
    assert set(CURRENCIES) == {code for pair in FX_PAIRS for code in (pair[:3], pair[3:])}


def test_quote_before_the_session_is_the_last_close() -> None:
    market = SimulatedFX(clock=_clock)  # Monday 12:00 UTC, before the session opens
    bars = market.history("EURUSD", dt.date(2025, 5, 28), dt.date(2025, 5, 30))["close"]
    quote = market.quote("eurusd")
    assert (quote.price, quote.timestamp) == (bars.iloc[-1], NOW)
    assert market.previous_close("EURUSD", quote.timestamp) == bars.iloc[-2]
    with pytest.raises(KeyError):
        market.quote("EURCHF")
