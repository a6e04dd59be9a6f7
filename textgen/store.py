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
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from textgen.conversation_store import ConversationStore, define_tables

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

metadata = sa.MetaData()
VERSION_TABLE = "textgen_alembic_version"  # the migrations' own version table (a database may be shared)

DEFAULT_PROJECT = "default"

api_keys = sa.Table(
    "textgen_api_keys",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("project", sa.String(200), nullable=False, server_default=DEFAULT_PROJECT),
    sa.Column("revoked_at", sa.BigInteger, nullable=True),
)

# One row per response, written when it is created. ``entries`` holds this turn's
# context entries only (its input and output); the history of a turn is the chain
# of ``previous_id`` links, so a long conversation is stored once, not once per turn.
responses = sa.Table(
    "textgen_responses",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("input_items", sa.Text, nullable=False, server_default="[]"),  # older releases; now textgen_items
    sa.Column("project", sa.String(200), nullable=False, server_default=DEFAULT_PROJECT),
    sa.Column("status", sa.String(20), nullable=False, server_default="completed"),
    sa.Column("previous_id", sa.String(64), nullable=True),
    sa.Column("entries", sa.Text, nullable=False, server_default="[]"),
    # Durable work: a background response's request (to resume it after a restart) and the lease of the
    # instance generating a queued or in-progress response (renewed while it runs; expired: taken over).
    sa.Column("job", sa.Text, nullable=True),
    sa.Column("lease_owner", sa.String(64), nullable=True),
    sa.Column("lease_expires", sa.Float, nullable=True),
)

