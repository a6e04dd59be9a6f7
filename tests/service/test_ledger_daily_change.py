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


def test_a_split_on_the_quotes_day_is_not_a_gain_of_the_new_shares(api: Api) -> None:
    """Held 10 at the previous close, 40 after a 4-for-1 split today: the day's change
    is the 40 shares' value less the 10 shares' value at that close (quotes are
    unadjusted closes), not 40 x the price change; a 1-for-2 reverse split likewise."""
    price, change = _quote(api, "KO")
    today = MARKET_NOW.date().isoformat()
    for ratio, after in (("4", 40), ("0.5", 5)):
        _, h = api.user()
        pid = api.client.post("/api/portfolios/", json={"name": "s"}, headers=h).json()["id"]
        _buy(api, h, pid, "10", price - 1, "2026-11-02")
        split = {"portfolio": pid, "asset_symbol": "KO", "transaction_type": "split",
                 "split_ratio": ratio, "transaction_date": today}  # fmt: skip
        r = api.client.post("/api/transactions/", json=split, headers=h)
        assert r.status_code == 201, r.text
        expected = (after * price - 10 * (price - change)).quantize(Decimal("0.01"))
        p = api.client.get(f"/api/portfolios/{pid}/", headers=h).json()
        # the quote's shown price and change are rounded: a cent of slack
        assert abs(Decimal(p["daily_change"]) - expected) <= Decimal("0.02"), (ratio, p)
        (pos,) = api.client.get(f"/api/portfolios/{pid}/positions/", headers=h).json()["results"]
        assert Decimal(pos["quantity"]) == after
        listed = api.client.get("/api/portfolios/", headers=h).json()["results"]
        assert listed[0]["daily_change"] == p["daily_change"]
