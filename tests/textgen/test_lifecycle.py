"""The response lifecycle over real server processes: rows at creation, background work,
cancel, replay of stored events, disconnected streams, and two instances on one PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import secrets
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from textgen.store import Store

KEY = "sk-lifecycle-" + "1" * 20
SLOW = "slow-test"


def _sdk(base: str, key: str = KEY) -> openai.OpenAI:
    return openai.OpenAI(base_url=base, api_key=key, max_retries=0, _strict_response_validation=True)


def _http(base: str, key: str = KEY) -> httpx.Client:
    return httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30)


def _events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


def _wait(http: httpx.Client, rid: str, until: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        body: dict[str, Any] = http.get(f"/responses/{rid}").json()
        if until(body) or time.monotonic() > deadline:
            return body
        time.sleep(0.05)


def test_background_poll_cancel_and_replay(spawn: Callable[..., str]) -> None:
    with _sdk(spawn(key=KEY)) as sdk, _http(str(sdk.base_url)) as http:
        _background_poll_cancel_and_replay(sdk, http)


def _background_poll_cancel_and_replay(sdk: openai.OpenAI, http: httpx.Client) -> None:
    quick = sdk.responses.create(model="echo-test", input="hello", background=True)
    assert quick.status == "queued" and quick.background is True and quick.output == []
    done = _wait(http, quick.id, lambda b: b["status"] == "completed")
    assert done["status"] == "completed" and done["output"][0]["content"][0]["text"] == "user: hello"
    assert sdk.responses.retrieve(quick.id).status == "completed"

    slow = sdk.responses.create(model=SLOW, input="go", background=True, max_output_tokens=2000)
    running = _wait(http, slow.id, lambda b: b["status"] == "in_progress")
    assert running["status"] == "in_progress"
    time.sleep(0.3)
    cancelled = sdk.responses.cancel(slow.id)
    assert cancelled.status == "cancelled"
    assert 0 < len(cancelled.output[0].content[0].text.split()) < 2000  # the output so far  # type: ignore[union-attr]
    again = sdk.responses.cancel(slow.id)  # idempotent
    assert again.status == "cancelled" and again.output == cancelled.output
    assert sdk.responses.retrieve(slow.id).status == "cancelled"
    finished = sdk.responses.cancel(quick.id)  # a finished response is returned as it is
    assert finished.status == "completed"

    with sdk.responses.retrieve(quick.id, stream=True) as stream:
        replayed = [e.type for e in stream]
    assert replayed[0] == "response.created" and replayed[-1] == "response.completed"
    assert "response.queued" in replayed and "response.output_text.delta" in replayed
    after = http.get(f"/responses/{quick.id}", params={"stream": "true", "starting_after": 3})
    numbers = [e["sequence_number"] for e in _events(after.text)]
    assert numbers and numbers[0] == 4 and numbers == list(range(4, 4 + len(numbers)))

    foreground = sdk.responses.create(model="echo-test", input="x")
    with pytest.raises(openai.BadRequestError) as refused:
        sdk.responses.cancel(foreground.id)
    assert refused.value.body["code"] == "invalid_value"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError):
        sdk.responses.create(model="echo-test", input="x", background=True, store=False)


def test_replay_follows_live_events(spawn: Callable[..., str]) -> None:
    with _http(spawn(key=KEY)) as http:
        _replay_follows_live_events(http)


def _replay_follows_live_events(http: httpx.Client) -> None:
    created = http.post("/responses", json={"model": SLOW, "input": "go", "background": True,
                                            "max_output_tokens": 40}).json()
    with http.stream("GET", f"/responses/{created['id']}", params={"stream": "true", "starting_after": 1}) as r:
        assert r.headers["content-type"].split(";")[0] == "text/event-stream"
        events = _events("".join(r.iter_text()))
    numbers = [e["sequence_number"] for e in events]
    assert numbers == list(range(2, 2 + len(numbers)))
    assert events[-1]["type"] == "response.incomplete"
    assert sum(e["type"] == "response.output_text.delta" for e in events) == 40


def test_row_exists_while_streaming_and_a_dropped_stream_completes(spawn: Callable[..., str]) -> None:
    with _http(spawn(key=KEY)) as http:
        _dropped_stream_completes(http)


def _dropped_stream_completes(http: httpx.Client) -> None:
    with http.stream("POST", "/responses", json={"model": SLOW, "input": "go", "stream": True,
                                                 "max_output_tokens": 50}) as r:
        lines = r.iter_lines()
        assert next(lines) == "event: response.created"
        data = json.loads(next(lines)[6:])
        rid = data["response"]["id"]
        assert http.get(f"/responses/{rid}").json()["status"] == "in_progress"
    # the client went away; the response runs on and is stored (documented choice)
    body = _wait(http, rid, lambda b: b["status"] != "in_progress")
    assert body["status"] == "incomplete" and len(body["output"][0]["content"][0]["text"].split()) == 50


@pytest.mark.postgres
def test_two_instances_share_background_work(spawn: Callable[..., str], fresh_postgres: str, redis_url: str) -> None:
    async def make_key() -> str:  # a project of its own, so its requests count apart from other tests'
        store = Store(fresh_postgres)
        try:
            await store.create_schema()
            return (await store.create_key("lifecycle", f"bg-{secrets.token_hex(6)}"))[1]
        finally:
            await store.dispose()

    key = asyncio.run(make_key())
    shared = {"database_url": fresh_postgres, "redis_url": redis_url, "rate_limit_per_minute": "100000"}
    a = spawn("a", key=KEY, **shared)  # one database and one Redis (the limit is counted there, never reached)
    b = spawn("b", key=KEY, **shared)
    with _sdk(a, key) as sdk_a, _sdk(b, key) as sdk_b, _http(b, key) as http_b, _http(a, key) as http_a:
        _two_instances(sdk_a, sdk_b, http_a, http_b)


def _two_instances(sdk_a: openai.OpenAI, sdk_b: openai.OpenAI, http_a: httpx.Client, http_b: httpx.Client) -> None:
    started = sdk_a.responses.create(model=SLOW, input="go", background=True, max_output_tokens=2000)
    assert _wait(http_b, started.id, lambda x: x["status"] == "in_progress")["status"] == "in_progress"
    with http_b.stream("GET", f"/responses/{started.id}", params={"stream": "true"}) as live:
        lines = live.iter_lines()
        assert next(lines) == "event: response.created"
        cancelled = sdk_b.responses.cancel(started.id)  # B cancels what A is generating
        rest = "\n".join(lines)
    assert cancelled.status == "cancelled" and cancelled.output  # A recorded the output so far
    assert "response.output_text.delta" in rest and "response.completed" not in rest
    assert sdk_a.responses.retrieve(started.id).status == "cancelled"
    quick = sdk_b.responses.create(model="echo-test", input="on b", background=True)
    assert _wait(http_a, quick.id, lambda x: x["status"] == "completed")["status"] == "completed"
    assert {h.get("/models").headers["x-ratelimit-limit-requests"] for h in (http_a, http_b)} == {"100000"}


def test_a_dropped_plain_request_is_still_stored(spawn: Callable[..., str], tmp_path: Path) -> None:
    base = spawn("plain", key=KEY)
    with _http(base) as http:
        with pytest.raises(httpx.ReadTimeout):  # the client gives up long before the 50 slow tokens
            http.post("/responses", json={"model": SLOW, "input": "go", "max_output_tokens": 50,
                                          "metadata": {"tag": "dropped-plain"}}, timeout=0.3)
        # Nothing told the client the id: find the row in the instance's own SQLite database.
        deadline, rid = time.monotonic() + 60, None
        while rid is None and time.monotonic() < deadline:
            with sqlite3.connect(tmp_path / "plain" / "textgen.db") as db:
                row = db.execute("SELECT id FROM textgen_responses WHERE body LIKE '%dropped-plain%'").fetchone()
            rid = row[0] if row else None
            time.sleep(0.05)
        assert rid is not None
        body = _wait(http, rid, lambda b: b["status"] != "in_progress")
    assert body["status"] == "incomplete" and len(body["output"][0]["content"][0]["text"].split()) == 50
