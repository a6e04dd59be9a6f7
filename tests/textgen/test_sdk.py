"""The official ``openai`` SDK against a real uvicorn process, strict validation on."""

from __future__ import annotations

import json

import httpx
import jsonschema
import openai
import pytest
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage
from pydantic import BaseModel

MODEL = "textgen-ngram"
SNAPSHOT = "textgen-ngram-2026-11-22"


def messages(response: openai.types.responses.Response) -> list[ResponseOutputMessage]:
    return [item for item in response.output if isinstance(item, ResponseOutputMessage)]


def test_create_with_string_input(client: openai.OpenAI) -> None:
    r = client.responses.create(model=MODEL, input="Tell me about bread and soup.", extra_body={"seed": 7})
    assert r.object == "response" and r.status == "completed" and r.model == SNAPSHOT
    assert r.id.startswith("resp_") and r.error is None and r.incomplete_details is None
    (msg,) = messages(r)
    assert msg.role == "assistant" and msg.status == "completed" and msg.id.startswith("msg_")
    assert msg.content[0].type == "output_text" and msg.content[0].annotations == []
    assert r.output_text == msg.content[0].text and r.output_text.strip()
    assert r.usage is not None
    assert r.usage.total_tokens == r.usage.input_tokens + r.usage.output_tokens
    assert r.usage.output_tokens > 0 and r.usage.input_tokens > 0
    assert r.store is True and r.temperature == 1.0 and r.top_p == 1.0 and r.tools == []
    assert r.tool_choice == "auto" and r.text is not None and r.text.format is not None
    assert r.text.format.type == "text"


def test_output_text_is_not_a_wire_field(http: httpx.Client) -> None:
    body = http.post("/responses", json={"model": MODEL, "input": "hello"}).json()
    assert "output_text" not in body
    assert body["output"][0]["content"][0]["type"] == "output_text"


def test_seed_makes_sampling_reproducible(client: openai.OpenAI) -> None:
    def run(seed: int) -> str:
        return client.responses.create(
            model=MODEL, input="weather and rain", temperature=1.2, top_p=0.95, extra_body={"seed": seed}
        ).output_text

    assert run(11) == run(11)
    assert len({run(s) for s in range(12, 16)}) > 1


def test_temperature_zero_is_greedy(client: openai.OpenAI) -> None:
    a = client.responses.create(model=MODEL, input="the market", temperature=0, extra_body={"seed": 1})
    b = client.responses.create(model=MODEL, input="the market", temperature=0, extra_body={"seed": 2})
    assert a.output_text == b.output_text


def test_messages_with_all_roles(client: openai.OpenAI) -> None:
    r = client.responses.create(
        model="echo-test",
        input=[
            {"role": "system", "content": "sys text"},
            {"role": "developer", "content": "dev text"},
            {"role": "user", "content": [{"type": "input_text", "text": "user text"}]},
            {"role": "assistant", "content": "assistant text"},
            {"role": "user", "content": [{"type": "input_image", "image_url": "https://example.com/a.png",
                                          "detail": "low"}]},
        ],
    )
    assert r.output_text.splitlines() == [
        "system: sys text", "developer: dev text", "user: user text", "assistant: assistant text",
        "user: [image]",
    ]


def test_max_output_tokens_gives_incomplete(client: openai.OpenAI) -> None:
    r = client.responses.create(model=MODEL, input="talk", max_output_tokens=3, extra_body={"seed": 1})
    assert r.status == "incomplete" and r.incomplete_details is not None
    assert r.incomplete_details.reason == "max_output_tokens"
    assert r.usage is not None and r.usage.output_tokens == 3 and r.max_output_tokens == 3
    assert messages(r)[0].status == "incomplete"


def test_metadata_reasoning_and_store_echo(client: openai.OpenAI) -> None:
    r = client.responses.create(model=MODEL, input="hi", metadata={"k": "v"}, reasoning={"effort": "low"},
                                store=False)
    assert r.metadata == {"k": "v"} and r.reasoning is not None and r.reasoning.effort == "low"
    assert r.store is False
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(r.id)


def test_previous_response_chain(client: openai.OpenAI) -> None:
    first = client.responses.create(model="echo-test", input="first question")
    second = client.responses.create(model="echo-test", input="second question", previous_response_id=first.id)
    third = client.responses.create(model="echo-test", input="third", previous_response_id=second.id)
    assert third.previous_response_id == second.id
    lines = third.output_text.splitlines()
    assert lines[0] == "user: first question"
    assert lines[1] == "assistant: user: first question"
    assert lines[2] == "user: second question"
    assert lines[-1] == "user: third"
    assert sum(line == "user: third" for line in lines) == 1


