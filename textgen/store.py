"""Persistence: API keys, stored responses, reusable prompts and file metadata.

SQLAlchemy 2 Core over an async engine: SQLite (``aiosqlite``, WAL mode) by
default, PostgreSQL (``asyncpg``) by URL, so several server instances share
conversation state. Tables are prefixed ``textgen_`` and created idempotently
by :meth:`Store.create_schema` at startup. JSON documents are stored as text.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

__all__ = [
    "Conflict",
    "FileRecord",
    "PromptRecord",
    "Store",
    "StoredResponse",
    "hash_key",
    "metadata",
    "new_id",
]

metadata = sa.MetaData()

api_keys = sa.Table(
    "textgen_api_keys",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
)

responses = sa.Table(
    "textgen_responses",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("input_items", sa.Text, nullable=False),
    sa.Column("conversation", sa.Text, nullable=False),
)

prompts = sa.Table(
    "textgen_prompts",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("name", sa.String(200), nullable=True, unique=True),
    sa.Column("current_version", sa.Integer, nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
)

prompt_versions = sa.Table(
    "textgen_prompt_versions",
    metadata,
    sa.Column("prompt_id", sa.String(64), sa.ForeignKey("textgen_prompts.id"), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("template", sa.Text, nullable=False),
    sa.Column("instructions", sa.Text, nullable=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
)

files = sa.Table(
    "textgen_files",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("filename", sa.String(500), nullable=False),
    sa.Column("bytes", sa.BigInteger, nullable=False),
    sa.Column("purpose", sa.String(40), nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Index("ix_textgen_files_created_at", "created_at"),
)


def new_id(prefix: str) -> str:
    """A fresh identifier such as ``resp_<48 hex digits>``."""
    return f"{prefix}{secrets.token_hex(24)}"


def hash_key(key: str) -> str:
    """SHA-256 of an API key; keys are 256-bit random, so no slow hash is needed."""
    return hashlib.sha256(key.encode()).hexdigest()


class Conflict(Exception):
    """A unique constraint refused the write (e.g. a prompt name already taken)."""


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """A stored response: the wire object, this turn's input items, the whole conversation."""

    body: dict[str, Any]
    input_items: list[dict[str, Any]]
    conversation: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class PromptRecord:
    """One version of a reusable prompt."""

    id: str
    name: str | None
    version: int
    current_version: int
    template: str | list[dict[str, Any]]
    instructions: str | None
    created_at: int


@dataclass(frozen=True, slots=True)
class FileRecord:
    """Metadata of an uploaded file (its bytes live under the data dir)."""

    id: str
    filename: str
    bytes: int
    purpose: str
    created_at: int


def _dumps(value: Any) -> str:
    return msgspec.json.encode(value).decode()


def _loads(text: str) -> Any:
    return msgspec.json.decode(text)


