"""Security hardening of the request pipeline and of ``/api/auth/``.

X-Forwarded-For hop trust, rate-limited bad-token 401s, token listing/revocation
and expiry, password change, API-key scopes, the password blocklist, usernames
compared trimmed and case-insensitively, ``nosniff`` and ``no-store``.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from typing import Any

import pytest

from service.auth.services import check_password, create_user
from service.errors import ValidationError
from service.middleware import ProxyTrust, client_ip
from tests.service.conftest import PASSWORD, Api

LOCAL = ProxyTrust((ipaddress.ip_network("127.0.0.1/32"),), hops=1)


def _scope(peer: str) -> dict[str, Any]:
    return {"type": "http", "client": (peer, 40000), "headers": []}


def test_client_ip_believes_only_the_hops_our_proxies_appended() -> None:
    spoofed = {"x-forwarded-for": "1.2.3.4, 198.51.100.7"}  # client wrote 1.2.3.4
    # Not trusted at all: the peer, whatever the header says.
    assert client_ip(_scope("127.0.0.1"), spoofed, None) == "127.0.0.1"
    # One trusted proxy: the right-most entry (what that proxy saw), not the client's pick.
    assert client_ip(_scope("127.0.0.1"), spoofed, LOCAL) == "198.51.100.7"
    # Two proxies of ours: the second entry from the right.
    two = ProxyTrust(LOCAL.networks, hops=2)
    chain = {"x-forwarded-for": "6.6.6.6, 198.51.100.7, 10.0.0.2"}
    assert client_ip(_scope("127.0.0.1"), chain, two) == "198.51.100.7"
    # A peer that is not a configured proxy cannot forward anything.
    assert client_ip(_scope("203.0.113.5"), spoofed, LOCAL) == "203.0.113.5"
    # Garbage where our proxy writes an address: the peer.
    assert client_ip(_scope("127.0.0.1"), {"x-forwarded-for": "nonsense"}, LOCAL) == "127.0.0.1"


def _with_peer(api: Api, peer: str) -> None:
    """Make every request of ``api`` arrive from ``peer`` (the test client has no IP)."""
    app = api.client.app
    inner = app.asgi_handler

    async def handler(scope: Any, receive: Any, send: Any) -> None:
        scope["client"] = (peer, 40000)
        await inner(scope, receive, send)

    app.asgi_handler = handler


@pytest.mark.parametrize("trusted", [False, True])
def test_rotating_x_forwarded_for_does_not_escape_the_login_limit(
    api_factory: Any, trusted: bool
) -> None:
    api = api_factory(
        rate_limit_anonymous="3/hour", trust_forwarded_for=trusted, trusted_proxies="127.0.0.1"
    )
    _with_peer(api, "127.0.0.1")
    codes = []
    for i in range(5):
        r = api.client.post(
            "/api/auth/login/",
            json={"username": "nobody", "password": "wrong password"},
            headers={"X-Forwarded-For": f"10.9.8.{i}, 198.51.100.7"},
        )
        codes.append(r.status_code)
    assert codes == [401, 401, 401, 429, 429]


def test_bad_token_401s_are_counted_and_carry_rate_limit_headers(api_factory: Any) -> None:
    api = api_factory(rate_limit_anonymous="3/hour")
    answers = [
        api.client.get("/api/portfolios/", headers={"Authorization": f"Token qct_guess{i}"})
        for i in range(4)
    ]
    assert [r.status_code for r in answers] == [401, 401, 401, 429]
    assert [r.headers["x-ratelimit-remaining"] for r in answers[:3]] == ["2", "1", "0"]
    assert answers[0].headers["x-ratelimit-limit"] == "3"
    assert "retry-after" in answers[3].headers
    bad_key = api.client.get("/api/portfolios/", headers={"X-API-Key": "qck_guess"})
    assert bad_key.status_code == 429  # the same budget: the caller's IP
    malformed = api.client.get("/api/portfolios/", headers={"Authorization": "Bearer x"})
    assert malformed.status_code == 429


def test_nosniff_everywhere_and_no_store_on_auth(api: Api) -> None:
    name, headers = api.user()
    for path in ("/api/portfolios/", "/health", "/schema/openapi.json", "/api/nowhere/"):
        r = api.client.get(path, headers=headers)
        assert r.headers["x-content-type-options"] == "nosniff", path
    token = api.client.post("/api/auth/token/", json={"username": name, "password": PASSWORD})
    assert token.status_code == 200
    assert token.headers["cache-control"] == "no-store"
    refused = api.client.post("/api/auth/token/", json={"username": name, "password": "x" * 9})
    assert refused.headers["cache-control"] == "no-store"
    assert "cache-control" not in api.client.get("/api/portfolios/", headers=headers).headers


def _token(api: Api, name: str, password: str = PASSWORD) -> dict[str, str]:
    r = api.client.post("/api/auth/token/", json={"username": name, "password": password})
    assert r.status_code == 200, r.text
    return {"Authorization": f"Token {r.json()['token']}"}


def test_tokens_are_listed_and_revoked_by_id(api: Api) -> None:
    name, first = api.user()
    second = _token(api, name)
    listed = api.client.get("/api/auth/tokens/", headers=first)
    assert listed.status_code == 200
    body = listed.json()
    assert body["count"] == 2
    assert [t["current"] for t in body["results"]] == [True, False]
    assert all(t["expires_at"] is None and "token" not in t for t in body["results"])
    other_id = body["results"][1]["id"]
    # Another user's token id is a 404 and stays valid.
    _, stranger = api.user()
    assert api.client.delete(f"/api/auth/tokens/{other_id}/", headers=stranger).status_code == 404
    assert api.client.get("/api/auth/me/", headers=second).status_code == 200
    assert api.client.delete(f"/api/auth/tokens/{other_id}/", headers=first).status_code == 204
    assert api.client.get("/api/auth/me/", headers=second).status_code == 401
    assert api.client.get("/api/auth/tokens/", headers=first).json()["count"] == 1
    assert api.client.delete(f"/api/auth/tokens/{other_id}/", headers=first).status_code == 404


def test_tokens_expire_after_the_ttl(api_factory: Any) -> None:
    api = api_factory(token_ttl=3600, auth_cache_seconds=0)
    name, _ = api.user()
    r = api.client.post("/api/auth/token/", json={"username": name, "password": PASSWORD})
    expires = dt.datetime.fromisoformat(r.json()["expires_at"])
    assert dt.timedelta(seconds=3590) < expires - dt.datetime.now(dt.UTC) <= dt.timedelta(hours=1)
    headers = {"Authorization": f"Token {r.json()['token']}"}
    assert api.client.get("/api/auth/me/", headers=headers).status_code == 200

    async def age(db: Any) -> None:
        from sqlalchemy import update

        from service.db.models import AuthToken

        async with db.write() as s:
            past = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
            await s.execute(update(AuthToken).values(expires_at=past))

    api.call(age, api.db)
    r = api.client.get("/api/auth/me/", headers=headers)
    assert r.status_code == 401 and r.json()["message"] == "Invalid token."


def test_password_change_revokes_the_other_sessions_and_tokens(api: Api) -> None:
    name, current = api.user()
    other = _token(api, name)
    api.client.cookies.clear()
    login = api.client.post("/api/auth/login/", json={"username": name, "password": PASSWORD})
    assert login.status_code == 200
    api.client.cookies.clear()  # keep the session cookie out of the token requests below
    session_cookie = login.cookies["qc_session"]
    new = "a much longer passphrase 42"
    weak = api.client.post(
        "/api/auth/password/",
        headers=current,
        json={"current_password": PASSWORD, "new_password": "password123"},
    )
    assert weak.status_code == 400
    assert weak.json()["details"] == {"field": "new_password", "code": "too_common"}
    wrong = api.client.post(
        "/api/auth/password/",
        headers=current,
        json={"current_password": "not the password", "new_password": new},
    )
    assert wrong.status_code == 401
    ok = api.client.post(
        "/api/auth/password/",
        headers=current,
        json={"current_password": PASSWORD, "new_password": new},
    )
    assert ok.status_code == 204, ok.text
    assert api.client.get("/api/auth/me/", headers=current).status_code == 200
    assert api.client.get("/api/auth/me/", headers=other).status_code == 401
    api.client.cookies.set("qc_session", session_cookie)
    by_cookie = api.client.get("/api/auth/me/")
    api.client.cookies.clear()
    assert by_cookie.status_code == 401
    assert (
        api.client.post(
            "/api/auth/token/", json={"username": name, "password": PASSWORD}
        ).status_code
        == 401
    )
    _token(api, name, new)


def test_api_keys_need_the_credentials_scope_to_mint_credentials(api: Api) -> None:
    name, headers = api.user()
    plain = api.client.post("/api/auth/api-keys/", headers=headers, json={"name": "ci"})
    assert plain.status_code == 201 and plain.json()["scopes"] == []
    key = {"X-API-Key": plain.json()["key"]}
    creds = {"username": name, "password": PASSWORD}
    for method, path, body in [
        ("POST", "/api/auth/api-keys/", {"name": "escalate"}),
        ("POST", "/api/auth/token/", creds),
        ("POST", "/api/auth/login/", creds),
        ("POST", "/api/auth/password/", {"current_password": PASSWORD, "new_password": "x" * 20}),
    ]:
        r = api.client.request(method, path, headers=key, json=body)
        assert r.status_code == 403, (path, r.text)
        assert r.json()["details"] == {"code": "scope_required", "scope": "credentials"}
    assert api.client.get("/api/portfolios/", headers=key).status_code == 200
    scoped = api.client.post(
        "/api/auth/api-keys/", headers=headers, json={"name": "admin", "scopes": ["credentials"]}
    )
    assert scoped.json()["scopes"] == ["credentials"]
    admin = {"X-API-Key": scoped.json()["key"]}
    assert (
        api.client.post("/api/auth/api-keys/", headers=admin, json={"name": "child"}).status_code
        == 201
    )
    assert api.client.post("/api/auth/token/", headers=admin, json=creds).status_code == 200
    bad_scope = api.client.post(
        "/api/auth/api-keys/", headers=headers, json={"name": "x", "scopes": ["root"]}
    )
    assert bad_scope.status_code == 400
    assert bad_scope.json()["details"]["field"] == "scopes[0]"


@pytest.mark.parametrize(
    ("password", "code"),
    [
        ("short", "min_length"),
        ("         ", "blank"),
        ("\t\n  \u3000   ", "blank"),
        ("password1", "too_common"),
        ("PassWord1", "too_common"),  # compared case-insensitively
        ("qwertyuiop", "too_common"),
        ("iloveyou", "too_common"),
    ],
)
def test_weak_passwords_are_refused(password: str, code: str) -> None:
    with pytest.raises(ValidationError) as exc:
        check_password(password)
    assert (exc.value.field, exc.value.code) == ("password", code)


def test_a_password_may_not_be_the_username() -> None:
    with pytest.raises(ValidationError) as exc:
        check_password("Alice-Wonderland", "alice-wonderland")
    assert exc.value.code == "similar_to_username"
    check_password("correct horse battery", "alice")  # a passphrase passes


def test_usernames_are_trimmed_and_case_insensitive(api: Api) -> None:
    import uuid

    base = f"Alice_{uuid.uuid4().hex[:8]}"
    user = api.call(create_user, api.db, f"  {base} ", PASSWORD)
    assert user.username == base  # stored trimmed, case kept
    for variant in (base.lower(), base.upper(), f" {base.lower()}\t"):
        r = api.client.post("/api/auth/token/", json={"username": variant, "password": PASSWORD})
        assert r.status_code == 200, variant
    for clash in (base.lower(), f" {base.upper()} "):
        with pytest.raises(ValidationError) as exc:
            api.call(create_user, api.db, clash, PASSWORD)
        assert (exc.value.field, exc.value.code) == ("username", "unique")
    for bad in ("   ", "a\x00b", "tab\there"):
        with pytest.raises(ValidationError) as exc:
            api.call(create_user, api.db, bad, PASSWORD)
        assert exc.value.field == "username"


def test_cli_token_honours_ttl_and_case_insensitive_names(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import asyncio
    import io

    from sqlalchemy import select

    from service.__main__ import main
    from service.auth.identity import digest
    from service.db import Database
    from service.db.models import AuthToken
    from service.settings import Settings

    monkeypatch.setenv("QC_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("QC_DATABASE_URL", raising=False)
    monkeypatch.setenv("QC_TOKEN_TTL", "600")
    assert main(["migrate"]) == 0
    monkeypatch.setattr("sys.stdin", io.StringIO("long enough password\n"))
    assert main(["createuser", " Dave ", "--password-stdin"]) == 0
    capsys.readouterr()
    assert main(["token", "DAVE"]) == 0
    token = capsys.readouterr().out.strip()
    assert token.startswith("qct_")

    async def expiry() -> dt.datetime | None:
        db = Database(Settings.from_env().database)
        try:
            async with db.read() as s:
                return (
                    await s.execute(
                        select(AuthToken.expires_at).where(AuthToken.key_hash == digest(token))
                    )
                ).scalar_one()
        finally:
            await db.dispose()

    expires = asyncio.run(expiry())
    assert expires is not None
    assert dt.timedelta(seconds=590) < expires - dt.datetime.now(dt.UTC) <= dt.timedelta(minutes=10)
