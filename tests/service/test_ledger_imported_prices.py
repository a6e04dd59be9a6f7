"""Real prices for a symbol of the universe (``import-prices`` onto an existing asset)."""

from __future__ import annotations

import datetime as dt

import pandas as pd

from service.assets.services import upsert_imported_asset
from service.cli import main
from service.marketdata.importers import import_prices
from service.marketdata.store import PriceStore
from tests.service.conftest import Api


def _csv(path, closes: list[float]) -> None:
    days = pd.bdate_range(end=dt.datetime.now(dt.UTC).date(), periods=len(closes))
    lines = ["Date,Open,High,Low,Close,Adj Close,Volume"]
    lines += [
        f"{d.date()},{c},{c + 1},{c - 1},{c},{c},{1000 + i}"
        for i, (d, c) in enumerate(zip(days, closes, strict=True))
    ]
    path.write_text("\n".join(lines) + "\n")


def _asset(api: Api, symbol: str) -> dict:
    (a,) = [r for r in api.client.get(f"/api/assets/?symbol={symbol}").json()["results"]
            if r["symbol"] == symbol]  # fmt: skip
    return a


def test_import_onto_a_universe_symbol_attaches_real_bars(api: Api, tmp_path) -> None:
    before = _asset(api, "AAPL")
    store = PriceStore(api.settings.prices_dir)
    path = tmp_path / "aapl.csv"
    closes = [100.0 + i for i in range(8)] + [150.0, 151.5]
    _csv(path, closes)
    result = import_prices(path, store=store)
    asset, created = api.call(upsert_imported_asset, api.db, result)
    assert not created and asset.id == before["id"]

    after = _asset(api, "AAPL")
    # name, type, sector and source are kept: search and allocation still know it
    for key in ("name", "asset_type", "sector", "data_source"):
        assert after[key] == before[key], key
    found = api.client.get("/api/assets/?search=apple").json()["results"]
    assert "AAPL" in [a["symbol"] for a in found]
    # the quote and the history are the imported bars, not the simulated series
    assert (after["current_price"], after["price_change"]) == ("151.5000", "1.5000")
    hist = api.client.get(f"/api/assets/{after['id']}/price-history/?days=10").json()["data"]
    assert [float(b["close"]) for b in hist] == closes
    # intraday of a daily-only asset: a 400 naming interval, not a 500
    r = api.client.get(f"/api/assets/{after['id']}/price-history/?days=5&interval=1h")
    assert r.status_code == 400, r.text
    assert r.json()["details"] == {"field": "interval", "code": "unavailable"}

    # re-importing the same file changes nothing
    again = import_prices(path, store=store)
    api.call(upsert_imported_asset, api.db, again)
    assert _asset(api, "AAPL") == after
    assert (
        api.client.get(f"/api/assets/{after['id']}/price-history/?days=10").json()["data"] == hist
    )
    # a bad file changes nothing either (the CLI validates before writing)
    bad = tmp_path / "bad.csv"
    bad.write_text("Date,Close\n2025-01-02,abc\n")
    assert main(["import-prices", str(bad), "--symbol", "AAPL"]) == 1
    assert (
        api.client.get(f"/api/assets/{after['id']}/price-history/?days=10").json()["data"] == hist
    )


def test_given_name_sector_and_type_replace_the_kept_ones(api: Api, tmp_path) -> None:
    # COP: a symbol no other test values (the database is shared by the session's modules,
    # and other modules' expected allocations read sectors of the usual symbols)
    store = PriceStore(api.settings.prices_dir)
    path = tmp_path / "cop.csv"
    _csv(path, [300.0, 301.0])
    result = import_prices(path, store=store, symbol="COP", name="Conoco (real)", sector="Oil")
    api.call(upsert_imported_asset, api.db, result)
    a = _asset(api, "COP")
    assert (a["name"], a["sector"], a["current_price"]) == ("Conoco (real)", "Oil", "301.0000")