def test_retrieve_delete_and_input_items(client: openai.OpenAI) -> None:
    r = client.responses.create(model=MODEL, input=[{"role": "user", "content": "one"},
                                                    {"role": "user", "content": "two"}])
    got = client.responses.retrieve(r.id)
    assert got.id == r.id and got.output_text == r.output_text and got.usage == r.usage
    page = client.responses.input_items.list(r.id, order="asc")
    texts = [item.content[0].text for item in page.data]  # type: ignore[union-attr]
    assert texts == ["one", "two"]
    desc = client.responses.input_items.list(r.id, limit=1)
    assert [i.content[0].text for i in desc.data] == ["two"] and desc.has_more  # type: ignore[union-attr]
    rest = client.responses.input_items.list(r.id, limit=1, after=desc.data[0].id)
    assert [i.content[0].text for i in rest.data] == ["one"] and not rest.has_more  # type: ignore[union-attr]
    client.responses.delete(r.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(r.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.delete(r.id)


def test_stream_events_in_documented_order(client: openai.OpenAI) -> None:
    with client.responses.stream(model=MODEL, input="the storm", extra_body={"seed": 5}) as stream:
        events = list(stream)
        final = stream.get_final_response()
    kinds = [e.type for e in events]
    assert kinds[:4] == ["response.created", "response.in_progress", "response.output_item.added",
                         "response.content_part.added"]
    assert kinds[-4:] == ["response.output_text.done", "response.content_part.done",
                          "response.output_item.done", "response.completed"]
    deltas = [e for e in events if e.type == "response.output_text.delta"]
    assert set(kinds[4:-4]) == {"response.output_text.delta"} and deltas
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert "".join(d.delta for d in deltas) == final.output_text
    assert client.responses.retrieve(final.id).output_text == final.output_text
    follow = client.responses.create(model=MODEL, input="and then?", previous_response_id=final.id)
    assert follow.previous_response_id == final.id


def test_stream_matches_non_stream_for_the_same_seed(client: openai.OpenAI) -> None:
    plain = client.responses.create(model=MODEL, input="the train", extra_body={"seed": 9})
    with client.responses.stream(model=MODEL, input="the train", extra_body={"seed": 9}) as stream:
        final = stream.get_final_response()
    assert final.output_text == plain.output_text and final.usage == plain.usage


class Recipe(BaseModel):
    title: str
    servings: int
    vegetarian: bool
    steps: list[str]
    rating: float | None


def test_parse_with_pydantic_model(client: openai.OpenAI) -> None:
    for seed in range(5):
        parsed = client.responses.parse(model=MODEL, input="a soup recipe", text_format=Recipe,
                                        extra_body={"seed": seed})
        assert isinstance(parsed.output_parsed, Recipe)
        assert parsed.text is not None and parsed.text.format is not None
        assert parsed.text.format.type == "json_schema"


def test_json_schema_output_validates(client: openai.OpenAI) -> None:
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string", "maxLength": 12},
            "days": {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 7},
                     "minItems": 2, "maxItems": 4},
            "unit": {"type": "string", "enum": ["C", "F"]},
        },
        "required": ["city", "days", "unit"],
        "additionalProperties": False,
    }
    fmt = {"type": "json_schema", "name": "forecast", "schema": schema, "strict": True}
    for seed in range(5):
        r = client.responses.create(model=MODEL, input="forecast", text={"format": fmt},  # type: ignore[typeddict-item]
                                    extra_body={"seed": seed})
        jsonschema.validate(json.loads(r.output_text), schema)


def test_json_object_format(client: openai.OpenAI) -> None:
    r = client.responses.create(model=MODEL, input="json please", text={"format": {"type": "json_object"}})
    assert isinstance(json.loads(r.output_text), dict)


WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "Current weather in a city",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["C", "F"]}},
        "required": ["city", "unit"],
        "additionalProperties": False,
    },
    "strict": True,
}
STOCK = {
    "type": "function",
    "name": "get_stock_price",
    "description": "Latest price of a stock ticker",
    "parameters": {"type": "object", "properties": {"ticker": {"type": "string", "maxLength": 5}},
                   "required": ["ticker"], "additionalProperties": False},
    "strict": True,
}


