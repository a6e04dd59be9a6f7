"""The typed wire: items, parts, events and chat messages are msgspec Structs, and what goes out is what
those types encode (every streamed event decodes back into its Struct and re-encodes to the same bytes)."""

from __future__ import annotations

import json
import typing
from typing import Any

import httpx
import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from textgen.chat_schemas import ChatCompletionChunk
from textgen.decoding import convert_body, decode_body
from textgen.errors import APIError, validation_error
from textgen.events import (
    TERMINAL_EVENTS,
    FunctionChoice,
    FunctionTool,
    JsonSchemaFormat,
    ResponseEvent,
    ResponseObject,
)
from textgen.inputs import normalize_input
from textgen.items import FunctionCall, InputItem, Message
from textgen.schemas import ChatCompletionCreate, ResponseCreate
from textgen.stored_items import FunctionCallOutputItem, InputTextPart, Item, MessageItem, load_item

MODEL = "textgen-ngram"
TOOL = {"type": "function", "name": "get_weather", "description": "weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
                       "additionalProperties": False}}


def _sse_events(text: str) -> list[tuple[str, bytes]]:
    """``(event name, data bytes)`` of each ``event:``/``data:`` block."""
    out = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((fields["event"], fields["data"].encode()))
    return out


@pytest.mark.parametrize("body", [
    {"input": "weather in Oslo", "max_output_tokens": 12, "include": ["message.output_text.logprobs"],
     "top_logprobs": 2},
    {"input": "is there weather news?", "tools": [TOOL], "tool_choice": "required", "max_output_tokens": 30},
    {"input": "weather", "max_output_tokens": 3},  # cut short: response.incomplete
])
def test_streamed_events_are_the_event_structs(http: httpx.Client, body: dict[str, Any]) -> None:
    reply = http.post("/responses", json={"model": MODEL, "stream": True, "seed": 5, **body})
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/event-stream")
    events = _sse_events(reply.text)
    decoder = msgspec.json.Decoder(ResponseEvent)
    for name, data in events:
        event = decoder.decode(data)
        assert event.type == name == json.loads(data)["type"]
        assert msgspec.json.encode(event) == data  # nothing the Struct does not declare, in wire order
    assert [json.loads(d)["sequence_number"] for _, d in events] == list(range(len(events)))
    final = decoder.decode(events[-1][1])
    assert isinstance(final, TERMINAL_EVENTS) and isinstance(final.response, ResponseObject)
    stored = http.get(f"/responses/{final.response.id}")
    assert msgspec.json.encode(msgspec.json.decode(stored.content, type=ResponseObject)) == stored.content


def test_streamed_chat_chunks_are_the_chunk_struct(http: httpx.Client) -> None:
    reply = http.post("/chat/completions", json={
        "model": MODEL, "stream": True, "seed": 5, "max_tokens": 8, "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": "weather in Oslo"}]})
    lines = [line.removeprefix("data: ") for line in reply.text.splitlines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    for line in lines[:-1]:
        chunk = msgspec.json.decode(line, type=ChatCompletionChunk)
        assert msgspec.json.encode(chunk) == line.encode()
    assert json.loads(lines[-2])["usage"]["total_tokens"] > 0 and "usage" in json.loads(lines[0])


def test_items_decode_into_their_structs_with_or_without_type() -> None:
    raw = json.dumps({"model": MODEL, "input": [
        {"role": "user", "content": "Hi"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}", "namespace": None},
        {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "ok"}]},
    ]}).encode()
    body = decode_body(raw, ResponseCreate)
    assert isinstance(body.input, list) and isinstance(body.input[0], Message)
    assert isinstance(body.input[1], FunctionCall)
    items = normalize_input(body.input)
    assert [type(i).__struct_config__.tag for i in items] == ["message", "function_call", "function_call_output"]
    assert isinstance(items[2], FunctionCallOutputItem) and items[2].output == "ok"
    assert isinstance(items[0], MessageItem) and items[0].content == [InputTextPart(text="Hi")]
    # a stored job (the builtins of the Struct) converts back to the same request
    assert convert_body(msgspec.to_builtins(body), ResponseCreate) == body


@pytest.mark.parametrize(("input_", "code", "param"), [
    ([{"role": "user", "content": [{"type": "input_image", "image_url": "u", "detail": "huge"}]}],
     "invalid_value", "input[0].content[0].detail"),
    ([{"type": "function_call", "call_id": "c", "name": "f"}], "missing_required_parameter", "input[0].arguments"),
    ([{"role": "assistant", "content": [{"type": "input_image", "image_url": "u"}]}], "invalid_value",
     "input[0].content[0].type"),
    ([{"role": "user", "content": [{"type": "refusal", "refusal": "no"}]}], "invalid_value",
     "input[0].content[0].type"),
    ([{"type": "reasoning", "id": "rs", "content": [{"type": "reasoning_text", "text": "t", "x": 1}]}],
     "unknown_parameter", "input[0].content[0].x"),
    ([{"role": "user", "content": [{"type": "input_file", "file_id": "f", "file_data": "d"}]}], None,
     "input[0].content[0]"),
])
def test_item_errors_name_the_field(http: httpx.Client, input_: Any, code: str | None, param: str) -> None:
    reply = http.post("/responses", json={"model": MODEL, "input": input_})
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert (error["code"], error["param"]) == (code, param), error


