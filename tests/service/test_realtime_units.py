"""Unit tests of the real-time parts that need no server: messages, outbox, fan-out, stats."""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress
import json
from typing import Any, get_args

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from litestar import Request
from litestar.channels import ChannelsPlugin
from litestar.channels.backends.memory import MemoryChannelsBackend

from service.middleware import ProxyTrust
from service.realtime import messages as m
from service.realtime.cluster import merge
from service.realtime.controllers import request_scheme
from service.realtime.registry import Connection, LocalSnapshot, Registry, asset_channel
from service.realtime.services import WS_PATH, Realtime

# -- messages ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"type": "ping"}', m.Ping()),
        ('{"type": "subscribe_asset", "symbol": "SPY"}', m.SubscribeAsset(symbol="SPY")),
        ('{"type": "unsubscribe_asset", "symbol": "SPY"}', m.UnsubscribeAsset(symbol="SPY")),
        (
            '{"type": "subscribe_portfolio", "portfolio_id": 7}',
            m.SubscribePortfolio(portfolio_id=7),
        ),
        (
            '{"portfolio_id": 7, "type": "unsubscribe_portfolio"}',
            m.UnsubscribePortfolio(portfolio_id=7),
        ),
    ],
)
def test_decode_every_client_message(text: str, expected: m.ClientMessage) -> None:
    assert m.decode(text) == expected
    assert m.decode(text.encode()) == expected


@pytest.mark.parametrize(
    ("text", "code", "names"),
    [
        ("not json", "invalid_json", ""),
        ("[1, 2]", "invalid_json", ""),
        ('"ping"', "invalid_json", ""),
        ("{}", "unknown_type", "None"),
        ('{"type": "subscribe"}', "unknown_type", "subscribe"),
        ('{"type": "pong"}', "unknown_type", "pong"),  # a server message is not a request
        ('{"type": "subscribe_asset"}', "invalid_message", "symbol"),
        ('{"type": "subscribe_asset", "symbol": 5}', "invalid_message", "symbol"),
        ('{"type": "subscribe_asset", "symbol": ""}', "invalid_message", "symbol"),
        ('{"type": "subscribe_portfolio", "portfolio_id": "1"}', "invalid_message", "portfolio_id"),
        ('{"type": "subscribe_portfolio", "portfolio_id": 0}', "invalid_message", "portfolio_id"),
        ('{"type": "ping", "extra": 1}', "invalid_message", "extra"),
    ],
)
def test_decode_errors_name_the_problem(text: str, code: str, names: str) -> None:
    with pytest.raises(m.MessageError) as info:
        m.decode(text)
    assert info.value.code == code
    assert names in info.value.message


@settings(max_examples=100, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=64),
        st.text(max_size=64),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=8),
            lambda c: (
                st.lists(c, max_size=3)
                | st.dictionaries(
                    st.sampled_from(["type", "symbol", "portfolio_id", "x"]), c, max_size=3
                )
            ),
            max_leaves=6,
        ).map(json.dumps),
    )
)
def test_decode_never_fails_otherwise(data: str | bytes) -> None:
    """Any input is a client message or a MessageError with one of the documented codes."""
    try:
        message = m.decode(data)
    except m.MessageError as exc:
        assert exc.code in {"invalid_json", "unknown_type", "invalid_message"}
    else:
        assert isinstance(message, m.CLIENT_TYPES)


def test_message_types_cover_both_unions() -> None:
    tags = {
        t.__struct_config__.tag for t in (*get_args(m.ClientMessage), *get_args(m.ServerMessage))
    }
    assert set(m.MESSAGE_TYPES) == tags
    assert len(tags) == 12
    for tag, description in m.MESSAGE_TYPES.items():
        assert description.startswith(("client -> server", "server -> client")), tag


def test_server_messages_are_flat_json_with_decimal_strings() -> None:
    ts = dt.datetime(2026, 11, 20, 21, 0, tzinfo=dt.UTC)
    update = m.PriceUpdate(
        symbol="SPY",
        price="501.2500",
        change="-1.0000",
        change_percent="-0.20",
        volume=10,
        timestamp=ts,
    )
    assert json.loads(m.encode(update)) == {
        "type": "price_update",
        "symbol": "SPY",
        "price": "501.2500",
        "change": "-1.0000",
        "change_percent": "-0.20",
        "volume": 10,
        "timestamp": "2026-11-20T21:00:00Z",
    }
    assert json.loads(m.encode(m.Subscribed(channel="portfolio", portfolio_id=3))) == {
        "type": "subscribed",
        "channel": "portfolio",
        "portfolio_id": 3,
    }


# -- outbox and rate --------------------------------------------------------------------


def test_full_backlog_drops_the_oldest_update_and_counts_it() -> None:
    conn = Connection(1, None, max_backlog=3, rate=10)
    for i in range(5):
        conn.push(f"u{i}")
    conn.reply("pong")
    assert conn.dropped == 2
    assert conn.backlog == 4

    sent: list[str] = []

    async def send(text: str) -> None:
        sent.append(text)
        if len(sent) == 4:
            conn.close()

    asyncio.run(conn.write(send))
    assert sent == ["pong", "u2", "u3", "u4"]  # control first, then the newest updates


def test_message_rate_is_a_token_bucket() -> None:
    conn = Connection(1, 5, max_backlog=3, rate=4)
    assert [conn.admit() for _ in range(6)] == [True] * 4 + [False] * 2
    assert conn.strikes == 2


