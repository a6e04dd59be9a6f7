"""The OpenAPI document covers every method + path of the finance document's endpoint table."""

from __future__ import annotations

import pytest

from tests.service.conftest import Api

#: The endpoint table of the finance API document (seeds/000_693b1f3b8d98dd30.txt,
#: section "Endpoints"), in its order.
DOCUMENT_ENDPOINTS: list[tuple[str, str]] = [
    ("GET", "/api/portfolios/"),
    ("POST", "/api/portfolios/"),
    ("GET", "/api/portfolios/{portfolio_id}/"),
    ("PUT", "/api/portfolios/{portfolio_id}/"),
    ("DELETE", "/api/portfolios/{portfolio_id}/"),
    ("GET", "/api/portfolios/{portfolio_id}/positions/"),
    ("POST", "/api/portfolios/{portfolio_id}/positions/"),
    ("GET", "/api/transactions/"),
    ("POST", "/api/transactions/"),
    ("GET", "/api/assets/"),
    ("GET", "/api/assets/{asset_id}/"),
    ("GET", "/api/assets/{asset_id}/price-history/"),
    ("POST", "/api/assets/bulk-prices/"),
    ("GET", "/api/backtesting/strategies/"),
    ("POST", "/api/backtesting/strategies/"),
    ("GET", "/api/backtesting/strategies/{id}/"),
    ("GET", "/api/backtesting/backtests/"),
    ("POST", "/api/backtesting/backtests/"),
    ("POST", "/api/backtesting/backtests/{id}/run/"),
    ("POST", "/api/backtesting/quick-backtest/"),
    ("GET", "/api/analytics/portfolio/{id}/metrics/"),
    ("GET", "/api/analytics/portfolio/{id}/performance/"),
    ("GET", "/api/analytics/portfolio/{id}/allocation/"),
    ("GET", "/api/analytics/portfolio/{id}/risk/"),
    ("GET", "/api/analytics/assets/{id}/technical/"),
    ("GET", "/api/tax/analytics/summary/"),
    ("POST", "/api/tax/analytics/calculate/"),
    ("GET", "/api/tax/loss-harvesting/"),
    ("POST", "/api/tax/loss-harvesting/analyze/"),
    ("GET", "/api/tax/reports/"),
    ("POST", "/api/tax/reports/generate/"),
    ("GET", "/realtime/websocket-info/"),
    ("GET", "/realtime/status/"),
    ("POST", "/api/realtime/force_price_update/"),
]


def _normalize(path: str) -> str:
    """``/api/portfolios/{portfolio_id}`` and ``.../{id}/`` compare equal."""
    parts = ["{}" if p.startswith("{") else p for p in path.strip("/").split("/")]
    return "/" + "/".join(parts) + "/"


@pytest.fixture(scope="module")
def schema(api: Api) -> dict:
    r = api.client.get("/schema/openapi.json")
    assert r.status_code == 200
    return r.json()


def test_document_table_is_complete() -> None:
    """The list holds exactly the 34 rows of the document's table, once each."""
    assert len(DOCUMENT_ENDPOINTS) == 34 and len(set(DOCUMENT_ENDPOINTS)) == 34


@pytest.mark.parametrize(("method", "path"), DOCUMENT_ENDPOINTS)
def test_document_endpoint_in_schema(schema: dict, method: str, path: str) -> None:
    paths = {_normalize(p): ops for p, ops in schema["paths"].items()}
    assert _normalize(path) in paths, path
    assert method.lower() in paths[_normalize(path)], (method, path)


def test_schema_ui_and_security(api: Api, schema: dict) -> None:
    assert set(schema["components"]["securitySchemes"]) == {
        "TokenAuth",
        "ApiKeyAuth",
        "SessionCookie",
    }
    for ui in ("/schema", "/schema/swagger"):
        r = api.client.get(ui)
        assert r.status_code == 200 and "<html" in r.text.lower(), ui


def test_health_and_ready(api: Api) -> None:
    assert api.client.get("/health").json() == {"status": "ok"}
    r = api.client.get("/ready")
    assert r.status_code == 200 and r.json()["database"] == "ok"
