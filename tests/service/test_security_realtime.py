"""WebSocket hardening against a real uvicorn process: revocation closes, connection caps.

The server trusts ``X-Forwarded-For`` from 127.0.0.1 (one hop), so the tests can
speak for several client IPs over loopback.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import websockets

from service.settings import Settings
from tests.service.test_realtime import (
    PASSWORD,
    Server,
    expect_closed,
    new_user,
    of_type,
    portfolio_holding,
    recv_until,
    send,
    start_server,
    token_of,
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("rt-security")
    srv = start_server(
        data,
        f"sqlite+aiosqlite:///{data / 'rt.db'}",
        QC_REALTIME_TICK_SECONDS="0.5",
        QC_REALTIME_MAX_CONNECTIONS_PER_IP="3",
        QC_REALTIME_MAX_CONNECTIONS="5",
        QC_TRUST_FORWARDED_FOR="true",
        QC_TRUSTED_PROXIES="127.0.0.1",
        QC_AUTH_CACHE_SECONDS="0",
    )
    yield srv
    srv.stop()


def _from(ip: str) -> dict[str, str]:
    return {"X-Forwarded-For": ip}


def test_revoking_a_credential_closes_its_websockets(server: Server) -> None:
    name, headers = new_user(server)

    async def run() -> None:
        async with httpx.AsyncClient(base_url=server.http, headers=_from("10.1.0.1")) as http:
            pid = await portfolio_holding(http, headers, "AAPL")
            key = (
                await http.post("/api/auth/api-keys/", headers=headers, json={"name": "w"})
            ).json()
            login = await http.post(
                "/api/auth/login/", json={"username": name, "password": PASSWORD}
            )
            session = login.cookies["qc_session"]
            http.cookies.clear()
            tokens = (await http.get("/api/auth/tokens/", headers=headers)).json()["results"]
            ways: list[tuple[str, dict[str, str]]] = [
                (f"{server.ws}?token={token_of(headers)}", {}),
                (server.ws, {"X-API-Key": key["key"]}),
                (server.ws, {"Cookie": f"qc_session={session}"}),
            ]
            sockets = []
            for url, extra in ways:
                ws = await websockets.connect(
                    url, additional_headers={**extra, **_from("10.1.0.2")}
                )
                await send(ws, {"type": "subscribe_portfolio", "portfolio_id": pid})
                await recv_until(ws, of_type("subscribed", portfolio_id=pid))
                sockets.append(ws)
            # A second token of the user keeps the REST calls below authenticated.
            r = await http.post("/api/auth/token/", json={"username": name, "password": PASSWORD})
            other = {"Authorization": f"Token {r.json()['token']}"}
            revocations = [
                http.delete(f"/api/auth/tokens/{tokens[0]['id']}/", headers=other),
                http.delete(f"/api/auth/api-keys/{key['id']}/", headers=other),
                http.post(
                    "/api/auth/logout/",
                    headers={
                        "Cookie": f"qc_session={session}",
                        "X-CSRFToken": login.json()["csrf_token"],
                    },
                ),
            ]
            for ws, revoke in zip(sockets, revocations, strict=True):
                assert (await revoke).status_code == 204
                seen = await expect_closed(ws, 1008, timeout=5)
                assert seen[-1] == {
                    "type": "error",
                    "error": "credential_revoked",
                    "message": "The credential of this connection was revoked.",
                }

    asyncio.run(run())


def test_connections_are_capped_per_ip_and_in_total(server: Server) -> None:
    async def run() -> None:
        opened: list[Any] = []
        try:
            for _ in range(3):
                opened.append(
                    await websockets.connect(server.ws, additional_headers=_from("10.2.0.1"))
                )
            extra = await websockets.connect(server.ws, additional_headers=_from("10.2.0.1"))
            seen = await expect_closed(extra, 1008)
            assert seen[0]["error"] == "too_many_connections"
            # Another client still gets in, until the worker's total is reached.
            for ip in ("10.2.0.2", "10.2.0.3"):
                opened.append(await websockets.connect(server.ws, additional_headers=_from(ip)))
            full = await websockets.connect(server.ws, additional_headers=_from("10.2.0.4"))
            seen = await expect_closed(full, 1013)
            assert seen[0]["error"] == "server_busy"
            # The open ones still work.
            await send(opened[0], {"type": "ping"})
            await recv_until(opened[0], of_type("pong"))
        finally:
            for ws in opened:
                await ws.close()
        # Closed connections free their places.
        await asyncio.sleep(0.5)
        again = await websockets.connect(server.ws, additional_headers=_from("10.2.0.1"))
        await send(again, {"type": "ping"})
        await recv_until(again, of_type("pong"))
        await again.close()

    asyncio.run(run())


def test_serve_turns_uvicorn_proxy_headers_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """uvicorn would rewrite the peer from X-Forwarded-For (from 127.0.0.1 by default)
    before the app could apply its own rule; ``serve`` turns that off."""
    import uvicorn

    from service import cli

    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda *a, **kw: seen.update(kw))

    async def prepare(settings: Settings) -> None:
        return None

    monkeypatch.setattr(cli, "_prepare", prepare)
    args = argparse.Namespace(
        host="127.0.0.1", port=1, workers=1, log_level="info", access_log=False
    )
    cli.cmd_serve(args, Settings.from_env({}))
    assert seen["proxy_headers"] is False
