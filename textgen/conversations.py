"""Conversations: durable, project-scoped lists of items that responses read and append to.

``POST /v1/conversations`` creates one (optionally with items and metadata);
``POST /v1/responses`` with ``conversation`` reads its items as the context and
appends the turn's input and output items when the response ends. Items are
stored once each, in order; every query is the store's (:mod:`textgen.conversation_store`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textgen.errors import APIError, bad_request, not_found
from textgen.includes import shape_item
from textgen.inputs import normalize_input, resolve_references
from textgen.items import InputItem
from textgen.pagination import Page, page_body
from textgen.schemas import (
    ConversationCreate,
    ConversationItemsCreate,
    ConversationRead,
    ConversationUpdate,
    Deleted,
    ListPage,
)
from textgen.sealing import Sealer
from textgen.store import Store, new_id
from textgen.stored_items import Item

__all__ = ["ConversationService", "conversation_id_of"]

_MAX_NEW_ITEMS = 20  # OpenAI's reference: "You may add up to 20 items at a time."


def conversation_id_of(value: str | dict[str, Any] | None) -> str | None:
    """The id of a request's ``conversation`` (a string or ``{"id": ...}``)."""
    if value is None or isinstance(value, str):
        return value
    conversation_id = value.get("id")
    if not isinstance(conversation_id, str) or set(value) - {"id"}:
        raise bad_request("'conversation' must be an id or {'id': <id>}.", param="conversation",
                          code="invalid_value")
    return conversation_id


def _missing(conversation_id: str, param: str = "conversation_id") -> APIError:
    return not_found(f"Conversation with id {conversation_id!r} not found.", param=param,
                     code="conversation_not_found")


def _no_item(item_id: str) -> APIError:
    return not_found(f"Item with id {item_id!r} not found.", param="item_id", code="item_not_found")


class ConversationService:
    """Create, read, update and delete conversations and their items, within a project.

    Items are stored as written; every read shapes them by the request's ``include``
    (:func:`textgen.includes.shape_item`).
    """

    def __init__(self, store: Store, sealer: Sealer) -> None:
        self.store = store
        self.sealer = sealer

    def _shaped(self, items: Sequence[Item], include: frozenset[str]) -> list[Item]:
        return [shape_item(item, include, self.sealer) for item in items]

    async def create(self, project: str, body: ConversationCreate) -> ConversationRead:
        """A new conversation, with its first items."""
        items = await self._items(body.items or [], "items", project)
        return await self.store.conversations.create(new_id("conv_"), project, dict(body.metadata or {}), items)

    async def get(self, conversation_id: str, project: str) -> ConversationRead:
        """A conversation; 404 if unknown or another project's."""
        found = await self.store.conversations.get(conversation_id, project)
        if found is None:
            raise _missing(conversation_id)
        return found

    async def update(self, conversation_id: str, project: str, body: ConversationUpdate) -> ConversationRead:
        """Replace a conversation's metadata."""
        found = await self.store.conversations.update(conversation_id, project, dict(body.metadata))
        if found is None:
            raise _missing(conversation_id)
        return found

    async def delete(self, conversation_id: str, project: str) -> Deleted:
        """Delete a conversation and its items."""
        if not await self.store.conversations.delete(conversation_id, project):
            raise _missing(conversation_id)
        return Deleted(id=conversation_id, object="conversation.deleted")

    async def _items(self, values: Sequence[InputItem], param: str, project: str) -> list[Item]:
        """Normalised new items; an ``item_reference`` is replaced by the stored item it names."""
        if len(values) > _MAX_NEW_ITEMS:
            raise bad_request(f"At most {_MAX_NEW_ITEMS} items can be added at a time.", param=param,
                              code="invalid_value")
        return await resolve_references(self.store, normalize_input(values, prefix=param), param, project)

    async def add_items(self, conversation_id: str, project: str, body: ConversationItemsCreate,
                        include: frozenset[str] = frozenset()) -> ListPage:
        """Append items; answers with the list of the items added."""
        items = await self._items(body.items, "items", project)
        if not await self.store.conversations.append(conversation_id, project, items):
            raise _missing(conversation_id)
        return page_body(self._shaped(items, include), has_more=False, empty_id="")

    async def append(self, conversation_id: str, project: str, items: Sequence[Item]) -> None:
        """Append a finished turn's input and output items (called when a response ends)."""
        if not await self.store.conversations.append(conversation_id, project, items):
            raise _missing(conversation_id, "conversation")

    async def all_items(self, conversation_id: str, project: str) -> list[Item]:
        """Every item, oldest first; 404 (on ``conversation``) if unknown."""
        items = await self.store.conversations.all_items(conversation_id, project)
        if items is None:
            raise _missing(conversation_id, "conversation")
        return items

    async def list_items(self, conversation_id: str, project: str, page: Page,
                         include: frozenset[str] = frozenset()) -> ListPage:
        """One page of items (``order`` ``desc``, the default, puts the latest first)."""
        try:
            found = await self.store.conversations.page(conversation_id, project, after=page.after,
                                                        limit=page.limit, order=page.order)
        except LookupError as exc:
            raise bad_request(f"Cursor 'after' {page.after!r} is not an item of this conversation.",
                              param="after", code="invalid_value") from exc
        if found is None:
            raise _missing(conversation_id)
        items, more = found
        return page_body(self._shaped(items, include), has_more=more, empty_id="")

    async def get_item(self, conversation_id: str, item_id: str, project: str,
                       include: frozenset[str] = frozenset()) -> Item:
        """One item by id; 404 if unknown."""
        if await self.store.conversations.get(conversation_id, project) is None:
            raise _missing(conversation_id)
        item = await self.store.conversations.item(conversation_id, item_id, project)
        if item is None:
            raise _no_item(item_id)
        return shape_item(item, include, self.sealer)

    async def delete_item(self, conversation_id: str, item_id: str, project: str) -> ConversationRead:
        """Delete one item; answers with the conversation."""
        conversation, existed = await self.store.conversations.delete_item(conversation_id, item_id, project)
        if conversation is None:
            raise _missing(conversation_id)
        if not existed:
            raise _no_item(item_id)
        return conversation
