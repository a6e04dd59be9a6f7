"""Fuzzing the finance service: no input may produce a 5xx.

1. schemathesis generates requests for **every operation** of the service's own
   OpenAPI document, signed in with a real token (a fresh one per request, so an
   operation that revokes tokens cannot lock the fuzzer out) and with the rate
   limits raised, so the operations answer from their handlers, not 401/429.
2. hypothesis posts random bytes, as JSON, to every operation that takes a body.

Every answer must be below 500, and every 4xx must be the documented error body.
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.auth.services import create_token
from tests.service.conftest import Api

pytestmark = pytest.mark.slow

UNLIMITED = {
    "rate_limit_authenticated": "10000000/hour",
    "rate_limit_anonymous": "10000000/hour",
    "rate_limit_realtime": "10000000/hour",
    "realtime_max_subscriptions": 500,
}
FUZZ = settings(
    max_examples=10,
    deadline=None,
    derandomize=True,  # the same cases on every run: a CI failure reproduces locally
    suppress_health_check=list(HealthCheck),
    database=None,
)
ERROR_KEYS = {"error", "message", "details"}


@pytest.fixture
def fuzz_api(api_factory: Any) -> Api:
    # Backtests run in a thread: no worker processes to start for the fuzzer.
    return api_factory(backtest_workers=0, **UNLIMITED)  # type: ignore[no-any-return]


def _signed_in(api: Api) -> tuple[int, str]:
    """A user with a portfolio holding AAPL and a strategy (ids the fuzzer may hit)."""
    _, headers = api.user("fuzz")
    client = api.client
    r = client.post("/api/portfolios/", headers=headers, json={"name": "fuzz"})
    assert r.status_code == 201, r.text
    pid = r.json()["id"]
    buy = {
        "portfolio": pid,
        "asset_symbol": "AAPL",
        "transaction_type": "buy",
        "quantity": "5",
        "price": "100",
        "transaction_date": "2026-01-05",
    }
    assert client.post("/api/transactions/", headers=headers, json=buy).status_code == 201
    me = client.get("/api/auth/me/", headers=headers).json()
    return int(me["id"]), headers["Authorization"]


def _check(response: Any, what: str) -> None:
    assert response.status_code < 500, (what, response.status_code, response.text[:500])
    if response.status_code >= 400 and response.headers.get("content-type", "").startswith(
        "application/json"
    ):
        body = response.json()
        assert set(body) == ERROR_KEYS, (what, body)
        if body["error"] == "validation_error":
            assert {"field", "code"} <= set(body["details"]), (what, body)


def test_schemathesis_finds_no_5xx_in_any_operation(fuzz_api: Api) -> None:
    api = fuzz_api
    user_id, _ = _signed_in(api)
    schema = schemathesis.openapi.from_dict(api.client.get("/schema/openapi.json").json())
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 45  # the whole document
    answered: dict[str, set[int]] = {}

    for operation in operations:

        @FUZZ
        @given(case=operation.as_strategy())
        def run(case: Any) -> None:
            label = f"{case.operation.method.upper()} {case.operation.path}"
            token = api.call(create_token, api.db, user_id)
            kwargs = case.as_transport_kwargs(base_url="http://testserver.local")
            headers = {
                k: v
                for k, v in (kwargs.pop("headers", None) or {}).items()
                if k.lower() not in ("authorization", "x-api-key", "cookie")
            }
            headers["Authorization"] = f"Token {token}"
            kwargs.pop("cookies", None)  # signed in by the token alone
            api.client.cookies.clear()
            response = api.client.request(headers=headers, **kwargs)
            answered.setdefault(label, set()).add(response.status_code)
            _check(response, label)

        run()

    # Signed in, the operations answer from their handlers: not only 401/403.
    beyond_auth = [op for op, codes in answered.items() if codes - {401, 403}]
    assert len(beyond_auth) >= len(operations) - 2, answered


def test_random_bytes_to_every_body_route_are_4xx(fuzz_api: Api) -> None:
    api = fuzz_api
    _, auth = _signed_in(api)
    document = api.client.get("/schema/openapi.json").json()
    routes = [
        (method.upper(), path.replace("{", "").replace("}", ""))
        for path, item in document["paths"].items()
        for method, op in item.items()
        if isinstance(op, dict) and "requestBody" in op
    ]
    assert len(routes) >= 15
    concrete = [
        (m, "/".join("1" if p.endswith("_id") or p == "id" else p for p in path.split("/")) + "/")
        for m, path in routes
    ]

    @FUZZ
    @given(body=st.binary(max_size=512), which=st.sampled_from(concrete))
    def run(body: bytes, which: tuple[str, str]) -> None:
        method, path = which
        api.client.cookies.clear()
        response = api.client.request(
            method,
            path,
            content=body,
            headers={"Authorization": auth, "Content-Type": "application/json"},
        )
        _check(response, f"{method} {path} {body!r}")

    run()
