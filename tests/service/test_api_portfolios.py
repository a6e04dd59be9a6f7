"""Portfolios and positions over HTTP: fields, valuation from current prices, ordering, pagination."""

from __future__ import annotations

from decimal import Decimal

from tests.service.conftest import Api, fixed_market

ISO = "2025-01-02"


def _portfolio(api: Api, headers: dict[str, str], name: str = "P", **extra: object) -> dict:
    r = api.client.post("/api/portfolios/", json={"name": name, **extra}, headers=headers)
    assert r.status_code == 201, r.text
    return r.json()


def _buy(
    api: Api, headers: dict[str, str], pid: int, symbol: str, qty: str, price: str, fees: str = "0"
) -> dict:
    body = {
        "asset_symbol": symbol,
        "quantity": qty,
        "purchase_price": price,
        "purchase_date": ISO,
        "fees": fees,
    }
    r = api.client.post(f"/api/portfolios/{pid}/positions/", json=body, headers=headers)
    assert r.status_code == 201, r.text
    return r.json()


def test_create_returns_documented_fields(api: Api) -> None:
    _, h = api.user()
    p = _portfolio(api, h, "Retirement", description="long term", benchmark_symbol="qqq")
    assert set(p) >= {
        "id",
        "name",
        "description",
        "total_value",
        "daily_change",
        "daily_change_percent",
        "position_count",
        "created_at",
        "updated_at",
    }
    assert (p["name"], p["description"], p["benchmark_symbol"]) == (
        "Retirement",
        "long term",
        "QQQ",
    )
    assert (p["total_value"], p["daily_change"], p["position_count"]) == ("0.00", "0.00", 0)
    assert p["created_at"].endswith("Z")


def test_valuation_matches_quotes(api: Api) -> None:
    """total_value, daily_change(_percent) and position marks equal a plain-Python twin on the quotes."""
    _, h = api.user()
    pid = _portfolio(api, h)["id"]
    holdings = {"SPY": ("3", "400.10"), "AAPL": ("12.5", "30"), "BTC-USD": ("0.12345678", "25000")}
    # a deposit of exactly what the buys cost: cash ends at 0, the total is the positions'
    paid = sum(Decimal(q) * Decimal(px) + Decimal("1.25") for q, px in holdings.values())
    r = api.client.post(
        "/api/transactions/",
        json={"portfolio": pid, "transaction_type": "deposit", "price": str(paid),
              "transaction_date": "2020-01-02"},
        headers=h,
    )  # fmt: skip
    assert r.status_code == 201, r.text
    for sym, (q, px) in holdings.items():
        _buy(api, h, pid, sym, q, px, fees="1.25")
    market = fixed_market()
    total = change = 0.0
    positions = {
        p["asset"]["symbol"]: p
        for p in api.client.get(f"/api/portfolios/{pid}/positions/", headers=h).json()["results"]
    }
    assert sorted(positions) == sorted(holdings)
    for sym, (q, px) in holdings.items():
        quote = market.quote(sym)
        qty, cost = float(q), float(Decimal(q) * Decimal(px) + Decimal("1.25"))
        value = qty * quote.price
        total += value
        change += qty * quote.change
        pos = positions[sym]
        assert pos["quantity"] == f"{Decimal(q):.8f}"
        assert pos["asset"]["current_price"] == f"{quote.price:.4f}"
        assert pos["current_value"] == f"{value:.2f}"
        assert pos["unrealized_gain_loss"] == f"{value - cost:.2f}"
        assert pos["unrealized_gain_loss_percent"] == f"{(value - cost) / cost * 100:.2f}"
        assert Decimal(pos["average_cost"]) == (Decimal(str(cost)) / Decimal(q)).quantize(
            Decimal("0.0001")
        )
    p = api.client.get(f"/api/portfolios/{pid}/", headers=h).json()
    assert p["position_count"] == 3
    assert p["cash_balance"] == "0.00"
    assert p["total_value"] == f"{total:.2f}"
    assert p["daily_change"] == f"{change:.2f}"
    assert p["daily_change_percent"] == f"{change / (total - change) * 100:.2f}"