# Every input and output item of stored responses, so an ``item_reference`` can name any of them.
items = sa.Table(
    "textgen_items",
    metadata,
    sa.Column("response_id", sa.String(64), primary_key=True),
    sa.Column("position", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("item_id", sa.String(64), nullable=False),
    sa.Column("project", sa.String(200), nullable=False),
    sa.Column("is_output", sa.Boolean, nullable=False),
    sa.Column("item", sa.Text, nullable=False),
    sa.Index("ix_textgen_items_project_item_id", "project", "item_id"),
)

# The streaming events of stored responses, for ``GET ?stream=true&starting_after=N``.
response_events = sa.Table(
    "textgen_response_events",
    metadata,
    sa.Column("response_id", sa.String(64), primary_key=True),
    sa.Column("sequence_number", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("event", sa.Text, nullable=False),
)

prompts = sa.Table(
    "textgen_prompts",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("name", sa.String(200), nullable=True),
    sa.Column("current_version", sa.Integer, nullable=False),
    sa.Column("created_at", sa.BigInteger, nullable=False),
    sa.Column("project", sa.String(200), nullable=False, server_default=DEFAULT_PROJECT),
    sa.UniqueConstraint("project", "name", name="uq_textgen_prompts_project_name"),
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
    sa.Column("project", sa.String(200), nullable=False, server_default=DEFAULT_PROJECT),
    sa.Index("ix_textgen_files_created_at", "created_at"),
)


_UNSETTLED = ("queued", "in_progress")


@dataclass(frozen=True, slots=True)
class Lease:
    """An instance's claim on a running response, valid until ``expires`` (Unix seconds)."""

    owner: str
    expires: float


@dataclass(frozen=True, slots=True)
class Orphan:
    """An unsettled response whose lease this instance just took: its row's body and job."""

    id: str
    project: str
    body: dict[str, Any]
    job: dict[str, Any] | None


conversations, conversation_items = define_tables(metadata)


def new_id(prefix: str) -> str:
    """A fresh identifier such as ``resp_<48 hex digits>``."""
    return f"{prefix}{secrets.token_hex(24)}"


def hash_key(key: str) -> str:
    """SHA-256 of an API key; keys are 256-bit random, so no slow hash is needed."""
    return hashlib.sha256(key.encode()).hexdigest()


class LeaseLost(Exception):
    """Another instance holds the response's lease now: this one must stop writing it."""


async def _fence(conn: Any, response_id: str, owner: str) -> None:
    """Within ``conn``'s transaction: raise :class:`LeaseLost` unless ``owner`` holds the lease (the
    no-op update locks the row, so a takeover waits for this transaction or comes before it)."""
    held = await conn.execute(responses.update()
                              .where(responses.c.id == response_id, responses.c.lease_owner == owner)
                              .values(lease_owner=owner))
    if not held.rowcount:
        raise LeaseLost(response_id)


class Conflict(Exception):
    """A unique constraint refused the write (e.g. a prompt name already taken)."""


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """A stored response: the wire object, this turn's input items and context entries."""

    body: dict[str, Any]
    input_items: list[dict[str, Any]]
    entries: list[dict[str, Any]]
    status: str
    previous_id: str | None


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


_OUTPUT_POSITION = 1_000_000  # output items sort after every input item of their response


async def _add_items(conn: Any, response_id: str, project: str, values: Sequence[dict[str, Any]], start: int,
                     *, is_output: bool) -> None:
    rows = [{"response_id": response_id, "position": start + i, "item_id": item.get("id") or "",
             "project": project, "is_output": is_output, "item": _dumps(item)} for i, item in enumerate(values)]
    if rows:
        await conn.execute(items.insert(), rows)


class Store:
    """Async access to the ``textgen_*`` tables; every read and write is scoped by project.

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

    # --- responses ----------------------------------------------------------------
    async def create_response(
        self, project: str, body: dict[str, Any], input_items: Sequence[dict[str, Any]],
        previous_id: str | None, *, job: dict[str, Any] | None = None, lease: Lease | None = None,
    ) -> None:
        """Insert a response when it is created (status ``queued`` or ``in_progress``) and its input items.

        ``job`` is what resuming it needs (background responses); ``lease`` names the generating instance.
        """
        async with self.engine.begin() as conn:
            await conn.execute(
                responses.insert().values(
                    id=body["id"], project=project, created_at=int(body["created_at"]), body=_dumps(body),
                    status=body["status"], previous_id=previous_id, entries="[]", input_items="[]",
                    job=None if job is None else _dumps(job),
                    lease_owner=None if lease is None else lease.owner,
                    lease_expires=None if lease is None else lease.expires,
                )
            )
            await _add_items(conn, body["id"], project, input_items, 0, is_output=False)

    async def settle_response(
        self, body: dict[str, Any], entries: Sequence[dict[str, Any]] | None = None,
        *, only_from: Sequence[str] = ("queued", "in_progress"), owner: str | None = None,
    ) -> bool:
        """Move a response to ``body["status"]`` unless it already left ``only_from`` (or, with ``owner``,
        unless another instance holds its lease).

        Returns:
            Whether the row changed (``False`` if, e.g., it was cancelled meanwhile).
        """
        values: dict[str, Any] = {"body": _dumps(body), "status": body["status"]}
        if entries is not None:
            values["entries"] = _dumps(list(entries))
        async with self.engine.begin() as conn:
            fenced = [responses.c.lease_owner == owner] if owner is not None else []
            result = await conn.execute(
                responses.update()
                .where(responses.c.id == body["id"], responses.c.status.in_(list(only_from)), *fenced)
                .values(**values)
                .returning(responses.c.project)
            )
            project = result.scalar()
            if project is not None and body.get("output") and body["status"] != "in_progress":
                await _add_items(conn, body["id"], project, body["output"], _OUTPUT_POSITION, is_output=True)
        return project is not None

    async def get_response(self, response_id: str, project: str) -> StoredResponse | None:
        """A stored response of ``project``, or ``None``."""
        query = sa.select(responses).where(responses.c.id == response_id, responses.c.project == project)
        inputs = (sa.select(items.c.item)
                  .where(items.c.response_id == response_id, items.c.is_output.is_(False))
                  .order_by(items.c.position))
        async with self.engine.connect() as conn:
            row = (await conn.execute(query)).first()
            if row is None:
                return None
            # rows of an older release kept their input items in the response row itself
            input_items = [_loads(r.item) for r in (await conn.execute(inputs)).all()] or _loads(row.input_items)
        return StoredResponse(_loads(row.body), input_items, _loads(row.entries), row.status, row.previous_id)

    async def find_item(self, item_id: str, project: str) -> dict[str, Any] | None:
        """The latest stored input or output item of ``project`` with this id (for ``item_reference``)."""
        query = (sa.select(items.c.item).join(responses, responses.c.id == items.c.response_id)
                 .where(items.c.item_id == item_id, items.c.project == project)
                 .order_by(responses.c.created_at.desc(), items.c.is_output.desc()).limit(1))
        async with self.engine.connect() as conn:
            row = (await conn.execute(query)).first()
        return None if row is None else dict(_loads(row.item))

    async def response_status(self, response_id: str) -> str | None:
        """The status column alone (polled by a running generation to notice a cancel)."""
        async with self.engine.connect() as conn:
            return (await conn.execute(
                sa.select(responses.c.status).where(responses.c.id == response_id)
            )).scalar()

    # --- leases of running responses ---------------------------------------------------
    async def renew_lease(self, response_id: str, lease: Lease) -> bool:
        """Extend the lease of a queued or in-progress response this owner holds; ``False`` if it lost it
        (taken over after it expired), or the response was cancelled, settled or deleted."""
        async with self.engine.begin() as conn:
            result = await conn.execute(
                responses.update()
                .where(responses.c.id == response_id, responses.c.lease_owner == lease.owner,
                       responses.c.status.in_(_UNSETTLED))
                .values(lease_expires=lease.expires)
            )
        return bool(result.rowcount)

    async def release_lease(self, response_id: str, owner: str) -> None:
        """Hand an unsettled response back: any instance may take it at once."""
        async with self.engine.begin() as conn:
            await conn.execute(
                responses.update()
                .where(responses.c.id == response_id, responses.c.lease_owner == owner)
                .values(lease_owner=None, lease_expires=None)
            )

    async def claim_orphan(self, lease: Lease, now: float) -> Orphan | None:
        """Take the lease of one queued or in-progress response nobody holds (released, expired, or
        written by a release without leases), oldest first; ``None`` when there is none.

        A compare-and-set on the lease columns, so of several instances exactly one wins each response.
        """
        free = sa.or_(responses.c.lease_expires.is_(None), responses.c.lease_expires < now)
        candidates = (sa.select(responses.c.id).where(responses.c.status.in_(_UNSETTLED), free)
                      .order_by(responses.c.created_at, responses.c.id).limit(8))
        async with self.engine.connect() as conn:
            ids = [r.id for r in (await conn.execute(candidates)).all()]
        for response_id in ids:
            async with self.engine.begin() as conn:
                won = await conn.execute(
                    responses.update()
                    .where(responses.c.id == response_id, responses.c.status.in_(_UNSETTLED), free)
                    .values(lease_owner=lease.owner, lease_expires=lease.expires)
                )
                if not won.rowcount:
                    continue
                row = (await conn.execute(sa.select(responses).where(responses.c.id == response_id))).one()
            return Orphan(row.id, row.project, _loads(row.body), None if row.job is None else _loads(row.job))
        return None

    async def history(self, response_id: str, project: str) -> list[dict[str, Any]] | None:
        """The context entries of a response's whole chain, oldest turn first; ``None`` if unknown.

        One recursive query walks the ``previous_id`` links within ``project``.
        """
        chain = (
            sa.select(responses.c.id, responses.c.previous_id, responses.c.entries,
                      sa.literal(0).label("depth"))
            .where(responses.c.id == response_id, responses.c.project == project)
            .cte("chain", recursive=True)
        )
        step = sa.select(responses.c.id, responses.c.previous_id, responses.c.entries,
                         (chain.c.depth + 1).label("depth")).join(
            chain, responses.c.id == chain.c.previous_id).where(responses.c.project == project)
        chain = chain.union_all(step)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(sa.select(chain.c.entries).order_by(chain.c.depth.desc()))).all()
        if not rows:
            return None
        return [entry for row in rows for entry in _loads(row.entries)]

    async def delete_response(self, response_id: str, project: str) -> bool:
        """Delete a response and its events; ``False`` if there was none."""
        async with self.engine.begin() as conn:
            result = await conn.execute(
                responses.delete().where(responses.c.id == response_id, responses.c.project == project)
            )
            if result.rowcount:
                await conn.execute(response_events.delete().where(response_events.c.response_id == response_id))
                await conn.execute(items.delete().where(items.c.response_id == response_id))
        return bool(result.rowcount)

    async def cancel_response(self, response_id: str, project: str) -> StoredResponse | None:
        """Mark a queued or running response ``cancelled``; returns it as it now is (``None`` if unknown)."""
        async with self.engine.begin() as conn:
            await conn.execute(
                responses.update()
                .where(responses.c.id == response_id, responses.c.project == project,
                       responses.c.status.in_(["queued", "in_progress"]))
                .values(status="cancelled")
            )
        return await self.get_response(response_id, project)

    async def add_events(self, response_id: str, events: Sequence[dict[str, Any]], owner: str | None = None) -> None:
        """Append streaming events (each carries its ``sequence_number``).

        Raises:
            LeaseLost: ``owner`` is given and no longer holds the response's lease (nothing is written).
        """
        if not events:
            return
        async with self.engine.begin() as conn:
            if owner is not None:
                await _fence(conn, response_id, owner)
            await conn.execute(response_events.insert(), [
                {"response_id": response_id, "sequence_number": e["sequence_number"], "event": _dumps(e)}
                for e in events
            ])

    async def events_after(self, response_id: str, after: int) -> list[dict[str, Any]]:
        """Stored events with ``sequence_number > after``, in order."""
        query = (
            sa.select(response_events.c.event)
            .where(response_events.c.response_id == response_id, response_events.c.sequence_number > after)
            .order_by(response_events.c.sequence_number)
        )
        async with self.engine.connect() as conn:
            return [_loads(r.event) for r in (await conn.execute(query)).all()]

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
                        prompt_id=prompt_id, version=1, template=_dumps(template),
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
            row.id, row.name, row.version, row.current_version, _loads(row.template), row.instructions,
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