async def _fanout(n_messages: int, backlog: int) -> tuple[list[str], Connection, Registry]:
    channels = ChannelsPlugin(backend=MemoryChannelsBackend(), arbitrary_channels_allowed=True)
    async with channels:
        registry = Registry(channels, max_backlog=backlog, rate=100)
        fast, slow = registry.open(1), registry.open(None)
        received: list[str] = []
        stalled = asyncio.Event()
        done = asyncio.Event()

        async def fast_send(text: str) -> None:
            received.append(text)
            if len(received) == n_messages:
                done.set()

        async def slow_send(text: str) -> None:
            await stalled.wait()  # a client that never reads

        writers = [
            asyncio.create_task(fast.write(fast_send)),
            asyncio.create_task(slow.write(slow_send)),
        ]
        await registry.subscribe_asset(fast, "SPY")
        await registry.subscribe_asset(slow, "SPY")

        async def publish_in_lockstep() -> None:
            # Each message is published once the fast client has the previous one, so
            # its backlog never fills; the stuck client's backlog must fill and drop.
            for i in range(n_messages):
                await channels.wait_published(f"m{i}".encode(), asset_channel("SPY"))
                while len(received) <= i:
                    await asyncio.sleep(0)

        await asyncio.wait_for(publish_in_lockstep(), 20)
        assert done.is_set()
        snapshot = registry.snapshot()
        assert snapshot.dropped_updates == slow.dropped
        await registry.close(fast)
        await registry.close(slow)
        for w in writers:
            w.cancel()
        await asyncio.gather(*writers, return_exceptions=True)
        await registry.shutdown()
    return received, slow, registry


def test_slow_consumer_never_stalls_the_others() -> None:
    received, slow, registry = asyncio.run(_fanout(500, backlog=16))
    assert received == [f"m{i}" for i in range(500)]
    # The slow writer holds one message in its stuck send; 16 wait; the rest were dropped.
    assert slow.dropped == 500 - 16 - 1
    assert registry.dropped_closed == slow.dropped
    assert registry.connections == {}


def test_snapshot_and_merge_count_users_once() -> None:
    async def run() -> tuple[LocalSnapshot, LocalSnapshot]:
        channels = ChannelsPlugin(backend=MemoryChannelsBackend(), arbitrary_channels_allowed=True)
        async with channels:
            a = Registry(channels, max_backlog=4, rate=10)
            b = Registry(channels, max_backlog=4, rate=10)
            c1, c2, c3 = a.open(7), a.open(None), b.open(7)
            await a.subscribe_asset(c1, "SPY")
            await a.subscribe_asset(c2, "SPY")
            await a.subscribe_portfolio(c1, 3)
            await b.subscribe_asset(c3, "QQQ")
            await b.subscribe_portfolio(c3, 4)
            snaps = a.snapshot(), b.snapshot()
            await a.shutdown()
            await b.shutdown()
            return snaps

    sa, sb = asyncio.run(run())
    # A snapshot survives the trip through Redis (JSON) unchanged.
    assert msgspec.json.decode(msgspec.json.encode(sa), type=LocalSnapshot) == sa
    view = merge([sa, sb])
    assert view.total_connections == 3
    assert view.authenticated_users == 1
    assert view.asset_subscriptions == 3
    assert view.portfolio_subscriptions == 2
    assert view.symbols == {"SPY", "QQQ"}
    assert view.portfolios == {3, 4}
    assert view.users[7] == (2, [3, 4], ["QQQ", "SPY"])


@pytest.mark.parametrize(("scheme", "protocol"), [("http", "ws"), ("https", "wss")])
def test_websocket_url_follows_the_request_scheme(scheme: str, protocol: str) -> None:
    info = Realtime.websocket_info(scheme, "example.test:8443")
    assert info.websocket_url == f"{protocol}://example.test:8443{WS_PATH}"
    assert info.connection_info.protocol == protocol
    assert info.connection_info.path == WS_PATH
    assert info.message_types == m.MESSAGE_TYPES


def _request(
    headers: dict[str, str], scheme: str = "http", peer: str = "127.0.0.1"
) -> Request[Any, Any, Any]:
    scope = {
        "type": "http",
        "scheme": scheme,
        "server": ("10.0.0.5", 8000),
        "client": (peer, 50000),
        "path": "/realtime/websocket-info/",
        "query_string": b"",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "method": "GET",
        "root_path": "",
    }
    return Request(scope)  # type: ignore[arg-type]


def test_forwarded_host_and_proto_only_from_a_trusted_proxy() -> None:
    trust = ProxyTrust((ipaddress.ip_network("127.0.0.1/32"),))
    forwarded = {"Host": "api.internal:8000", "X-Forwarded-Host": "quant.example"}
    req = _request(forwarded, "https")
    assert request_scheme(req, trust, trust_host=False) == ("https", "api.internal:8000")
    assert request_scheme(req, trust, trust_host=True) == ("https", "quant.example")
    assert request_scheme(_request({"Host": "h:1"}), trust, trust_host=True) == ("http", "h:1")
    # The proxy terminated TLS: its X-Forwarded-Proto names the client's scheme.
    tls = _request({"Host": "h:1", "X-Forwarded-Proto": "https"})
    assert request_scheme(tls, trust, trust_host=False) == ("https", "h:1")
    # The same headers from a peer that is not a configured proxy are ignored.
    stranger = _request({**forwarded, "X-Forwarded-Proto": "https"}, peer="203.0.113.9")
    assert request_scheme(stranger, trust, trust_host=True) == ("http", "api.internal:8000")
