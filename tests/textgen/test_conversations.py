"""Conversations through the official SDK (``client.conversations``, strict validation) on a real server."""

from __future__ import annotations

import openai
import pytest


def test_conversation_crud_and_items(client: openai.OpenAI) -> None:
    conv = client.conversations.create(items=[{"role": "user", "content": "first"},  # type: ignore[list-item]
                                              {"role": "assistant", "content": "second"}],
                                       metadata={"topic": "harbor"})
    assert conv.object == "conversation" and conv.id.startswith("conv_") and conv.metadata == {"topic": "harbor"}
    assert client.conversations.retrieve(conv.id).created_at == conv.created_at
    updated = client.conversations.update(conv.id, metadata={"topic": "sea"})
    assert updated.metadata == {"topic": "sea"}

    added = client.conversations.items.create(conv.id, items=[{"role": "user", "content": "third"}])  # type: ignore[list-item]
    assert [i.type for i in added.data] == ["message"] and added.first_id == added.data[0].id
    newest_first = client.conversations.items.list(conv.id)
    texts = [i.content[0].text for i in newest_first.data]  # type: ignore[union-attr]
    assert texts == ["third", "second", "first"]
    oldest_first = client.conversations.items.list(conv.id, order="asc", limit=2)
    assert [i.content[0].text for i in oldest_first.data] == ["first", "second"]  # type: ignore[union-attr]
    assert oldest_first.has_more is True
    rest = client.conversations.items.list(conv.id, order="asc", after=oldest_first.data[-1].id)
    assert [i.content[0].text for i in rest.data] == ["third"] and rest.has_more is False  # type: ignore[union-attr]

    one = client.conversations.items.retrieve(oldest_first.data[0].id, conversation_id=conv.id)
    assert one.id == oldest_first.data[0].id
    after_delete = client.conversations.items.delete(one.id, conversation_id=conv.id)
    assert after_delete.id == conv.id
    assert len(client.conversations.items.list(conv.id).data) == 2
    with pytest.raises(openai.NotFoundError):
        client.conversations.items.retrieve(one.id, conversation_id=conv.id)

    deleted = client.conversations.delete(conv.id)
    assert deleted.deleted is True and deleted.object == "conversation.deleted"
    with pytest.raises(openai.NotFoundError):
        client.conversations.retrieve(conv.id)


def test_responses_read_and_extend_a_conversation(client: openai.OpenAI) -> None:
    conv = client.conversations.create(items=[{"role": "user", "content": "the harbor"}])  # type: ignore[list-item]
    first = client.responses.create(model="echo-test", input="one", conversation=conv.id)
    assert first.conversation is not None and first.conversation.id == conv.id
    assert first.output_text.splitlines() == ["user: the harbor", "user: one"]
    second = client.responses.create(model="echo-test", input="two", conversation={"id": conv.id}, store=False)
    assert second.output_text.splitlines() == [
        "user: the harbor", "user: one", "assistant: user: the harbor", "user: one", "user: two"]
    items = client.conversations.items.list(conv.id, order="asc", limit=100).data
    assert [i.type for i in items] == ["message"] * 5  # seed, then each turn's input and output
    assert items[2].id == first.output[0].id  # type: ignore[union-attr]


def test_conversation_request_errors(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as missing:
        client.responses.create(model="echo-test", input="x", conversation="conv_missing")
    assert missing.value.body["param"] == "conversation"  # type: ignore[index]
    previous = client.responses.create(model="echo-test", input="x")
    conv = client.conversations.create()
    with pytest.raises(openai.BadRequestError) as both:
        client.responses.create(model="echo-test", input="x", conversation=conv.id, previous_response_id=previous.id)
    assert both.value.body["param"] == "conversation"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError) as too_many:
        client.conversations.items.create(conv.id, items=[{"role": "user", "content": "x"}] * 21)  # type: ignore[list-item]
    assert too_many.value.body["param"] == "items"  # type: ignore[index]
    assert client.conversations.items.list(conv.id).data == []


def test_truncation_auto_drops_the_oldest_conversation_items(client: openai.OpenAI) -> None:
    conv = client.conversations.create(items=[{"role": "user", "content": "word " * 2500},  # type: ignore[list-item]
                                              {"role": "user", "content": "recent"}])  # echo-test's window is 4096
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="echo-test", input="hi", conversation=conv.id, max_output_tokens=2000)
    assert refused.value.body["code"] == "context_length_exceeded"  # type: ignore[index]
    kept = client.responses.create(model="echo-test", input="hi", conversation=conv.id, max_output_tokens=2000,
                                   truncation="auto")
    assert kept.output_text.splitlines() == ["user: recent", "user: hi"] and kept.truncation == "auto"
    items = client.conversations.items.list(conv.id, order="asc").data
    assert len(items) == 4  # the conversation itself keeps every item; only the context was cut


def test_item_references_add_the_stored_item(client: openai.OpenAI) -> None:
    stored = client.responses.create(model="echo-test", input="remember the harbor")
    conv = client.conversations.create(items=[{"type": "item_reference", "id": stored.output[0].id}])  # type: ignore[list-item]
    added = client.conversations.items.create(conv.id, items=[{"type": "item_reference", "id": stored.output[0].id}])  # type: ignore[list-item]
    assert added.data[0].id == stored.output[0].id and added.data[0].type == "message"
    items = client.conversations.items.list(conv.id, order="asc").data
    assert [i.content[0].text for i in items] == ["user: remember the harbor"] * 2  # type: ignore[union-attr]
    with pytest.raises(openai.NotFoundError) as missing:
        client.conversations.items.create(conv.id, items=[{"type": "item_reference", "id": "msg_none"}])  # type: ignore[list-item]
    assert missing.value.body["param"] == "items[0].id" and missing.value.body["code"] == "item_not_found"  # type: ignore[index]
