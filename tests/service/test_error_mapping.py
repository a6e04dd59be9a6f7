"""Error bodies are built from what the handler declares and what the client sent.

``details.field`` and ``details.code`` come from the schema (msgspec's view of the
signature model) and the value at Litestar's error path, never from a message's text.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import pytest
from litestar import get
from litestar.params import FromQuery, HeaderParameter

from tests.service.conftest import Api


@get("/api/test-declared/", sync_to_thread=False)
def declared(
    year: FromQuery[int],
    probe: Annotated[str, HeaderParameter(name="x-probe")],
    symbols: FromQuery[list[str] | None] = None,
) -> dict[str, Any]:
    return {"year": year, "probe": probe, "symbols": symbols or []}


def _details(r: Any) -> tuple[str, str]:
    assert r.status_code == 400, r.text
    body = r.json()
    assert set(body) == {"error", "message", "details"} and body["error"] == "validation_error"
    return body["details"]["field"], body["details"]["code"]


def test_declared_parameters(api_factory: Any) -> None:
    api = api_factory(extra_routers=[declared])
    h = {"x-probe": "p"}
    assert _details(api.client.get("/api/test-declared/", headers=h)) == ("year", "required")
    assert _details(api.client.get("/api/test-declared/?year=1")) == ("x-probe", "required")
    assert _details(api.client.get("/api/test-declared/?year=abc", headers=h)) == ("year", "invalid")
    # a list parameter may repeat; any other may not
    r = api.client.get("/api/test-declared/?year=1&symbols=A&symbols=B", headers=h)
    assert r.status_code == 200 and r.json()["symbols"] == ["A", "B"], r.text
    r = api.client.get("/api/test-declared/?year=1&year=2", headers=h)
    assert _details(r) == ("year", "invalid") and "more than once" in r.json()["message"]


@pytest.mark.parametrize(
    ("query", "field", "code"),
    [
        ("limit=0", "limit", "min_value"),
        ("limit=101", "limit", "max_value"),
        ("limit=x", "limit", "invalid"),
        ("limit=1&limit=2", "limit", "invalid"),  # a dependency's parameter, repeated
    ],
)
def test_query_constraints(api: Api, query: str, field: str, code: str) -> None:
    assert _details(api.client.get(f"/api/assets/?{query}")) == (field, code)


def test_repeated_period_is_refused(api: Api) -> None:
    _, h = api.user()
    pid = api.client.post("/api/portfolios/", json={"name": "p"}, headers=h).json()["id"]
    r = api.client.get(f"/api/analytics/portfolio/{pid}/performance/?period=1m&period=2y", headers=h)
    assert _details(r) == ("period", "invalid")
    r = api.client.get(f"/api/analytics/portfolio/{pid}/performance/?period=2y", headers=h)
    assert r.status_code == 200 and r.json()["period"] == "2y"


def test_body_fields(api: Api) -> None:
    _, h = api.user()
    assert _details(api.client.post("/api/portfolios/", json={}, headers=h)) == ("name", "required")
    r = api.client.post("/api/portfolios/", json={"name": "x", "zzz": 1}, headers=h)
    assert _details(r) == ("zzz", "unknown_field")
    assert _details(api.client.post("/api/portfolios/", json={"name": 5}, headers=h)) == ("name", "invalid")
    r = api.client.post("/api/assets/bulk-prices/", json={"symbols": []})
    assert _details(r) == ("symbols", "min_length")


def _buy(pid: int, **changes: Any) -> dict[str, Any]:
    return {"portfolio": pid, "asset_symbol": "KO", "transaction_type": "buy",
            "quantity": "1", "price": "1", "transaction_date": "2026-01-05", **changes}  # fmt: skip


def test_number_beyond_float64_names_its_field(api: Api) -> None:
    _, h = api.user()
    pid = api.client.post("/api/portfolios/", json={"name": "p"}, headers=h).json()["id"]
    for field in ("quantity", "price"):
        body = json.dumps(_buy(pid, **{field: 12345})).replace("12345", "1e400")
        r = api.client.post(
            "/api/transactions/", content=body, headers={**h, "content-type": "application/json"}
        )
        assert _details(r) == (field, "out_of_range")


def test_pattern_failures_are_said_in_words_not_as_a_regex(api: Api) -> None:
    """A declared pattern (service.patterns) is named by its meaning in the 400's message."""
    _, h = api.user()
    pid = api.client.post("/api/portfolios/", json={"name": "p"}, headers=h).json()["id"]
    r = api.client.post("/api/transactions/", json=_buy(pid, quantity="ten"), headers=h)
    assert _details(r) == ("quantity", "invalid")
    assert r.json()["message"] == 'quantity must be a decimal number written as a string, such as "10" or "12.5".'
    r = api.client.post("/api/portfolios/", json={"name": " \t "}, headers=h)
    assert _details(r)[0] == "name" and "regex" not in r.json()["message"]


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded"])
def test_a_json_body_of_another_content_type_is_415(api: Api, content_type: str) -> None:
    _, h = api.user()
    pid = api.client.post("/api/portfolios/", json={"name": "p"}, headers=h).json()["id"]
    r = api.client.post(
        "/api/transactions/", content=json.dumps(_buy(pid)), headers={**h, "content-type": content_type}
    )
    assert r.status_code == 415, r.text
    assert r.json()["error"] == "unsupported_media_type"
    assert r.json()["details"] == {"content_type": content_type, "expected": "application/json"}
    assert api.client.get(f"/api/transactions/?portfolio={pid}", headers=h).json()["count"] == 0
    r = api.client.post(
        "/api/transactions/",
        content=json.dumps(_buy(pid)),
        headers={**h, "content-type": "application/json; charset=utf-8"},
    )
    assert r.status_code == 201, r.text
