"""Assets, price history and bulk prices (anonymous access)."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.service.conftest import MARKET_NOW, Api, shared_market


def _asset_id(api: Api, symbol: str) -> int:
    return int(api.client.get(f"/api/assets/?symbol={symbol}").json()["results"][0]["id"])


def test_list_fields_and_filters(api: Api) -> None:
    r = api.client.get("/api/assets/?limit=100")
    assert r.status_code == 200
    body = r.json()
    symbols = [a["symbol"] for a in body["results"]]
    assert body["count"] == len(shared_market().assets()) and symbols == sorted(symbols)
    spy = next(a for a in body["results"] if a["symbol"] == "SPY")
    quote = shared_market().quote("SPY")
    assert spy["current_price"] == f"{quote.price:.4f}"
    assert spy["price_change"] == f"{quote.change:.4f}"
    assert spy["price_change_percent"] == f"{quote.change_percent:.2f}"
    assert spy["volume"] == quote.volume and spy["data_source"] == "simulated"
    assert {"id", "name", "asset_type", "sector", "market_cap", "last_updated"} <= set(spy)
    assert {
        a["asset_type"] for a in api.client.get("/api/assets/?asset_type=crypto").json()["results"]
    } == {"crypto"}
    tech = api.client.get("/api/assets/?sector=technology&limit=100").json()["results"]
    assert tech and all(a["sector"] == "Technology" for a in tech)
    found = api.client.get("/api/assets/?search=apple").json()["results"]
    assert [a["symbol"] for a in found] == ["AAPL"]
    assert [a["symbol"] for a in api.client.get("/api/assets/?search=btc").json()["results"]] == [
        "BTC-USD"
    ]
    bad = api.client.get("/api/assets/?asset_type=reit")
    assert bad.status_code == 400 and bad.json()["details"] == {
        "field": "asset_type",
        "code": "invalid_choice",
    }


@pytest.mark.parametrize("text", ["%", "_", "%25", "a%l", "a_p", "/", "\\"])
def test_search_takes_wildcards_literally(api: Api, text: str) -> None:
    """``%`` and ``_`` (and the escape characters) match themselves, not any text."""
    r = api.client.get("/api/assets/", params={"search": text})
    assert r.status_code == 200, r.text
    assert r.json()["count"] == 0 and r.json()["results"] == []


def test_detail_and_price_history(api: Api) -> None:
    aid = _asset_id(api, "AAPL")
    assert api.client.get(f"/api/assets/{aid}/").json()["symbol"] == "AAPL"
    hist = api.client.get(f"/api/assets/{aid}/price-history/").json()
    assert hist["symbol"] == "AAPL" and len(hist["data"]) == 252  # default days
    last = hist["data"][-1]
    start = MARKET_NOW.date() - dt.timedelta(days=10)
    bars = shared_market().history("AAPL", start, MARKET_NOW.date())
    assert last["date"] == bars.index[-1].date().isoformat()
    assert last["close"] == f"{bars['close'].iloc[-1]:.4f}" and last["volume"] == int(
        bars["volume"].iloc[-1]
    )
    assert all(float(b["low"]) <= float(b["close"]) <= float(b["high"]) for b in hist["data"])
    hourly = api.client.get(f"/api/assets/{aid}/price-history/?days=2&interval=1h").json()["data"]
    days = {b["date"][:10] for b in hourly}
    assert len(days) == 2 and all(b["date"].endswith("Z") for b in hourly)
    five = api.client.get(f"/api/assets/{aid}/price-history/?days=1&interval=5m").json()["data"]
    assert len(five) > len([b for b in hourly if b["date"][:10] == max(days)])
    for query, field, code in [
        ("days=0", "days", "min_value"),
        ("days=61&interval=5m", "days", "max_value"),
        ("interval=1w", "interval", "invalid_choice"),
    ]:
        r = api.client.get(f"/api/assets/{aid}/price-history/?{query}")
        assert r.status_code == 400 and r.json()["details"] == {"field": field, "code": code}, query


def test_bulk_prices(api: Api) -> None:
    r = api.client.post("/api/assets/bulk-prices/", json={"symbols": ["SPY", "eth-usd"]})
    assert r.status_code == 200, r.text
    prices = r.json()["prices"]
    assert sorted(prices) == ["ETH-USD", "SPY"]
    assert prices["SPY"]["price"] == f"{shared_market().quote('SPY').price:.4f}"
    assert set(prices["SPY"]) == {"price", "change", "change_percent", "timestamp"}
    r = api.client.post("/api/assets/bulk-prices/", json={"symbols": ["SPY", "NOPE"]})
    assert r.status_code == 400
    assert r.json()["details"] == {"field": "symbols", "code": "not_found", "values": ["NOPE"]}
    r = api.client.post("/api/assets/bulk-prices/", json={"symbols": []})
    assert r.status_code == 400 and r.json()["details"] == {
        "field": "symbols",
        "code": "min_length",
    }
    r = api.client.post("/api/assets/bulk-prices/", json={})
    assert r.json()["details"] == {"field": "symbols", "code": "required"}


def test_imported_asset_prices_come_from_the_store(api: Api, tmp_path) -> None:
    """An ``import-prices`` asset unknown to the provider is quoted from its Parquet bars."""
    import uuid

    from service.assets.services import upsert_imported_asset
    from service.marketdata.importers import import_prices
    from service.marketdata.store import PriceStore

    symbol = f"IMP{uuid.uuid4().hex[:5].upper()}"
    path = tmp_path / f"{symbol}.csv"
    path.write_text(
        "Date,Open,High,Low,Close,Adj Close,Volume\n2024-01-02,10,11,9,10.5,10.5,1000\n"
        "2024-01-03,10.5,13,10,12.6,12.6,2000\n"
    )
    result = import_prices(path, sector="Imported", store=PriceStore(api.settings.prices_dir))
    api.call(upsert_imported_asset, api.db, result)
    a = api.client.get(f"/api/assets/?symbol={symbol}").json()["results"][0]
    assert (a["data_source"], a["sector"], a["current_price"], a["price_change"]) == (
        "import",
        "Imported",
        "12.6000",
        "2.1000",
    )
    assert a["price_change_percent"] == "20.00" and a["volume"] == 2000
    hist = api.client.get(f"/api/assets/{a['id']}/price-history/?days=5").json()["data"]
    assert hist == []  # the simulated "today" is 2026: no imported bars in the last 5 trading days


def test_demo_seed_is_idempotent(api: Api, tmp_path) -> None:
    from sqlalchemy import select

    from service.db.models import User
    from service.demo import DEMO_USER, seed_demo
    from tests.service.conftest import shared_market

    async def demo_users() -> int:
        async with api.db.read() as s:
            return len(
                list((await s.execute(select(User.id).where(User.username == DEMO_USER))).scalars())
            )

    if api.call(demo_users) == 0:
        user, token = api.call(seed_demo, api.db, shared_market(), tmp_path)
        assert user == DEMO_USER and (tmp_path / "demo-token.txt").read_text().strip() == token
        h = {"Authorization": f"Token {token}"}
        (p,) = api.client.get("/api/portfolios/", headers=h).json()["results"]
        assert p["position_count"] == 5 and float(p["total_value"]) > 0
    again = api.call(seed_demo, api.db, shared_market(), tmp_path)
    assert again is not None and again[0] == DEMO_USER
    assert api.call(demo_users) == 1
