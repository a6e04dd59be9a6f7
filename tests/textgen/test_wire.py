"""Wire conformance: content types, client errors that must be 400s, tool normalisation.

Raw HTTP against the real uvicorn server (``server``/``http`` fixtures), so the
headers are the ones a client sees.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar.testing import TestClient

from textgen.app import create_app
from textgen.backends.base import Delta, Finish, GenerationRequest, RequestRejected
from textgen.backends.builtin import NgramBackend
from textgen.settings import Settings

MODEL = "textgen-ngram"


def _error(reply: httpx.Response, status: int) -> dict[str, Any]:
    assert reply.status_code == status, (reply.status_code, reply.text)
    assert reply.headers["content-type"].startswith("application/json")
    error: dict[str, Any] = reply.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return error


def _nested(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}, "required": ["a"], "additionalProperties": False}
    return schema


def _format(schema: dict[str, Any], strict: bool = True) -> dict[str, Any]:
    return {"format": {"type": "json_schema", "name": "out", "schema": schema, "strict": strict}}


def test_stream_is_text_event_stream(http: httpx.Client) -> None:
    with http.stream("POST", "/responses", json={"model": MODEL, "input": "hi", "stream": True}) as reply:
        assert reply.status_code == 200
        assert reply.headers["content-type"].split(";")[0] == "text/event-stream"
        text = "".join(reply.iter_text())
    assert text.startswith("event: response.created\ndata: ")
    background = http.post("/responses", json={"model": MODEL, "input": "hi", "background": True}).json()
    with http.stream("GET", f"/responses/{background['id']}", params={"stream": "true"}) as replay:
        assert replay.headers["content-type"].split(";")[0] == "text/event-stream"
        assert "response.completed" in "".join(replay.iter_text())


def test_body_that_is_not_utf8_is_a_400(http: httpx.Client) -> None:
    reply = http.post("/responses", content=b'{"model": "textgen-ngram", "input": "\xff\xfe"}',
                      headers={"content-type": "application/json"})
    assert _error(reply, 400)["code"] == "invalid_json"


def test_schema_nested_deeper_than_openai_allows_is_a_400(http: httpx.Client) -> None:
    ok = http.post("/responses", json={"model": MODEL, "input": "x", "text": _format(_nested(10))})
    assert ok.status_code == 200, ok.text
    for levels in (11, 40):
        reply = http.post("/responses", json={"model": MODEL, "input": "x", "text": _format(_nested(levels))})
        error = _error(reply, 400)
        assert error["code"] == "invalid_schema" and error["param"] == "text.format.schema"
        assert "10 levels" in error["message"]


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"next": {"$ref": "#"}}, "required": ["next"], "additionalProperties": False},
    {"$defs": {"a": {"type": "object", "properties": {"b": {"$ref": "#/$defs/b"}}, "required": ["b"],
                     "additionalProperties": False},
               "b": {"type": "array", "items": {"$ref": "#/$defs/a"}, "minItems": 1}},
     "type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}, "required": ["a"], "additionalProperties": False},
])
def test_recursion_that_never_ends_is_a_400(http: httpx.Client, schema: dict[str, Any]) -> None:
    reply = http.post("/responses", json={"model": MODEL, "input": "x", "text": _format(schema)})
    error = _error(reply, 400)
    assert error["code"] == "invalid_schema" and "never ends" in error["message"]


def test_recursion_with_a_way_out_works(http: httpx.Client) -> None:
    schema = {"type": "object", "properties": {"next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}},
              "required": ["next"], "additionalProperties": False}
    reply = http.post("/responses", json={"model": MODEL, "input": "x", "text": _format(schema)})
    assert reply.status_code == 200 and reply.json()["status"] == "completed"


def test_tool_without_strict_falls_back_to_non_strict(http: httpx.Client) -> None:
    loose = {"type": "function", "name": "get_weather",
             "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}
    tight = {"type": "function", "name": "get_time", "parameters": {
        "type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"],
        "additionalProperties": False}}
    reply = http.post("/responses", json={"model": MODEL, "input": "weather?", "tools": [loose, tight],
                                          "tool_choice": "required"})
    assert reply.status_code == 200, reply.text
    assert [t["strict"] for t in reply.json()["tools"]] == [False, True]
    refused = http.post("/responses", json={"model": MODEL, "input": "x", "tools": [{**loose, "strict": True}]})
    assert _error(refused, 400)["param"] == "tools[0].parameters"


class OneToolOnly(NgramBackend):
    """Refuses ``required`` among several tools, as the transformers backend does."""

    def validate(self, request: GenerationRequest) -> None:
        if request.tool_choice == "required" and len(request.tools) > 1:
            raise RequestRejected("cannot choose among several tools", "tool_choice")

    async def generate(self, request: GenerationRequest) -> AsyncIterator[Delta]:
        yield Finish("stop", 0)


def test_a_backend_refusing_a_tool_choice_is_unsupported_value(tmp_path: Path) -> None:
    app = create_app(Settings(data_dir=str(tmp_path), api_keys=("k",), rate_limit_per_minute=0),
                     backends=[OneToolOnly()])
    tool = {"type": "function", "name": "f", "parameters": {"type": "object", "properties": {}}}
    with TestClient(app) as client:
        reply = client.post("/v1/responses", headers={"Authorization": "Bearer k"}, json={
            "model": MODEL, "input": "x", "tools": [tool, {**tool, "name": "g"}], "tool_choice": "required"})
        error = _error(reply, 400)  # type: ignore[arg-type]
        assert error["code"] == "unsupported_value" and error["param"] == "tool_choice"
