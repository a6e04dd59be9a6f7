"""baseline: the textgen tables as the last release before migrations created them

Revision ID: 0001
Revises:
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

__all__ = ["downgrade", "upgrade"]

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "textgen_api_keys",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("project", sa.String(length=200), server_default="default", nullable=False),
        sa.Column("revoked_at", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("key_hash"),
    )
    op.create_table(
        "textgen_conversation_items",
        sa.Column("conversation_id", sa.String(length=64), nullable=False),
        sa.Column("position", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("item_id", sa.String(length=64), nullable=False),
        sa.Column("item", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("conversation_id", "position"),
    )
    op.create_index(
        "ix_textgen_conversation_items_item_id",
        "textgen_conversation_items",
        ["conversation_id", "item_id"],
        unique=False,
    )
    op.create_table(
        "textgen_conversations",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("project", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("metadata", sa.Text(), nullable=False),
        sa.Column("next_position", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "textgen_files",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("filename", sa.String(length=500), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        sa.Column("purpose", sa.String(length=40), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("project", sa.String(length=200), server_default="default", nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_textgen_files_created_at", "textgen_files", ["created_at"], unique=False)
    op.create_table(
        "textgen_items",
        sa.Column("response_id", sa.String(length=64), nullable=False),
        sa.Column("position", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("item_id", sa.String(length=64), nullable=False),
        sa.Column("project", sa.String(length=200), nullable=False),
        sa.Column("is_output", sa.Boolean(), nullable=False),
        sa.Column("item", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("response_id", "position"),
    )
    op.create_index(
        "ix_textgen_items_project_item_id", "textgen_items", ["project", "item_id"], unique=False
    )
    op.create_table(
        "textgen_prompts",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=True),
        sa.Column("current_version", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("project", sa.String(length=200), server_default="default", nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("project", "name", name="uq_textgen_prompts_project_name"),
    )
    op.create_table(
        "textgen_response_events",
        sa.Column("response_id", sa.String(length=64), nullable=False),
        sa.Column("sequence_number", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("event", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("response_id", "sequence_number"),
    )
    op.create_table(
        "textgen_responses",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("input_items", sa.Text(), server_default="[]", nullable=False),
        sa.Column("project", sa.String(length=200), server_default="default", nullable=False),
        sa.Column("status", sa.String(length=20), server_default="completed", nullable=False),
        sa.Column("previous_id", sa.String(length=64), nullable=True),
        sa.Column("entries", sa.Text(), server_default="[]", nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "textgen_prompt_versions",
        sa.Column("prompt_id", sa.String(length=64), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("template", sa.Text(), nullable=False),
        sa.Column("instructions", sa.Text(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["prompt_id"],
            ["textgen_prompts.id"],
        ),
        sa.PrimaryKeyConstraint("prompt_id", "version"),
    )


def downgrade() -> None:
    op.drop_table("textgen_prompt_versions")
    op.drop_table("textgen_responses")
    op.drop_table("textgen_response_events")
    op.drop_table("textgen_prompts")
    op.drop_index("ix_textgen_items_project_item_id", table_name="textgen_items")
    op.drop_table("textgen_items")
    op.drop_index("ix_textgen_files_created_at", table_name="textgen_files")
    op.drop_table("textgen_files")
    op.drop_table("textgen_conversations")
    op.drop_index("ix_textgen_conversation_items_item_id", table_name="textgen_conversation_items")
    op.drop_table("textgen_conversation_items")
    op.drop_table("textgen_api_keys")
