"""Cash over HTTP: cash rows, the balance per currency, the cash policy, base currencies.

Every expected figure is computed here from the rule it tests (a plain-Python twin of
:mod:`quantcore.cash` on the amounts the test sent), on SQLite and PostgreSQL.
"""

from __future__ import annotations

import random
from decimal import ROUND_HALF_EVEN, Decimal

from httpx import Response

from service.assets.market import MarketData
from service.db.models import Transaction
from tests.service.conftest import Api

CENT = Decimal("0.01")


def _money(x: Decimal) -> str:
    return str(x.quantize(CENT, ROUND_HALF_EVEN))


def _market(api: Api) -> MarketData:
    return api.client.app.state.resources.market


def _portfolio(api: Api, h: dict[str, str], **fields: object) -> int:
    r = api.client.post("/api/portfolios/", json={"name": "Cash", **fields}, headers=h)
    assert r.status_code == 201, r.text
    return int(r.json()["id"])


def _post(api: Api, h: dict[str, str], pid: int, kind: str, **fields: object) -> Response:
    body = {"portfolio": pid, "transaction_type": kind, "transaction_date": "2025-03-03", **fields}
    return api.client.post("/api/transactions/", json=body, headers=h)


def _ok(api: Api, h: dict[str, str], pid: int, kind: str, **fields: object) -> dict:
    r = _post(api, h, pid, kind, **fields)
    assert r.status_code == 201, r.text
    return r.json()


def _read(api: Api, h: dict[str, str], pid: int) -> dict:
    r = api.client.get(f"/api/portfolios/{pid}/", headers=h)
    assert r.status_code == 200, r.text
    return r.json()


def _positions_value(api: Api, h: dict[str, str], pid: int) -> Decimal:
    r = api.client.get(f"/api/portfolios/{pid}/positions/?limit=100", headers=h)
    return sum((Decimal(p["current_value"]) for p in r.json()["results"]), Decimal(0))


def _count(api: Api, pid: int) -> int:
    async def count() -> int:
        async with api.db.read() as s:
            rows = await s.execute(
                Transaction.__table__.select().where(Transaction.portfolio_id == pid)
            )
            return len(rows.all())

    return int(api.call(count))


def test_cash_rows_move_the_balance_and_the_total(api: Api) -> None:
    _, h = api.user("cash")
    pid = _portfolio(api, h)
    dep = _ok(api, h, pid, "deposit", price="10000", fees="2.50")
    assert dep["asset_symbol"] is None and dep["asset_name"] is None
    assert (dep["currency"], dep["quantity"], dep["total_amount"]) == (
        "USD",
        "1.00000000",
        "9997.50",
    )
    _ok(api, h, pid, "buy", asset_symbol="SPY", quantity="10", price="401.25", fees="1")
    _ok(api, h, pid, "sell", asset_symbol="SPY", quantity="4", price="410", fees="1",
        transaction_date="2025-03-04")  # fmt: skip
    _ok(api, h, pid, "dividend", asset_symbol="SPY", quantity="6", price="1.5",
        transaction_date="2025-03-20")  # fmt: skip
    _ok(api, h, pid, "interest", price="3.21", transaction_date="2025-03-31")
    fee = _ok(api, h, pid, "fee", price="5", transaction_date="2025-03-31")
    assert fee["total_amount"] == "5.00"
    out = _ok(api, h, pid, "withdrawal", price="1000", fees="1", transaction_date="2025-04-01")
    assert out["total_amount"] == "1001.00"

    cash = (
        Decimal("10000") - Decimal("2.50")
        - (10 * Decimal("401.25") + 1)
        + (4 * Decimal("410") - 1)
        + 6 * Decimal("1.5")
        + Decimal("3.21") - 5 - 1001
    )  # fmt: skip
    p = _read(api, h, pid)
    assert p["cash_balance"] == _money(cash)
    assert p["cash_balances"] == [
        {"currency": "USD", "amount": _money(cash), "fx_rate": "1.000000", "value": _money(cash)}
    ]
    assert p["position_count"] == 1  # cash is not a position
    total = Decimal(p["total_value"])
    assert abs(total - (_positions_value(api, h, pid) + cash)) <= CENT
    listed = api.client.get("/api/portfolios/", headers=h).json()["results"]
    assert [x["cash_balance"] for x in listed if x["id"] == pid] == [_money(cash)]

    rows = api.client.get(
        f"/api/transactions/?portfolio_id={pid}&transaction_type=deposit", headers=h
    ).json()["results"]
    assert [(r["transaction_type"], r["asset_symbol"], r["price"]) for r in rows] == [
        ("deposit", None, "10000.00")
    ]


