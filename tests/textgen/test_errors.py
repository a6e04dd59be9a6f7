"""Every error case, over the wire: OpenAI's body shape, the right status, a ``param`` naming the field."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

MODEL = "textgen-ngram"


def assert_error(response: httpx.Response, status: int, code: str | None, param: str | None) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    error = body["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert isinstance(error["message"], str) and error["message"]
    assert error["code"] == code and error["param"] == param
    return error


def test_missing_and_invalid_key(server: str) -> None:
    missing = httpx.post(f"{server}/responses", json={"model": MODEL, "input": "x"})
    assert assert_error(missing, 401, "missing_api_key", None)["type"] == "invalid_request_error"
    wrong = httpx.get(f"{server}/models", headers={"Authorization": "Bearer nope"})
    assert_error(wrong, 401, "invalid_api_key", None)
    bad = openai.OpenAI(base_url=server, api_key="nope", max_retries=0, _strict_response_validation=True)
    with pytest.raises(openai.AuthenticationError):
        bad.responses.create(model=MODEL, input="x")


def test_unknown_model(http: httpx.Client) -> None:
    assert_error(http.post("/responses", json={"model": "gpt-9", "input": "x"}), 404, "model_not_found", "model")
    assert_error(http.get("/models/gpt-9"), 404, "model_not_found", "model")


@pytest.mark.parametrize(
    ("body", "code", "param"),
    [
        ({"input": "x"}, "missing_required_parameter", "model"),
        ({"model": MODEL}, "missing_required_parameter", "input"),
        ({"model": MODEL, "input": "x", "bogus": 1}, "unknown_parameter", "bogus"),
        ({"model": MODEL, "input": "x", "temperature": 3}, "invalid_value", "temperature"),
        ({"model": MODEL, "input": "x", "top_p": 0}, "invalid_value", "top_p"),
        ({"model": MODEL, "input": "x", "max_output_tokens": 0}, "invalid_value", "max_output_tokens"),
        ({"model": MODEL, "input": "x", "max_output_tokens": 10**6}, "invalid_value", "max_output_tokens"),
        ({"model": MODEL, "input": "x", "reasoning": {"effort": "extreme"}}, "invalid_value", "reasoning.effort"),
        ({"model": MODEL, "input": 5}, "invalid_value", "input"),
        ({"model": MODEL, "input": [{"role": "robot", "content": "x"}]}, "invalid_value", "input[0].role"),
        ({"model": MODEL, "input": [{"role": "user", "content": [{"type": "input_audio"}]}]},
         "invalid_value", "input[0].content[0].type"),
        ({"model": MODEL, "input": [{"role": "user", "content": [{"type": "input_file",
                                                                   "file_url": "https://x"}]}]},
         "unsupported_parameter", "input[0].content[0].file_url"),
        ({"model": MODEL, "input": "x", "text": {"format": {"type": "yaml"}}}, "invalid_value", "text.format.type"),
        ({"model": MODEL, "input": "x", "text": {"format": {"type": "json_schema", "name": "n",
                                                            "schema": {"type": "string", "pattern": "a+"}}}},
         "invalid_schema", "text.format.schema"),
        ({"model": MODEL, "input": "x", "text": {"format": {"type": "json_schema", "name": "n", "strict": True,
                                                            "schema": {"type": "object",
                                                                       "properties": {"a": {"type": "string"}}}}}},
         "invalid_schema", "text.format.schema"),
        ({"model": MODEL, "input": "x", "tools": [{"type": "web_search"}]}, "unsupported_value", "tools[0].type"),
        ({"model": MODEL, "input": "x", "tool_choice": "required"}, None, "tool_choice"),
        ({"model": MODEL, "input": "x", "tools": [{"type": "function", "name": "f"}],
          "tool_choice": {"type": "function", "name": "g"}}, "invalid_value", "tool_choice.name"),
        ({"model": MODEL, "input": [{"type": "function_call_output", "call_id": "call_x", "output": "1"}]},
         "invalid_value", "input[0].call_id"),
        ({"model": MODEL, "input": "x", "metadata": {"k": "v" * 600}}, "invalid_value", "metadata"),
    ],
)
def test_bad_request_bodies(http: httpx.Client, body: dict[str, Any], code: str | None, param: str) -> None:
    assert_error(http.post("/responses", json=body), 400, code, param)


def test_invalid_json(http: httpx.Client) -> None:
    response = http.post("/responses", content=b"{not json", headers={"Content-Type": "application/json"})
    assert_error(response, 400, "invalid_json", None)


def test_context_length_exceeded(http: httpx.Client) -> None:
    body = {"model": MODEL, "input": "word " * 8200}
    error = assert_error(http.post("/responses", json=body), 400, "context_length_exceeded", "input")
    assert "8192" in error["message"]
    small = {"model": MODEL, "input": "word " * 7000, "max_output_tokens": 2000}
    assert_error(http.post("/responses", json=small), 400, "context_length_exceeded", "input")


def test_missing_previous_response(http: httpx.Client) -> None:
    body = {"model": MODEL, "input": "x", "previous_response_id": "resp_missing"}
    assert_error(http.post("/responses", json=body), 404, "previous_response_not_found", "previous_response_id")


def test_not_found_resources(http: httpx.Client) -> None:
    assert_error(http.get("/responses/resp_missing"), 404, None, "response_id")
    assert_error(http.delete("/responses/resp_missing"), 404, None, "response_id")
    assert_error(http.get("/responses/resp_missing/input_items"), 404, None, "response_id")
    assert_error(http.get("/files/file-missing"), 404, "file_not_found", "file_id")
    assert_error(http.get("/files/file-missing/content"), 404, "file_not_found", "file_id")
    assert_error(http.delete("/files/file-missing"), 404, "file_not_found", "file_id")
    assert_error(http.get("/prompts/pmpt_missing"), 404, "prompt_not_found", "version")
    assert_error(http.get("/nowhere"), 404, "not_found", None)
    body = {"model": MODEL, "input": [{"role": "user", "content": [{"type": "input_file", "file_id": "file-x"}]}]}
    assert_error(http.post("/responses", json=body), 404, "file_not_found", "input[0].content[0].file_id")


def test_input_items_bad_query(http: httpx.Client) -> None:
    rid = http.post("/responses", json={"model": MODEL, "input": "x"}).json()["id"]
    assert_error(http.get(f"/responses/{rid}/input_items", params={"limit": 0}), 400, "invalid_value", "limit")
    assert_error(http.get(f"/responses/{rid}/input_items", params={"order": "up"}), 400, "invalid_value", "order")
    assert_error(http.get(f"/responses/{rid}/input_items", params={"after": "msg_x"}), 400, "invalid_value", "after")


def test_unsupported_file_type_as_input(client: openai.OpenAI, http: httpx.Client) -> None:
    f = client.files.create(file=("photo.png", b"\x89PNG\r\n"), purpose="user_data")
    body = {"model": MODEL, "input": [{"role": "user", "content": [{"type": "input_file", "file_id": f.id}]}]}
    error = assert_error(http.post("/responses", json=body), 400, "unsupported_file", "input[0].content[0].file_id")
    assert "'.png'" in error["message"]
    latin = client.files.create(file=("latin.txt", "caf\xe9".encode("latin-1")), purpose="user_data")
    body["input"][0]["content"][0]["file_id"] = latin.id  # type: ignore[index]
    assert_error(http.post("/responses", json=body), 400, "unsupported_file", "input[0].content[0].file_id")


def test_file_upload_errors(http: httpx.Client) -> None:
    too_big = http.post("/files", files={"file": ("big.txt", b"a" * 150_000)}, data={"purpose": "user_data"})
    assert_error(too_big, 413, "file_too_large", "file")
    far_too_big = http.post("/files", files={"file": ("big.txt", b"a" * 400_000)}, data={"purpose": "user_data"})
    assert_error(far_too_big, 413, "file_too_large", None)
    assert_error(http.post("/files", files={"file": ("a.txt", b"a")}, data={"purpose": "fun"}),
                 400, "invalid_value", "purpose")
    assert_error(http.post("/files", files={"purpose": (None, "user_data")}), 400, "missing_required_parameter",
                 "file")
    assert_error(http.post("/files", files={"file": ("a.txt", b"a")}), 400, "missing_required_parameter", "purpose")
    assert_error(http.post("/files", json={"purpose": "user_data"}), 400, None, None)


def test_prompt_errors(http: httpx.Client) -> None:
    assert_error(http.post("/prompts", json={"name": "x"}), 400, "missing_required_parameter", "template")
    created = http.post("/prompts", json={"name": "dup-name", "template": "hi {{who}}"})
    assert created.status_code == 200
    assert_error(http.post("/prompts", json={"name": "dup-name", "template": "again"}), 409,
                 "prompt_name_taken", "name")
    pid = created.json()["id"]
    assert_error(http.get(f"/prompts/{pid}", params={"version": "7"}), 404, "prompt_not_found", "version")
    assert_error(http.get(f"/prompts/{pid}", params={"version": "v1"}), 400, None, "version")
    assert_error(http.post("/prompts/pmpt_missing/versions", json={"template": "t"}), 404,
                 "prompt_not_found", "prompt_id")
    body = {"model": MODEL, "prompt": {"id": pid}}
    error = assert_error(http.post("/responses", json=body), 400, "missing_prompt_variable", "prompt.variables.who")
    assert "'who'" in error["message"]
    body = {"model": MODEL, "prompt": {"id": pid, "variables": {"who": "a", "extra": "b"}}}
    assert_error(http.post("/responses", json=body), 400, "unknown_prompt_variable", "prompt.variables.extra")
    body = {"model": MODEL, "prompt": {"id": pid, "version": "9", "variables": {"who": "a"}}}
    assert_error(http.post("/responses", json=body), 404, "prompt_not_found", "prompt.version")


def test_backend_failure_is_a_500_in_openai_shape(client: openai.OpenAI, http: httpx.Client) -> None:
    error = assert_error(http.post("/responses", json={"model": "broken-test", "input": "x"}), 500,
                         "server_error", None)
    assert error["type"] == "server_error" and "simulated" not in error["message"]
    with pytest.raises(openai.InternalServerError):
        client.responses.create(model="broken-test", input="x")


def test_backend_failure_while_streaming(client: openai.OpenAI) -> None:
    events = list(client.responses.create(model="broken-test", input="x", stream=True))
    kinds = [event.type for event in events]
    assert kinds[-2:] == ["error", "response.failed"]
    assert kinds[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    failed = events[-1].response  # type: ignore[union-attr]
    assert failed.status == "failed" and failed.error is not None and failed.error.code == "server_error"
    stored = client.responses.retrieve(failed.id)  # the row created with the response ends failed
    assert stored.status == "failed" and stored.error is not None and stored.error.code == "server_error"


def test_validation_before_streaming(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        client.responses.create(model=MODEL, input="x", stream=True, reasoning={"effort": "max"})  # type: ignore[typeddict-item]
    assert info.value.param == "reasoning.effort"  # type: ignore[attr-defined]
