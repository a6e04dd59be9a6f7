"""The wire of textgen and its decode/encode cost, for comparing two checkouts (not a test).

``python tests/textgen/measure_wire.py dump OUT`` writes every answer of a fixed sequence of requests
(ids and timestamps replaced by placeholders) to ``OUT``; run it under two checkouts' ``PYTHONPATH``
and ``diff`` the files. ``python tests/textgen/measure_wire.py cost`` prints the CPU time of decoding
typical request bodies and of producing and encoding a 100-delta response's events, and the CPU per
non-streamed request with the app called in the same event loop (best of several rounds).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec

sys.path.insert(0, str(Path(__file__).parent))

from fake_backends import EchoBackend, ThinkingBackend
from litestar.testing import AsyncTestClient, TestClient

from textgen.app import create_app
from textgen.backends.base import Delta, Finish, GenerationRequest, ModelInfo, TextDelta
from textgen.backends.builtin import NgramBackend
from textgen.decoding import decode_body
from textgen.inputs import normalize_input
from textgen.schemas import ChatCompletionCreate, ResponseCreate
from textgen.settings import Settings

KEY = "sk-test-" + "0" * 24
HEADERS = {"Authorization": f"Bearer {KEY}"}
NGRAM = "textgen-ngram"
TOOL = {"type": "function", "name": "get_weather", "description": "weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
                       "additionalProperties": False}}
MESSAGES = [
    {"role": "developer", "content": "Answer briefly."},
    {"role": "user", "content": [{"type": "input_text", "text": "What is the weather like in Oslo in May?"}]},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Mild, often sunny.",
                                                          "annotations": []}]},
    {"role": "user", "content": "And in June?"},
]


class HundredDeltas(EchoBackend):
    """Says ``w<i> `` 100 times, as fast as it can."""

    info = ModelInfo(id="hundred-test", context_window=4096, max_output_tokens=4096)

    async def generate(self, request: GenerationRequest) -> AsyncIterator[Delta]:
        for i in range(100):
            yield TextDelta(f"w{i} ")
        yield Finish("stop", 100)


def _app(data_dir: str) -> Any:
    settings = Settings(data_dir=data_dir, api_keys=(KEY,), rate_limit_per_minute=0)
    return create_app(settings, backends=[NgramBackend(), EchoBackend(), ThinkingBackend(), HundredDeltas()])


_IDS = re.compile(r"\b(?:resp|msg|fc|fco|call|rs|conv|file|pmpt|key|chatcmpl-)_?[0-9a-f]{12,}")
_TIMES = re.compile(r'"(created|created_at|completed_at)":\d+')


def _stable(text: str, names: dict[str, str]) -> str:
    text = _IDS.sub(lambda m: names.setdefault(m.group(), f"<id{len(names)}>"), text)
    return _TIMES.sub(lambda m: f'"{m.group(1)}":<t>', text)


def dump(out: Path) -> None:
    """Every answer of a fixed sequence of requests, ids and times replaced."""
    names: dict[str, str] = {}
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, TestClient(_app(tmp)) as client:
        def call(method: str, path: str, body: Any = None) -> Any:
            reply = client.request(method, f"/v1{path}", json=body, headers=HEADERS)
            lines.append(f"== {method} {path} {reply.status_code} {reply.headers.get('content-type')}")
            lines.append(_stable(reply.text, names))
            return reply.json() if "json" in reply.headers.get("content-type", "") else None

        seed = {"seed": 7}
        first = call("POST", "/responses", {"model": NGRAM, "input": "weather in Oslo", "max_output_tokens": 12,
                                            **seed})
        call("POST", "/responses", {"model": NGRAM, "input": MESSAGES, "max_output_tokens": 12, "stream": True,
                                    "include": ["message.output_text.logprobs"], "top_logprobs": 2, **seed})
        call("POST", "/responses", {"model": NGRAM, "input": "is there weather news?", "tools": [TOOL],
                                    "tool_choice": "required", "max_output_tokens": 30, **seed})
        call("POST", "/responses", {"model": NGRAM, "input": "is there weather news?", "tools": [TOOL],
                                    "tool_choice": "required", "max_output_tokens": 30, "stream": True, **seed})
        call("POST", "/responses", {"model": "thinking-test", "input": "think", "stream": True,
                                    "include": ["reasoning.encrypted_content"]})
        call("POST", "/responses", {"model": "echo-test", "input": MESSAGES, "instructions": "be brief",
                                    "metadata": {"k": "v"}, "text": {"format": {"type": "json_object"}}})
        call("POST", "/responses", {"model": NGRAM, "input": "x", "previous_response_id": first["id"],
                                    "max_output_tokens": 3, **seed})
        call("POST", "/responses/input_tokens", {"model": NGRAM, "input": MESSAGES})
        call("GET", f"/responses/{first['id']}")
        call("GET", f"/responses/{first['id']}/input_items")
        conv = call("POST", "/conversations", {"items": MESSAGES[:2], "metadata": {"a": "b"}})
        call("POST", "/responses", {"model": "echo-test", "input": "more", "conversation": conv["id"]})
        call("GET", f"/conversations/{conv['id']}/items?order=asc")
        call("POST", f"/conversations/{conv['id']}", {"metadata": {"a": "c"}})
        call("GET", f"/conversations/{conv['id']}")
        call("DELETE", f"/conversations/{conv['id']}")
        call("DELETE", f"/responses/{first['id']}")
        call("GET", "/models")
        call("POST", "/prompts", {"name": "p", "template": "Hi {{who}}"})
        call("GET", "/prompts")
        chat = {"model": NGRAM, "messages": [{"role": "user", "content": "weather in Oslo"}], "max_tokens": 10,
                "seed": 7}
        call("POST", "/chat/completions", chat)
        call("POST", "/chat/completions", {**chat, "stream": True, "stream_options": {"include_usage": True},
                                           "logprobs": True, "top_logprobs": 1})
        call("POST", "/chat/completions", {**chat, "tools": [{"type": "function", "function": {
            k: v for k, v in TOOL.items() if k != "type"}}], "tool_choice": "required", "max_tokens": 30})
        call("POST", "/chat/completions", {**chat, "tools": [{"type": "function", "function": {
            k: v for k, v in TOOL.items() if k != "type"}}], "tool_choice": "required", "max_tokens": 30,
            "stream": True})
        for bad in ([{"role": "user", "content": "Hi", "bogus": 1}],
                    [{"role": "user", "content": [{"type": "input_text", "text": "Hi", "extra": True}]}],
                    [{"role": "robot", "content": "x"}], [{"type": "input_audio"}], 5,
                    [{"type": "reasoning", "id": "rs_1", "summary": [{"type": "oops"}]}],
                    [{"role": "user", "content": [{"type": "input_file", "file_url": "https://x"}]}],
                    [{"role": "user", "content": [{"type": "input_image"}]}],
                    [{"type": "function_call_output", "call_id": "c", "output": "x", "nope": 1}]):
            call("POST", "/responses", {"model": NGRAM, "input": bad})
        call("POST", "/responses", {"model": "broken-test", "input": "x"})
        for messages in ([{"role": "robot", "content": "x"}], [{"role": "user", "content": "x", "bogus": 1}],
                         [{"role": "tool", "tool_call_id": "nope", "content": "x"}],
                         [{"role": "system", "content": [{"type": "image_url", "image_url": {"url": "u"}}]}],
                         [{"role": "user", "content": [{"type": "text", "text": "x", "extra": 1}]}],
                         [{"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {
                             "name": "f", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "c1",
                                                                  "content": "sunny"}]):
            call("POST", "/chat/completions", {"model": "echo-test", "messages": messages})
    out.write_text("\n".join(lines) + "\n")


def _best(fn: Any, number: int, rounds: int = 7) -> float:
    """The least CPU seconds per call over ``rounds`` rounds of ``number`` calls."""
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(number):
            fn()
        best = min(best, (time.process_time() - start) / number)
    return best


async def _events(services: Any, body: ResponseCreate) -> list[Any]:
    turn = await services.responses.prepare(body, "default")
    return [event async for event in services.responses.events(turn)]


async def _event_costs(rounds: int = 7) -> dict[str, float]:
    """CPU seconds to encode, and to produce and encode, the events of a 100-delta response."""
    with tempfile.TemporaryDirectory() as tmp:
        async with AsyncTestClient(_app(tmp)) as client:
            services = client.app.state["services"]
            body = msgspec.convert({"model": "hundred-test", "input": "go", "store": False}, ResponseCreate)
            events = await _events(services, body)
            encode = _best(lambda: [msgspec.json.encode(e) for e in events], 500, rounds)
            best = float("inf")
            for _ in range(rounds):
                start = time.process_time()
                for _ in range(100):
                    for event in await _events(services, body):
                        msgspec.json.encode(event)
                best = min(best, (time.process_time() - start) / 100)
    return {f"encode {len(events)} events (us)": encode, f"produce + encode {len(events)} events (us)": best}


async def _per_request(number: int = 300, rounds: int = 7) -> float:
    """CPU seconds per non-streamed request, the ASGI app called directly in this event loop."""
    body = json.dumps({"model": "echo-test", "input": MESSAGES, "store": False}).encode()
    headers = [(b"authorization", f"Bearer {KEY}".encode()), (b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": "/v1/responses", "raw_path": b"/v1/responses", "query_string": b"", "root_path": "",
             "headers": headers, "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80)}
    with tempfile.TemporaryDirectory() as tmp:
        app = _app(tmp)
        started, stopping = asyncio.Event(), asyncio.Event()

        async def lifespan_receive() -> dict[str, Any]:
            if not started.is_set():
                return {"type": "lifespan.startup"}
            await stopping.wait()
            return {"type": "lifespan.shutdown"}

        async def lifespan_send(message: dict[str, Any]) -> None:
            if message["type"] == "lifespan.startup.complete":
                started.set()

        lifespan = asyncio.create_task(app({"type": "lifespan", "asgi": {"version": "3.0"}}, lifespan_receive,
                                           lifespan_send))
        await started.wait()

        async def request() -> None:
            status: list[int] = []

            async def receive() -> dict[str, Any]:
                return {"type": "http.request", "body": body, "more_body": False}

            async def send(message: dict[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    status.append(message["status"])

            await app(dict(scope), receive, send)
            assert status == [200], status

        for _ in range(30):
            await request()
        best = float("inf")
        for _ in range(rounds):
            start = time.process_time()
            for _ in range(number):
                await request()
            best = min(best, (time.process_time() - start) / number)
        stopping.set()
        await lifespan
    return best


def cost() -> None:
    """CPU per decode, per 100-delta event stream, per request."""
    simple = json.dumps({"model": NGRAM, "input": "What is the capital of Germany?"}).encode()
    items = json.dumps({"model": NGRAM, "input": MESSAGES, "tools": [TOOL], "max_output_tokens": 64,
                        "temperature": 0.2}).encode()
    chat = json.dumps({"model": NGRAM, "messages": [{"role": "system", "content": "Be brief."},
                                                    {"role": "user", "content": "What is the capital?"}],
                       "max_tokens": 64}).encode()
    results = {
        "decode string input (us)": _best(lambda: normalize_input(decode_body(simple, ResponseCreate).input), 20_000),
        "decode 4 items + tool (us)": _best(lambda: normalize_input(decode_body(items, ResponseCreate).input), 5_000),
        "decode chat (us)": _best(lambda: decode_body(chat, ChatCompletionCreate), 20_000),
    }
    results.update(asyncio.run(_event_costs()))
    results["POST /v1/responses, echo, not stored, CPU per request (us)"] = asyncio.run(_per_request())
    for name, seconds in results.items():
        print(f"{name}: {seconds * 1e6:.1f}")


if __name__ == "__main__":
    if sys.argv[1] == "dump":
        dump(Path(sys.argv[2]))
    else:
        cost()
