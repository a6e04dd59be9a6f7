"""Conversations: durable, project-scoped lists of items that responses read and append to.

``POST /v1/conversations`` creates one (optionally with items and metadata);
``POST /v1/responses`` with ``conversation`` reads its items as the context and
appends the turn's input and output items when the response ends. Items are
stored once each (``textgen_conversation_items``), in order.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import msgspec
import sqlalchemy as sa

from textgen.errors import bad_request, not_found
from textgen.includes import shape_item
from textgen.inputs import normalize_input
from textgen.schemas import ConversationCreate, ConversationItemsCreate, ConversationUpdate
from textgen.sealing import Sealer
from textgen.store import Store, metadata, new_id

__all__ = ["ConversationService", "conversation_id_of"]

conversations = sa.Table(
    "textgen_conversations",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("project", sa.String(200), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("metadata", sa.Text, nullable=False),
    sa.Column("next_position", sa.Integer, nullable=False),
)

conversation_items = sa.Table(
    "textgen_conversation_items",
    metadata,
    sa.Column("conversation_id", sa.String(64), primary_key=True),
    sa.Column("position", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("item_id", sa.String(64), nullable=False),
    sa.Column("item", sa.Text, nullable=False),
    sa.Index("ix_textgen_conversation_items_item_id", "conversation_id", "item_id"),
)

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


def _read(row: Any) -> dict[str, Any]:
    return {"id": row.id, "object": "conversation", "created_at": row.created_at,
            "metadata": msgspec.json.decode(row.metadata)}


class ConversationService:
    """Create, read, update and delete conversations and their items, within a project.

    Items are stored as written; every read shapes them by the request's ``include``
    (:func:`textgen.includes.shape_item`).
    """

    def __init__(self, store: Store, sealer: Sealer) -> None:
        self.store = store
        self.sealer = sealer

    def _shaped(self, items: Sequence[dict[str, Any]], include: frozenset[str]) -> list[dict[str, Any]]:
        return [shape_item(item, include, self.sealer) for item in items]

    async def _row(self, conn: Any, conversation_id: str, project: str, *, lock: bool = False,
                   param: str = "conversation_id") -> Any:
        query = sa.select(conversations).where(conversations.c.id == conversation_id,
                                               conversations.c.project == project)
        row = (await conn.execute(query.with_for_update() if lock else query)).first()
        if row is None:
            raise not_found(f"Conversation with id {conversation_id!r} not found.", param=param,
                            code="conversation_not_found")
        return row

    async def create(self, project: str, body: ConversationCreate) -> dict[str, Any]:
        """A new conversation, with its first items."""
        items = await self._items(body.items or [], "items", project)
        conversation_id = new_id("conv_")
        async with self.store.engine.begin() as conn:
            await conn.execute(conversations.insert().values(
                id=conversation_id, project=project, created_at=int(time.time()),
                metadata=msgspec.json.encode(body.metadata or {}).decode(), next_position=0))
            await self._append(conn, conversation_id, project, items)
            return _read(await self._row(conn, conversation_id, project))

    async def get(self, conversation_id: str, project: str) -> dict[str, Any]:
        """A conversation; 404 if unknown or another project's."""
        async with self.store.engine.connect() as conn:
            return _read(await self._row(conn, conversation_id, project))

    async def update(self, conversation_id: str, project: str, body: ConversationUpdate) -> dict[str, Any]:
        """Replace a conversation's metadata."""
        async with self.store.engine.begin() as conn:
            await self._row(conn, conversation_id, project)
            await conn.execute(conversations.update().where(conversations.c.id == conversation_id)
                               .values(metadata=msgspec.json.encode(body.metadata).decode()))
            return _read(await self._row(conn, conversation_id, project))

    async def delete(self, conversation_id: str, project: str) -> dict[str, Any]:
        """Delete a conversation and its items."""
        async with self.store.engine.begin() as conn:
            await self._row(conn, conversation_id, project)
            await conn.execute(conversation_items.delete().where(
                conversation_items.c.conversation_id == conversation_id))
            await conn.execute(conversations.delete().where(conversations.c.id == conversation_id))
        return {"id": conversation_id, "object": "conversation.deleted", "deleted": True}

    async def _items(self, values: list[dict[str, Any]], param: str, project: str) -> list[dict[str, Any]]:
        """Normalised new items; an ``item_reference`` is replaced by the stored item it names."""
        if len(values) > _MAX_NEW_ITEMS:
            raise bad_request(f"At most {_MAX_NEW_ITEMS} items can be added at a time.", param=param,
                              code="invalid_value")
        items = normalize_input(values, prefix=param)
        for i, item in enumerate(items):
            if item["type"] == "item_reference":  # any stored item of this project, by id
                referenced = await self.store.find_item(item["id"], project)
                if referenced is None:
                    raise not_found(f"Item with id {item['id']!r} not found.", param=f"{param}[{i}].id",
                                    code="item_not_found")
                items[i] = referenced
        return items

    async def _append(self, conn: Any, conversation_id: str, project: str, items: Sequence[dict[str, Any]]) -> None:
        row = await self._row(conn, conversation_id, project, lock=True)
        if not items:
            return
        await conn.execute(conversation_items.insert(), [
            {"conversation_id": conversation_id, "position": row.next_position + i, "item_id": item["id"],
             "item": msgspec.json.encode(item).decode()} for i, item in enumerate(items)])
        await conn.execute(conversations.update().where(conversations.c.id == conversation_id)
                           .values(next_position=row.next_position + len(items)))

    async def add_items(self, conversation_id: str, project: str, body: ConversationItemsCreate,
                        include: frozenset[str] = frozenset()) -> dict[str, Any]:
        """Append items; answers with the list of the items added."""
        items = await self._items(body.items, "items", project)
        async with self.store.engine.begin() as conn:
            await self._append(conn, conversation_id, project, items)
        return _page(self._shaped(items, include), has_more=False)

    async def append(self, conversation_id: str, project: str, items: Sequence[dict[str, Any]]) -> None:
        """Append a finished turn's input and output items (called when a response ends)."""
        async with self.store.engine.begin() as conn:
            await self._append(conn, conversation_id, project, items)

    async def all_items(self, conversation_id: str, project: str) -> list[dict[str, Any]]:
        """Every item, oldest first; 404 (on ``conversation``) if unknown."""
        async with self.store.engine.connect() as conn:
            await self._row(conn, conversation_id, project, param="conversation")
            rows = (await conn.execute(sa.select(conversation_items.c.item).where(
                conversation_items.c.conversation_id == conversation_id)
                .order_by(conversation_items.c.position))).all()
        return [msgspec.json.decode(r.item) for r in rows]

    async def list_items(self, conversation_id: str, project: str, *, after: str | None, limit: int,
                         order: str, include: frozenset[str] = frozenset()) -> dict[str, Any]:
        """One page of items (``order`` ``desc``, the default, puts the latest first)."""
        if not 1 <= limit <= 100:
            raise bad_request("'limit' must be between 1 and 100.", param="limit", code="invalid_value")
        if order not in ("asc", "desc"):
            raise bad_request("'order' must be 'asc' or 'desc'.", param="order", code="invalid_value")
        async with self.store.engine.connect() as conn:
            await self._row(conn, conversation_id, project)
            column = conversation_items.c.position
            query = sa.select(conversation_items.c.item, column).where(
                conversation_items.c.conversation_id == conversation_id)
            if after is not None:
                cursor = (await conn.execute(sa.select(sa.func.max(column)).where(
                    conversation_items.c.conversation_id == conversation_id,
                    conversation_items.c.item_id == after))).scalar()
                if cursor is None:
                    raise bad_request(f"Cursor 'after' {after!r} is not an item of this conversation.",
                                      param="after", code="invalid_value")
                query = query.where(column > cursor if order == "asc" else column < cursor)
            query = query.order_by(column.asc() if order == "asc" else column.desc()).limit(limit + 1)
            rows = (await conn.execute(query)).all()
        page = self._shaped([msgspec.json.decode(r.item) for r in rows[:limit]], include)
        return _page(page, has_more=len(rows) > limit)

    async def get_item(self, conversation_id: str, item_id: str, project: str,
                       include: frozenset[str] = frozenset()) -> dict[str, Any]:
        """One item by id; 404 if unknown."""
        async with self.store.engine.connect() as conn:
            await self._row(conn, conversation_id, project)
            row = (await conn.execute(sa.select(conversation_items.c.item).where(
                conversation_items.c.conversation_id == conversation_id,
                conversation_items.c.item_id == item_id).order_by(conversation_items.c.position.desc()))).first()
        if row is None:
            raise not_found(f"Item with id {item_id!r} not found.", param="item_id", code="item_not_found")
        return shape_item(msgspec.json.decode(row.item), include, self.sealer)

    async def delete_item(self, conversation_id: str, item_id: str, project: str) -> dict[str, Any]:
        """Delete one item; answers with the conversation."""
        async with self.store.engine.begin() as conn:
            row = await self._row(conn, conversation_id, project)
            result = await conn.execute(conversation_items.delete().where(
                conversation_items.c.conversation_id == conversation_id, conversation_items.c.item_id == item_id))
            if not result.rowcount:
                raise not_found(f"Item with id {item_id!r} not found.", param="item_id", code="item_not_found")
        return _read(row)


def _page(items: list[dict[str, Any]], *, has_more: bool) -> dict[str, Any]:
    # The SDK types first_id/last_id as strings, so an empty page has empty ids.
    return {"object": "list", "data": items, "has_more": has_more,
            "first_id": items[0]["id"] if items else "", "last_id": items[-1]["id"] if items else ""}
