"""Persistence: API keys, stored responses, reusable prompts and file metadata.

SQLAlchemy 2 Core over an async engine: SQLite (``aiosqlite``, WAL mode) by
default, PostgreSQL (``asyncpg``) by URL, so several server instances share
conversation state. The tables are :mod:`textgen.store_tables`, brought to the
current schema by :meth:`Store.create_schema`; every query is the store's, by
concern: responses, their items and events (:mod:`textgen.store_responses`),
leases of running responses (:mod:`textgen.store_leases`), conversations
(:mod:`textgen.conversation_store`), and keys, prompts and files (here).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from textgen.conversation_store import ConversationStore
from textgen.store_leases import Lease, LeaseLost, LeaseQueries, Orphan
from textgen.store_responses import ResponseQueries, StoredResponse
from textgen.store_tables import (
    DEFAULT_PROJECT,
    VERSION_TABLE,
    api_keys,
    dumps,
    files,
    loads,
    metadata,
    prompt_versions,
    prompts,
)

__all__ = [
    "DEFAULT_PROJECT",
    "VERSION_TABLE",
    "Conflict",
    "FileRecord",
    "KeyRecord",
    "Lease",
    "LeaseLost",
    "Orphan",
    "PromptRecord",
    "Store",
    "StoredResponse",
    "hash_key",
    "metadata",
    "new_id",
]


def new_id(prefix: str) -> str:
    """A fresh identifier such as ``resp_<48 hex digits>``."""
    return f"{prefix}{secrets.token_hex(24)}"


def hash_key(key: str) -> str:
    """SHA-256 of an API key; keys are 256-bit random, so no slow hash is needed."""
    return hashlib.sha256(key.encode()).hexdigest()


class Conflict(Exception):
    """A unique constraint refused the write (e.g. a prompt name already taken)."""


@dataclass(frozen=True, slots=True)
class KeyRecord:
    """An API key as listed (never the key itself)."""

    id: str
    name: str
    project: str
    created_at: int
    revoked_at: int | None


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
    project: str = DEFAULT_PROJECT


def _set_sqlite_pragmas(dbapi_connection: Any, _: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


class Store(ResponseQueries, LeaseQueries):
    """Async access to the ``textgen_*`` tables; every read and write is scoped by project.

    The queries of responses (:mod:`textgen.store_responses`), of leases (:mod:`textgen.store_leases`)
    and of conversations (``Store.conversations``) live in their own modules; keys, prompts and files here.

    Args:
        url: SQLAlchemy async URL (``sqlite+aiosqlite:///...`` or ``postgresql+asyncpg://...``).
    """

    def __init__(self, url: str) -> None:
        self.engine: AsyncEngine = create_async_engine(url, pool_pre_ping=True)
        self.conversations = ConversationStore(self.engine)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine.sync_engine, "connect", _set_sqlite_pragmas)

    async def create_schema(self) -> None:
        """Bring the database to the current schema with the Alembic migrations of ``textgen/migrations``
        (a database of a release before migrations is first upgraded the former way, then stamped);
        safe when several instances start at once (see :mod:`textgen.store_schema`)."""
        from textgen.store_schema import create_schema

        await create_schema(self.engine)

    async def dispose(self) -> None:
        """Close pooled connections."""
        await self.engine.dispose()

    # --- API keys -----------------------------------------------------------------
    async def create_key(self, name: str, project: str = DEFAULT_PROJECT) -> tuple[str, str]:
        """Store a new key of ``project`` (hashed); returns its id and the key, the only time it is seen."""
        key, key_id = f"sk-tg-{secrets.token_urlsafe(32)}", new_id("key_")
        async with self.engine.begin() as conn:
            await conn.execute(
                api_keys.insert().values(
                    id=key_id, name=name, key_hash=hash_key(key), created_at=int(time.time()), project=project
                )
            )
        return key_id, key

    async def list_keys(self) -> list[KeyRecord]:
        """Every key, oldest first (revoked ones included)."""
        query = sa.select(api_keys).order_by(api_keys.c.created_at, api_keys.c.id)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [KeyRecord(r.id, r.name, r.project, r.created_at, r.revoked_at) for r in rows]

    async def revoke_key(self, key_id: str) -> bool:
        """Revoke a key; ``False`` if there is no such live key."""
        async with self.engine.begin() as conn:
            result = await conn.execute(
                api_keys.update()
                .where(api_keys.c.id == key_id, api_keys.c.revoked_at.is_(None))
                .values(revoked_at=int(time.time()))
            )
        return bool(result.rowcount)

    async def key_project(self, key_hash: str) -> str | None:
        """The project of the live (not revoked) key with this hash, else ``None``."""
        query = sa.select(api_keys.c.project).where(
            api_keys.c.key_hash == key_hash, api_keys.c.revoked_at.is_(None)
        )
        async with self.engine.connect() as conn:
            return (await conn.execute(query)).scalar()

    # --- prompts ------------------------------------------------------------------
    async def create_prompt(
        self, project: str, name: str | None, template: str | list[dict[str, Any]], instructions: str | None
    ) -> PromptRecord:
        """Create a prompt with version 1.

        Raises:
            Conflict: ``name`` is taken in this project.
        """
        now = int(time.time())
        prompt_id = new_id("pmpt_")
        try:
            async with self.engine.begin() as conn:
                await conn.execute(
                    prompts.insert().values(id=prompt_id, name=name, current_version=1, created_at=now,
                                            project=project)
                )
                await conn.execute(
                    prompt_versions.insert().values(
                        prompt_id=prompt_id, version=1, template=dumps(template),
                        instructions=instructions, created_at=now,
                    )
                )
        except IntegrityError as exc:
            raise Conflict(f"A prompt named {name!r} already exists.") from exc
        return PromptRecord(prompt_id, name, 1, 1, template, instructions, now)

    async def add_prompt_version(
        self, project: str, prompt_id: str, template: str | list[dict[str, Any]], instructions: str | None
    ) -> PromptRecord | None:
        """Append a version and make it current; ``None`` if the project has no such prompt.

        Raises:
            Conflict: Another writer added the same version number first.
        """
        now = int(time.time())
        try:
            async with self.engine.begin() as conn:
                row = (
                    await conn.execute(
                        sa.select(prompts.c.name, prompts.c.current_version)
                        .where(prompts.c.id == prompt_id, prompts.c.project == project)
                        .with_for_update()
                    )
                ).first()
                if row is None:
                    return None
                version = row.current_version + 1
                await conn.execute(
                    prompt_versions.insert().values(
                        prompt_id=prompt_id, version=version, template=dumps(template),
                        instructions=instructions, created_at=now,
                    )
                )
                await conn.execute(
                    prompts.update().where(prompts.c.id == prompt_id).values(current_version=version)
                )
        except IntegrityError as exc:
            raise Conflict("The prompt was changed concurrently; retry.") from exc
        return PromptRecord(prompt_id, row.name, version, version, template, instructions, now)

    async def get_prompt(self, project: str, prompt_id: str, version: int | None = None) -> PromptRecord | None:
        """A version of a project's prompt (the current one when ``version`` is ``None``)."""
        query = sa.select(
            prompts.c.id, prompts.c.name, prompts.c.current_version, prompt_versions.c.version,
            prompt_versions.c.template, prompt_versions.c.instructions, prompt_versions.c.created_at,
        ).join(prompt_versions, prompt_versions.c.prompt_id == prompts.c.id).where(
            prompts.c.id == prompt_id, prompts.c.project == project)
        if version is None:
            query = query.where(prompt_versions.c.version == prompts.c.current_version)
        else:
            query = query.where(prompt_versions.c.version == version)
        async with self.engine.connect() as conn:
            row = (await conn.execute(query)).first()
        if row is None:
            return None
        return PromptRecord(
            row.id, row.name, row.version, row.current_version, loads(row.template), row.instructions,
            row.created_at,
        )

    async def list_prompts(self, project: str) -> list[PromptRecord]:
        """Every prompt of a project at its current version, newest first."""
        query = (
            sa.select(
                prompts.c.id, prompts.c.name, prompts.c.current_version, prompt_versions.c.template,
                prompt_versions.c.instructions, prompt_versions.c.created_at,
            )
            .join(prompt_versions, prompt_versions.c.prompt_id == prompts.c.id)
            .where(prompt_versions.c.version == prompts.c.current_version, prompts.c.project == project)
            .order_by(prompts.c.created_at.desc(), prompts.c.id)
        )
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [
            PromptRecord(r.id, r.name, r.current_version, r.current_version, loads(r.template),
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
                    purpose=record.purpose, created_at=record.created_at, project=record.project,
                )
            )

    async def get_file(self, file_id: str, project: str) -> FileRecord | None:
        """A project's file metadata, or ``None``."""
        query = sa.select(files).where(files.c.id == file_id, files.c.project == project)
        async with self.engine.connect() as conn:
            row = (await conn.execute(query)).first()
        return None if row is None else FileRecord(row.id, row.filename, row.bytes, row.purpose, row.created_at,
                                                   row.project)

    async def list_files(self, project: str, purpose: str | None = None) -> list[FileRecord]:
        """A project's files (optionally of one purpose), newest first."""
        query = sa.select(files).where(files.c.project == project).order_by(files.c.created_at.desc(), files.c.id)
        if purpose is not None:
            query = query.where(files.c.purpose == purpose)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [FileRecord(r.id, r.filename, r.bytes, r.purpose, r.created_at, r.project) for r in rows]

    async def delete_file(self, file_id: str, project: str) -> bool:
        """Delete a project's file metadata; ``False`` if there was none."""
        async with self.engine.begin() as conn:
            result = await conn.execute(files.delete().where(files.c.id == file_id, files.c.project == project))
        return bool(result.rowcount)