def test_function_call_round_trip(client: openai.OpenAI) -> None:
    r = client.responses.create(model=MODEL, input="What's the weather in Oslo?", tools=[WEATHER, STOCK],  # type: ignore[list-item]
                                tool_choice="required")
    (call,) = r.output
    assert isinstance(call, ResponseFunctionToolCall) and call.name == "get_weather"
    jsonschema.validate(json.loads(call.arguments), WEATHER["parameters"])
    answer = client.responses.create(
        model="echo-test", previous_response_id=r.id, tools=[WEATHER],  # type: ignore[list-item]
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "12 degrees"}],
    )
    lines = answer.output_text.splitlines()
    assert lines[-1] == "tool: 12 degrees" and lines[-2].startswith("assistant: [call get_weather")


def test_named_tool_choice_and_none(client: openai.OpenAI) -> None:
    named = client.responses.create(model=MODEL, input="weather", tools=[WEATHER, STOCK],  # type: ignore[list-item]
                                    tool_choice={"type": "function", "name": "get_stock_price"})
    assert [o.type for o in named.output] == ["function_call"]
    assert named.output[0].name == "get_stock_price"  # type: ignore[union-attr]
    assert len(json.loads(named.output[0].arguments)["ticker"]) <= 5  # type: ignore[union-attr]
    none = client.responses.create(model=MODEL, input="weather", tools=[WEATHER], tool_choice="none")  # type: ignore[list-item]
    assert [o.type for o in none.output] == ["message"]


def test_auto_tool_choice_calls_a_mentioned_tool_only(client: openai.OpenAI) -> None:
    mentioned = client.responses.create(model=MODEL, input="Is there weather news?", tools=[WEATHER, STOCK])  # type: ignore[list-item]
    assert [o.type for o in mentioned.output] == ["function_call"]
    unrelated = client.responses.create(model=MODEL, input="Tell me a story.", tools=[WEATHER, STOCK])  # type: ignore[list-item]
    assert [o.type for o in unrelated.output] == ["message"]


def test_stream_function_call_events(client: openai.OpenAI) -> None:
    with client.responses.stream(model=MODEL, input="weather", tools=[WEATHER], tool_choice="required") as stream:  # type: ignore[list-item]
        events = list(stream)
        final = stream.get_final_response()
    kinds = [e.type for e in events]
    assert kinds[2] == "response.output_item.added"
    assert kinds[-3:] == ["response.function_call_arguments.done", "response.output_item.done",
                          "response.completed"]
    deltas = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    assert deltas == final.output[0].arguments  # type: ignore[union-attr]
    jsonschema.validate(json.loads(deltas), WEATHER["parameters"])


def test_files_and_input_file(client: openai.OpenAI) -> None:
    f = client.files.create(file=("notes.md", b"# Notes\nremember the lighthouse"), purpose="user_data")
    assert f.purpose == "user_data" and f.bytes == 31 and f.filename == "notes.md"
    assert client.files.retrieve(f.id).id == f.id
    assert f.id in [x.id for x in client.files.list()]
    assert client.files.content(f.id).read() == b"# Notes\nremember the lighthouse"
    r = client.responses.create(
        model="echo-test",
        input=[{"role": "user", "content": [{"type": "input_file", "file_id": f.id},
                                            {"type": "input_text", "text": "summarise"}]}],
    )
    assert r.output_text == "user: [file notes.md]\n# Notes\nremember the lighthouse\nsummarise"
    deleted = client.files.delete(f.id)
    assert deleted.deleted and deleted.id == f.id
    with pytest.raises(openai.NotFoundError):
        client.files.retrieve(f.id)


def test_inline_file_data(client: openai.OpenAI) -> None:
    import base64

    data = "data:text/csv;base64," + base64.b64encode(b"a,b\n1,2\n").decode()
    r = client.responses.create(model="echo-test", input=[{"role": "user", "content": [
        {"type": "input_file", "filename": "t.csv", "file_data": data}]}])
    assert r.output_text == "user: [file t.csv]\na,b\n1,2\n"


def test_models(client: openai.OpenAI, http: httpx.Client) -> None:
    ids = [m.id for m in client.models.list()]
    assert SNAPSHOT in ids and "echo-test" in ids
    assert client.models.retrieve(MODEL).id == SNAPSHOT
    body = http.get("/models").json()
    ngram = next(m for m in body["data"] if m["id"] == SNAPSHOT)
    assert ngram["context_window"] == 8192


def test_files_list_pagination(client: openai.OpenAI) -> None:
    made = [client.files.create(file=(f"p{i}.txt", b"x"), purpose="batch").id for i in range(3)]
    listed = [f.id for f in client.files.list(purpose="batch", order="asc") if f.id in made]
    assert sorted(listed) == sorted(made)
    first = client.files.list(purpose="batch", limit=1)
    assert len(first.data) == 1 and first.has_more

