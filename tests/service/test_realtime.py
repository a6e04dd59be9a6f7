"""``/ws/realtime/`` and the real-time endpoints against real uvicorn processes.

The clients are the ``websockets`` library and httpx over loopback. One server
(SQLite, in-memory channels) serves most tests; the cluster tests run two servers
sharing a fresh PostgreSQL database and Redis. Prices come from the simulated market
at the real clock, so tests compare what different clients receive with each other
and with the REST answers, never with fixed numbers.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
import json
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from websockets.exceptions import ConnectionClosed

from service.auth.services import create_token, create_user
from service.db import Database
from service.demo import sync_assets
from service.marketdata.simulated import SimulatedMarket
from service.realtime.services import MAX_MESSAGE_BYTES
from tests.conftest import ServerProcess, free_port, launch_process, wait_until_ready

PASSWORD = "correct horse battery"
Msg = dict[str, Any]


@dataclass
class Server:
    """A ``python -m service serve`` process."""

    http: str
    ws: str
    database_url: str
    process: ServerProcess

    def stop(self) -> None:
        self.process.stop()


def start_server(data_dir: Path, database_url: str, **env: str) -> Server:
    """Start a server and wait until ``/health`` answers (its output goes to a log file)."""
    return wait_ready(launch_server(data_dir, database_url, **env))


def launch_server(data_dir: Path, database_url: str, **env: str) -> Server:
    """Start a server process (see :func:`wait_ready`)."""
    port = free_port()
    data_dir.mkdir(parents=True, exist_ok=True)
    environ = {
        **os.environ,
        "QC_DATA_DIR": str(data_dir),
        "QC_DATABASE_URL": database_url,
        "QC_DEMO_DATA": "0",
        "QC_RATE_LIMIT_ANONYMOUS": "100000/hour",
        **env,
    }
    command = [sys.executable, "-m", "service", "serve", "--port", str(port), "--log-level", "warning"]
    process = launch_process(command, log=data_dir / f"server-{port}.log", env=environ)
    return Server(
        f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/ws/realtime/", database_url, process
    )


def wait_ready(server: Server) -> Server:
    """Wait until the server's ``/health`` answers (a loaded CI box can take a while to import)."""
    wait_until_ready(server.process, f"{server.http}/health", timeout=180)
    return server


async def _user(database_url: str) -> tuple[str, str]:
    db = Database(database_url)
    try:
        name = f"rt_{uuid.uuid4().hex[:10]}"
        user = await create_user(db, name, PASSWORD)
        return name, await create_token(db, user.id)
    finally:
        await db.dispose()


async def _sync_assets(database_url: str) -> None:
    db = Database(database_url)
    try:
        await sync_assets(db, SimulatedMarket())
    finally:
        await db.dispose()


def new_user(server: Server) -> tuple[str, dict[str, str]]:
    """A fresh user (own rate-limit buckets); returns (username, token headers)."""
    name, token = asyncio.run(_user(server.database_url))
    return name, {"Authorization": f"Token {token}"}


def token_of(headers: dict[str, str]) -> str:
    return headers["Authorization"].split()[1]


async def portfolio_holding(http: httpx.AsyncClient, headers: dict[str, str], symbol: str) -> int:
    """A new portfolio of the user with 10 shares of ``symbol``; returns its id."""
    r = await http.post("/api/portfolios/", json={"name": "live"}, headers=headers)
    assert r.status_code == 201, r.text
    pid = int(r.json()["id"])
    buy = {
        "portfolio": pid,
        "asset_symbol": symbol,
        "transaction_type": "buy",
        "quantity": "10",
        "price": "100",
        "transaction_date": "2026-01-05",
    }
    r = await http.post("/api/transactions/", json=buy, headers=headers)
    assert r.status_code == 201, r.text
    return pid


async def send(ws: Any, message: Msg | str) -> None:
    await ws.send(message if isinstance(message, str) else json.dumps(message))


