"""The live feed follows imported prices: an imported symbol never ticks a simulated price."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from service.assets.market import MarketData
from service.assets.services import upsert_imported_asset
from service.marketdata.importers import import_prices
from service.marketdata.store import PriceStore
from service.realtime.feed import tick
from tests.service.conftest import MARKET_NOW, Api, fixed_market


def _csv(path: Path, closes: list[float], end: dt.date) -> None:
    days = pd.bdate_range(end=end, periods=len(closes))
    lines = ["Date,Open,High,Low,Close,Adj Close,Volume"]
    lines += [
        f"{d.date()},{c},{c + 1},{c - 1},{c},{c},{1000 + i}"
        for i, (d, c) in enumerate(zip(days, closes, strict=True))
    ]
    path.write_text("\n".join(lines) + "\n")


def test_tick_quotes_imported_symbols_from_their_last_bar(tmp_path: Path) -> None:
    provider = fixed_market()
    store = PriceStore(tmp_path / "prices")
    market = MarketData(provider, store)
    path = tmp_path / "aapl.csv"
    _csv(path, [100.0, 101.0, 99.5], MARKET_NOW.date())
    import_prices(path, store=store)
    simulated = provider.quote("AAPL").price
    assert simulated != 99.5

    for minutes in (0, 5, 10):  # three ticks: the imported quote never moves
        now = MARKET_NOW + dt.timedelta(minutes=minutes)
        quotes = {q.symbol: q for q in tick(market, ["AAPL", "MSFT"], now)}
        assert set(quotes) == {"AAPL", "MSFT"}
        aapl = quotes["AAPL"]
        assert (aapl.price, aapl.change, aapl.volume) == (99.5, -1.5, 1002)
        assert aapl.timestamp.date() == MARKET_NOW.date()
        assert quotes["MSFT"].timestamp == now  # the others still tick
    # the provider was never asked to tick the imported symbol
    assert provider.quote("AAPL").price == simulated


def test_quotes_follow_the_imported_series(tmp_path: Path) -> None:
    store = PriceStore(tmp_path / "prices")
    market = MarketData(fixed_market(), store)
    path = tmp_path / "aapl.csv"
    _csv(path, [100.0, 101.0], MARKET_NOW.date() - dt.timedelta(days=7))
    import_prices(path, store=store)
    (first,) = tick(market, ["AAPL"], MARKET_NOW)
    assert first.price == 101.0
    # newer bars arrive: the next tick quotes the new last bar
    _csv(path, [100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 110.0], MARKET_NOW.date())
    import_prices(path, store=store)
    (second,) = tick(market, ["AAPL"], MARKET_NOW + dt.timedelta(minutes=1))
    assert (second.price, second.change) == (110.0, 5.0)


def test_only_imported_symbols_need_no_provider(tmp_path: Path) -> None:
    class NoTicks:
        def tick(self, symbols: list[str], now: dt.datetime) -> list[object]:
            raise AssertionError(f"ticked {symbols}")

        def quote(self, symbol: str) -> object:
            raise KeyError(symbol)

    store = PriceStore(tmp_path / "prices")
    market = MarketData(NoTicks(), store)  # type: ignore[arg-type]
    path = tmp_path / "zzz.csv"
    _csv(path, [5.0, 6.0], MARKET_NOW.date())
    import_prices(path, store=store, symbol="ZZZ")
    assert [q.price for q in tick(market, ["ZZZ"], MARKET_NOW)] == [6.0]


def test_force_price_update_publishes_the_imported_close(
    api_factory: Callable[..., Api], tmp_path: Path
) -> None:
    # its own market: ticking MSFT in the shared one would move the quotes other modules expect
    api = api_factory(provider=fixed_market())
    _, headers = api.user("feed")
    store = PriceStore(api.settings.prices_dir)
    path = tmp_path / "nvda.csv"
    _csv(path, [400.0, 410.0, 404.25], MARKET_NOW.date())
    api.call(upsert_imported_asset, api.db, import_prices(path, store=store, symbol="NVDA"))
    for _ in range(2):
        r = api.client.post(
            "/api/realtime/force_price_update/",
            json={"symbols": ["NVDA", "MSFT"]},
            headers=headers,
        )
        assert r.status_code == 200, r.text
        got = {u["symbol"]: u for u in r.json()["updated"]}
        assert (got["NVDA"]["price"], got["NVDA"]["change"]) == ("404.2500", "-5.7500")
        assert "MSFT" in got
    (asset,) = [
        a
        for a in api.client.get("/api/assets/?symbol=NVDA").json()["results"]
        if a["symbol"] == "NVDA"
    ]
    assert asset["current_price"] == "404.2500"
