"""Our own output items are accepted back as input (stateless multi-turn), and ``item_reference``."""

from __future__ import annotations

from typing import Any

import openai
import pytest


def _dump(items: list[Any]) -> list[dict[str, Any]]:
    return [item.model_dump(exclude_none=True) for item in items]


def test_stateless_turns_replay_output_items(client: openai.OpenAI) -> None:
    first = client.responses.create(model="echo-test", input="hello there", store=False)
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "short"}],
                 "content": [{"type": "reasoning_text", "text": "thinking"}], "encrypted_content": None}
    second = client.responses.create(model="echo-test", store=False, input=[
        {"role": "user", "content": "hello there"}, *_dump(first.output), reasoning,
        {"role": "user", "content": "and then?"}])
    assert second.output_text.splitlines() == ["user: hello there", "assistant: user: hello there",
                                               "user: and then?"]  # reasoning is not carried into the context


def test_function_call_items_replay(client: openai.OpenAI) -> None:
    tool = {"type": "function", "name": "get_weather", "description": "weather of a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
                           "additionalProperties": False}}
    call = client.responses.create(model="textgen-ngram", input="weather in Oslo?", tools=[tool],  # type: ignore[list-item]
                                   tool_choice="required", store=False, extra_body={"seed": 3})
    (item,) = [o for o in call.output if o.type == "function_call"]
    answer = client.responses.create(model="echo-test", store=False, input=[
        {"role": "user", "content": "weather in Oslo?"}, *_dump(call.output),
        {"type": "function_call_output", "call_id": item.call_id, "output": "sunny"}])
    lines = answer.output_text.splitlines()
    assert lines[1].startswith("assistant: [call get_weather {") and lines[2] == "tool: sunny"


def test_item_reference_reads_a_stored_item(client: openai.OpenAI) -> None:
    stored = client.responses.create(model="echo-test", input="remember the harbor")
    reply = client.responses.create(model="echo-test", input=[
        {"type": "item_reference", "id": stored.output[0].id},  # type: ignore[union-attr]
        {"role": "user", "content": "what was it?"}])
    assert reply.output_text.splitlines() == ["assistant: user: remember the harbor", "user: what was it?"]
    with pytest.raises(openai.NotFoundError) as missing:
        client.responses.create(model="echo-test", input=[{"type": "item_reference", "id": "msg_nope"}])
    assert missing.value.body["param"] == "input[0].id"  # type: ignore[index]


def test_bad_reasoning_item_names_the_field(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as bad:
        client.responses.create(model="echo-test", input=[
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "oops"}]}])  # type: ignore[list-item]
    assert bad.value.body["param"] == "input[0].summary[0]"  # type: ignore[index]
