"""``POST /v1/responses/input_tokens`` through the SDK (strict validation) on a real server."""

from __future__ import annotations

import httpx
import openai
import pytest

MODEL = "textgen-ngram"


def test_count_equals_the_usage_of_the_same_request(client: openai.OpenAI) -> None:
    counted = client.responses.input_tokens.count(model=MODEL, input="Tell me about the harbor.",
                                                  instructions="Be brief.")
    assert counted.object == "response.input_tokens" and counted.input_tokens > 0
    created = client.responses.create(model=MODEL, input="Tell me about the harbor.", instructions="Be brief.",
                                      max_output_tokens=5)
    assert created.usage is not None and counted.input_tokens == created.usage.input_tokens
    follow = client.responses.input_tokens.count(model=MODEL, input="And then?", previous_response_id=created.id)
    alone = client.responses.input_tokens.count(model=MODEL, input="And then?")
    assert follow.input_tokens > alone.input_tokens  # the previous turn is part of the context


def test_count_validates_like_create(client: openai.OpenAI, http: httpx.Client) -> None:
    with pytest.raises(openai.NotFoundError) as missing:
        client.responses.input_tokens.count(model=MODEL, input="x", previous_response_id="resp_missing")
    assert missing.value.body["param"] == "previous_response_id"  # type: ignore[index]
    unknown = http.post("/responses/input_tokens", json={"model": MODEL, "input": "x", "stream": True})
    assert unknown.status_code == 400 and unknown.json()["error"]["param"] == "stream"
    assert unknown.json()["error"]["code"] == "unknown_parameter"
    default_model = http.post("/responses/input_tokens", json={"input": "x"})
    assert default_model.status_code == 200 and default_model.json()["input_tokens"] > 0