def test_ordering_and_active_only(api: Api) -> None:
    _, h = api.user()
    a = _portfolio(api, h, "b-small")
    b = _portfolio(api, h, "a-big")
    c = _portfolio(api, h, "c-inactive", is_active=False)
    _buy(api, h, b["id"], "SPY", "10", "100")
    _buy(api, h, a["id"], "SPY", "1", "100")

    def names(query: str) -> list[str]:
        r = api.client.get(f"/api/portfolios/?{query}", headers=h)
        assert r.status_code == 200, r.text
        return [x["name"] for x in r.json()["results"]]

    assert names("ordering=name") == ["a-big", "b-small", "c-inactive"]
    assert names("") == ["c-inactive", "a-big", "b-small"]  # default -created_at
    assert names("ordering=-total_value") == ["a-big", "b-small", "c-inactive"]
    assert names("ordering=total_value") == ["c-inactive", "b-small", "a-big"]
    assert names("active_only=true&ordering=name") == ["a-big", "b-small"]
    assert c["is_active"] is False
    r = api.client.get("/api/portfolios/?ordering=size", headers=h)
    assert r.status_code == 400
    assert r.json()["details"] == {"field": "ordering", "code": "invalid_choice"}


def test_pagination_absolute_urls(api: Api) -> None:
    _, h = api.user()
    for i in range(25):
        _portfolio(api, h, f"p{i:02d}")
    first = api.client.get("/api/portfolios/?ordering=name", headers=h).json()
    assert (first["count"], len(first["results"]), first["previous"]) == (25, 20, None)
    assert (
        first["next"] == "http://testserver.local/api/portfolios/?ordering=name&limit=20&offset=20"
    )
    second = api.client.get(first["next"], headers=h).json()
    assert [x["name"] for x in second["results"]] == [f"p{i}" for i in range(20, 25)]
    assert second["next"] is None
    assert (
        second["previous"]
        == "http://testserver.local/api/portfolios/?ordering=name&limit=20&offset=0"
    )
    page = api.client.get("/api/portfolios/?ordering=name&limit=10&page=3", headers=h).json()
    assert [x["name"] for x in page["results"]] == [f"p{i}" for i in range(20, 25)]
    for query, field, code in [
        ("limit=101", "limit", "max_value"),
        ("limit=0", "limit", "min_value"),
        ("offset=-1", "offset", "min_value"),
        ("page=0", "page", "min_value"),
        ("page=2&offset=3", "page", "invalid"),
    ]:
        r = api.client.get(f"/api/portfolios/?{query}", headers=h)
        assert r.status_code == 400, query
        assert r.json()["details"] == {"field": field, "code": code}, query


def test_update_and_delete_cascade(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h, "old")["id"]
    _buy(api, h, pid, "SPY", "1", "100")
    r = api.client.put(
        f"/api/portfolios/{pid}/", json={"name": "new", "is_active": False}, headers=h
    )
    assert r.status_code == 200, r.text
    assert (r.json()["name"], r.json()["is_active"], r.json()["position_count"]) == (
        "new",
        False,
        1,
    )
    assert api.client.put(f"/api/portfolios/{pid}/", json={"description": "x"}, headers=h).json()[
        "details"
    ] == {
        "field": "name",
        "code": "required",
    }
    assert api.client.delete(f"/api/portfolios/{pid}/", headers=h).status_code == 204
    assert api.client.get(f"/api/portfolios/{pid}/", headers=h).status_code == 404
    assert api.client.get(f"/api/transactions/?portfolio_id={pid}", headers=h).json()["count"] == 0


def test_add_position_validation(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)["id"]
    cases = [
        ({"asset_symbol": "NOPE"}, "asset_symbol", "not_found"),
        ({"quantity": "0"}, "quantity", "min_value"),
        ({"quantity": "1.123456789"}, "quantity", "max_decimal_places"),
        ({"quantity": "abc"}, "quantity", "invalid"),
        ({"purchase_price": "-1"}, "purchase_price", "min_value"),
        ({"purchase_date": "2025-13-01"}, "purchase_date", "invalid"),
        ({"purchase_date": "2999-01-01"}, "purchase_date", "max_value"),
        ({"color": "red"}, "color", "unknown_field"),
    ]
    base = {"asset_symbol": "SPY", "quantity": "1", "purchase_price": "10", "purchase_date": ISO}
    for change, field, code in cases:
        r = api.client.post(f"/api/portfolios/{pid}/positions/", json={**base, **change}, headers=h)
        assert r.status_code == 400, (change, r.text)
        body = r.json()
        assert body["error"] == "validation_error"
        assert body["details"]["field"] == field and body["details"]["code"] == code, (change, body)
    assert api.client.get(f"/api/portfolios/{pid}/positions/", headers=h).json()["count"] == 0