async def recv_until(ws: Any, want: Callable[[Msg], bool], timeout: float = 10.0) -> Msg:
    """The next message satisfying ``want`` (others, such as feed updates, are skipped)."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError("expected message did not arrive")
        msg: Msg = json.loads(await asyncio.wait_for(ws.recv(), left))
        if want(msg):
            return msg


def of_type(kind: str, **fields: Any) -> Callable[[Msg], bool]:
    return lambda m: m["type"] == kind and all(m.get(k) == v for k, v in fields.items())


async def expect_closed(ws: Any, code: int, timeout: float = 10.0) -> list[Msg]:
    """Read until the server closes with ``code``; returns what arrived before."""
    seen: list[Msg] = []
    with pytest.raises(ConnectionClosed) as info:
        async with asyncio.timeout(timeout):
            while True:
                seen.append(json.loads(await ws.recv()))
    assert info.value.rcvd is not None and info.value.rcvd.code == code
    return seen


# -- one server ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("realtime")
    srv = start_server(
        data,
        f"sqlite+aiosqlite:///{data / 'rt.db'}",
        QC_REALTIME_TICK_SECONDS="0.5",
        QC_REALTIME_MAX_SUBSCRIPTIONS="5",
        QC_REALTIME_MESSAGES_PER_SECOND="20",
    )
    yield srv
    srv.stop()


def test_websocket_info_announces_the_channel(server: Server) -> None:
    _, headers = new_user(server)
    info = httpx.get(f"{server.http}/realtime/websocket-info/", headers=headers).json()
    assert info["websocket_url"] == server.ws
    host = server.http.removeprefix("http://")
    assert info["connection_info"] == {
        "protocol": "ws",
        "host": host,
        "path": "/ws/realtime/",
        "authentication": info["connection_info"]["authentication"],
    }
    assert "?token=" in info["connection_info"]["authentication"]
    assert {
        "ping",
        "subscribe_asset",
        "subscribe_assets",
        "subscribe_portfolio",
        "price_update",
        "portfolio_update",
        "pong",
        "subscribed",
        "unsubscribed",
        "error",
        "unsubscribe_asset",
        "unsubscribe_portfolio",
    } == set(info["message_types"])
    # Behind a TLS proxy on a trusted address (uvicorn's --forwarded-allow-ips, default
    # 127.0.0.1) the request came over https: the channel is wss.
    proxied = httpx.get(
        f"{server.http}/realtime/websocket-info/",
        headers={**headers, "X-Forwarded-Proto": "https"},
    ).json()
    assert proxied["websocket_url"] == server.ws.replace("ws://", "wss://")
    assert proxied["connection_info"]["protocol"] == "wss"


def test_anonymous_may_follow_assets_only(server: Server) -> None:
    async def run() -> None:
        async with websockets.connect(server.ws) as ws:
            await send(ws, {"type": "ping"})
            assert "timestamp" in await recv_until(ws, of_type("pong"))
            await send(ws, {"type": "subscribe_asset", "symbol": "spy"})
            assert await recv_until(ws, of_type("subscribed")) == {
                "type": "subscribed",
                "channel": "asset",
                "symbol": "SPY",
            }
            first = await recv_until(ws, of_type("price_update", symbol="SPY"))
            assert set(first) == {
                "type",
                "symbol",
                "price",
                "change",
                "change_percent",
                "volume",
                "timestamp",
            }
            assert all(isinstance(first[k], str) for k in ("price", "change", "change_percent"))
            float(first["price"])
            await send(ws, {"type": "subscribe_portfolio", "portfolio_id": 1})
            err = await recv_until(ws, of_type("error"))
            assert err["error"] == "authentication_required"
            await send(ws, {"type": "ping"})
            await recv_until(ws, of_type("pong"))

    asyncio.run(run())


def test_bad_input_gets_an_error_and_the_connection_stays_open(server: Server) -> None:
    cases: list[tuple[Msg | str, str]] = [
        ("this is not json", "invalid_json"),
        ({"type": "subscribe_everything"}, "unknown_type"),
        ({"type": "subscribe_asset"}, "invalid_message"),
        ({"type": "subscribe_asset", "symbol": "NOPE123"}, "unknown_symbol"),
        ({"type": "subscribe_portfolio", "portfolio_id": "x"}, "invalid_message"),
    ]

    async def run() -> None:
        async with websockets.connect(server.ws) as ws:
            for message, code in cases:
                await send(ws, message)
                assert (await recv_until(ws, of_type("error")))["error"] == code
            await ws.send(b'{"type": "ping"}')  # a binary frame with JSON is accepted too
            await recv_until(ws, of_type("pong"))

    asyncio.run(run())


def test_subscription_limit_per_connection(server: Server) -> None:
    symbols = ["SPY", "QQQ", "AAPL", "MSFT", "TLT"]  # the server allows 5

    async def run() -> None:
        async with websockets.connect(server.ws) as ws:
            for s in symbols:
                await send(ws, {"type": "subscribe_asset", "symbol": s})
                await recv_until(ws, of_type("subscribed", symbol=s))
            await send(ws, {"type": "subscribe_asset", "symbol": "IWM"})
            assert (await recv_until(ws, of_type("error")))["error"] == "too_many_subscriptions"
            await send(ws, {"type": "subscribe_asset", "symbol": "SPY"})  # already held: fine
            await recv_until(ws, of_type("subscribed", symbol="SPY"))
            await send(ws, {"type": "unsubscribe_asset", "symbol": "TLT"})
            await recv_until(ws, of_type("unsubscribed", symbol="TLT"))
            await send(ws, {"type": "subscribe_asset", "symbol": "IWM"})
            await recv_until(ws, of_type("subscribed", symbol="IWM"))

    asyncio.run(run())


def test_message_flood_is_refused_then_closed(server: Server) -> None:
    async def run() -> None:
        async with websockets.connect(server.ws) as ws:
            for _ in range(200):
                await send(ws, {"type": "ping"})
            seen = await expect_closed(ws, 1008)
            kinds = [m.get("error", m["type"]) for m in seen]
            assert 1 <= kinds.count("pong") <= 60  # the bucket holds 20, refilled at 20/s
            assert "rate_limited" in kinds
            assert kinds[-1] == "policy_violation"

    asyncio.run(run())


def test_oversized_message_closes_with_1009(server: Server) -> None:
    async def run() -> None:
        async with websockets.connect(server.ws) as ws:
            await send(ws, {"type": "ping", "pad": "x" * (MAX_MESSAGE_BYTES + 1)})
            seen = await expect_closed(ws, 1009)
            assert seen[-1]["error"] == "message_too_large"

    asyncio.run(run())


def test_credentials_token_query_header_and_session_cookie(server: Server) -> None:
    name, headers = new_user(server)
    token = token_of(headers)

    async def own_portfolio(ws: Any, pid: int) -> None:
        await send(ws, {"type": "subscribe_portfolio", "portfolio_id": pid})
        await recv_until(ws, of_type("subscribed", portfolio_id=pid))
        update = await recv_until(ws, of_type("portfolio_update", portfolio_id=pid))
        assert set(update) == {
            "type",
            "portfolio_id",
            "total_value",
            "daily_change",
            "daily_change_percent",
            "timestamp",
        }

    async def run() -> None:
        async with httpx.AsyncClient(base_url=server.http) as http:
            pid = await portfolio_holding(http, headers, "SPY")
            login = await http.post(
                "/api/auth/login/", json={"username": name, "password": PASSWORD}
            )
            assert login.status_code == 200, login.text
            cookie = f"qc_session={login.cookies['qc_session']}"
        async with websockets.connect(f"{server.ws}?token={token}") as ws:
            await own_portfolio(ws, pid)
        async with websockets.connect(server.ws, additional_headers=headers) as ws:
            await own_portfolio(ws, pid)
        origin = server.http
        async with websockets.connect(
            server.ws, additional_headers={"Cookie": cookie}, origin=origin
        ) as ws:
            await own_portfolio(ws, pid)
        # A session cookie sent from another site's page is refused.
        async with websockets.connect(
            server.ws, additional_headers={"Cookie": cookie}, origin="https://evil.example"
        ) as ws:
            seen = await expect_closed(ws, 1008)
            assert seen == [
                {"type": "error", "error": "origin_not_allowed", "message": seen[0]["message"]}
            ]
        for bad in (
            {"Authorization": "Token qct_wrong"},
            {"X-API-Key": "qck_wrong"},
            {"Authorization": "Bearer x"},
        ):
            async with websockets.connect(server.ws, additional_headers=bad) as ws:
                seen = await expect_closed(ws, 1008)
                assert [m["error"] for m in seen] == ["authentication_failed"]

    asyncio.run(run())


def test_another_users_portfolio_looks_missing(server: Server) -> None:
    _, owner = new_user(server)
    _, other = new_user(server)

    async def run() -> None:
        async with httpx.AsyncClient(base_url=server.http) as http:
            pid = await portfolio_holding(http, owner, "QQQ")
        async with websockets.connect(server.ws, additional_headers=other) as ws:
            await send(ws, {"type": "subscribe_portfolio", "portfolio_id": pid})
            theirs = await recv_until(ws, of_type("error"))
            await send(ws, {"type": "subscribe_portfolio", "portfolio_id": 10**9})
            missing = await recv_until(ws, of_type("error"))
        assert theirs["error"] == missing["error"] == "not_found"
        assert theirs["message"] == missing["message"].replace(str(10**9), str(pid))

    asyncio.run(run())


def test_force_update_reaches_asset_and_portfolio_subscribers(server: Server) -> None:
    _, headers = new_user(server)

    async def run() -> None:
        async with httpx.AsyncClient(base_url=server.http) as http:
            pid = await portfolio_holding(http, headers, "BTC-USD")
            async with (
                websockets.connect(server.ws) as anon,
                websockets.connect(server.ws, additional_headers=headers) as mine,
            ):
                await send(anon, {"type": "subscribe_asset", "symbol": "BTC-USD"})
                await recv_until(anon, of_type("subscribed"))
                await send(mine, {"type": "subscribe_portfolio", "portfolio_id": pid})
                await recv_until(mine, of_type("subscribed"))
                r = await http.post(
                    "/api/realtime/force_price_update/",
                    json={"symbols": ["btc-usd"]},
                    headers=headers,
                )
                assert r.status_code == 200, r.text
                (forced,) = r.json()["updated"]
                ts = forced["timestamp"]
                pushed = await recv_until(anon, of_type("price_update", timestamp=ts))
                assert {k: pushed[k] for k in forced} == forced
                value = await recv_until(mine, of_type("portfolio_update", timestamp=ts))
                got = await http.get(f"/api/portfolios/{pid}/", headers=headers)
                assert got.status_code == 200
                # Valued at the forced price: 10 units, plus the cash the buy spent, as
                # the REST API values them.
                cash = float(got.json()["cash_balance"])
                assert abs(float(value["total_value"]) - (10 * float(forced["price"]) + cash)) < 0.01

    asyncio.run(run())


def test_force_update_validation_and_auth(server: Server) -> None:
    _, headers = new_user(server)
    url = f"{server.http}/api/realtime/force_price_update/"
    r = httpx.post(url, json={"symbols": ["SPY"]})
    assert r.status_code == 401 and "WWW-Authenticate" in r.headers
    cases = [
        ({"symbols": ["SPY", "NOPE123"]}, "symbols", "not_found"),
        ({"symbols": []}, "symbols", "min_length"),
        ({}, "symbols", "required"),
        ({"symbols": ["SPY"], "extra": 1}, "extra", "unknown_field"),
    ]
    for body, field, code in cases:
        r = httpx.post(url, json=body, headers=headers)
        assert r.status_code == 400, (body, r.text)
        err = r.json()
        assert err["error"] == "validation_error"
        assert (err["details"]["field"], err["details"]["code"]) == (field, code), err


def test_force_update_rate_limit(server: Server) -> None:
    _, headers = new_user(server)
    url = f"{server.http}/api/realtime/force_price_update/"
    codes = [httpx.post(url, json={"symbols": ["IWM"]}, headers=headers) for _ in range(11)]
    assert [r.status_code for r in codes] == [200] * 10 + [429]
    assert codes[0].headers["X-RateLimit-Limit"] == "10"
    assert codes[-1].json()["error"] == "rate_limited" and "Retry-After" in codes[-1].headers


def test_status_reports_global_and_own_subscriptions(server: Server) -> None:
    _, headers = new_user(server)
    status_url = f"{server.http}/realtime/status/"

    async def run() -> None:
        async with httpx.AsyncClient(base_url=server.http) as http:
            pid = await portfolio_holding(http, headers, "SPY")
            async with (
                websockets.connect(server.ws, additional_headers=headers) as a,
                websockets.connect(server.ws, additional_headers=headers) as b,
            ):
                for ws, msg in (
                    (a, {"type": "subscribe_asset", "symbol": "TLT"}),
                    (a, {"type": "subscribe_portfolio", "portfolio_id": pid}),
                    (b, {"type": "subscribe_asset", "symbol": "AAPL"}),
                ):
                    await send(ws, msg)
                    await recv_until(ws, of_type("subscribed"))
                status = (await http.get(status_url, headers=headers)).json()
                assert status["service_status"] == "running"
                assert status["user_stats"] == {
                    "connection_count": 2,
                    "subscriptions": {"portfolios": [pid], "assets": ["AAPL", "TLT"]},
                }
                g = status["global_stats"]
                assert g["total_connections"] >= 2 and g["authenticated_users"] >= 1
                assert g["asset_subscriptions"] >= 2 and g["portfolio_subscriptions"] >= 1
            deadline = time.monotonic() + 5
            while True:  # the server notices the close asynchronously
                after = (await http.get(status_url, headers=headers)).json()["user_stats"]
                if after["connection_count"] == 0 or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.1)
            assert after == {
                "connection_count": 0,
                "subscriptions": {"portfolios": [], "assets": []},
            }

    asyncio.run(run())


def test_feed_ticks_subscribed_symbols_on_its_interval(server: Server) -> None:
    async def run() -> list[str]:
        async with websockets.connect(server.ws) as ws:
            await send(ws, {"type": "subscribe_asset", "symbol": "ETH-USD"})
            await recv_until(ws, of_type("subscribed"))
            stamps = []
            for _ in range(4):  # the snapshot, then ticks every 0.5 s
                stamps.append(
                    (await recv_until(ws, of_type("price_update", symbol="ETH-USD")))["timestamp"]
                )
            return stamps

    stamps = asyncio.run(run())
    assert stamps == sorted(stamps) and len(set(stamps)) == 4


# -- two servers, PostgreSQL + Redis --------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster(
    pg_database: str, redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Server, Server]]:
    data = tmp_path_factory.mktemp("cluster")
    env = {
        "QC_REDIS_URL": redis_url,
        "QC_REDIS_PREFIX": f"qc_test_{uuid.uuid4().hex[:8]}:",
        "QC_REALTIME_TICK_SECONDS": "0.5",
        "QC_RATE_LIMIT_REALTIME": "1000/minute",
    }
    # With the asset table filled beforehand, both servers can start at once (their
    # startup sync then has nothing to insert, so they cannot race on it).
    asyncio.run(_sync_assets(pg_database))
    a = launch_server(data / "a", pg_database, **env)
    b = launch_server(data / "b", pg_database, **env)
    try:
        wait_ready(a)
        wait_ready(b)
    except BaseException:
        a.stop()
        b.stop()
        raise
    yield a, b
    b.stop()
    a.stop()


@pytest.mark.postgres
@pytest.mark.redis
def test_forced_update_on_one_worker_reaches_a_subscriber_of_the_other(
    cluster: tuple[Server, Server],
) -> None:
    a, b = cluster
    _, headers = new_user(a)

    async def run() -> None:
        async with httpx.AsyncClient(base_url=a.http) as http_a:
            pid = await portfolio_holding(http_a, headers, "MSFT")
            async with websockets.connect(b.ws, additional_headers=headers) as ws:
                await send(ws, {"type": "subscribe_asset", "symbol": "MSFT"})
                await recv_until(ws, of_type("subscribed"))
                await send(ws, {"type": "subscribe_portfolio", "portfolio_id": pid})
                await recv_until(ws, of_type("subscribed"))
                # Worker A sees B's connection in the global and per-user figures. B publishes
                # its snapshot to Redis shortly after each change, so A's view is eventually
                # consistent: poll until it shows both subscriptions (or give up after 10 s).
                expected = {
                    "connection_count": 1,
                    "subscriptions": {"portfolios": [pid], "assets": ["MSFT"]},
                }
                deadline = asyncio.get_running_loop().time() + 10.0
                while True:
                    status = (await http_a.get("/realtime/status/", headers=headers)).json()
                    if status["user_stats"] == expected or asyncio.get_running_loop().time() > deadline:
                        break
                    await asyncio.sleep(0.05)
                assert status["global_stats"]["workers"] == 2
                assert status["user_stats"] == expected
                r = await http_a.post(
                    "/api/realtime/force_price_update/", json={"symbols": ["MSFT"]}, headers=headers
                )
                assert r.status_code == 200, r.text
                (forced,) = r.json()["updated"]
                pushed = await recv_until(
                    ws, of_type("price_update", timestamp=forced["timestamp"])
                )
                assert {k: pushed[k] for k in forced} == forced
                await recv_until(
                    ws, of_type("portfolio_update", portfolio_id=pid, timestamp=forced["timestamp"])
                )

    asyncio.run(run())


@pytest.mark.postgres
@pytest.mark.redis
def test_one_feed_per_cluster(cluster: tuple[Server, Server]) -> None:
    """Both workers run a feed loop; only the lease holder ticks, so no update is doubled."""
    a, b = cluster

    async def run() -> list[str]:
        async with websockets.connect(a.ws) as wa, websockets.connect(b.ws) as wb:
            await send(wa, {"type": "subscribe_asset", "symbol": "ETH-USD"})
            await send(wb, {"type": "subscribe_asset", "symbol": "ETH-USD"})
            await recv_until(wa, of_type("subscribed"))
            await recv_until(wb, of_type("subscribed"))
            stamps: list[str] = []
            t0 = time.monotonic()
            while time.monotonic() - t0 < 3.0:
                try:
                    msg = await recv_until(
                        wb, of_type("price_update"), timeout=3.0 - (time.monotonic() - t0)
                    )
                except (AssertionError, TimeoutError):
                    break
                stamps.append(msg["timestamp"])
            return stamps

    stamps = asyncio.run(run())
    ticks = sorted(dt.datetime.fromisoformat(s) for s in stamps[1:])  # [0]: the snapshot
    assert len(ticks) >= 2, stamps
    # One feed sleeps 0.5 s between ticks, so its ticks are at least 0.5 s apart; a
    # second feed's ticks would interleave, leaving a gap of at most 0.25 s somewhere.
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(ticks)]
    assert min(gaps) >= 0.45, gaps
