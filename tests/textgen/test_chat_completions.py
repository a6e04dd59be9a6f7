"""``POST /v1/chat/completions`` through the official SDK with strict validation (plain and streamed),
and its errors over raw HTTP, on the test server (n-gram, echo, broken models)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import jsonschema
import openai
import pytest
from pydantic import BaseModel

from textgen.chat import StopScanner

MODEL = "textgen-ngram"
ECHO = "echo-test"


def test_a_plain_completion(client: openai.OpenAI) -> None:
    r = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "weather and rain"}],
                                       max_completion_tokens=16, seed=3)
    (choice,) = r.choices
    assert r.object == "chat.completion" and r.id.startswith("chatcmpl-") and r.model.startswith("textgen-ngram")
    assert choice.message.role == "assistant" and choice.message.content and choice.finish_reason in ("stop", "length")
    assert r.usage is not None and r.usage.completion_tokens > 0
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens
    again = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "weather and rain"}],
                                           max_completion_tokens=16, seed=3)
    assert again.choices[0].message.content == choice.message.content  # seeded


def test_every_role_reaches_the_model_in_order(client: openai.OpenAI) -> None:
    r = client.chat.completions.create(model=ECHO, messages=[
        {"role": "system", "content": "S"}, {"role": "developer", "content": "D"},
        {"role": "user", "content": [{"type": "text", "text": "U1"}, {"type": "text", "text": "U2"}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "T"},
    ], max_tokens=200)
    assert r.choices[0].message.content == "system: S\ndeveloper: D\nuser: U1\nU2\nassistant: [call f {}]\ntool: T"


def test_the_stream_joins_to_the_completion_and_reports_usage(client: openai.OpenAI) -> None:
    messages: list[Any] = [{"role": "user", "content": "markets and weather"}]
    plain = client.chat.completions.create(model=MODEL, messages=messages, max_tokens=24, seed=5)
    stream = client.chat.completions.create(model=MODEL, messages=messages, max_tokens=24, seed=5, stream=True,
                                            stream_options={"include_usage": True})
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == plain.choices[0].message.content
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == [plain.choices[0].finish_reason]
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == plain.usage.completion_tokens  # type: ignore[union-attr]
    no_usage = list(client.chat.completions.create(model=MODEL, messages=messages, max_tokens=4, stream=True))
    assert all(c.usage is None for c in no_usage) and no_usage[-1].choices


def test_stop_sequences_end_the_answer_before_them(client: openai.OpenAI) -> None:
    messages: list[Any] = [{"role": "user", "content": "ABC then DEF"}]
    r = client.chat.completions.create(model=ECHO, messages=messages, stop=["then"])
    assert r.choices[0].message.content == "user: ABC " and r.choices[0].finish_reason == "stop"
    streamed = client.chat.completions.create(model=ECHO, messages=messages, stop="DEF", stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in streamed if c.choices) == "user: ABC then "


def test_the_stop_scanner_holds_back_a_possible_start() -> None:
    scanner = StopScanner(["END"])
    assert [scanner.feed(p) for p in ("abc E", "N", "x E", "ND tail")] == ["abc ", "", "ENx ", ""]
    assert scanner.stopped and scanner.flush() == ""
    open_tail = StopScanner(["END"])
    assert open_tail.feed("xyE") == "xy" and open_tail.flush() == "E"


class Weather(BaseModel):
    city: str
    celsius: int


def test_structured_outputs_and_json_object(client: openai.OpenAI) -> None:
    parsed = client.chat.completions.parse(model=MODEL, messages=[{"role": "user", "content": "weather"}],
                                           response_format=Weather, max_completion_tokens=200, seed=1)
    assert isinstance(parsed.choices[0].message.parsed, Weather)
    obj = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "weather"}],
                                         response_format={"type": "json_object"}, max_tokens=200, seed=2)
    assert isinstance(json.loads(obj.choices[0].message.content or ""), dict)


def test_tool_calls_then_a_tool_message(client: openai.OpenAI) -> None:
    parameters = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
                  "additionalProperties": False}
    tools: list[Any] = [{"type": "function", "function": {"name": "get_weather", "description": "Weather of a city.",
                                                          "parameters": parameters, "strict": True}}]
    messages: list[Any] = [{"role": "user", "content": "is there weather news?"}]
    r = client.chat.completions.create(model=MODEL, messages=messages, tools=tools, tool_choice="required",
                                       max_tokens=100, seed=1)
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.tool_calls
    call = choice.message.tool_calls[0]
    assert call.type == "function" and call.function.name == "get_weather"
    jsonschema.validate(json.loads(call.function.arguments), parameters)
    streamed = list(client.chat.completions.create(
        model=MODEL, messages=messages, tools=tools, max_tokens=100, seed=1, stream=True,
        tool_choice={"type": "function", "function": {"name": "get_weather"}}))
    deltas = [c.choices[0].delta.tool_calls for c in streamed if c.choices and c.choices[0].delta.tool_calls]
    arguments = "".join(d[0].function.arguments or "" for d in deltas if d[0].function)
    jsonschema.validate(json.loads(arguments), parameters)
    history: list[Any] = [*messages, choice.message.model_dump(exclude_none=True),
                          {"role": "tool", "tool_call_id": call.id, "content": "sunny"}]
    follow = client.chat.completions.create(model=MODEL, tools=tools, max_tokens=16, messages=history)
    assert follow.choices[0].message.content and follow.choices[0].finish_reason != "tool_calls"


def test_logprobs(client: openai.OpenAI) -> None:
    r = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "weather"}],
                                       logprobs=True, top_logprobs=2, temperature=0, max_tokens=8)
    content = r.choices[0].logprobs.content  # type: ignore[union-attr]
    assert content and "".join(t.token for t in content) == r.choices[0].message.content
    assert all(t.logprob <= 0 and len(t.top_logprobs) == 2 for t in content)


def _error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    return error


@pytest.mark.parametrize(("body", "code", "param"), [
    ({"model": "gpt-9", "messages": [{"role": "user", "content": "x"}]}, "model_not_found", "model"),
    ({"model": MODEL, "messages": []}, "invalid_value", "messages"),
    ({"model": MODEL, "messages": [{"role": "robot", "content": "x"}]}, "invalid_value", "messages[0].role"),
    ({"model": MODEL, "messages": [{"role": "user", "content": "x", "bogus": 1}]}, "unknown_parameter",
     "messages[0].bogus"),
    ({"model": MODEL, "messages": [{"role": "tool", "tool_call_id": "nope", "content": "x"}]}, "invalid_value",
     "messages[0].tool_call_id"),
    ({"model": MODEL, "messages": [{"role": "user", "content": "x"}], "n": 2}, "invalid_value", "n"),
    ({"model": MODEL, "messages": [{"role": "user", "content": "x"}], "store": True}, "unsupported_value", "store"),
    ({"model": MODEL, "messages": [{"role": "user", "content": "x"}], "max_tokens": 10**6}, "invalid_value",
     "max_tokens"),
    ({"model": MODEL, "messages": [{"role": "user", "content": "x"}], "top_logprobs": 2}, "invalid_value",
     "top_logprobs"),
    ({"model": MODEL, "messages": [{"role": "user", "content": "x"}], "tools": [
        {"type": "function", "function": {"name": "bad name"}}]}, "invalid_value", "tools[0].function.name"),
    ({"model": MODEL, "messages": [{"role": "user", "content": "x"}], "response_format": {
        "type": "json_schema", "json_schema": {"name": "n", "schema": {"type": "string", "pattern": "a"}}}},
     "invalid_schema", "response_format.json_schema.schema"),
    ({"model": MODEL, "messages": [{"role": "user", "content": "x"}], "frobnicate": 1}, "unknown_parameter",
     "frobnicate"),
])
def test_errors_name_the_field(http: httpx.Client, body: dict[str, Any], code: str, param: str) -> None:
    for stream in (False, True):
        error = _error(http.post("/chat/completions", json={**body, "stream": stream}),
                       404 if code == "model_not_found" else 400)
        assert (error["code"], error["param"]) == (code, param), error


def test_sdk_errors_and_keys(server: str, client: openai.OpenAI) -> None:
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=server, api_key="nope", max_retries=0).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "x"}])
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="broken-test", messages=[{"role": "user", "content": "x"}])
