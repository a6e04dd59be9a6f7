"""Error bodies ({error, message, details}) and rate limits (memory and Redis)."""

from __future__ import annotations

import asyncio
import logging
import uuid

import pytest
from litestar import get
from litestar.stores.memory import MemoryStore

from service.ratelimit import RateLimiter, Window, make_store
from service.settings import RateLimit
from tests.service.conftest import Api


@get("/api/test-boom/", sync_to_thread=False)
def boom() -> None:
    raise RuntimeError("secret internal detail")


def test_unknown_route_wrong_method_and_oversized_body(api: Api) -> None:
    r = api.client.get("/api/does-not-exist/")
    assert r.status_code == 404
    assert set(r.json()) == {"error", "message", "details"} and r.json()["error"] == "not_found"
    r = api.client.patch("/api/assets/1/")
    assert r.status_code == 405 and r.json()["error"] == "method_not_allowed"
    _, h = api.user()
    r = api.client.post(
        "/api/portfolios/", content=b'{"name": "' + b"x" * 2_000_000 + b'"}', headers=h
    )
    assert r.status_code == 413 and r.json()["error"] == "request_too_large"
    r = api.client.post(
        "/api/portfolios/", content=b"{not json", headers={**h, "content-type": "application/json"}
    )
    assert r.status_code == 400
    assert r.json()["details"] == {"field": "body", "code": "invalid_json"}
    r = api.client.get("/api/assets/999999/")
    assert r.status_code == 404 and r.json()["message"] == "Asset 999999 not found."


def test_server_error_has_request_id_and_no_traceback(
    api_factory, caplog: pytest.LogCaptureFixture
) -> None:
    api = api_factory(extra_routers=[boom])
    with caplog.at_level(logging.ERROR, logger="service"):
        r = api.client.get("/api/test-boom/")
    assert r.status_code == 500
    body = r.json()
    rid = body["details"]["request_id"]
    assert body["error"] == "server_error" and rid in body["message"]
    assert r.headers["x-request-id"] == rid
    assert "secret internal detail" not in r.text and "Traceback" not in r.text
    assert any(rid in rec.getMessage() and rec.exc_info for rec in caplog.records)


def test_router_404_and_405_carry_request_id_and_rate_limit(api_factory) -> None:
    """Answered by Litestar's router, before any route: still counted, still with headers."""
    api = api_factory(rate_limit_anonymous="2/minute")
    first = api.client.get("/api/does-not-exist/")
    second = api.client.delete("/api/assets/")
    assert (first.status_code, second.status_code) == (404, 405)
    for r in (first, second):
        assert len(r.headers["x-request-id"]) == 32
        assert r.headers["x-ratelimit-limit"] == "2"
    assert [first.headers["x-ratelimit-remaining"], second.headers["x-ratelimit-remaining"]] == [
        "1",
        "0",
    ]
    third = api.client.get("/api/does-not-exist/")
    assert third.status_code == 429 and "retry-after" in third.headers


def test_failure_before_routing_is_a_documented_500(
    api_factory, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The request pipeline runs outside Litestar's exception handlers: it answers alike."""
    api = api_factory()

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr("service.auth.middleware.identify", broken)
    with caplog.at_level(logging.ERROR, logger="service"):
        r = api.client.get("/api/assets/1/")
    assert r.status_code == 500
    rid = r.json()["details"]["request_id"]
    assert r.json()["error"] == "server_error" and r.headers["x-request-id"] == rid
    assert "secret internal detail" not in r.text
    assert any(rid in rec.getMessage() and rec.exc_info for rec in caplog.records)


def test_rate_limit_headers_and_429(api_factory) -> None:
    api = api_factory(rate_limit_anonymous="3/minute", rate_limit_authenticated="5/minute")
    seen = []
    for _ in range(3):
        r = api.client.get("/api/assets/?limit=1")
        assert r.status_code == 200
        seen.append(int(r.headers["x-ratelimit-remaining"]))
        assert r.headers["x-ratelimit-limit"] == "3"
        assert 1 <= int(r.headers["x-ratelimit-reset"]) <= 60
    assert seen == [2, 1, 0]
    r = api.client.get("/api/assets/?limit=1")
    assert r.status_code == 429
    assert r.json()["error"] == "rate_limited"
    assert 1 <= int(r.headers["retry-after"]) <= 60
    assert r.headers["x-ratelimit-remaining"] == "0"
    _, h = api.user()  # an authenticated user has their own budget
    r = api.client.get("/api/portfolios/", headers=h)
    assert (r.status_code, r.headers["x-ratelimit-limit"], r.headers["x-ratelimit-remaining"]) == (
        200,
        "5",
        "4",
    )
    assert "x-ratelimit-limit" not in api.client.get("/health").headers


@get("/realtime/test-ping/", sync_to_thread=False)
def realtime_ping() -> dict[str, str]:
    return {"pong": "ok"}


def test_realtime_paths_use_the_realtime_budget(api_factory) -> None:
    api = api_factory(rate_limit_realtime="2/minute", extra_routers=[realtime_ping])
    responses = [api.client.get("/realtime/test-ping/") for _ in range(3)]
    assert [r.status_code for r in responses] == [200, 200, 429]
    assert responses[0].headers["x-ratelimit-limit"] == "2"
    assert api.client.get("/api/assets/?limit=1").status_code == 200  # a separate budget


def test_memory_limiter_windows() -> None:
    async def run() -> list[bool]:
        lim = RateLimiter(MemoryStore(), Window.FIXED)
        return [(await lim.hit("k", RateLimit(2, 3600))).allowed for _ in range(3)]

    assert asyncio.run(run()) == [True, True, False]


@pytest.mark.redis
def test_redis_limiter_is_shared_between_workers(redis_url: str) -> None:
    """Two limiter instances (two workers) with one prefix count against one budget."""
    prefix = f"qc-test-{uuid.uuid4().hex}:"

    async def run() -> list[bool]:
        a, b = (RateLimiter(make_store(redis_url, f"{prefix}rl"), Window.FIXED) for _ in "ab")
        try:
            rate = RateLimit(3, 3600)
            hits = [
                await a.hit("user1", rate),
                await b.hit("user1", rate),
                await a.hit("user1", rate),
            ]
            hits.append(await b.hit("user1", rate))
            assert [h.remaining for h in hits] == [2, 1, 0, 0]
            other = await b.hit("user2", rate)
            assert other.remaining == 2
            return [h.allowed for h in hits]
        finally:
            await a.store.delete_all()
            await a.close()
            await b.close()

    assert asyncio.run(run()) == [True, True, True, False]


@pytest.mark.redis
def test_app_with_redis_limits(api_factory, redis_url: str) -> None:
    prefix = f"qc-test-{uuid.uuid4().hex}:"
    first = api_factory(redis_url=redis_url, redis_prefix=prefix, rate_limit_anonymous="2/hour")
    second = api_factory(redis_url=redis_url, redis_prefix=prefix, rate_limit_anonymous="2/hour")
    assert first.client.get("/api/assets/?limit=1").status_code == 200
    assert second.client.get("/api/assets/?limit=1").status_code == 200
    r = first.client.get("/api/assets/?limit=1")
    assert r.status_code == 429 and "retry-after" in r.headers
    assert first.client.get("/ready").json()["redis"] == "ok"
