"""Conformance over raw HTTP and the SDK: deep JSON, unknown fields inside items, body size, bad query
values, deleted prompt-variable files; and the nesting bound of the llama.cpp grammar's schemas."""

from __future__ import annotations

import json
from typing import Any

import httpx
import jsonschema
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from textgen.backends.schema_bounds import bounded_document, nesting_depth
from textgen.decoding import MAX_JSON_DEPTH, too_deep

MODEL = "textgen-ngram"


def _error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return error


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


DEEP = "__deep__"  # replaced by 2,000 levels in the encoded body (json.dumps itself recurses)
_DEEP_TEXT = '{"k": [' * 1000 + '"leaf"' + "]}" * 1000


@pytest.mark.parametrize(("path", "body", "param_start"), [
    ("/responses", {"model": MODEL, "input": "x", "text": {"format": {
        "type": "json_schema", "name": "n", "schema": DEEP}}}, "text.format.schema"),
    ("/responses", {"model": MODEL, "input": [{"role": "user", "content": DEEP}]}, "input[0].content"),
    ("/responses", {"model": MODEL, "input": "x", "tools": [{"type": "function", "name": "f",
                                                             "parameters": DEEP}]}, "tools[0].parameters"),
    ("/responses", {"model": MODEL, "prompt": {"id": "pmpt_x", "variables": {"v": DEEP}}}, "prompt.variables.v"),
    ("/responses", {"model": MODEL, "input": [{"type": "function_call_output", "call_id": "c",
                                               "output": DEEP}]}, "input[0].output"),
    ("/responses/input_tokens", {"model": MODEL, "input": [{"role": "user", "content": DEEP}]}, "input[0].content"),
    ("/conversations", {"items": [{"role": "user", "content": DEEP}]}, "items[0].content"),
])
def test_deep_json_is_a_400_naming_the_field(http: httpx.Client, path: str, body: dict[str, Any],
                                             param_start: str) -> None:
    content = json.dumps(body).replace('"__deep__"', _DEEP_TEXT)
    error = _error(http.post(path, content=content, headers={"Content-Type": "application/json"}), 400)
    assert error["code"] == "invalid_value" and error["param"].startswith(param_start), error


def test_the_depth_scan_names_the_path() -> None:
    path = too_deep(json.dumps({"a": [1, {"b": _nested(MAX_JSON_DEPTH)}]}).encode())
    assert path is not None and path.startswith("a[1].b[0].k[0].k[0]")
    assert path.count("[") + path.count(".") + 1 == MAX_JSON_DEPTH  # one step per container ("a" has no dot)
    assert too_deep(json.dumps({"a": '[[[[{{{{"' * 100, "b": _nested(10)}).encode()) is None  # brackets in strings
    assert too_deep(json.dumps(_nested(MAX_JSON_DEPTH)).encode()) is None


def test_unknown_fields_inside_items_are_a_400(http: httpx.Client, client: openai.OpenAI) -> None:
    cases = [
        ([{"role": "user", "content": "Hi", "bogus": 1}], "input[0].bogus"),
        ([{"role": "user", "content": [{"type": "input_text", "text": "Hi", "extra": True}]}],
         "input[0].content[0].extra"),
        ([{"type": "function_call_output", "call_id": "c", "output": "x", "nope": 1}], "input[0].nope"),
    ]
    for items, param in cases:
        error = _error(http.post("/responses", json={"model": MODEL, "input": items}), 400)
        assert (error["code"], error["param"]) == ("unknown_parameter", param)
    error = _error(http.post("/conversations", json={"items": [{"role": "user", "content": "Hi", "x": 1}]}), 400)
    assert (error["code"], error["param"]) == ("unknown_parameter", "items[0].x")
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, input=[{"role": "user", "content": "Hi", "bogus": 1}])  # type: ignore[list-item]
    assert caught.value.param == "input[0].bogus"
    # every item the server emits is still accepted back as it was emitted
    first = client.responses.create(model=MODEL, input="weather", max_output_tokens=8)
    back = [item.model_dump(exclude_none=False) for item in first.output]
    again = client.responses.create(model=MODEL, input=[{"role": "user", "content": "weather"}, *back],  # type: ignore[list-item]
                                    max_output_tokens=8, store=False)
    assert again.status in ("completed", "incomplete")


