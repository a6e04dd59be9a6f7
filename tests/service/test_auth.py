"""The three authentication methods: token, session (cookie + CSRF), API key; hashed secrets."""

from __future__ import annotations

from sqlalchemy import select

from service.auth.identity import digest
from service.db.models import ApiKey, AuthToken, User, UserSession
from tests.service.conftest import PASSWORD, Api


async def _rows(db, model) -> list:
    async with db.read() as s:
        return list((await s.execute(select(model))).scalars())


def test_token_obtain_use_revoke(api: Api) -> None:
    name, _ = api.user()
    bad = api.client.post("/api/auth/token/", json={"username": name, "password": "wrong password"})
    assert bad.status_code == 401
    assert bad.json()["error"] == "authentication_required"
    assert "Token" in bad.headers["www-authenticate"]
    unknown = api.client.post(
        "/api/auth/token/", json={"username": "nobody-" + name, "password": PASSWORD}
    )
    assert unknown.status_code == 401 and unknown.json()["message"] == bad.json()["message"]
    r = api.client.post("/api/auth/token/", json={"username": name, "password": PASSWORD})
    assert r.status_code == 200, r.text
    token = r.json()["token"]
    h = {"Authorization": f"Token {token}"}
    me = api.client.get("/api/auth/me/", headers=h).json()
    assert (me["username"], me["auth_method"]) == (name, "token")
    hashes = {t.key_hash for t in api.call(_rows, api.db, AuthToken)}
    assert digest(token) in hashes and token not in hashes
    assert api.client.delete("/api/auth/token/", headers=h).status_code == 204
    r = api.client.get("/api/auth/me/", headers=h)
    assert r.status_code == 401 and r.json()["message"] == "Invalid token."


def test_malformed_authorization_and_missing_credentials(api: Api) -> None:
    for header in ("Bearer abc", "Token", "Basic dXNlcjpwYXNz"):
        r = api.client.get("/api/portfolios/", headers={"Authorization": header})
        assert r.status_code == 401, header
        assert r.headers["www-authenticate"].startswith("Token")
    r = api.client.get("/api/portfolios/")
    assert r.status_code == 401
    assert r.json() == {
        "error": "authentication_required",
        "message": "Authentication credentials were not provided or are invalid.",
        "details": {},
    }


def test_session_login_cookie_csrf_logout(api: Api) -> None:
    name, _ = api.user()
    client = api.client
    client.cookies.clear()
    r = client.post("/api/auth/login/", json={"username": name, "password": PASSWORD})
    assert r.status_code == 200, r.text
    csrf = r.json()["csrf_token"]
    set_cookie = [v for k, v in r.headers.multi_items() if k == "set-cookie"]
    session_cookie = next(c for c in set_cookie if c.startswith("qc_session="))
    assert (
        "HttpOnly" in session_cookie
        and "SameSite=lax" in session_cookie
        and "Path=/" in session_cookie
    )
    key = session_cookie.split(";")[0].split("=", 1)[1]
    stored = {s.key_hash for s in api.call(_rows, api.db, UserSession)}
    assert digest(key) in stored and key not in stored
    try:
        assert client.get("/api/auth/me/").json()["auth_method"] == "session"
        refused = client.post("/api/portfolios/", json={"name": "x"})
        assert refused.status_code == 403
        assert refused.json()["details"] == {"code": "csrf_failed"}
        wrong = client.post("/api/portfolios/", json={"name": "x"}, headers={"X-CSRFToken": "nope"})
        assert wrong.status_code == 403
        ok = client.post("/api/portfolios/", json={"name": "x"}, headers={"X-CSRFToken": csrf})
        assert ok.status_code == 201, ok.text
        assert client.post("/api/auth/logout/").status_code == 403  # logout is unsafe too
        assert client.post("/api/auth/logout/", headers={"X-CSRFToken": csrf}).status_code == 204
        client.cookies.set("qc_session", key)  # the old cookie no longer authenticates
        assert client.get("/api/auth/me/").status_code == 401
    finally:
        client.cookies.clear()


def test_api_keys_crud(api: Api) -> None:
    _, h = api.user()
    r = api.client.post("/api/auth/api-keys/", json={"name": "ci"}, headers=h)
    assert r.status_code == 201, r.text
    created = r.json()
    key = created["key"]
    assert key.startswith("qck_") and created["prefix"] == key[:12]
    listed = api.client.get("/api/auth/api-keys/", headers=h).json()
    assert listed["count"] == 1 and "key" not in listed["results"][0]
    stored = {k.key_hash for k in api.call(_rows, api.db, ApiKey)}
    assert digest(key) in stored and key not in stored
    kh = {"X-API-Key": key}
    assert api.client.get("/api/auth/me/", headers=kh).json()["auth_method"] == "api_key"
    assert (
        api.client.post("/api/portfolios/", json={"name": "svc"}, headers=kh).status_code == 201
    )  # no CSRF
    assert api.client.delete(f"/api/auth/api-keys/{created['id']}/", headers=h).status_code == 204
    assert api.client.get("/api/auth/me/", headers=kh).status_code == 401
    assert api.client.delete(f"/api/auth/api-keys/{created['id']}/", headers=h).status_code == 404


def test_passwords_are_argon2(api: Api) -> None:
    name, _ = api.user()
    users = {u.username: u.password_hash for u in api.call(_rows, api.db, User)}
    assert users[name].startswith("$argon2id$")
    assert PASSWORD not in users[name]
