"""The conversation tables and every query on them; reached as ``Store.conversations``.

A conversation row holds its metadata and the position its next item takes; items are stored
once each, in order (``textgen_conversation_items``). Every method is scoped by project: another
project's conversation is :data:`None` / ``False``, like an unknown one.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import msgspec
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from textgen.schemas import ConversationRead
from textgen.stored_items import Item, load_item

__all__ = ["ConversationStore", "conversation_items", "conversations", "define_tables"]

conversations: sa.Table
conversation_items: sa.Table


def define_tables(metadata: sa.MetaData) -> tuple[sa.Table, sa.Table]:
    """Add the two conversation tables to ``metadata`` (the store's) and return them."""
    global conversations, conversation_items
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
    return conversations, conversation_items


def _read(row: Any) -> ConversationRead:
    return ConversationRead(id=row.id, created_at=row.created_at,
                            metadata=msgspec.json.decode(row.metadata, type=dict[str, str]))


def _dumps(value: Any) -> str:
    return msgspec.json.encode(value).decode()


class ConversationStore:
    """Queries on conversations and their items, answering with their wire types (the items are
    converted at load)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    @staticmethod
    async def _row(conn: AsyncConnection, conversation_id: str, project: str, *, lock: bool = False) -> Any:
        query = sa.select(conversations).where(conversations.c.id == conversation_id,
                                               conversations.c.project == project)
        return (await conn.execute(query.with_for_update() if lock else query)).first()

    @staticmethod
    async def _append(conn: AsyncConnection, row: Any, items: Sequence[Item]) -> None:
        if not items:
            return
        await conn.execute(conversation_items.insert(), [
            {"conversation_id": row.id, "position": row.next_position + i, "item_id": item.id,
             "item": _dumps(item)} for i, item in enumerate(items)])
        await conn.execute(conversations.update().where(conversations.c.id == row.id)
                           .values(next_position=row.next_position + len(items)))

    async def create(self, conversation_id: str, project: str, metadata: dict[str, str],
                     items: Sequence[Item]) -> ConversationRead:
        """Insert a conversation with its first items; returns it."""
        async with self.engine.begin() as conn:
            await conn.execute(conversations.insert().values(
                id=conversation_id, project=project, created_at=int(time.time()), metadata=_dumps(metadata),
                next_position=0))
            row = await self._row(conn, conversation_id, project, lock=True)
            await self._append(conn, row, items)
            return _read(row)

    async def get(self, conversation_id: str, project: str) -> ConversationRead | None:
        """A conversation, or ``None``."""
        async with self.engine.connect() as conn:
            row = await self._row(conn, conversation_id, project)
        return None if row is None else _read(row)

    async def update(self, conversation_id: str, project: str, metadata: dict[str, str]) -> ConversationRead | None:
        """Replace the metadata; returns the conversation, or ``None``."""
        async with self.engine.begin() as conn:
            result = await conn.execute(conversations.update().where(
                conversations.c.id == conversation_id, conversations.c.project == project)
                .values(metadata=_dumps(metadata)))
            if not result.rowcount:
                return None
            return _read(await self._row(conn, conversation_id, project))

    async def delete(self, conversation_id: str, project: str) -> bool:
        """Delete a conversation and its items; ``False`` if there was none."""
        async with self.engine.begin() as conn:
            if await self._row(conn, conversation_id, project) is None:
                return False
            await conn.execute(conversation_items.delete().where(
                conversation_items.c.conversation_id == conversation_id))
            await conn.execute(conversations.delete().where(conversations.c.id == conversation_id))
        return True

    async def append(self, conversation_id: str, project: str, items: Sequence[Item]) -> bool:
        """Append items in order (the row is locked while positions are taken); ``False`` if unknown."""
        async with self.engine.begin() as conn:
            row = await self._row(conn, conversation_id, project, lock=True)
            if row is None:
                return False
            await self._append(conn, row, items)
        return True

    async def all_items(self, conversation_id: str, project: str) -> list[Item] | None:
        """Every item, oldest first; ``None`` if unknown."""
        async with self.engine.connect() as conn:
            if await self._row(conn, conversation_id, project) is None:
                return None
            rows = (await conn.execute(sa.select(conversation_items.c.item).where(
                conversation_items.c.conversation_id == conversation_id)
                .order_by(conversation_items.c.position))).all()
        return [load_item(msgspec.json.decode(r.item)) for r in rows]

    async def page(self, conversation_id: str, project: str, *, after: str | None, limit: int,
                   order: str) -> tuple[list[Item], bool] | None:
        """Up to ``limit`` items after the item ``after`` in ``order``, and whether more follow;
        ``None`` if the conversation is unknown.

        Raises:
            LookupError: ``after`` is not an item of the conversation.
        """
        column = conversation_items.c.position
        mine = conversation_items.c.conversation_id == conversation_id
        async with self.engine.connect() as conn:
            if await self._row(conn, conversation_id, project) is None:
                return None
            query = sa.select(conversation_items.c.item).where(mine)
            if after is not None:
                cursor = (await conn.execute(sa.select(sa.func.max(column)).where(
                    mine, conversation_items.c.item_id == after))).scalar()
                if cursor is None:
                    raise LookupError(after)
                query = query.where(column > cursor if order == "asc" else column < cursor)
            query = query.order_by(column.asc() if order == "asc" else column.desc()).limit(limit + 1)
            rows = (await conn.execute(query)).all()
        return [load_item(msgspec.json.decode(r.item)) for r in rows[:limit]], len(rows) > limit

    async def item(self, conversation_id: str, item_id: str, project: str) -> Item | None:
        """The latest item with this id in the project's conversation, or ``None``."""
        async with self.engine.connect() as conn:
            if await self._row(conn, conversation_id, project) is None:
                return None
            row = (await conn.execute(sa.select(conversation_items.c.item).where(
                conversation_items.c.conversation_id == conversation_id,
                conversation_items.c.item_id == item_id).order_by(conversation_items.c.position.desc()))).first()
        return None if row is None else load_item(msgspec.json.decode(row.item))

    async def delete_item(self, conversation_id: str, item_id: str, project: str) -> tuple[ConversationRead | None, bool]:
        """Delete one item: the conversation (``None`` if unknown) and whether the item existed."""
        async with self.engine.begin() as conn:
            row = await self._row(conn, conversation_id, project)
            if row is None:
                return None, False
            result = await conn.execute(conversation_items.delete().where(
                conversation_items.c.conversation_id == conversation_id, conversation_items.c.item_id == item_id))
        return _read(row), bool(result.rowcount)