def test_buys_without_deposits_leave_cash_negative_under_track(api: Api) -> None:
    _, h = api.user("track")
    pid = _portfolio(api, h)
    _ok(api, h, pid, "buy", asset_symbol="SPY", quantity="3", price="100", fees="0.5")
    p = _read(api, h, pid)
    assert (p["cash_policy"], p["cash_balance"]) == ("track", "-300.50")
    assert (
        abs(Decimal(p["total_value"]) - (_positions_value(api, h, pid) - Decimal("300.50"))) <= CENT
    )


def test_bad_cash_rows_are_400s_naming_the_field(api: Api) -> None:
    _, h = api.user("bad")
    pid = _portfolio(api, h)
    cases = [
        ({"price": "10", "asset_symbol": "SPY"}, "deposit", "asset_symbol", "invalid"),
        ({"price": "10", "quantity": "1"}, "deposit", "quantity", "invalid"),
        ({}, "withdrawal", "price", "required"),
        ({"price": "0"}, "interest", "price", "min_value"),
        ({"price": "5", "fees": "1"}, "fee", "fees", "invalid"),
        ({"price": "5", "fees": "6"}, "deposit", "fees", "max_value"),
        ({"price": "10", "currency": "XYZ"}, "deposit", "currency", "unsupported"),
        ({"quantity": "1", "price": "10"}, "buy", "asset_symbol", "required"),
        ({"asset_symbol": "SPY", "quantity": "1", "price": "10", "currency": "EUR"}, "buy",
         "currency", "invalid"),
    ]  # fmt: skip
    for fields, kind, field, code in cases:
        r = _post(api, h, pid, kind, **fields)
        assert r.status_code == 400, (kind, fields, r.text)
        d = r.json()["details"]
        assert (d["field"], d["code"]) == (field, code), (kind, fields, d)
    r = _post(api, h, pid, "deposit", price="10", currency="usd")
    assert r.status_code == 400 and r.json()["details"]["field"] == "currency"
    assert _count(api, pid) == 0


def test_strict_policy_refuses_what_would_overdraw_and_writes_nothing(api: Api) -> None:
    _, h = api.user("strict")
    pid = _portfolio(api, h, cash_policy="strict")
    r = _post(api, h, pid, "buy", asset_symbol="SPY", quantity="1", price="100")
    assert r.status_code == 400, r.text
    assert r.json()["details"] == {
        "field": "quantity", "code": "insufficient_cash", "currency": "USD", "date": "2025-03-03",
    }  # fmt: skip
    assert _count(api, pid) == 0

    deposit = _ok(api, h, pid, "deposit", price="1000", transaction_date="2025-03-05")
    # a buy dated before the deposit that would pay for it overdraws on its own day
    r = _post(api, h, pid, "buy", asset_symbol="SPY", quantity="1", price="100")
    assert r.status_code == 400 and r.json()["details"]["code"] == "insufficient_cash"
    # a buy and a deposit of the same day cover each other, whichever comes first
    _ok(api, h, pid, "buy", asset_symbol="SPY", quantity="9", price="100", fees="0",
        transaction_date="2025-03-05")  # fmt: skip
    r = _post(api, h, pid, "withdrawal", price="100.01", transaction_date="2025-03-06")
    assert (r.status_code, r.json()["details"]["field"]) == (400, "price"), r.text
    _ok(api, h, pid, "withdrawal", price="100", transaction_date="2025-03-06")
    assert _read(api, h, pid)["cash_balance"] == "0.00"
    r = api.client.delete(f"/api/transactions/{deposit['id']}/", headers=h)
    assert r.status_code == 400 and r.json()["details"]["field"] == "cash_balance"
    assert _count(api, pid) == 3

    loose = _portfolio(api, h)
    _ok(api, h, loose, "buy", asset_symbol="SPY", quantity="1", price="50")
    r = api.client.put(
        f"/api/portfolios/{loose}/", json={"name": "x", "cash_policy": "strict"}, headers=h
    )
    assert r.status_code == 400 and r.json()["details"]["field"] == "cash_policy"
    assert _read(api, h, loose)["cash_policy"] == "track"


def test_the_balance_does_not_depend_on_entry_order(api: Api) -> None:
    _, h = api.user("order")
    rows = [
        ("deposit", {"price": "5000", "transaction_date": "2025-01-02"}),
        ("buy", {"asset_symbol": "AAPL", "quantity": "10", "price": "150.5", "fees": "1",
                 "transaction_date": "2025-01-03"}),
        ("sell", {"asset_symbol": "AAPL", "quantity": "4", "price": "160", "fees": "1",
                  "transaction_date": "2025-02-03"}),
        ("interest", {"price": "1.23", "transaction_date": "2025-02-28"}),
        ("withdrawal", {"price": "700", "transaction_date": "2025-03-03"}),
        ("fee", {"price": "2", "transaction_date": "2025-03-31"}),
    ]  # fmt: skip
    balances = set()
    for seed in range(3):
        order = rows[:]
        random.Random(seed).shuffle(order)
        # a sell typed before its buy is refused by the ledger; keep buys before sells
        order.sort(key=lambda r: r[0] == "sell")
        pid = _portfolio(api, h)
        for kind, fields in order:
            _ok(api, h, pid, kind, **fields)
        balances.add(_read(api, h, pid)["cash_balance"])
    expected = (
        Decimal(5000) - (10 * Decimal("150.5") + 1) + (4 * 160 - 1) + Decimal("1.23") - 700 - 2
    )
    assert balances == {_money(expected)}