def _set_sqlite_pragmas(dbapi_connection: Any, _: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


class Store:
    """Async access to the ``textgen_*`` tables.

    Args:
        url: SQLAlchemy async URL (``sqlite+aiosqlite:///...`` or ``postgresql+asyncpg://...``).
    """

    def __init__(self, url: str) -> None:
        self.engine: AsyncEngine = create_async_engine(url, pool_pre_ping=True)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine.sync_engine, "connect", _set_sqlite_pragmas)

    async def create_schema(self) -> None:
        """Create missing tables; safe when several instances start at once."""
        for attempt in range(3):
            try:
                async with self.engine.begin() as conn:
                    await conn.run_sync(metadata.create_all, checkfirst=True)
                return
            except (IntegrityError, ProgrammingError, OperationalError):
                if attempt == 2:  # another instance kept racing us: give up loudly
                    raise

    async def dispose(self) -> None:
        """Close pooled connections."""
        await self.engine.dispose()

    # --- API keys -----------------------------------------------------------------
    async def create_key(self, name: str) -> str:
        """Store a new key for ``name`` (hashed) and return it: the only time it is seen."""
        key = f"sk-tg-{secrets.token_urlsafe(32)}"
        async with self.engine.begin() as conn:
            await conn.execute(
                api_keys.insert().values(
                    id=new_id("key_"), name=name, key_hash=hash_key(key), created_at=int(time.time())
                )
            )
        return key

    async def key_exists(self, key_hash: str) -> bool:
        """Whether a stored key has this hash."""
        async with self.engine.connect() as conn:
            row = await conn.execute(sa.select(api_keys.c.id).where(api_keys.c.key_hash == key_hash))
            return row.first() is not None

    # --- responses ----------------------------------------------------------------
    async def save_response(
        self, body: dict[str, Any], input_items: Sequence[dict[str, Any]], conversation: Sequence[dict[str, Any]]
    ) -> None:
        """Insert a finished response."""
        async with self.engine.begin() as conn:
            await conn.execute(
                responses.insert().values(
                    id=body["id"],
                    created_at=int(body["created_at"]),
                    body=_dumps(body),
                    input_items=_dumps(list(input_items)),
                    conversation=_dumps(list(conversation)),
                )
            )

    async def get_response(self, response_id: str) -> StoredResponse | None:
        """A stored response, or ``None``."""
        async with self.engine.connect() as conn:
            row = (await conn.execute(sa.select(responses).where(responses.c.id == response_id))).first()
        if row is None:
            return None
        return StoredResponse(_loads(row.body), _loads(row.input_items), _loads(row.conversation))

    async def delete_response(self, response_id: str) -> bool:
        """Delete a response; ``False`` if there was none."""
        async with self.engine.begin() as conn:
            result = await conn.execute(responses.delete().where(responses.c.id == response_id))
        return bool(result.rowcount)

    # --- prompts ------------------------------------------------------------------
    async def create_prompt(
        self, name: str | None, template: str | list[dict[str, Any]], instructions: str | None
    ) -> PromptRecord:
        """Create a prompt with version 1.

        Raises:
            Conflict: ``name`` is taken.
        """
        now = int(time.time())
        prompt_id = new_id("pmpt_")
        try:
            async with self.engine.begin() as conn:
                await conn.execute(
                    prompts.insert().values(id=prompt_id, name=name, current_version=1, created_at=now)
                )
                await conn.execute(
                    prompt_versions.insert().values(
                        prompt_id=prompt_id, version=1, template=_dumps(template),
                        instructions=instructions, created_at=now,
                    )
                )
        except IntegrityError as exc:
            raise Conflict(f"A prompt named {name!r} already exists.") from exc
        return PromptRecord(prompt_id, name, 1, 1, template, instructions, now)

    async def add_prompt_version(
        self, prompt_id: str, template: str | list[dict[str, Any]], instructions: str | None
    ) -> PromptRecord | None:
        """Append a version and make it current; ``None`` if the prompt does not exist.

        Raises:
            Conflict: Another writer added the same version number first.
        """
        now = int(time.time())
        try:
            async with self.engine.begin() as conn:
                row = (
                    await conn.execute(
                        sa.select(prompts.c.name, prompts.c.current_version)
                        .where(prompts.c.id == prompt_id)
                        .with_for_update()
                    )
                ).first()
                if row is None:
                    return None
                version = row.current_version + 1
                await conn.execute(
                    prompt_versions.insert().values(
                        prompt_id=prompt_id, version=version, template=_dumps(template),
                        instructions=instructions, created_at=now,
                    )
                )
                await conn.execute(
                    prompts.update().where(prompts.c.id == prompt_id).values(current_version=version)
                )
        except IntegrityError as exc:
            raise Conflict("The prompt was changed concurrently; retry.") from exc
        return PromptRecord(prompt_id, row.name, version, version, template, instructions, now)

    async def get_prompt(self, prompt_id: str, version: int | None = None) -> PromptRecord | None:
        """A version of a prompt (the current one when ``version`` is ``None``)."""
        query = sa.select(
            prompts.c.id, prompts.c.name, prompts.c.current_version, prompt_versions.c.version,
            prompt_versions.c.template, prompt_versions.c.instructions, prompt_versions.c.created_at,
        ).join(prompt_versions, prompt_versions.c.prompt_id == prompts.c.id).where(prompts.c.id == prompt_id)
        if version is None:
            query = query.where(prompt_versions.c.version == prompts.c.current_version)
        else:
            query = query.where(prompt_versions.c.version == version)
        async with self.engine.connect() as conn:
            row = (await conn.execute(query)).first()
        if row is None:
            return None
        return PromptRecord(
            row.id, row.name, row.version, row.current_version, _loads(row.template), row.instructions,
            row.created_at,
        )

    async def list_prompts(self) -> list[PromptRecord]:
        """Every prompt at its current version, newest first."""
        query = (
            sa.select(
                prompts.c.id, prompts.c.name, prompts.c.current_version, prompt_versions.c.template,
                prompt_versions.c.instructions, prompt_versions.c.created_at,
            )
            .join(prompt_versions, prompt_versions.c.prompt_id == prompts.c.id)
            .where(prompt_versions.c.version == prompts.c.current_version)
            .order_by(prompts.c.created_at.desc(), prompts.c.id)
        )
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [
            PromptRecord(r.id, r.name, r.current_version, r.current_version, _loads(r.template),
                         r.instructions, r.created_at)
            for r in rows
        ]

    # --- files --------------------------------------------------------------------
    async def add_file(self, record: FileRecord) -> None:
        """Insert file metadata."""
        async with self.engine.begin() as conn:
            await conn.execute(
                files.insert().values(
                    id=record.id, filename=record.filename, bytes=record.bytes,
                    purpose=record.purpose, created_at=record.created_at,
                )
            )

    async def get_file(self, file_id: str) -> FileRecord | None:
        """File metadata, or ``None``."""
        async with self.engine.connect() as conn:
            row = (await conn.execute(sa.select(files).where(files.c.id == file_id))).first()
        return None if row is None else FileRecord(row.id, row.filename, row.bytes, row.purpose, row.created_at)

    async def list_files(self, purpose: str | None = None) -> list[FileRecord]:
        """All files (optionally of one purpose), newest first."""
        query = sa.select(files).order_by(files.c.created_at.desc(), files.c.id)
        if purpose is not None:
            query = query.where(files.c.purpose == purpose)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [FileRecord(r.id, r.filename, r.bytes, r.purpose, r.created_at) for r in rows]

    async def delete_file(self, file_id: str) -> bool:
        """Delete file metadata; ``False`` if there was none."""
        async with self.engine.begin() as conn:
            result = await conn.execute(files.delete().where(files.c.id == file_id))
        return bool(result.rowcount)