def test_a_large_json_body_is_not_a_file(http: httpx.Client) -> None:
    body = json.dumps({"model": MODEL, "input": "x" * (20 * 1024 * 1024)})
    error = _error(http.post("/responses", content=body, headers={"Content-Type": "application/json"}), 413)
    assert error["code"] == "request_too_large" and "file" not in error["message"]


def test_a_bad_query_value_names_the_parameter(http: httpx.Client, client: openai.OpenAI) -> None:
    r = client.responses.create(model=MODEL, input="x", background=True, max_output_tokens=4)
    error = _error(http.get(f"/responses/{r.id}", params={"stream": "true", "starting_after": "abc"}), 400)
    assert (error["code"], error["param"]) == ("invalid_value", "starting_after")
    assert "ParamType" not in error["message"] and "'starting_after'" in error["message"]
    error = _error(http.get(f"/responses/{r.id}/input_items", params={"limit": "many"}), 400)
    assert (error["code"], error["param"]) == ("invalid_value", "limit")


def test_a_deleted_file_as_prompt_variable_names_the_variable(http: httpx.Client, client: openai.OpenAI) -> None:
    prompt = http.post("/prompts", json={"template": "Read {{doc}} and answer."}).json()
    f = client.files.create(file=("notes.txt", b"some notes"), purpose="user_data")
    variables = {"doc": {"type": "input_file", "file_id": f.id}}
    ok = http.post("/responses", json={"model": MODEL, "prompt": {"id": prompt["id"], "variables": variables},
                                       "max_output_tokens": 4})
    assert ok.status_code == 200
    client.files.delete(f.id)
    error = _error(http.post("/responses", json={"model": MODEL, "max_output_tokens": 4,
                                                 "prompt": {"id": prompt["id"], "variables": variables}}), 404)
    assert (error["code"], error["param"]) == ("file_not_found", "prompt.variables.doc.file_id")
    assert "'doc'" in error["message"]


TREE = {"type": "object", "properties": {"name": {"type": "string"},
                                         "children": {"type": "array", "items": {"$ref": "#"}}},
        "required": ["name", "children"], "additionalProperties": False}


def _tree(levels: int) -> dict[str, Any]:
    return {"name": "n", "children": [_tree(levels - 1)] if levels > 1 else []}


def test_a_root_recursive_schema_is_bounded_at_ten_levels() -> None:
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    bounded = bounded_document(TREE)
    assert '"#"' not in json.dumps(bounded)
    json_schema_to_gbnf(json.dumps(bounded))  # llama.cpp's converter accepts it
    jsonschema.validate(_tree(5), bounded)  # 10 levels
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(_tree(6), bounded)  # 12 levels
    free = {"type": "object", "properties": {"any": {"type": "object", "additionalProperties": True}}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"any": {"k": _nested(9)}}, bounded_document(free))  # 11 levels
    jsonschema.validate({"any": {"k": _nested(8)}}, bounded_document(free))  # 10 levels


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=3),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
                    max_leaves=30))
def test_bounded_schemas_accept_exactly_the_shallow_values(value: Any) -> None:
    """Any JSON value is valid against the bounded ``{}``-like schema iff it nests at most the limit."""
    schema = {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "boolean"}, {"type": "null"},
                        {"type": "array", "items": {"$ref": "#"}}, {"type": "object", "additionalProperties": {"$ref": "#"}}]}
    limit = 3
    bounded = bounded_document(schema, limit)
    valid = jsonschema.Draft202012Validator(bounded).is_valid(value)
    assert valid == (nesting_depth(value) <= limit)