def test_editing_a_row_between_cash_and_security_rederives_both(api: Api) -> None:
    _, h = api.user("edit")
    pid = _portfolio(api, h)
    row = _ok(api, h, pid, "deposit", price="100")
    body = {"portfolio": pid, "transaction_type": "buy", "asset_symbol": "SPY", "quantity": "2",
            "price": "10", "transaction_date": "2025-03-03"}  # fmt: skip
    r = api.client.put(f"/api/transactions/{row['id']}/", json=body, headers=h)
    assert r.status_code == 200, r.text
    p = _read(api, h, pid)
    assert (p["cash_balance"], p["position_count"]) == ("-20.00", 1)
    body = {"portfolio": pid, "transaction_type": "interest", "price": "7",
            "transaction_date": "2025-03-03"}  # fmt: skip
    r = api.client.put(f"/api/transactions/{row['id']}/", json=body, headers=h)
    assert r.status_code == 200, r.text
    p = _read(api, h, pid)
    assert (p["cash_balance"], p["position_count"], p["total_value"]) == ("7.00", 0, "7.00")


def test_cash_in_another_currency_is_valued_at_the_market_rate(api: Api) -> None:
    _, h = api.user("fx")
    pid = _portfolio(api, h)
    dep = _ok(api, h, pid, "deposit", price="1000", currency="EUR")
    assert dep["currency"] == "EUR"
    _ok(api, h, pid, "deposit", price="50")
    fx = _market(api).fx_quote("EUR", "USD")
    assert fx is not None
    rate = fx.rate
    p = _read(api, h, pid)
    eur = Decimal(1000) * Decimal(repr(rate))
    assert [b["currency"] for b in p["cash_balances"]] == ["EUR", "USD"]
    assert p["cash_balances"][0]["amount"] == "1000.00"
    assert p["cash_balances"][0]["fx_rate"] == f"{rate:.6f}"
    assert abs(Decimal(p["cash_balance"]) - (eur + 50)) <= CENT
    assert p["total_value"] == p["cash_balance"]


def test_a_base_currency_converts_positions_and_names_the_rate(api: Api) -> None:
    _, h = api.user("base")
    pid = _portfolio(api, h, base_currency="EUR")
    dep = _ok(api, h, pid, "deposit", price="2000")
    assert dep["currency"] == "EUR"  # a cash row's default is the portfolio's base
    _ok(api, h, pid, "buy", asset_symbol="SPY", quantity="2", price="400")
    p = _read(api, h, pid)
    assert p["base_currency"] == "EUR"
    pos = api.client.get(f"/api/portfolios/{pid}/positions/", headers=h).json()["results"][0]
    fx, quote = _market(api).fx_quote("USD", "EUR"), _market(api).quote("SPY")
    assert fx is not None and quote is not None
    rate, price = fx.rate, quote.price
    assert (pos["currency"], pos["fx_rate"]) == ("USD", f"{rate:.6f}")
    assert pos["cost_basis"] == "800.00"  # as recorded, in the asset's currency
    assert abs(Decimal(pos["current_value"]) - Decimal(repr(2 * price * rate))) <= CENT
    usd_cash = Decimal(-800) * Decimal(repr(rate))
    assert abs(Decimal(p["cash_balance"]) - (2000 + usd_cash)) <= CENT
    r = api.client.put(
        f"/api/portfolios/{pid}/", json={"name": "x", "base_currency": "XYZ"}, headers=h
    )
    assert r.status_code == 400 and r.json()["details"]["code"] == "unsupported"


def test_cash_a_corporate_action_pays_counts_the_shares_held_that_day(api: Api) -> None:
    _, h = api.user("roc")
    pid = _portfolio(api, h)
    _ok(api, h, pid, "deposit", price="1000", transaction_date="2025-01-02")
    _ok(api, h, pid, "buy", asset_symbol="XOM", quantity="8", price="100",
        transaction_date="2025-01-03")  # fmt: skip
    _ok(api, h, pid, "return_of_capital", asset_symbol="XOM", price="1.25",
        transaction_date="2025-02-03")  # fmt: skip
    # a buy entered later but dated after the distribution does not share in it
    _ok(api, h, pid, "buy", asset_symbol="XOM", quantity="1", price="90",
        transaction_date="2025-03-03")  # fmt: skip
    assert _read(api, h, pid)["cash_balance"] == _money(Decimal(1000) - 800 + 8 * Decimal("1.25") - 90)
