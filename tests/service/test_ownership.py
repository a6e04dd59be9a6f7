"""Ownership matrix: every endpoint with another user's ids (404, never data) and with no credentials (401)."""

from __future__ import annotations

import pytest

from service.app import CORE_ROUTERS
from tests.service.conftest import Api

BUY = {
    "asset_symbol": "SPY",
    "quantity": "1",
    "purchase_price": "10",
    "purchase_date": "2025-01-02",
}

#: (method, path template, JSON body) of every authenticated route of this issue.
PROTECTED: list[tuple[str, str, dict | None]] = [
    ("GET", "/api/portfolios/", None),
    ("POST", "/api/portfolios/", {"name": "x"}),
    ("GET", "/api/portfolios/{p}/", None),
    ("PUT", "/api/portfolios/{p}/", {"name": "stolen"}),
    ("DELETE", "/api/portfolios/{p}/", None),
    ("GET", "/api/portfolios/{p}/positions/", None),
    ("POST", "/api/portfolios/{p}/positions/", BUY),
    ("POST", "/api/portfolios/{p}/import/", None),  # multipart; another user's: below
    ("GET", "/api/transactions/", None),
    ("POST", "/api/transactions/", None),  # body built per case
    ("GET", "/api/transactions/{t}/", None),
    ("PUT", "/api/transactions/{t}/", None),  # body built per case
    ("DELETE", "/api/transactions/{t}/", None),
    ("DELETE", "/api/auth/token/", None),
    ("POST", "/api/auth/logout/", None),
    ("GET", "/api/auth/me/", None),
    ("GET", "/api/auth/api-keys/", None),
    ("POST", "/api/auth/api-keys/", {"name": "k"}),
    ("DELETE", "/api/auth/api-keys/{k}/", None),
    # another user's token id: tests/service/test_security_auth.py
    ("GET", "/api/auth/tokens/", None),
    ("DELETE", "/api/auth/tokens/{k}/", None),
    ("POST", "/api/auth/password/", {"current_password": "x", "new_password": "y"}),
]
PUBLIC: list[tuple[str, str]] = [
    ("POST", "/api/auth/token/"),
    ("POST", "/api/auth/login/"),
    ("GET", "/api/assets/"),
    ("GET", "/api/assets/{a}/"),
    ("GET", "/api/assets/{a}/price-history/"),
    ("POST", "/api/assets/bulk-prices/"),
]


#: The resources of the core routers; later features keep their own matrices.
CORE_PREFIXES = ("/api/portfolios", "/api/transactions", "/api/assets", "/api/auth")


def _shape(path: str) -> str:
    return "/".join("{}" if seg.startswith("{") else seg for seg in path.rstrip("/").split("/"))


def test_matrix_covers_every_route(api: Api) -> None:
    """A new route of the core resources must be added to this matrix."""
    routes = {
        (method, _shape(route.path))
        for route in api.client.app.routes
        if route.path.startswith(CORE_PREFIXES)
        for method in getattr(route, "methods", set()) - {"OPTIONS", "HEAD"}
    }
    listed = {(m, _shape(p)) for m, p, _ in PROTECTED} | {(m, _shape(p)) for m, p in PUBLIC}
    assert routes == listed
    assert CORE_ROUTERS  # the routers under test


def _victim(api: Api) -> dict[str, object]:
    _, h = api.user("victim")
    p = api.client.post(
        "/api/portfolios/", json={"name": "private", "description": "secret"}, headers=h
    ).json()["id"]
    t = api.client.post(f"/api/portfolios/{p}/positions/", json={**BUY, "quantity": "7"}, headers=h)
    assert t.status_code == 201
    txn = api.client.get(f"/api/transactions/?portfolio_id={p}", headers=h).json()["results"][0][
        "id"
    ]
    k = api.client.post("/api/auth/api-keys/", json={"name": "victim-key"}, headers=h).json()["id"]
    return {"h": h, "p": p, "t": txn, "k": k, "a": 1}


def _request(
    api: Api, method: str, path: str, body: dict | None, ids: dict, headers: dict[str, str]
):
    url = path.format(**ids)
    if path.startswith("/api/transactions/") and method in ("POST", "PUT"):
        body = {
            "portfolio": ids["p"],
            "asset_symbol": "SPY",
            "transaction_type": "sell",
            "quantity": "1",
            "price": "1",
            "transaction_date": "2025-01-03",
        }
    return api.client.request(method, url, json=body, headers=headers)


