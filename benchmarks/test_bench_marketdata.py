"""pytest-benchmark timings of the market-data calls the service makes per request."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from service.marketdata import PriceStore, SimulatedMarket, import_prices
from service.marketdata.universe import UNIVERSE

NOW = dt.datetime(2026, 11, 20, 18, 3, tzinfo=dt.UTC)
YEAR_AGO = NOW.date() - dt.timedelta(days=365)


@pytest.fixture(scope="module")
def market() -> SimulatedMarket:
    market = SimulatedMarket(clock=lambda: NOW)
    market.history("SPY", YEAR_AGO, NOW.date())  # simulate the daily panel once
    return market


def test_history_daily_one_year(benchmark: Any, market: SimulatedMarket) -> None:
    bars = benchmark(market.history, "AAPL", YEAR_AGO, NOW.date())
    assert len(bars) > 250


def test_history_5m_one_week(benchmark: Any, market: SimulatedMarket) -> None:
    start = NOW.date() - dt.timedelta(days=7)
    bars = benchmark(market.history, "MSFT", start, NOW.date(), "5m")
    assert len(bars) > 78


def test_tick_whole_universe(benchmark: Any, market: SimulatedMarket) -> None:
    symbols = [spec.symbol for spec in UNIVERSE]
    quotes = benchmark(market.tick, symbols, NOW)
    assert len(quotes) == len(symbols)


def test_quote_cached(benchmark: Any, market: SimulatedMarket) -> None:
    market.quote("SPY")
    assert benchmark(market.quote, "SPY").symbol == "SPY"


def test_store_read_month(benchmark: Any, market: SimulatedMarket, tmp_path: Path) -> None:
    store = PriceStore(tmp_path)
    store.write("SPY", market.history("SPY", YEAR_AGO, NOW.date()))
    bars = benchmark(store.read, "SPY", "1d", dt.date(2026, 6, 1), dt.date(2026, 6, 30))
    assert len(bars) == 22


def test_import_small_csv(benchmark: Any, market: SimulatedMarket, tmp_path: Path) -> None:
    bars = market.history("KO", YEAR_AGO, NOW.date())
    csv = tmp_path / "KO.csv"
    frame = bars.rename(columns=str.capitalize)
    frame.index = frame.index.strftime("%Y-%m-%d")
    frame.index.name = "Date"
    frame.to_csv(csv)
    store = PriceStore(tmp_path / "prices")
    result = benchmark(import_prices, csv, store=store)
    assert result.rows == len(bars)
