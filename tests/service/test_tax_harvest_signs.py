"""Loss harvesting's inputs and ``as_of`` over HTTP, and the summary beside Schedule D
(SQLite and PostgreSQL): bad thresholds and dates are 400s naming the field, a past
``as_of`` sees only the lots held that day, and both outputs use Schedule D's signs."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest

from quantcore.tax import Form8949
from service.db import Database
from service.db.models import TaxReport
from tests.service.conftest import Api


def _book(api: Api, h: dict[str, str], rows: list[dict]) -> int:
    pid = api.client.post("/api/portfolios/", json={"name": "H"}, headers=h).json()["id"]
    for row in rows:
        r = api.client.post("/api/transactions/", json={"portfolio": pid, **row}, headers=h)
        assert r.status_code == 201, r.text
    return pid


def _trade(sym: str, kind: str, q: str, px: str, day: str) -> dict:
    return {"asset_symbol": sym, "transaction_type": kind, "quantity": q, "price": px, "fees": "0", "transaction_date": day}


@pytest.mark.parametrize(
    ("query", "field"),
    [("min_loss=1e20", "min_loss"), ("min_loss=1e309", "min_loss"), ("min_loss=100000000000", "min_loss"),
     ("min_loss_pct=1e309", "min_loss_pct")],
)
def test_get_thresholds_out_of_range_are_400(api: Api, query: str, field: str) -> None:
    _, h = api.user()
    r = api.client.get(f"/api/tax/loss-harvesting/?{query}", headers=h)
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["error"] == "validation_error" and body["details"] == {"field": field, "code": "max_value"}
    assert field in body["message"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"min_loss": "100000000000"}, "min_loss"),
        ({"min_loss": "1e20"}, "min_loss"),
        ({"min_loss": 1e308}, "min_loss"),
        ({"min_loss": "9" * 40}, "min_loss"),
        ({"as_of": "9999-12-31"}, "as_of"),
    ],
)
def test_analyze_inputs_out_of_range_are_400(api: Api, body: dict, field: str) -> None:
    _, h = api.user()
    _book(api, h, [_trade("AAPL", "buy", "1", "100000", "2025-01-02")])
    r = api.client.post("/api/tax/loss-harvesting/analyze/", json=body, headers=h)
    assert r.status_code == 400, r.text
    assert r.json()["details"] == {"field": field, "code": "max_value"}


def test_as_of_sees_only_the_lots_held_that_day(api: Api) -> None:
    _, h = api.user()
    _book(api, h, [
        _trade("AAPL", "buy", "10", "100000", "2025-01-02"),  # far above any close: a loss lot
        _trade("AAPL", "buy", "5", "100000", "2025-03-03"),
        {"asset_symbol": "AAPL", "transaction_type": "split", "split_ratio": "4", "transaction_date": "2025-04-01"},
    ])
    r = api.client.post("/api/tax/loss-harvesting/analyze/", json={"as_of": "2025-02-01"}, headers=h)
    assert r.status_code == 200, r.text
    [o] = r.json()["opportunities"]
    assert o["position"]["quantity"] == o["loss_quantity"] == "10.00000000" and len(o["lots"]) == 1
    close = Decimal(o["position"]["current_price"])  # the close of 2025-01-31 (a Friday)
    assert Decimal(o["potential_loss_amount"]) == (10 * (Decimal(100000) - close)).quantize(Decimal("0.01"))
    r = api.client.post("/api/tax/loss-harvesting/analyze/", json={"as_of": "2025-03-20"}, headers=h)
    [o] = r.json()["opportunities"]
    assert o["position"]["quantity"] == "15.00000000" and len(o["lots"]) == 2  # before the split
    r = api.client.post("/api/tax/loss-harvesting/analyze/", json={"as_of": "2025-06-02"}, headers=h)
    [o] = r.json()["opportunities"]
    assert o["position"]["quantity"] == "60.00000000"  # after it
    r = api.client.post("/api/tax/loss-harvesting/analyze/", json={"as_of": "1900-01-01"}, headers=h)
    assert r.status_code == 200 and r.json()["opportunities"] == [] and r.json()["as_of"] == "1900-01-01"


def test_summary_and_schedule_d_share_signs_and_names(api: Api) -> None:
    """A 10,000 short-term loss in 2024 and a 2,000 gain in 2025."""
    _, h = api.user()
    _book(api, h, [
        _trade("AAPL", "buy", "100", "200", "2024-01-02"),
        _trade("AAPL", "sell", "100", "100", "2024-06-03"),
        _trade("MSFT", "buy", "100", "100", "2025-01-02"),
        _trade("MSFT", "sell", "100", "120", "2025-03-03"),
    ])
    s = api.client.get("/api/tax/analytics/summary/?year=2025", headers=h).json()
    assert s["capital_gains"] == {
        "short_term_gain_loss": "2000.00", "long_term_gain_loss": "0.00", "net_capital_gain_loss": "2000.00",
    }
    assert (s["short_term_carryover"], s["capital_loss_deduction"], s["short_term_carryforward"]) == (
        "-7000.00", "-3000.00", "-2000.00",
    )
    rep = api.client.post("/api/tax/reports/generate/", json={"year": 2025}, headers=h).json()
    doc = api.client.get(rep["download"]["json"], headers=h).json()
    d = doc["schedule_d"]
    assert (d["combined_net_gain_loss"], d["short_term_carryover"], d["capital_loss_deduction"]) == (
        "-5000.00", "-7000.00", "-3000.00",
    )
    assert "net_capital_gain_loss" not in d
    for name in ("short_term_gain_loss", "short_term_carryover", "capital_loss_deduction", "short_term_carryforward"):
        assert d[name] == doc["summary"][name] == (s["capital_gains"] | s)[name]
    assert doc["summary"]["net_capital_gain_loss"] == "2000.00"
    assert dt.date.fromisoformat(doc["form_8949"]["part_i"]["rows"][0]["date_sold"])
    content = api.call(_stored_content, api.db, rep["id"])
    compact = json.dumps(content, separators=(",", ":"), ensure_ascii=False)
    assert rep["size_bytes"] == len(compact.encode()) > 0  # the size of what is stored, compact


async def _stored_content(db: Database, report_id: int) -> dict:
    async with db.read() as s:
        return (await s.get(TaxReport, report_id)).content


def test_reports_stored_before_the_columns_were_packed_download_alike(api: Api) -> None:
    """A report stored with Form 8949 as a list of numbers per column (content version 2)
    downloads byte for byte as the packed one (version 3) of the same figures."""
    _, h = api.user()
    _book(api, h, [
        _trade("AAPL", "buy", "100", "200", "2024-01-02"),
        _trade("AAPL", "sell", "40", "100", "2025-02-03"),
        _trade("AAPL", "buy", "10", "90", "2025-02-20"),  # a wash sale
        _trade("AAPL", "sell", "70", "260", "2025-03-03"),
        _trade("MSFT", "buy", "2.5", "100", "2025-01-02"),
        _trade("MSFT", "sell", "2.5", "120", "2025-03-03"),
    ])
    rep = api.client.post("/api/tax/reports/generate/", json={"year": 2025}, headers=h).json()
    packed = {f: api.client.get(f"/api/tax/reports/{rep['id']}/download/?format={f}", headers=h).content for f in ("csv", "json")}
    content = api.call(_stored_content, api.db, rep["id"])
    assert content["version"] == 3 and isinstance(content["form_8949"]["data"], str)
    form = Form8949.from_columns(content["form_8949"])
    assert form.symbol.size == 4 and form.wash_sale.any() and form.long_term.any()
    lists = {"tax_year": 2025, "symbols": list(form.symbols)}
    lists |= {k: getattr(form, k).tolist() for k in ("symbol", "quantity", "acquired", "sold", "proceeds",
                                                      "cost_basis", "adjustment", "long_term", "wash_sale")}
    api.call(_store_content, api.db, rep["id"], {**content, "version": 2, "form_8949": lists})
    for f, body in packed.items():
        assert api.client.get(f"/api/tax/reports/{rep['id']}/download/?format={f}", headers=h).content == body


async def _store_content(db: Database, report_id: int, content: dict) -> None:
    async with db.write() as s:
        (await s.get(TaxReport, report_id)).content = content