@pytest.mark.parametrize(("messages", "code", "param"), [
    ([{"role": "user", "content": [{"type": "text", "text": "x", "extra": 1}]}], "unknown_parameter",
     "messages[0].content[0].extra"),
    ([{"role": "system", "content": [{"type": "image_url", "image_url": {"url": "u"}}]}], "invalid_value",
     "messages[0].content[0].type"),
    ([{"content": "x"}], "missing_required_parameter", "messages[0].role"),
    ([{"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f"}}]}],
     "missing_required_parameter", "messages[0].tool_calls[0].function.arguments"),
])
def test_chat_message_errors_name_the_field(http: httpx.Client, messages: Any, code: str, param: str) -> None:
    reply = http.post("/chat/completions", json={"model": MODEL, "messages": messages})
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert (error["code"], error["param"]) == (code, param), error


def test_a_prompt_variable_part_with_an_unknown_field_names_its_place(http: httpx.Client) -> None:
    prompt = http.post("/prompts", json={"template": "Read {{doc}} now"}).json()
    upload = http.post("/files", files={"file": ("notes.txt", b"notes")}, data={"purpose": "user_data"}).json()
    reply = http.post("/responses", json={"model": MODEL, "prompt": {"id": prompt["id"], "variables": {
        "doc": {"type": "input_file", "file_id": upload["id"], "bogus": 1}}}})
    error = reply.json()["error"]
    assert (reply.status_code, error["code"], error["param"]) == (
        400, "unknown_parameter", "prompt.messages[0].content[1].bogus")


_KEY = st.from_regex(r"k[a-z]{0,5}", fullmatch=True)  # no Python keyword starts with k
_PATH = st.lists(st.one_of(_KEY, st.integers(0, 30)), min_size=1, max_size=6)


def _dotted(keys: list[str | int], prefix: str) -> str:
    out = prefix
    for key in keys:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else key)
    return out


@given(_PATH, st.sampled_from(["", "prompt.messages", "items"]))
def test_msgspec_paths_become_params(keys: list[str | int], prefix: str) -> None:
    """msgspec's ``$.a[0].b`` path of a bad value, under an optional prefix, is the error's ``param``."""
    value: Any = "leaf"
    kind: Any = int  # a string at the leaf is refused
    for key in reversed(keys):
        if isinstance(key, str):
            value, kind = {key: value}, msgspec.defstruct("S", [(key, kind)])
        else:
            value, kind = [*([None] * key), value], list[kind | None]
    with pytest.raises(msgspec.ValidationError) as caught:
        msgspec.convert(value, kind)
    error: APIError = validation_error(caught.value, prefix)
    assert error.param == _dotted(keys, prefix) and error.code == "invalid_value"


def test_the_openapi_bodies_are_typed() -> None:
    """Item and message types reach the OpenAPI document: their tags are there."""
    responses = json.dumps(msgspec.json.schema(ResponseCreate))
    tags = {t.__struct_config__.tag for t in typing.get_args(InputItem)}
    assert tags == {"message", "function_call", "function_call_output", "reasoning", "item_reference"}
    assert all(f'"{tag}"' in responses for tag in tags)
    chat = json.dumps(msgspec.json.schema(ChatCompletionCreate))
    assert all(f'"{role}"' in chat for role in ("system", "developer", "user", "assistant", "tool"))


@pytest.mark.parametrize(("path", "body", "param", "expected"), [
    ("/responses", {"model": MODEL, "input": [{"role": "robot", "content": "x"}]}, "input[0].role",
     "expected one of assistant, developer, system, user."),
    ("/responses", {"model": MODEL, "input": [{"type": "input_audio"}]}, "input[0].type",
     "expected one of message, function_call, function_call_output, reasoning, item_reference."),
    ("/chat/completions", {"model": MODEL, "messages": [{"role": "system", "content": [
        {"type": "image_url", "image_url": {"url": "u"}}]}]}, "messages[0].content[0].type",
     "expected one of text."),  # the parts of a system message, not of any message
])
def test_a_wrong_tag_or_enum_value_lists_the_right_ones(http: httpx.Client, path: str, body: dict[str, Any],
                                                       param: str, expected: str) -> None:
    error = http.post(path, json=body).json()["error"]
    assert (error["code"], error["param"]) == ("invalid_value", param)
    assert error["message"].endswith(expected), error["message"]


