"""Per-project rate limits: the sliding window, OpenAI's headers, the true Retry-After, and Redis
shared by two server processes."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from litestar.testing import TestClient

from textgen.app import create_app
from textgen.backends.builtin import NgramBackend
from textgen.ratelimit import Limiter, headers, make_limiter
from textgen.settings import Settings
from textgen.store import Store


def _memory(per_minute: int, clock: Callable[[], float]) -> Limiter:
    limiter = make_limiter(per_minute, "", clock=clock)
    assert limiter is not None
    return limiter


def test_memory_window_and_true_retry_after() -> None:
    now = [1000.0]
    limiter = _memory(2, lambda: now[0])

    async def hits() -> list[tuple[bool, int, float]]:
        out = []
        for at in (0.0, 10.0, 30.0, 60.5, 61.0):
            now[0] = 1000.0 + at
            d = await limiter.hit("p")
            out.append((d.allowed, d.remaining, d.retry_after))
        return out

    assert asyncio.run(hits()) == [
        (True, 1, 0.0), (True, 0, 0.0),
        (False, 0, 30.0),  # the hit at t=0 leaves the window at t=60: a 30 s wait, not a flat 60
        (True, 0, 0.0),  # t=0 has left; t=10 and t=60.5 count
        (False, 0, 9.0),
    ]
    assert asyncio.run(limiter.hit("other")).allowed  # per project


def test_headers_format() -> None:
    now = [0.0]
    limiter = _memory(1, lambda: now[0])
    first = headers(asyncio.run(limiter.hit("p")))
    assert first == {"x-ratelimit-limit-requests": "1", "x-ratelimit-remaining-requests": "0",
                     "x-ratelimit-reset-requests": "1m0s"}
    now[0] = 59.75
    refused = headers(asyncio.run(limiter.hit("p")))
    assert refused["Retry-After"] == "1" and refused["x-ratelimit-reset-requests"] == "250ms"


def test_headers_on_every_answer(tmp_path: Path) -> None:
    app = create_app(Settings(data_dir=str(tmp_path), api_keys=("k",), rate_limit_per_minute=3),
                     backends=[NgramBackend()])
    with TestClient(app) as client:
        client.headers["Authorization"] = "Bearer k"
        ok = client.get("/v1/models")
        assert ok.headers["x-ratelimit-limit-requests"] == "3"
        assert ok.headers["x-ratelimit-remaining-requests"] == "2"
        missing = client.get("/v1/responses/resp_missing")
        assert missing.status_code == 404 and missing.headers["x-ratelimit-remaining-requests"] == "1"
        stream = client.post("/v1/responses", json={"model": "textgen-ngram", "input": "x", "stream": True})
        assert stream.headers["x-ratelimit-remaining-requests"] == "0"
        limited = client.get("/v1/models")
        assert limited.status_code == 429 and limited.json()["error"]["code"] == "rate_limit_exceeded"
        assert 55 <= int(limited.headers["Retry-After"]) <= 60
        assert limited.headers["x-ratelimit-remaining-requests"] == "0"


def test_redis_limiter_counts_across_clients(redis_url: str) -> None:
    project = f"rl-{secrets.token_hex(6)}"

    async def run() -> list[bool]:
        a, b = make_limiter(3, redis_url), make_limiter(3, redis_url)
        assert a is not None and b is not None
        try:
            results = [(await (a if i % 2 else b).hit(project)) for i in range(5)]
        finally:
            await a.close()
            await b.close()
        assert [r.remaining for r in results[:3]] == [2, 1, 0]
        assert 58 <= results[3].retry_after <= 60
        return [r.allowed for r in results]

    assert asyncio.run(run()) == [True, True, True, False, False]


@pytest.mark.postgres
def test_two_instances_share_the_limit_through_redis(
    spawn: Callable[..., str], fresh_postgres: str, redis_url: str
) -> None:
    project = f"rl-{secrets.token_hex(6)}"

    async def make_key() -> str:
        store = Store(fresh_postgres)
        try:
            await store.create_schema()
            return (await store.create_key("limited", project))[1]
        finally:
            await store.dispose()

    key = asyncio.run(make_key())
    env = {"database_url": fresh_postgres, "redis_url": redis_url, "rate_limit_per_minute": "4"}
    bases = [spawn("a", **env), spawn("b", **env)]  # a created key: the static one of serve_shared is unused
    with httpx.Client(headers={"Authorization": f"Bearer {key}"}) as http:
        replies = [http.get(f"{bases[i % 2]}/models") for i in range(6)]
    assert [r.status_code for r in replies] == [200, 200, 200, 200, 429, 429]  # 4 in all, not 4 each
    assert [r.headers["x-ratelimit-remaining-requests"] for r in replies[:4]] == ["3", "2", "1", "0"]
    assert 1 <= int(replies[4].headers["Retry-After"]) <= 60
