"""``include`` on reads: conversation items (list, retrieve, create), a response's input items and a
stored response; the SDK with strict validation and raw HTTP against the real test server."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

THINKING, NGRAM = "thinking-test", "textgen-ngram"
LOGPROBS, SEALED = "message.output_text.logprobs", "reasoning.encrypted_content"


@pytest.fixture
def sdk(client: openai.OpenAI) -> openai.OpenAI:
    """The session's real server (uvicorn), through the SDK with strict validation."""
    return client


def _of(items: list[Any], kind: str) -> list[Any]:
    return [i for i in items if i.type == kind]


def test_conversation_items_show_logprobs_and_sealed_reasoning_only_when_included(sdk: openai.OpenAI) -> None:
    conv = sdk.conversations.create()
    thought = sdk.responses.create(model=THINKING, input="hi", conversation=conv.id)
    scored = sdk.responses.create(model=NGRAM, input="the weather", conversation=conv.id, top_logprobs=2,
                                  include=[LOGPROBS], max_output_tokens=8, temperature=0)
    generated = scored.output[0].content[0].logprobs  # type: ignore[union-attr]
    assert generated and all(len(lp.top_logprobs) == 2 for lp in generated)

    plain = sdk.conversations.items.list(conv.id, order="asc").data
    assert [i.type for i in plain] == ["message", "reasoning", "message", "message", "message"]
    (reasoning,) = _of(plain, "reasoning")
    assert reasoning.encrypted_content is None  # type: ignore[union-attr]
    assert reasoning.content[0].text == "private chain of thought"  # type: ignore[union-attr,index]
    assert plain[-1].content[0].logprobs == []  # type: ignore[union-attr]

    full = sdk.conversations.items.list(conv.id, order="asc", include=[LOGPROBS, SEALED]).data
    assert [i.id for i in full] == [i.id for i in plain]
    assert full[-1].content[0].logprobs == generated  # type: ignore[union-attr]
    (sealed,) = _of(full, "reasoning")
    blob = sealed.encrypted_content  # type: ignore[union-attr]
    assert isinstance(blob, str) and "chain of thought" not in blob
    only_logprobs = sdk.conversations.items.list(conv.id, order="asc", include=[LOGPROBS]).data
    assert _of(only_logprobs, "reasoning")[0].encrypted_content is None  # type: ignore[union-attr]

    one = sdk.conversations.items.retrieve(reasoning.id, conversation_id=conv.id, include=[SEALED])
    assert isinstance(one.encrypted_content, str)  # type: ignore[union-attr]
    assert sdk.conversations.items.retrieve(reasoning.id, conversation_id=conv.id).encrypted_content is None  # type: ignore[union-attr]
    message = sdk.conversations.items.retrieve(plain[-1].id, conversation_id=conv.id, include=[LOGPROBS])
    assert message.content[0].logprobs == generated  # type: ignore[union-attr]

    # The blob is this server's: a stateless client sends the item back with no text and it is read.
    back = {"id": reasoning.id, "type": "reasoning", "summary": [], "encrypted_content": blob}
    again = sdk.responses.create(model=THINKING, store=True, input=[back, {"role": "user", "content": "more"}])  # type: ignore[list-item]
    restored = _of(sdk.responses.input_items.list(again.id, include=[SEALED]).data, "reasoning")
    assert restored[0].content[0].text == "private chain of thought"  # type: ignore[union-attr,index]
    assert isinstance(restored[0].encrypted_content, str)  # type: ignore[union-attr]
    unsealed = _of(sdk.responses.input_items.list(again.id).data, "reasoning")
    assert unsealed[0].encrypted_content is None  # type: ignore[union-attr]
    assert _of(thought.output, "reasoning")[0].encrypted_content is None  # type: ignore[union-attr]
    fetched = sdk.responses.retrieve(thought.id, include=[SEALED])
    assert isinstance(_of(fetched.output, "reasoning")[0].encrypted_content, str)  # type: ignore[union-attr]


def test_creating_items_answers_with_the_included_fields(sdk: openai.OpenAI) -> None:
    conv = sdk.conversations.create()
    item = {"type": "reasoning", "id": "rs_client", "summary": [],
            "content": [{"type": "reasoning_text", "text": "kept"}]}
    added = sdk.conversations.items.create(conv.id, items=[item], include=[SEALED])  # type: ignore[list-item]
    assert isinstance(added.data[0].encrypted_content, str)  # type: ignore[union-attr]
    plain = sdk.conversations.items.create(conv.id, items=[{**item, "id": "rs_two"}])  # type: ignore[list-item]
    assert plain.data[0].encrypted_content is None  # type: ignore[union-attr]


def test_include_over_raw_http_and_unknown_values(http: httpx.Client, sdk: openai.OpenAI) -> None:
    conv = sdk.conversations.create()
    response = sdk.responses.create(model=THINKING, input="hi", conversation=conv.id)
    base = f"/conversations/{conv.id}/items"
    for query in (f"include={SEALED}", f"include[]={SEALED}", f"include={LOGPROBS}&include[]={SEALED}"):
        got = http.get(f"{base}?{query}")
        assert got.status_code == 200 and got.headers["content-type"].startswith("application/json")
        (reasoning,) = [i for i in got.json()["data"] if i["type"] == "reasoning"]
        assert isinstance(reasoning["encrypted_content"], str)
    assert next(i for i in http.get(base).json()["data"] if i["type"] == "reasoning")["encrypted_content"] is None

    item_id = http.get(base).json()["data"][0]["id"]
    for url in (base, f"{base}/{item_id}", f"/responses/{response.id}", f"/responses/{response.id}/input_items"):
        refused = http.get(url, params={"include": "file_search_call.results"})
        assert refused.status_code == 400, url
        error = refused.json()["error"]
        assert error["param"] == "include" and error["code"] == "unsupported_value"
        assert error["type"] == "invalid_request_error" and "file_search_call.results" in error["message"]
    assert http.get(f"{base}?include[]=nonsense").json()["error"]["param"] == "include"
    posted = http.post(f"{base}?include=bogus", json={"items": [{"role": "user", "content": "x"}]})
    assert posted.status_code == 400 and posted.json()["error"]["param"] == "include"
    assert len(http.get(base).json()["data"]) == 3  # nothing was added by the refused request

    with pytest.raises(openai.BadRequestError) as sdk_refused:
        sdk.conversations.items.list(conv.id, include=["web_search_call.action.sources"])
    assert sdk_refused.value.body["param"] == "include"  # type: ignore[index]