# The fields each served item and content part carries (the wire before items became Structs).
_ITEM_FIELDS = {
    "message": {"type", "id", "role", "status", "content"},
    "function_call": {"type", "id", "status", "call_id", "name", "arguments"},
    "function_call_output": {"type", "id", "call_id", "output", "status"},
    "reasoning": {"type", "id", "summary", "content", "encrypted_content", "status"},
}
_PART_FIELDS = {
    "input_text": [{"type", "text"}],
    "output_text": [{"type", "text", "annotations", "logprobs"}, {"type", "text", "annotations"}],
    "refusal": [{"type", "refusal"}],
    "input_image": [{"type", "detail", "image_url", "file_id"}],
    "input_file": [{"type", "file_id", "filename"}],
}


def _check_fields(item: dict[str, Any]) -> None:
    assert set(item) == _ITEM_FIELDS[item["type"]], item
    for part in item.get("content") or () if item["type"] == "message" else ():
        assert set(part) in _PART_FIELDS[part["type"]], part
    msgspec.convert(item, Item)


def test_served_items_have_their_fields_and_decode_as_item_structs(http: httpx.Client) -> None:
    """Output items in responses, events and reads, and stored input items, carry exactly their fields."""
    upload = http.post("/files", files={"file": ("notes.txt", b"notes")}, data={"purpose": "user_data"}).json()
    input_ = [{"role": "user", "content": [{"type": "input_text", "text": "weather?"},
                                           {"type": "input_image", "image_url": "data:image/png;base64,AA=="},
                                           {"type": "input_file", "file_id": upload["id"]}]},
              {"role": "assistant", "content": [{"type": "output_text", "text": "sunny"},
                                                {"type": "refusal", "refusal": "no"}]},
              {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{}"},
              {"type": "function_call_output", "call_id": "c1", "output": "rain"},
              {"type": "reasoning", "id": "rs_in", "summary": [{"type": "summary_text", "text": "s"}]},
              {"role": "user", "content": "and now?"}]
    stream = http.post("/responses", json={"model": "echo-test", "stream": True, "input": input_})
    seen = 0
    for _, data in _sse_events(stream.text):
        event = json.loads(data)
        for item in [event.get("item"), *((event.get("response") or {}).get("output") or ())]:
            if item:
                _check_fields(item)
                seen += 1
    assert seen
    rid = json.loads(_sse_events(stream.text)[-1][1])["response"]["id"]
    listed = http.get(f"/responses/{rid}/input_items", params={"order": "asc"}).json()["data"]
    assert [i["type"] for i in listed] == [
        "message", "message", "function_call", "function_call_output", "reasoning", "message"]
    for item in [*listed, *http.get(f"/responses/{rid}").json()["output"]]:
        _check_fields(item)
    assert listed[1]["content"][0] == {"type": "output_text", "text": "sunny", "annotations": []}
    conv = http.post("/conversations", json={"items": input_}).json()
    for item in http.get(f"/conversations/{conv['id']}/items").json()["data"]:
        _check_fields(item)


def test_an_item_stored_without_type_loads_as_a_message() -> None:
    item = load_item({"id": "msg_1", "role": "user", "status": "completed",
                      "content": [{"type": "input_text", "text": "hi"}]})
    assert isinstance(item, MessageItem) and item.content == [InputTextPart(text="hi")]


def test_the_echoed_request_fields_are_typed(http: httpx.Client) -> None:
    """``tools``, ``tool_choice``, ``text`` and ``prompt`` of a response decode into their Structs."""
    prompt = http.post("/prompts", json={"template": "Say {{x}}"}).json()
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"],
              "additionalProperties": False}
    reply = http.post("/responses", json={
        "model": MODEL, "prompt": {"id": prompt["id"], "variables": {"x": "hi"}}, "max_output_tokens": 40,
        "tools": [TOOL], "tool_choice": {"type": "function", "name": "get_weather"}, "seed": 1})
    body = msgspec.json.decode(reply.content, type=ResponseObject)
    assert isinstance(body.tool_choice, FunctionChoice) and body.tool_choice.name == "get_weather"
    assert isinstance(body.tools[0], FunctionTool) and body.prompt is not None and body.prompt.variables == {"x": "hi"}
    formatted = http.post("/responses", json={"model": MODEL, "input": "x", "max_output_tokens": 60, "text": {
        "format": {"type": "json_schema", "name": "n", "schema": schema, "strict": True}}})
    text = msgspec.json.decode(formatted.content, type=ResponseObject).text
    assert isinstance(text.format, JsonSchemaFormat) and text.format.schema == schema
    refused = http.post("/responses", json={"model": MODEL, "input": "x", "text": {
        "format": {"type": "json_schema", "name": "n", "schema": schema, "description": 5}}})
    error = refused.json()["error"]
    assert (refused.status_code, error["param"], error["code"]) == (400, "text.format.description", "invalid_type")
