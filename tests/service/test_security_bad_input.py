"""Bad input gets the documented 4xx body, never a 500.

Ids of 2^63 and more in paths, queries and bodies, bodies that are not JSON (not
UTF-8, truncated, nested 100,000 deep, empty), decimals too large to store, huge
indicator windows; one error shape and one field-path style (``items[0].name``).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.service.conftest import Api

BIG = 2**63
ERROR_KEYS = {"error", "message", "details"}


def _shape(r: Any, status: int | tuple[int, ...]) -> dict[str, Any]:
    statuses = (status,) if isinstance(status, int) else status
    assert r.status_code in statuses, (r.request.method, r.request.url, r.status_code, r.text)
    body = r.json()
    assert set(body) == ERROR_KEYS, body
    return body  # type: ignore[no-any-return]


def _templated_operations(api: Api) -> list[tuple[str, str]]:
    schema = api.client.get("/schema/openapi.json").json()
    ops = []
    for path, item in schema["paths"].items():
        if "{" not in path:
            continue
        for method in ("get", "put", "post", "delete", "patch"):
            if method in item:
                ops.append((method.upper(), path))
    assert len(ops) >= 15  # every templated route of the service, not a sample
    return ops


# 2^31: ids are 32-bit INTEGER columns on PostgreSQL in most tables (found by the fuzzer).
@pytest.mark.parametrize("big", [2**31, 10**16 + 1, BIG, 10**30])
def test_ids_too_large_for_the_database_in_any_path_are_404(api: Api, big: int) -> None:
    _, headers = api.user()
    for method, template in _templated_operations(api):
        path = re.sub(r"\{[^}]+\}", str(big), template) + "/"
        r = api.client.request(method, path, headers=headers, json={})
        # 404 for the id; a route that validates its body first may say 400 about the body.
        body = _shape(r, (400, 404))
        if r.status_code == 400:
            assert body["details"]["field"] != "body" or body["details"]["code"], body


@pytest.mark.parametrize(
    ("path", "field"),
    [
        (f"/api/transactions/?portfolio={BIG}", "portfolio"),
        (f"/api/tax/analytics/summary/?portfolio_id={BIG}", "portfolio_id"),
        (f"/api/tax/loss-harvesting/?portfolio_id={BIG}", "portfolio_id"),
        (f"/api/portfolios/?offset={BIG}", "offset"),
    ],
)
def test_ids_of_2_63_in_a_query_are_4xx(api: Api, path: str, field: str) -> None:
    _, headers = api.user()
    r = api.client.get(path, headers=headers)
    if r.status_code == 200:  # a filter that matches nothing is a fine answer too
        return
    body = _shape(r, (400, 404))
    if r.status_code == 400:
        assert body["details"]["field"] == field


def _portfolio(api: Api, headers: dict[str, str]) -> int:
    r = api.client.post("/api/portfolios/", headers=headers, json={"name": "p"})
    assert r.status_code == 201, r.text
    return int(r.json()["id"])


def test_ids_of_2_63_in_bodies_are_400_naming_the_field(api: Api) -> None:
    _, headers = api.user()
    pid = _portfolio(api, headers)
    buy = {
        "portfolio": pid,
        "asset_symbol": "AAPL",
        "transaction_type": "buy",
        "quantity": "1",
        "price": "10",
        "transaction_date": "2026-01-05",
    }
    cases: list[tuple[str, str, dict[str, Any], str]] = [
        ("POST", "/api/transactions/", {**buy, "portfolio": BIG}, "portfolio"),
        ("POST", "/api/transactions/", {**buy, "portfolio": 2**31}, "portfolio"),
        (
            "POST",
            "/api/transactions/",
            {**buy, "transaction_type": "sell", "lot_id": BIG},
            "lot_id",
        ),
        (
            "POST",
            "/api/backtesting/backtests/",
            {"strategy": BIG, "name": "b", "start_date": "2025-01-02", "end_date": "2025-06-30"},
            "strategy",
        ),
        ("PUT", "/api/tax/settings/", {"loss_limit": "1e30"}, "loss_limit"),
        ("PUT", "/api/tax/settings/", {"loss_limit": 1e30}, "loss_limit"),
    ]
    for method, path, payload, field in cases:
        r = api.client.request(method, path, headers=headers, json=payload)
        if r.status_code == 404:  # the id names nothing: as good as a 400
            _shape(r, 404)
            continue
        body = _shape(r, 400)
        assert body["error"] == "validation_error"
        assert body["details"]["field"] == field, (path, body)


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b'{"name": "\xff\xfe"}', "invalid_json"),  # not UTF-8
        (b"[" * 100_000, "invalid_json"),  # nested 100,000 deep
        (b'{"name": "a', "invalid_json"),  # truncated
        (b'{"name": "\\ud800"}', "invalid_json"),  # a lone surrogate
        (b"{'name': 'p'}", "invalid_json"),  # not JSON at all
        (b"", "required"),
    ],
)
def test_bodies_that_are_not_json(api: Api, content: bytes, code: str) -> None:
    _, headers = api.user()
    r = api.client.post(
        "/api/portfolios/",
        headers={**headers, "Content-Type": "application/json"},
        content=content,
    )
    body = _shape(r, 400)
    assert body["error"] == "validation_error"
    assert body["details"] == {"field": "body", "code": code}


def test_huge_indicator_windows_are_400(api: Api) -> None:
    _, headers = api.user()
    for indicator in ("sma_99999999999999999999", "sma_999999999", "bollinger_20_1e308"):
        r = api.client.get(
            f"/api/analytics/assets/1/technical/?indicators={indicator}", headers=headers
        )
        body = _shape(r, 400)
        assert body["details"] == {"field": "indicators", "code": "out_of_range"}


def test_field_paths_use_one_style(api: Api) -> None:
    _, headers = api.user()
    r = api.client.post("/api/assets/bulk-prices/", headers=headers, json={"symbols": ["AAPL", 7]})
    body = _shape(r, 400)
    assert body["details"]["field"] == "symbols[1]"
    r = api.client.post(
        "/api/backtesting/quick-backtest/",
        headers=headers,
        json={
            "strategy_type": "moving_average",
            "asset_symbols": ["AAPL", "NOPE"],
            "start_date": "2025-01-02",
            "end_date": "2025-06-30",
        },
    )
    body = _shape(r, 400)
    assert body["details"]["field"] == "asset_symbols[1]", body


@pytest.mark.parametrize("big", [2**31, BIG, 10**30])
def test_websocket_portfolio_ids_too_large_are_refused_on_decoding(big: int) -> None:
    from service.realtime.messages import MessageError, decode

    for kind in ("subscribe_portfolio", "unsubscribe_portfolio"):
        with pytest.raises(MessageError) as exc:
            decode(f'{{"type": "{kind}", "portfolio_id": {big}}}')
        assert exc.value.code == "invalid_message"