@pytest.mark.parametrize(
    ("method", "path", "body"), PROTECTED, ids=[f"{m} {p}" for m, p, _ in PROTECTED]
)
def test_no_credentials_is_401(api: Api, method: str, path: str, body: dict | None) -> None:
    ids = {"p": 1, "t": 1, "k": 1}
    r = _request(api, method, path, body, ids, {})
    assert r.status_code == 401, r.text
    assert r.json()["error"] == "authentication_required" and "www-authenticate" in r.headers


def test_other_users_ids(api: Api) -> None:
    victim = _victim(api)
    ids = {k: victim[k] for k in ("p", "t", "k")}
    _, attacker = api.user("attacker")
    expected = {
        ("GET", "/api/portfolios/{p}/"): 404,
        ("PUT", "/api/portfolios/{p}/"): 404,
        ("DELETE", "/api/portfolios/{p}/"): 404,
        ("GET", "/api/portfolios/{p}/positions/"): 404,
        ("POST", "/api/portfolios/{p}/positions/"): 404,
        ("GET", "/api/transactions/{t}/"): 404,
        ("PUT", "/api/transactions/{t}/"): 404,
        ("DELETE", "/api/transactions/{t}/"): 404,
        ("DELETE", "/api/auth/api-keys/{k}/"): 404,
        ("POST", "/api/transactions/"): 400,
    }
    for (method, path), status in expected.items():
        body = next(b for m, p, b in PROTECTED if (m, p) == (method, path))
        r = _request(api, method, path, body, ids, attacker)
        assert r.status_code == status, (method, path, r.text)
        assert "secret" not in r.text and "private" not in r.text
        if status == 400:
            assert r.json()["details"] == {"field": "portfolio", "code": "not_found"}
    statement = {"file": ("s.csv", b"date,symbol,action,quantity,price\n")}
    r = api.client.post(f"/api/portfolios/{ids['p']}/import/", files=statement, headers=attacker)
    assert r.status_code == 404, r.text
    assert "secret" not in r.text and "private" not in r.text
    # a sell in the attacker's own portfolio naming the victim's buy as its lot
    own = api.client.post("/api/portfolios/", json={"name": "mine"}, headers=attacker).json()["id"]
    assert (
        api.client.post(f"/api/portfolios/{own}/positions/", json=BUY, headers=attacker).status_code
        == 201
    )
    sell = {
        "portfolio": own,
        "asset_symbol": "SPY",
        "transaction_type": "sell",
        "quantity": "1",
        "price": "1",
        "transaction_date": "2025-01-03",
        "lot_id": ids["t"],
    }
    r = api.client.post("/api/transactions/", json=sell, headers=attacker)
    assert r.status_code == 400 and r.json()["details"] == {"field": "lot_id", "code": "not_found"}
    assert "secret" not in r.text and "private" not in r.text
    api.client.delete(f"/api/portfolios/{own}/", headers=attacker)
    assert api.client.get("/api/portfolios/", headers=attacker).json()["count"] == 0
    listed = api.client.get(f"/api/transactions/?portfolio_id={ids['p']}", headers=attacker).json()
    assert listed["count"] == 0
    assert api.client.get("/api/auth/api-keys/", headers=attacker).json()["count"] == 0
    # the victim's data is untouched
    h = victim["h"]
    p = api.client.get(f"/api/portfolios/{ids['p']}/", headers=h).json()
    assert (p["name"], p["position_count"]) == ("private", 1)
    assert api.client.get("/api/transactions/", headers=h).json()["count"] == 1
    assert api.client.get("/api/auth/api-keys/", headers=h).json()["count"] == 1


@pytest.mark.parametrize(("method", "path"), [p for p in PUBLIC if p[0] == "GET" or "bulk" in p[1]])
def test_market_data_is_public(api: Api, method: str, path: str) -> None:
    body = {"symbols": ["SPY"]} if "bulk" in path else None
    r = api.client.request(method, path.format(a=1), json=body)
    assert r.status_code == 200, r.text
