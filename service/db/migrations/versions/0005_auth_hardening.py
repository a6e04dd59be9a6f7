"""auth hardening: token expiry, API-key scopes, case-insensitive usernames

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 21:30:00

Columns are added with ``op.add_column`` (no table rebuild on SQLite, so the
ledger-version triggers of 0004 on ``users`` survive). The unique index on
``lower(username)`` makes ``Alice`` and ``alice`` one user; it fails if two such
users already exist (merge or rename them first).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from service.db.types import UTCDateTime

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("auth_tokens", sa.Column("expires_at", UTCDateTime(timezone=True), nullable=True))
    op.add_column(
        "api_keys", sa.Column("scopes", sa.String(200), nullable=False, server_default="")
    )
    op.create_index("uq_users_username_lower", "users", [sa.text("lower(username)")], unique=True)


def downgrade() -> None:
    op.drop_index("uq_users_username_lower", table_name="users")
    op.drop_column("api_keys", "scopes")
    op.drop_column("auth_tokens", "expires_at")
