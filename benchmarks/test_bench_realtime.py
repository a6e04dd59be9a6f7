"""pytest-benchmark timings of the real-time hot paths (in process, no network).

* decoding one client message;
* fanning one update out to 1,000 connections of a worker and draining their
  outboxes through a no-op send (the server-side share of the fan-out, without
  the socket writes; ``benchmarks/realtime_fanout.py`` measures the whole path).
"""

from __future__ import annotations

import asyncio
from typing import Any

from litestar.channels import ChannelsPlugin
from litestar.channels.backends.memory import MemoryChannelsBackend

from service.realtime.messages import SubscribeAsset, decode
from service.realtime.registry import Registry, asset_channel

N_CONNECTIONS = 1000
UPDATE = (
    '{"type":"price_update","symbol":"SPY","price":"539.2996","change":"-0.5847",'
    '"change_percent":"-0.11","volume":36138049,"timestamp":"2026-11-22T15:12:21.427690Z"}'
)


def test_decode_subscribe(benchmark: Any) -> None:
    message = benchmark(decode, '{"type": "subscribe_asset", "symbol": "SPY"}')
    assert isinstance(message, SubscribeAsset) and message.symbol == "SPY"


def test_fanout_to_1000_connections(benchmark: Any) -> None:
    loop = asyncio.new_event_loop()
    sent = [0]

    async def send(_: str) -> None:
        sent[0] += 1

    async def setup() -> tuple[ChannelsPlugin, Registry, list[asyncio.Task[None]]]:
        channels = ChannelsPlugin(backend=MemoryChannelsBackend(), arbitrary_channels_allowed=True)
        await channels.__aenter__()
        registry = Registry(channels, max_backlog=256, rate=20)
        writers = []
        for _ in range(N_CONNECTIONS):
            conn = registry.open(None)
            await registry.subscribe_asset(conn, "SPY")
            writers.append(asyncio.create_task(conn.write(send)))
        return channels, registry, writers

    channels, registry, writers = loop.run_until_complete(setup())
    channel = asset_channel("SPY")

    async def one_update() -> None:
        target = sent[0] + N_CONNECTIONS
        registry.dispatch(channel, UPDATE)
        while sent[0] < target:
            await asyncio.sleep(0)

    benchmark(lambda: loop.run_until_complete(one_update()))
    assert sent[0] % N_CONNECTIONS == 0 and sent[0] > 0

    async def teardown() -> None:
        await registry.shutdown()
        for conn in list(registry.connections.values()):
            await registry.close(conn)
        await asyncio.gather(*writers, return_exceptions=True)
        await channels.__aexit__(None, None, None)

    loop.run_until_complete(teardown())
    loop.close()
