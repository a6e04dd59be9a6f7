"""Background responses are durable work, over real server processes and real signals.

- ``kill -KILL`` mid-generation, restart: the response resumes from its stored events and ends
  ``completed``; its words run on without a gap or a repeat, and the stored event stream is
  append-only (contiguous sequence numbers, one ``response.created``, deltas that join to the text).
- ``kill -TERM``: the process exits within 10 s and hands the work back (not ``cancelled``); the next
  start finishes it.
- Two servers on one database (SQLite file, PostgreSQL): the job runs once; when its server is
  killed, the other takes it over after the lease expires.
- Responses that cannot be resumed end ``failed`` with an error object, never stuck ``in_progress``.

Every process is started with a bounded life: the fixture kills what is still running at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from tests.conftest import free_port, launch_process, wait_until_ready
from textgen.events import ResponseEvent, ResponseObject
from textgen.store import Lease, Store

HERE = Path(__file__).parent
KEY = "sk-durable-" + "2" * 20
SLOW = "slow-test"
LEASE = "1.5"  # seconds: a killed server's jobs are free this long after its last renewal


class Server:
    """One ``serve_shared.py`` process."""

    def __init__(self, proc: subprocess.Popen[bytes], base: str) -> None:
        self.proc = proc
        self.base = base
        self.http = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {KEY}"}, timeout=30)


Start = Callable[..., Server]


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Start]:
    procs: list[subprocess.Popen[bytes]] = []
    servers: list[Server] = []

    def run(name: str, data_dir: Path, *, default_model: bool = False, **env: str) -> Server:
        """``serve_shared.py`` (the test models), or ``python -m textgen serve`` (the default model)."""
        data_dir.mkdir(exist_ok=True)
        port = free_port()
        clean = {k: v for k, v in os.environ.items() if not k.startswith("TEXTGEN_")}
        clean.update({"TEXTGEN_RATE_LIMIT_PER_MINUTE": "0", "TEXTGEN_LEASE_SECONDS": LEASE})
        clean.update({f"TEXTGEN_{k.upper()}": v for k, v in env.items()})
        if default_model:
            clean.update({"TEXTGEN_DATA_DIR": str(data_dir), "TEXTGEN_API_KEYS": KEY})
            command = [sys.executable, "-m", "textgen", "serve", "--port", str(port), "--log-level", "warning"]
        else:
            command = [sys.executable, str(HERE / "serve_shared.py"), str(port), str(data_dir), KEY]
        base = f"http://127.0.0.1:{port}/v1"
        started = launch_process(command, log=tmp_path / f"{name}.log", env=clean, append=True)
        procs.append(started.proc)
        wait_until_ready(started, f"{base}/models", headers={"Authorization": f"Bearer {KEY}"}, timeout=120)
        servers.append(Server(started.proc, base))
        return servers[-1]

    yield run
    for server in servers:
        server.http.close()
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def _stored_events(url: str, rid: str) -> list[dict[str, Any]]:
    async def read() -> list[dict[str, Any]]:
        store = Store(url)
        try:
            return msgspec.to_builtins(await store.events_after(rid, -1))
        finally:
            await store.dispose()

    return asyncio.run(read())


def _row(url: str, rid: str) -> tuple[str, str | None]:
    async def read() -> tuple[str, str | None]:
        import sqlalchemy as sa

        from textgen.store_tables import responses

        store = Store(url)
        try:
            async with store.engine.connect() as conn:
                row = (await conn.execute(sa.select(responses.c.status, responses.c.lease_owner)
                                          .where(responses.c.id == rid))).one()
            return row.status, row.lease_owner
        finally:
            await store.dispose()

    return asyncio.run(read())


def _wait_for_events(url: str, rid: str, at_least: int) -> None:
    deadline = time.monotonic() + 60
    while len(_stored_events(url, rid)) < at_least:
        assert time.monotonic() < deadline, "no events were stored"
        time.sleep(0.1)


def _finished(server: Server, rid: str) -> dict[str, Any]:
    deadline = time.monotonic() + 90
    while True:
        body: dict[str, Any] = server.http.get(f"/responses/{rid}").json()
        if body["status"] not in ("queued", "in_progress"):
            return body
        assert time.monotonic() < deadline, f"still {body['status']}"
        time.sleep(0.2)


def _check_continuous(body: dict[str, Any], events: list[dict[str, Any]], server: Server) -> None:
    """The words run on from word0 without a gap or a repeat; the event stream is append-only."""
    assert body["status"] == "incomplete", body  # the slow model stops at max_output_tokens
    (message,) = body["output"]
    text = message["content"][0]["text"]
    words = text.split()
    assert words == [f"word{i}" for i in range(len(words))] and len(words) > 40
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert [e["type"] for e in events].count("response.created") == 1
    assert [e["type"] for e in events].count("response.output_item.added") == 1
    assert "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta") == text
    assert events[-1]["type"] == "response.incomplete"
    # a client resuming in the middle sees exactly the rest
    middle = len(events) // 2
    replay = server.http.get(f"/responses/{body['id']}", params={"stream": "true", "starting_after": middle})
    seqs = [int(line.split('"sequence_number":')[1].split(",")[0].split("}")[0])
            for line in replay.text.splitlines() if line.startswith("data: ")]
    assert seqs == list(range(middle + 1, len(events)))


def _background(server: Server, tokens: int = 150) -> str:
    r = server.http.post("/responses", json={"model": SLOW, "input": "go", "background": True,
                                             "max_output_tokens": tokens})
    assert r.status_code == 200, r.text
    return str(r.json()["id"])


def _sqlite(data_dir: Path) -> str:
    return f"sqlite+aiosqlite:///{data_dir.resolve() / 'textgen.db'}"


def test_kill_and_restart_resumes_from_the_stored_output(start: Start, tmp_path: Path) -> None:
    data = tmp_path / "a"
    first = start("a1", data)
    rid = _background(first)
    _wait_for_events(_sqlite(data), rid, 30)
    first.proc.send_signal(signal.SIGKILL)
    first.proc.wait(10)
    assert _row(_sqlite(data), rid)[0] == "in_progress"  # nothing settled it
    second = start("a2", data)
    body = _finished(second, rid)
    _check_continuous(body, _stored_events(_sqlite(data), rid), second)


def test_sigterm_hands_the_work_back_and_exits_in_time(start: Start, tmp_path: Path) -> None:
    data = tmp_path / "b"
    first = start("b1", data)
    rid = _background(first, 200)
    _wait_for_events(_sqlite(data), rid, 30)
    with first.http.stream("GET", f"/responses/{rid}", params={"stream": "true"}) as live:  # an open connection
        lines = live.iter_lines()
        next(lines)
        first.proc.send_signal(signal.SIGTERM)
        first.proc.wait(10)  # the bound: raises TimeoutExpired past it
        with contextlib.suppress(httpx.HTTPError):
            for _ in lines:  # the follower's stream ends with the process
                pass
    status, owner = _row(_sqlite(data), rid)
    assert (status, owner) == ("in_progress", None)  # handed back, not cancelled
    second = start("b2", data)
    body = _finished(second, rid)
    _check_continuous(body, _stored_events(_sqlite(data), rid), second)


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_two_servers_run_each_job_once_and_take_over_a_killed_ones(
        start: Start, tmp_path: Path, database: str, request: pytest.FixtureRequest) -> None:
    url = _sqlite(tmp_path / "shared") if database == "sqlite" else request.getfixturevalue("fresh_postgres")
    (tmp_path / "shared").mkdir(exist_ok=True)
    a = start("ca", tmp_path / "ca", database_url=url)
    b = start("cb", tmp_path / "cb", database_url=url)
    done = _background(a, 60)  # runs to the end on a while b polls for orphans: once, not twice
    assert _finished(b, done)["status"] == "incomplete"
    events = _stored_events(url, done)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    rid = _background(a, 150)
    _wait_for_events(url, rid, 30)
    a.proc.send_signal(signal.SIGKILL)
    a.proc.wait(10)
    body = _finished(b, rid)  # b claims it once the lease expires
    _check_continuous(body, _stored_events(url, rid), b)


def test_what_cannot_be_resumed_ends_failed(start: Start, tmp_path: Path) -> None:
    data = tmp_path / "d"
    data.mkdir()
    url = _sqlite(data)

    async def seed() -> tuple[str, str]:
        store = Store(url)
        await store.create_schema()
        now = int(time.time())
        lost = {"id": "resp_lost", "object": "response", "created_at": now, "status": "in_progress",
                "background": False, "output": []}  # a foreground response whose server died
        await store.create_response("default", msgspec.convert(lost, ResponseObject), [], None,
                                    lease=Lease("inst_dead", time.time() - 1))
        partial = {**lost, "id": "resp_partial", "status": "in_progress", "background": True}
        job = {"body": {"model": "textgen-ngram", "input": "hi", "background": True, "store": True}}
        await store.create_response("default", msgspec.convert(partial, ResponseObject), [], None, job=job,
                                    lease=Lease("inst_dead", 0.0))
        message = {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress", "content": []}
        await store.add_events("resp_partial", msgspec.convert([
            {"type": "response.created", "sequence_number": 0, "response": partial},
            {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": message},
            {"type": "response.output_text.delta", "sequence_number": 2, "item_id": "msg_1", "output_index": 0,
             "content_index": 0, "delta": "Half an", "logprobs": []},
        ], list[ResponseEvent]))
        await store.dispose()
        return "resp_lost", "resp_partial"

    lost, partial = asyncio.run(seed())
    server = start("d1", data)
    for rid, reason in ((lost, "background"), (partial, "cannot continue")):
        body = _finished(server, rid)
        assert body["status"] == "failed" and reason in body["error"]["message"], body
        assert body["error"]["code"] == "server_error"
    events = _stored_events(url, partial)
    assert [e["type"] for e in events][-1] == "response.failed" and events[-1]["sequence_number"] == 3


@pytest.mark.slow
def test_the_default_model_continues_its_own_text_after_a_kill(start: Start, tmp_path: Path) -> None:
    """llama.cpp resumes from the prompt plus the stored text: the answer keeps the text as it was."""
    data = tmp_path / "e"
    first = start("e1", data, default_model=True)
    r = first.http.post("/responses", json={"model": "smollm2-135m-instruct", "background": True, "seed": 1,
                                            "input": "Tell me a long story about a dragon and a knight.",
                                            "max_output_tokens": 400})
    assert r.status_code == 200, r.text
    rid = r.json()["id"]
    _wait_for_events(_sqlite(data), rid, 25)
    first.proc.send_signal(signal.SIGKILL)
    first.proc.wait(10)
    before = "".join(e["delta"] for e in _stored_events(_sqlite(data), rid)
                     if e["type"] == "response.output_text.delta")
    second = start("e2", data, default_model=True)
    body = _finished(second, rid)
    assert body["status"] in ("completed", "incomplete"), body
    (message,) = body["output"]
    text = message["content"][0]["text"]
    assert text.startswith(before) and len(text) > len(before) and before
    events = _stored_events(_sqlite(data), rid)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta") == text
    assert body["usage"]["output_tokens"] <= 400
