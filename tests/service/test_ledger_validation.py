"""Ledger input rules over HTTP (SQLite and PostgreSQL): dividends, fees, money, dates,
decimal text, portfolio names and benchmark symbols."""

from __future__ import annotations

import pytest

from tests.service.conftest import Api


def _portfolio(api: Api, h: dict[str, str]) -> int:
    return int(api.client.post("/api/portfolios/", json={"name": "V"}, headers=h).json()["id"])


def _txn(api: Api, h: dict[str, str], pid: int, kind: str, qty, price, date: str, **kw):
    body = {"portfolio": pid, "asset_symbol": kw.pop("symbol", "SPY"), "transaction_type": kind,
            "quantity": qty, "price": price, "transaction_date": date, **kw}  # fmt: skip
    return api.client.post("/api/transactions/", json=body, headers=h)


def _refused(r, field: str, code: str | None = None) -> dict:
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["error"] == "validation_error" and body["details"]["field"] == field, body
    if code is not None:
        assert body["details"]["code"] == code, body
    return body


def test_a_dividend_needs_shares_held_at_the_previous_close(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    _refused(
        _txn(api, h, pid, "dividend", "5", "0.5", "2025-03-03"), "quantity", "insufficient_quantity"
    )
    assert api.client.post("/api/transactions/", json={}, headers=h).status_code == 400
    assert _txn(api, h, pid, "buy", "5", "10", "2025-03-03").status_code == 201
    # bought on the ex-date: not entitled (the buyer of record is who held at the close before)
    _refused(
        _txn(api, h, pid, "dividend", "5", "0.5", "2025-03-03"), "quantity", "insufficient_quantity"
    )
    _refused(
        _txn(api, h, pid, "dividend", "6", "0.5", "2025-03-04"), "quantity", "insufficient_quantity"
    )
    assert _txn(api, h, pid, "dividend", "5", "0.5", "2025-03-04").status_code == 201
    # deleting the buy would leave the dividend uncovered
    buy = api.client.get(f"/api/transactions/?portfolio_id={pid}&transaction_type=buy", headers=h)
    r = api.client.delete(f"/api/transactions/{buy.json()['results'][0]['id']}/", headers=h)
    _refused(r, "quantity", "insufficient_quantity")


def test_dividend_fees_are_netted_the_same_way_in_cash_and_tax(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    assert _txn(api, h, pid, "buy", "100", "10", "2025-01-02").status_code == 201
    r = _txn(api, h, pid, "dividend", "100", "0.25", "2025-03-03", fees="1.50")
    assert r.status_code == 201, r.text
    assert r.json()["total_amount"] == "23.50"  # 100 x 0.25 - 1.50
    summary = api.client.get("/api/tax/analytics/summary/?year=2025", headers=h).json()
    assert summary["dividend_income"]["total_dividends"] == "23.50", summary


def test_fees_above_the_gross_amount_of_a_sale_or_dividend_are_refused(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    assert _txn(api, h, pid, "buy", "10", "10", "2025-01-02").status_code == 201
    _refused(_txn(api, h, pid, "sell", "1", "2", "2025-02-03", fees="2.01"), "fees", "max_value")
    _refused(
        _txn(api, h, pid, "dividend", "10", "0.1", "2025-02-03", fees="1.01"), "fees", "max_value"
    )
    r = _txn(api, h, pid, "sell", "1", "2", "2025-02-03", fees="2")
    assert r.status_code == 201 and r.json()["total_amount"] == "0.00"


def test_total_amount_is_money(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    r = _txn(api, h, pid, "buy", "0.33333333", "3", "2025-01-02", fees="0.004")
    assert r.status_code == 201
    assert r.json()["total_amount"] == "1.00"  # 0.99999999 + 0.004 = 1.00399999


@pytest.mark.parametrize(
    ("date", "code"), [("1899-12-31", "min_value"), ("2999-01-01", "max_value")]
)
def test_dates_before_1900_or_after_tomorrow(api: Api, date: str, code: str) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    _refused(_txn(api, h, pid, "buy", "1", "10", date), "transaction_date", code)
    r = api.client.post(
        f"/api/portfolios/{pid}/positions/",
        json={"asset_symbol": "SPY", "quantity": "1", "purchase_price": "1", "purchase_date": date},
        headers=h,
    )
    _refused(r, "purchase_date", code)


@pytest.mark.parametrize(
    "text",
    [
        "1_000",
        "\uff11\uff12",  # full-width 12
        " 12",
        "12 ",
        "12\n",
        "NaN",
        "Infinity",
        "0x10",
        "",
    ],
)
def test_decimal_text_is_ascii_digits(api: Api, text: str) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    _refused(_txn(api, h, pid, "buy", text, "10", "2025-01-02"), "quantity")
    _refused(_txn(api, h, pid, "buy", "1", text, "2025-01-02"), "price")
    _refused(_txn(api, h, pid, "buy", "1", "10", "2025-01-02", fees=text), "fees")
    r = api.client.post(
        f"/api/portfolios/{pid}/positions/",
        json={
            "asset_symbol": "SPY",
            "quantity": text,
            "purchase_price": "1",
            "purchase_date": "2025-01-02",
        },
        headers=h,
    )
    _refused(r, "quantity")


def test_json_numbers_and_exponents_are_still_decimals(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    r = _txn(api, h, pid, "buy", 2, 10.25, "2025-01-02", fees="1e-2")
    assert r.status_code == 201, r.text
    assert (r.json()["quantity"], r.json()["price"], r.json()["fees"]) == (
        "2.00000000",
        "10.25",
        "0.01",
    )


@pytest.mark.parametrize("name", ["   ", "\t", "a\x00b", "x\n"])
def test_blank_or_control_character_names_are_refused(api: Api, name: str) -> None:
    _, h = api.user()
    _refused(api.client.post("/api/portfolios/", json={"name": name}, headers=h), "name")
    pid = _portfolio(api, h)
    _refused(api.client.put(f"/api/portfolios/{pid}/", json={"name": name}, headers=h), "name")


def test_benchmark_symbol_must_be_an_asset(api: Api) -> None:
    _, h = api.user()
    r = api.client.post(
        "/api/portfolios/", json={"name": "b", "benchmark_symbol": "NOPE"}, headers=h
    )
    _refused(r, "benchmark_symbol", "not_found")
    r = api.client.post(
        "/api/portfolios/", json={"name": "b", "benchmark_symbol": "qqq"}, headers=h
    )
    assert r.status_code == 201 and r.json()["benchmark_symbol"] == "QQQ"
    pid = r.json()["id"]
    r = api.client.put(
        f"/api/portfolios/{pid}/", json={"name": "b", "benchmark_symbol": "NOPE"}, headers=h
    )
    _refused(r, "benchmark_symbol", "not_found")
    assert api.client.get(f"/api/portfolios/{pid}/", headers=h).json()["benchmark_symbol"] == "QQQ"
