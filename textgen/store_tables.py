"""The store's tables (one ``MetaData``, prefixed ``textgen_``) and how their JSON columns are written.

The migrations (``textgen/migrations``) create and change these tables; :mod:`textgen.store_schema`
compares the two. JSON documents are stored as text.
"""

from __future__ import annotations

from typing import Any

import msgspec
import sqlalchemy as sa

from textgen.conversation_store import define_tables
from textgen.events import ResponseObject

__all__ = [
    "DEFAULT_PROJECT",
    "VERSION_TABLE",
    "api_keys",
    "conversation_items",
    "conversations",
    "dumps",
    "files",
    "items",
    "load_response",
    "loads",
    "metadata",
    "prompt_versions",
    "prompts",
    "response_events",
    "responses",
]

metadata = sa.MetaData()
VERSION_TABLE = (
    "textgen_alembic_version"  # the migrations' own version table (a database may be shared)
)

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
    sa.Column(
        "input_items", sa.Text, nullable=False, server_default="[]"
    ),  # older releases; now textgen_items
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

conversations, conversation_items = define_tables(metadata)


def dumps(value: Any) -> str:
    """A JSON column's text."""
    return msgspec.json.encode(value).decode()


def loads(text: str) -> Any:
    """A JSON column's value."""
    return msgspec.json.decode(text)


_RESPONSE = msgspec.json.Decoder(ResponseObject)


def load_response(row: Any) -> ResponseObject:
    """A response row's body as the response object; a body of an older release that lacks a field the
    row's columns hold (``id``, ``created_at``, ``status``) takes it from them."""
    try:
        return _RESPONSE.decode(row.body)
    except msgspec.ValidationError:
        body = {"id": row.id, "created_at": row.created_at, "status": row.status, **loads(row.body)}
        return msgspec.convert(body, ResponseObject)
