"""``GET /api/analytics/overview/``: the user's portfolios as one account, in one currency."""

from __future__ import annotations

from decimal import Decimal

import pytest

from service.assets.market import MarketData
from service.marketdata.store import PriceStore
from tests.service.conftest import Api, shared_market
from tests.service.test_analytics import LEDGER, _portfolio, close

CENT = Decimal("0.01")


def _overview(api: Api, h: dict[str, str], query: str = "") -> dict:
    r = api.client.get(f"/api/analytics/overview/?{query}", headers=h)
    assert r.status_code == 200, r.text
    return r.json()


def _listing(api: Api, h: dict[str, str]) -> list[dict]:
    return api.client.get("/api/portfolios/?limit=100", headers=h).json()["results"]


def test_total_value_is_the_sum_of_the_portfolios(api: Api) -> None:
    _, h = api.user()
    _portfolio(api, h)
    _portfolio(api, h, ledger=LEDGER[:3])
    euro = _portfolio(api, h, ledger=LEDGER[:2], base_currency="EUR")
    r = api.client.post(
        "/api/transactions/",
        json={
            "portfolio": euro,
            "transaction_type": "deposit",
            "price": "5000",
            "transaction_date": "2025-01-02",
        },
        headers=h,
    )
    assert r.status_code == 201, r.text
    reads = _listing(api, h)
    market = MarketData(shared_market(), PriceStore(api.settings.prices_dir))
    for code in ("USD", "EUR", "JPY"):
        o = _overview(api, h, f"currency={code}&period=1y")
        assert o["currency"] == code and o["portfolio_count"] == 3
        for field in ("total_value", "cash_balance", "daily_change"):
            expected = Decimal("0.00")
            for read in reads:
                rate = (
                    Decimal(1)
                    if read["base_currency"] == code
                    else Decimal(repr(market.fx_quote(read["base_currency"], code).rate))
                )
                expected += (Decimal(read[field]) * rate).quantize(CENT)
            assert Decimal(o[field]) == expected, (code, field)
        if code == "USD":  # in its own currency, the plain sum of the listing
            usd = [Decimal(x["total_value"]) for x in reads if x["base_currency"] == "USD"]
            eur = next(x for x in reads if x["base_currency"] == "EUR")
            converted = (
                Decimal(eur["total_value"]) * Decimal(repr(market.fx_quote("EUR", "USD").rate))
            ).quantize(CENT)
            assert Decimal(o["total_value"]) == sum(usd) + converted


def test_two_equal_portfolios_have_the_returns_of_one(api: Api) -> None:
    """Scaling every portfolio alike changes no return: the account's figures are one
    portfolio's, its values twice that portfolio's."""
    _, h = api.user()
    pid = _portfolio(api, h)
    _portfolio(api, h)
    o = _overview(api, h, "period=2y&interval=1w")
    m = api.client.get(f"/api/analytics/portfolio/{pid}/metrics/?period=2y", headers=h).json()
    om = o["metrics"]
    assert o["period"] == om["period"] == o["performance"]["period"] == "2y"
    assert om["observations"] == m["observations"]
    assert (om["start_date"], om["end_date"]) == (m["start_date"], m["end_date"])
    for field in (
        "total_return",
        "annualized_return",
        "volatility",
        "max_drawdown",
        "beta",
        "benchmark_return",
        "money_weighted_return",
    ):
        assert close(om[field], float(m[field]), 2e-6), field
    p = api.client.get(
        f"/api/analytics/portfolio/{pid}/performance/?period=2y&interval=1w", headers=h
    ).json()
    assert [x["date"] for x in o["performance"]["series"]] == [x["date"] for x in p["series"]]
    for a, b in zip(o["performance"]["series"], p["series"], strict=True):
        assert abs(Decimal(a["value"]) - 2 * Decimal(b["value"])) <= CENT
        assert close(a["cumulative_return"], float(b["cumulative_return"]), 2e-6)
    alloc = api.client.get(f"/api/analytics/portfolio/{pid}/allocation/", headers=h).json()
    assert [x["asset_symbol"] for x in o["allocation"]["allocations"]] == [
        x["asset_symbol"] for x in alloc["allocations"]
    ]
    for a, b in zip(o["allocation"]["allocations"], alloc["allocations"], strict=True):
        assert abs(Decimal(a["value"]) - 2 * Decimal(b["value"])) <= CENT
        assert a["weight"] == b["weight"]


def test_an_account_without_portfolios(api: Api) -> None:
    _, h = api.user()
    o = _overview(api, h)
    assert set(o) == {  # the contract's fields, the window and the currency
        "period", "currency", "total_value", "cash_balance", "daily_change",
        "daily_change_percent", "portfolio_count", "metrics", "allocation", "performance",
    }  # fmt: skip
    assert o["period"] == "1y" and o["currency"] == "USD"
    assert (o["portfolio_count"], o["total_value"], o["cash_balance"]) == (0, "0.00", "0.00")
    assert o["metrics"]["total_return"] is None and o["performance"]["series"] == []
    assert o["allocation"]["allocations"] == []


@pytest.mark.parametrize(
    ("query", "field", "code"),
    [
        ("currency=XYZ", "currency", "unsupported"),
        ("currency=US", "currency", "min_length"),
        ("period=1y&start_date=2025-01-01", "start_date", "conflict"),
        ("benchmark=NOPE", "benchmark", "not_found"),
    ],
)
def test_overview_bad_query(api: Api, query: str, field: str, code: str) -> None:
    _, h = api.user()
    r = api.client.get(f"/api/analytics/overview/?{query}", headers=h)
    assert r.status_code == 400, r.text
    assert r.json()["details"]["field"] == field and r.json()["details"]["code"] == code
    assert api.client.get("/api/analytics/overview/").status_code == 401
