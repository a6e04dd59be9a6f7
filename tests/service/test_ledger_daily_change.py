"""Daily change counts only what was held at the previous close (SQLite and PostgreSQL)."""

from __future__ import annotations

from decimal import Decimal

from tests.service.conftest import MARKET_NOW, Api


def _quote(api: Api, symbol: str) -> tuple[Decimal, Decimal]:
    (a,) = [r for r in api.client.get(f"/api/assets/?symbol={symbol}").json()["results"]
            if r["symbol"] == symbol]  # fmt: skip
    return Decimal(a["current_price"]), Decimal(a["price_change"])


def _buy(api: Api, h: dict[str, str], pid: int, qty: str, price: Decimal, date: str) -> None:
    body = {"portfolio": pid, "asset_symbol": "KO", "transaction_type": "buy", "quantity": qty,
            "price": str(price), "transaction_date": date}  # fmt: skip
    r = api.client.post("/api/transactions/", json=body, headers=h)
    assert r.status_code == 201, r.text


def test_a_position_bought_today_at_the_price_has_no_daily_change(api: Api) -> None:
    _, h = api.user()
    pid = api.client.post("/api/portfolios/", json={"name": "d"}, headers=h).json()["id"]
    price, change = _quote(api, "KO")
    assert change != 0  # else the test could not fail
    today = MARKET_NOW.date().isoformat()  # the quote's day
    _buy(api, h, pid, "10", price, today)
    p = api.client.get(f"/api/portfolios/{pid}/", headers=h).json()
    (pos,) = api.client.get(f"/api/portfolios/{pid}/positions/", headers=h).json()["results"]
    assert pos["unrealized_gain_loss"] == "0.00"
    assert (p["daily_change"], p["position_count"]) == ("0.00", 1)
    listed = api.client.get("/api/portfolios/", headers=h).json()["results"]
    assert listed[0]["daily_change"] == "0.00"

    # 5 more held since before the previous close: they earn the change; today's 10 do not
    _buy(api, h, pid, "5", price - 1, "2026-11-02")
    p = api.client.get(f"/api/portfolios/{pid}/", headers=h).json()
    assert Decimal(p["daily_change"]) == (5 * change).quantize(Decimal("0.01"))
    # bought today below the price: value - cost
    _buy(api, h, pid, "2", price - Decimal("0.5"), today)
    p = api.client.get(f"/api/portfolios/{pid}/", headers=h).json()
    assert Decimal(p["daily_change"]) == (5 * change + 1).quantize(Decimal("0.01"))
