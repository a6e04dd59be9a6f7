"""The ``openai_compatible`` backend.

End to end: a second textgen server (``serve_for_tests.py``: built-in, echo and
broken models) is the upstream, reached over real HTTP on loopback by the
``/responses`` endpoint; the front server is ``python -m textgen serve`` with a
TEXTGEN_MODELS file, and the official SDK is its client. The echo upstream
answers with the context it received, so the tests read exactly what was sent.

The ``/chat/completions`` translation (vLLM, llama.cpp, Ollama, OpenAI) is
tested against an in-process upstream (an httpx transport) that streams
chunks in the shape those servers send.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import openai
import pytest

from tests.conftest import ServerProcess, free_port, start_process
from textgen.backends.base import (
    ArgumentsDelta,
    BackendError,
    ChatMessage,
    Finish,
    FunctionCallStart,
    FunctionSpec,
    GenerationRequest,
    JsonConstraint,
    ModelInfo,
    ReasoningDelta,
    TextDelta,
)
from textgen.backends.openai_compatible import OpenAICompatibleBackend

HERE = Path(__file__).parent
FRONT_KEY = "sk-front-" + "2" * 24
UPSTREAM_KEY = "sk-upstream-" + "3" * 24
WEATHER = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 20}},
           "required": ["city"], "additionalProperties": False}


def _start(command: list[str], env: dict[str, str], log_path: Path, base: str, key: str) -> ServerProcess:
    return start_process(command, log=log_path, env=env, url=f"{base}/models",
                         headers={"Authorization": f"Bearer {key}"})


@pytest.fixture(scope="module")
def front(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of the front server, whose proxy models forward to the upstream server."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TEXTGEN_")}
    up_dir, front_dir = tmp_path_factory.mktemp("upstream"), tmp_path_factory.mktemp("front")
    up_port, front_port = free_port(), free_port()
    upstream = f"http://127.0.0.1:{up_port}/v1"
    up = _start([sys.executable, str(HERE / "serve_for_tests.py"), str(up_port), str(up_dir), UPSTREAM_KEY],
                clean, up_dir / "server.log", upstream, UPSTREAM_KEY)

    def proxy(snapshot: str, model: str, window: int = 100_000, key_env: str = "QC_UPSTREAM_KEY") -> str:
        return (f'[models."{snapshot}"]\nbackend = "openai_compatible"\nbase_url = "{upstream}"\n'
                f'upstream_model = "{model}"\napi_key_env = "{key_env}"\nendpoint = "responses"\n'
                f"context_window = {window}\nmax_output_tokens = 2048\n\n")

    (front_dir / "models.toml").write_text(
        "builtin = false\nngram = true\n\n"  # the n-gram test double stands in for a local model
        + proxy("proxy-echo-2026-11-01", "echo-test") + proxy("proxy-ngram-2026-11-01", "textgen-ngram", 8192)
        + proxy("proxy-broken-2026-11-01", "broken-test") + proxy("proxy-missing-2026-11-01", "no-such-model")
        + proxy("proxy-badkey-2026-11-01", "echo-test", key_env="QC_WRONG_KEY")
        + '[aliases]\n"proxy-echo" = "proxy-echo-2026-11-01"\n')
    env = clean | {"TEXTGEN_MODELS": str(front_dir / "models.toml"), "TEXTGEN_DATA_DIR": str(front_dir),
                   "TEXTGEN_API_KEYS": FRONT_KEY, "TEXTGEN_RATE_LIMIT_PER_MINUTE": "0",
                   "TEXTGEN_MAX_FILE_BYTES": "100000", "QC_UPSTREAM_KEY": UPSTREAM_KEY, "QC_WRONG_KEY": "sk-wrong"}
    base = f"http://127.0.0.1:{front_port}/v1"
    fr = _start([sys.executable, "-m", "textgen", "serve", "--port", str(front_port), "--log-level", "warning"],
                env, front_dir / "server.log", base, FRONT_KEY)
    try:
        yield base
    finally:
        for proc in (fr, up):
            proc.stop()


@pytest.fixture(scope="module")
def sdk(front: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=front, api_key=FRONT_KEY, max_retries=0, _strict_response_validation=True)


# --- end to end against a real upstream ---------------------------------------------------
def test_models_include_builtin_and_proxies(sdk: openai.OpenAI) -> None:
    ids = {m.id for m in sdk.models.list().data}
    assert {"textgen-ngram-2026-11-22", "proxy-echo-2026-11-01", "proxy-ngram-2026-11-01"} <= ids
    r = sdk.responses.create(model="proxy-echo", input="hi")
    assert r.model == "proxy-echo-2026-11-01"


def test_roles_and_instructions_are_translated(sdk: openai.OpenAI) -> None:
    r = sdk.responses.create(model="proxy-echo", instructions="Answer in French.", input=[
        {"role": "developer", "content": "dev rule"},
        {"role": "user", "content": [{"type": "input_text", "text": "part one"},
                                     {"type": "input_text", "text": "part two"}]},
        {"role": "assistant", "content": "earlier answer"},
        {"role": "user", "content": "question"},
    ])
    assert r.output_text.splitlines() == [
        "system: Answer in French.", "system: dev rule", "user: part one", "part two",
        "assistant: earlier answer", "user: question",
    ]
    assert r.usage is not None and r.usage.output_tokens > 0


def test_previous_response_id_with_a_stateless_upstream(sdk: openai.OpenAI) -> None:
    first = sdk.responses.create(model="proxy-echo", instructions="only for turn one", input="alpha")
    second = sdk.responses.create(model="proxy-echo", input="beta", previous_response_id=first.id)
    assert second.output_text.splitlines() == ["user: alpha", "assistant: system: only for turn one",
                                               "user: alpha", "user: beta"]
    items = sdk.responses.input_items.list(second.id)
    assert [i.type for i in items.data] == ["message"]


def test_files_stay_on_our_server(sdk: openai.OpenAI) -> None:
    uploaded = sdk.files.create(file=("notes.md", b"# Notes\nthe upstream never saw this file id"),
                                purpose="user_data")
    r = sdk.responses.create(model="proxy-echo", input=[{"role": "user", "content": [
        {"type": "input_file", "file_id": uploaded.id}, {"type": "input_text", "text": "summarise"}]}])
    assert "the upstream never saw this file id" in r.output_text and uploaded.id not in r.output_text


def test_streaming_is_forwarded(sdk: openai.OpenAI) -> None:
    with sdk.responses.stream(model="proxy-echo", input="streamed words") as stream:
        events = list(stream)
        final = stream.get_final_response()
    kinds = [e.type for e in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert len(deltas) >= 1 and "".join(deltas) == final.output_text == "user: streamed words"
    assert sdk.responses.retrieve(final.id).output_text == final.output_text  # stored like any other


def test_seed_and_sampling_options_reach_the_upstream(sdk: openai.OpenAI) -> None:
    def run(seed: int) -> str:
        return sdk.responses.create(model="proxy-ngram-2026-11-01", input="rain and markets", temperature=1.2,
                                    top_p=0.9, max_output_tokens=20, extra_body={"seed": seed}).output_text

    assert run(4) == run(4) and len({run(s) for s in range(5, 9)}) > 1


def test_structured_outputs_and_tools_are_forwarded(sdk: openai.OpenAI) -> None:
    schema = {"type": "object", "properties": {"mood": {"enum": ["calm", "busy"]}, "n": {"type": "integer"}},
              "required": ["mood", "n"], "additionalProperties": False}
    r = sdk.responses.create(model="proxy-ngram-2026-11-01", input="mood?", extra_body={"seed": 1},
                             text={"format": {"type": "json_schema", "name": "mood", "schema": schema,
                                              "strict": True}})
    jsonschema.validate(json.loads(r.output_text), schema)
    call = sdk.responses.create(
        model="proxy-ngram-2026-11-01", input="weather in Paris?", tool_choice="required", extra_body={"seed": 1},
        tools=[{"type": "function", "name": "get_weather", "description": "Weather of a city",
                "parameters": WEATHER, "strict": True}])
    (item,) = call.output
    assert item.type == "function_call" and item.name == "get_weather"
    jsonschema.validate(json.loads(item.arguments), WEATHER)


def test_upstream_400_is_our_400_with_its_code(sdk: openai.OpenAI) -> None:
    # within our declared window (100000) but beyond the upstream echo model's 4096
    with pytest.raises(openai.BadRequestError) as info:
        sdk.responses.create(model="proxy-echo", input="word " * 5000)
    body = info.value.body
    assert isinstance(body, dict) and body["code"] == "context_length_exceeded"
    assert body["message"].startswith("Upstream rejected the request: This model's maximum context length")


@pytest.mark.parametrize(("model", "needle"), [
    ("proxy-missing-2026-11-01", "HTTP 404"),
    ("proxy-badkey-2026-11-01", "HTTP 401"),
    ("proxy-broken-2026-11-01", "Upstream failed"),
])
def test_other_upstream_failures_are_500(sdk: openai.OpenAI, model: str, needle: str) -> None:
    with pytest.raises(openai.InternalServerError) as info:
        sdk.responses.create(model=model, input="hello")
    body = info.value.body
    assert isinstance(body, dict) and body["code"] == "upstream_error" and needle in body["message"]


def test_streamed_upstream_failure_ends_with_response_failed(sdk: openai.OpenAI) -> None:
    with sdk.responses.stream(model="proxy-broken-2026-11-01", input="hello") as stream:
        kinds = []
        with pytest.raises(openai.APIError):
            for event in stream:
                kinds.append(event.type)
    assert kinds[0] == "response.created" and "response.output_text.delta" in kinds


# --- chat completions translation ---------------------------------------------------------
INFO = ModelInfo(id="chat-proxy", context_window=32768, max_output_tokens=1024)


def _sse(chunks: list[dict[str, Any]]) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "c1", "object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": delta, "finish_reason": finish}]}


class Upstream:
    """An in-process chat-completions server: records requests, replays a response."""

    def __init__(self, status: int, body: bytes) -> None:
        self.status, self.body = status, body
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append({"url": str(request.url), "auth": request.headers.get("authorization"),
                              "json": json.loads(request.content)})
        kind = "text/event-stream" if self.status == 200 else "application/json"
        return httpx.Response(self.status, content=self.body, headers={"content-type": kind})


def _generate(upstream: Upstream, request: GenerationRequest, **options: Any) -> list[Any]:
    backend = OpenAICompatibleBackend(INFO, base_url="http://up.test/v1/", upstream_model="qwen", api_key="k",
                                      transport=httpx.MockTransport(upstream), **options)

    async def collect() -> list[Any]:
        return [d async for d in backend.generate(request)]

    return asyncio.run(collect())


REQUEST = GenerationRequest(
    messages=[ChatMessage("system", "S"), ChatMessage("developer", "D"),
              ChatMessage("user", "look [image]", ("https://example.com/a.png",)),
              ChatMessage("assistant", "A"), ChatMessage("tool", "42")],
    max_output_tokens=50, temperature=0.5, top_p=0.9, seed=7,
    constraint=JsonConstraint({"type": "object"}, True, "out"),
    tools=[FunctionSpec("f", "does f", {}, False)], tool_choice="f",
)


def test_chat_payload() -> None:
    upstream = Upstream(200, _sse([_chunk({"content": "ok"}, "stop")]))
    _generate(upstream, REQUEST)
    (sent,) = upstream.requests
    assert sent["url"] == "http://up.test/v1/chat/completions" and sent["auth"] == "Bearer k"
    body = sent["json"]
    assert body["messages"] == [
        {"role": "system", "content": "S"}, {"role": "system", "content": "D"},
        {"role": "user", "content": [{"type": "text", "text": "look [image]"},
                                     {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]},
        {"role": "assistant", "content": "A"}, {"role": "user", "content": "Tool result:\n42"},
    ]
    assert (body["model"], body["max_tokens"], body["temperature"], body["top_p"], body["seed"]) == (
        "qwen", 50, 0.5, 0.9, 7)
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "out", "schema": {"type": "object"}, "strict": True}}
    assert body["tools"][0]["function"]["name"] == "f"
    assert body["tool_choice"] == {"type": "function", "function": {"name": "f"}}
    _generate(upstream, REQUEST, developer_role="developer", send_seed=False)
    assert upstream.requests[1]["json"]["messages"][1]["role"] == "developer"
    assert "seed" not in upstream.requests[1]["json"]


def test_chat_stream_reasoning_text_tools_and_usage() -> None:
    chunks = [
        _chunk({"role": "assistant", "reasoning_content": "weigh "}), _chunk({"reasoning_content": "options"}),
        _chunk({"content": "<thi"}), _chunk({"content": "nk>more</think>\nThe "}), _chunk({"content": "answer"}),
        _chunk({"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "f", "arguments": '{"a"'}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]}, "length"),
        {"id": "c1", "choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 9, "total_tokens": 20,
                                              "prompt_tokens_details": {"cached_tokens": 8},
                                              "completion_tokens_details": {"reasoning_tokens": 4}}},
    ]
    deltas = _generate(Upstream(200, _sse(chunks)), REQUEST)
    assert deltas == [
        ReasoningDelta("weigh "), ReasoningDelta("options"), ReasoningDelta("more"), TextDelta("The "),
        TextDelta("answer"), FunctionCallStart("f"), ArgumentsDelta('{"a"'), ArgumentsDelta(": 1}"),
        Finish("length", 9, input_tokens=11, cached_tokens=8, reasoning_tokens=4),
    ]


@pytest.mark.parametrize(("status", "body", "expected"), [
    (400, {"error": {"message": "too long", "code": "context_length_exceeded"}},
     (400, "context_length_exceeded", "Upstream rejected the request: too long")),
    (429, {"error": {"message": "slow down"}}, (429, "rate_limit_exceeded", "Upstream rate limit: slow down")),
    (401, {"error": "bad key"}, (500, "upstream_error", "Upstream error (HTTP 401): bad key")),
    (503, {"detail": "x"}, (500, "upstream_error", 'Upstream error (HTTP 503): {"detail": "x"}')),
])
def test_chat_errors(status: int, body: dict[str, Any], expected: tuple[int, str, str]) -> None:
    with pytest.raises(BackendError) as info:
        _generate(Upstream(status, json.dumps(body).encode()), REQUEST)
    assert (info.value.status, info.value.code, str(info.value)) == expected


def test_unreachable_upstream_is_a_500() -> None:
    backend = OpenAICompatibleBackend(INFO, base_url=f"http://127.0.0.1:{free_port()}/v1", upstream_model="m")

    async def collect() -> list[Any]:
        return [d async for d in backend.generate(REQUEST)]

    with pytest.raises(BackendError) as info:
        asyncio.run(collect())
    assert info.value.status == 500 and "unreachable" in str(info.value)
