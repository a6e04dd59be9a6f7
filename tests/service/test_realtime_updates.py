"""Portfolio subscribers are kept current against a real uvicorn process.

A ``subscribe_portfolio`` alone keeps the portfolio's holdings ticking; every write
to the portfolio pushes a ``portfolio_update``; a deleted portfolio leaves the
subscriptions; ``subscribe_assets`` takes a whole watchlist in one message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest
import websockets

from tests.service.test_realtime import (
    Msg,
    Server,
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
    data = tmp_path_factory.mktemp("rt-updates")
    srv = start_server(
        data,
        f"sqlite+aiosqlite:///{data / 'rt.db'}",
        QC_REALTIME_TICK_SECONDS="0.5",
        QC_REALTIME_MESSAGES_PER_SECOND="5",
    )
    yield srv
    srv.stop()


def test_a_portfolio_subscription_alone_ticks_its_holdings(server: Server) -> None:
    _, headers = new_user(server)

    async def run() -> list[Msg]:
        async with httpx.AsyncClient(base_url=server.http) as http:
            pid = await portfolio_holding(http, headers, "MSFT")
        async with websockets.connect(f"{server.ws}?token={token_of(headers)}") as ws:
            await send(ws, {"type": "subscribe_portfolio", "portfolio_id": pid})
            first = await recv_until(ws, of_type("portfolio_update", portfolio_id=pid))
            # No asset subscription anywhere on this server: only the feed's ticks of
            # the held symbol can bring more updates.
            more = [
                await recv_until(ws, of_type("portfolio_update", portfolio_id=pid))
                for _ in range(2)
            ]
        return [first, *more]

    updates = asyncio.run(run())
    stamps = [u["timestamp"] for u in updates]
    assert stamps == sorted(stamps) and len(set(stamps)) == 3


def test_writes_push_updates_and_a_deleted_portfolio_is_dropped(server: Server) -> None:
    _, headers = new_user(server)

    async def run() -> None:
        async with httpx.AsyncClient(base_url=server.http, headers=headers) as http:
            r = await http.post("/api/portfolios/", json={"name": "empty"})
            pid = int(r.json()["id"])
            async with websockets.connect(f"{server.ws}?token={token_of(headers)}") as ws:
                await send(ws, {"type": "subscribe_portfolio", "portfolio_id": pid})
                first = await recv_until(ws, of_type("portfolio_update", portfolio_id=pid))
                assert first["total_value"] == "0.00"
                # An empty portfolio holds nothing the feed ticks: silence until a write.
                with pytest.raises(TimeoutError):
                    await asyncio.wait_for(ws.recv(), 1.5)
                r = await http.put(f"/api/portfolios/{pid}/", json={"name": "renamed"})
                assert r.status_code == 200
                await recv_until(ws, of_type("portfolio_update", portfolio_id=pid), timeout=5)
                buy = {
                    "portfolio": pid,
                    "asset_symbol": "AAPL",
                    "transaction_type": "buy",
                    "quantity": "3",
                    "price": "100",
                    "transaction_date": "2026-01-05",
                }
                assert (await http.post("/api/transactions/", json=buy)).status_code == 201
                bought = await recv_until(
                    ws,
                    lambda m: m["type"] == "portfolio_update" and m["total_value"] != "0.00",
                    timeout=5,
                )
                # 3 shares plus the cash the buy spent (-300.00): the shares are worth something
                assert float(bought["total_value"]) + 300 > 0
                status = (await http.get("/realtime/status/")).json()
                assert status["user_stats"]["subscriptions"]["portfolios"] == [pid]
                assert (await http.delete(f"/api/portfolios/{pid}/")).status_code == 204
                await recv_until(ws, of_type("unsubscribed", portfolio_id=pid), timeout=5)
                status = (await http.get("/realtime/status/")).json()
                assert status["user_stats"]["subscriptions"]["portfolios"] == []
                # The connection stays usable.
                await send(ws, {"type": "ping"})
                await recv_until(ws, of_type("pong"))

    asyncio.run(run())


def test_subscribe_assets_takes_the_whole_universe_at_once(server: Server) -> None:
    async def run() -> None:
        async with httpx.AsyncClient(base_url=server.http) as http:
            assets = (await http.get("/api/assets/?limit=100")).json()
        symbols = [a["symbol"] for a in assets["results"]]
        assert len(symbols) == assets["count"] >= 41
        async with websockets.connect(server.ws) as ws:
            await send(ws, {"type": "subscribe_assets", "symbols": ["NOPE", *symbols[:3]]})
            refused = await recv_until(ws, of_type("error"))
            assert refused["error"] == "unknown_symbol" and "NOPE" in refused["message"]
            await send(ws, {"type": "subscribe_assets", "symbols": [s.lower() for s in symbols]})
            subscribed = set()
            while len(subscribed) < len(symbols):
                msg = await recv_until(ws, of_type("subscribed", channel="asset"))
                subscribed.add(msg["symbol"])
            assert subscribed == set(symbols)
            # One message per watchlist: far below the per-second message budget.
            await send(ws, {"type": "ping"})
            await recv_until(ws, of_type("pong"))
            prices = set()
            while len(prices) < len(symbols):
                prices.add((await recv_until(ws, of_type("price_update")))["symbol"])

    asyncio.run(run())
