"""ids are never reused on SQLite: every table with an integer id is AUTOINCREMENT

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26 16:00:00

Without ``AUTOINCREMENT`` SQLite gives a new row the largest id in its table plus one,
so deleting the newest portfolio (transaction, report ...) hands its id to the next
one, possibly another user's: an old tax report naming "portfolio 7" would then name a
stranger's portfolio, and a sale's ``lot_id`` another buy. With ``AUTOINCREMENT`` the
largest id ever used is kept in ``sqlite_sequence`` and never handed out again.
PostgreSQL's sequences already never hand out a value twice: nothing changes there.

SQLite can only declare ``AUTOINCREMENT`` when a table is created, so each table is
rebuilt (``batch_alter_table(recreate="always")``) with its rows, ids and indexes.
The rebuild drops and renames tables that others reference; with foreign keys
enforced a ``DROP TABLE`` deletes the rows that reference it (``ON DELETE CASCADE``),
so enforcement is switched off for the rebuild (possible only outside a transaction),
every reference is checked with ``PRAGMA foreign_key_check`` before it is switched back
on. The expression index on ``lower(username)``, which SQLAlchemy cannot reflect, is
created again. Ids deleted before this migration at the top of a table can still be
handed out once (SQLite kept no record of them); none after it.
"""

from __future__ import annotations

import warnings

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

#: Every table whose primary key is an integer ``id`` the database assigns.
TABLES = (
    "users",
    "auth_tokens",
    "api_keys",
    "user_sessions",
    "assets",
    "portfolios",
    "transactions",
    "positions",
    "strategies",
    "backtests",
    "tax_records",
    "tax_reports",
)


def _rebuild(autoincrement: bool) -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return
    op.execute("COMMIT")  # PRAGMA foreign_keys is a no-op inside a transaction
    op.execute("PRAGMA foreign_keys=OFF")
    op.execute("BEGIN IMMEDIATE")
    with warnings.catch_warnings():  # lower(username): re-created below
        warnings.filterwarnings(
            "ignore", "Skipped unsupported reflection of expression-based index"
        )
        for table in TABLES:
            with op.batch_alter_table(
                table,
                recreate="always",
                table_kwargs={"sqlite_autoincrement": autoincrement},
                reflect_kwargs={"resolve_fks": False},
            ):
                pass
    op.execute(
        "CREATE UNIQUE INDEX IF NOT EXISTS uq_users_username_lower ON users (lower(username))"
    )
    broken = bind.execute(sa.text("PRAGMA foreign_key_check")).fetchall()
    if broken:
        raise RuntimeError(f"foreign keys broken by the rebuild: {broken[:5]}")
    op.execute("COMMIT")
    op.execute("PRAGMA foreign_keys=ON")
    op.execute("BEGIN IMMEDIATE")


def upgrade() -> None:
    _rebuild(autoincrement=True)


def downgrade() -> None:
    _rebuild(autoincrement=False)
