"""``GET /api/analytics/portfolio/{id}/income/``: dividends and interest by period, in the
base currency, against sums written out by hand from the ledger below."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pytest

from quantcore.income import period_labels, sum_by_period
from service.assets.market import MarketData
from service.marketdata.store import PriceStore
from tests.service.conftest import Api, shared_market

_LEDGER = [  # type, symbol, quantity, price, fees, date, currency
    ("deposit", None, None, "100000", "0", "2024-01-02", None),
    ("buy", "AAPL", "100", "150", "1", "2024-01-03", None),
    ("buy", "MSFT", "10", "300", "0", "2024-01-03", None),
    ("buy", "SAP.DE", "10", "100", "0", "2024-01-03", None),
    ("dividend", "AAPL", "100", "0.24", "0.50", "2024-02-15", None),  # 24.00 - 0.50
    ("dividend", "MSFT", "10", "0.75", "0", "2024-03-14", None),  # 7.50
    ("interest", None, None, "12.34", "0", "2024-03-31", None),
    ("dividend", "AAPL", "100", "0.25", "0", "2024-05-16", None),  # 25.00
    ("interest", None, None, "10", "1", "2024-06-30", "EUR"),  # EUR 9, converted
    ("dividend", "SAP.DE", "10", "2.20", "0", "2024-05-20", None),  # EUR 22, converted
    ("split", "AAPL", None, None, "0", "2024-07-01", None),
    ("dividend", "AAPL", "400", "0.0625", "0", "2025-02-13", None),  # 25.00
    ("fee", None, None, "5", "0", "2025-03-01", None),  # a cost, not income
]


def _post(api: Api, h: dict[str, str], pid: int) -> None:
    for kind, sym, q, px, fee, day, cur in _LEDGER:
        body: dict[str, object] = {
            "portfolio": pid, "transaction_type": kind, "fees": fee, "transaction_date": day,
        }  # fmt: skip
        if sym:
            body["asset_symbol"] = sym
        if q:
            body["quantity"] = q
        if px:
            body["price"] = px
        if cur:
            body["currency"] = cur
        if kind == "split":
            body.pop("fees")
            body["split_ratio"] = "4"
        r = api.client.post("/api/transactions/", json=body, headers=h)
        assert r.status_code == 201, r.text


def _eur(api: Api, day: str) -> float:
    market = MarketData(shared_market(), PriceStore(api.settings.prices_dir))
    return float(market.fx_rates("EUR", "USD", [dt.date.fromisoformat(day)])[0])


@pytest.fixture
def portfolio(api: Api) -> tuple[dict[str, str], int]:
    _, h = api.user()
    r = api.client.post("/api/portfolios/", json={"name": "Income"}, headers=h)
    pid = r.json()["id"]
    _post(api, h, pid)
    return h, pid


def test_income_by_quarter_and_symbol(api: Api, portfolio: tuple[dict[str, str], int]) -> None:
    h, pid = portfolio
    r = api.client.get(
        f"/api/analytics/portfolio/{pid}/income/?start_date=2024-01-01&end_date=2024-12-31"
        "&group_by=quarter",
        headers=h,
    )
    assert r.status_code == 200, r.text
    body = r.json()
    sap = 22.0 * _eur(api, "2024-05-20")
    eur_interest = 9.0 * _eur(api, "2024-06-30")
    assert body["period"] == "2024-01-01/2024-12-31" and body["currency"] == "USD"
    assert body["periods"] == [
        {"period": "2024-Q1", "dividends": "31.00", "interest": "12.34", "total": "43.34"},
        {
            "period": "2024-Q2",
            "dividends": f"{25.0 + sap:.2f}",
            "interest": f"{eur_interest:.2f}",
            "total": f"{25.0 + sap + eur_interest:.2f}",
        },
        {"period": "2024-Q3", "dividends": "0.00", "interest": "0.00", "total": "0.00"},
        {"period": "2024-Q4", "dividends": "0.00", "interest": "0.00", "total": "0.00"},
    ]
    assert body["by_symbol"] == [
        {"asset_symbol": "AAPL", "dividends": "48.50"},
        {"asset_symbol": "MSFT", "dividends": "7.50"},
        {"asset_symbol": "SAP.DE", "dividends": f"{sap:.2f}"},
    ]
    assert body["total"] == f"{31.0 + 12.34 + 25.0 + sap + eur_interest:.2f}"


def test_income_by_month_and_year(api: Api, portfolio: tuple[dict[str, str], int]) -> None:
    h, pid = portfolio
    base = f"/api/analytics/portfolio/{pid}/income/"
    months = api.client.get(f"{base}?period=max", headers=h).json()
    assert months["group_by"] == "month" and months["period"] == "max"
    labels = [p["period"] for p in months["periods"]]
    assert labels[0] == "2024-01" and labels[-1] == "2026-11"  # every month to today
    assert len(labels) == 35
    by = {p["period"]: p for p in months["periods"]}
    assert by["2024-02"]["dividends"] == "23.50" and by["2025-02"]["dividends"] == "25.00"
    assert by["2025-03"]["total"] == "0.00"  # a fee is not negative income
    years = api.client.get(f"{base}?period=max&group_by=year", headers=h).json()
    assert [p["period"] for p in years["periods"]] == ["2024", "2025", "2026"]
    assert years["periods"][1]["total"] == "25.00"
    assert years["total"] == months["total"]
    total = sum(Decimal(p["total"]) for p in years["periods"])
    assert abs(total - Decimal(years["total"])) <= Decimal("0.02")  # rounded per period


@pytest.mark.parametrize(
    ("query", "field"),
    [("group_by=week", "group_by"), ("period=1y&end_date=2025-01-01", "end_date")],
)
def test_income_bad_query(
    api: Api, portfolio: tuple[dict[str, str], int], query: str, field: str
) -> None:
    h, pid = portfolio
    r = api.client.get(f"/api/analytics/portfolio/{pid}/income/?{query}", headers=h)
    assert r.status_code == 400 and r.json()["details"]["field"] == field
    _, other = api.user()
    assert (
        api.client.get(f"/api/analytics/portfolio/{pid}/income/", headers=other).status_code == 404
    )


def test_sum_by_period_equals_a_loop() -> None:
    rng = np.random.default_rng(7)
    days = np.datetime64("2019-12-01") + rng.integers(0, 1500, 300).astype("timedelta64[D]")
    amounts = rng.normal(size=(300, 2))
    for group_by in ("month", "quarter", "year"):
        labels, sums = sum_by_period(days, amounts, group_by=group_by)  # type: ignore[arg-type]
        twin: dict[str, np.ndarray] = {}
        for label, row in zip(period_labels(days, group_by=group_by), amounts, strict=True):  # type: ignore[arg-type]
            twin[str(label)] = twin.get(str(label), np.zeros(2)) + row
        assert labels.tolist() == sorted(twin)
        np.testing.assert_allclose(sums, np.array([twin[k] for k in sorted(twin)]))
    with pytest.raises(ValueError, match="group_by"):
        sum_by_period(days, amounts, group_by="week")  # type: ignore[arg-type]
