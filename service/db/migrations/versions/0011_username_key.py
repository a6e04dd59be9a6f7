"""usernames compared in full Unicode: ``users.username_key`` (NFKC, case-folded) is unique

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-29 09:00:00

0005's unique index on ``lower(username)`` made ``Alice`` and ``alice`` one user, but
SQLite's ``lower`` folds ASCII letters only: ``Élise`` and ``élise`` were two users,
and since the service looks a name up by Python's (full Unicode) lower case, ``Élise``
could not sign in on SQLite at all. The key the service compares is now a column,
``service.db.models.username_key`` of the username (NFKC, trimmed, case-folded),
filled here for every user and unique; the ``lower(username)`` index goes.

Two existing users with one key (possible on SQLite) stop the upgrade, as 0005 did
for ``Alice`` and ``alice``: rename or merge them first. The column is added with
``ADD COLUMN`` (no table rebuild: ``users`` is referenced by every user-owned table).
"""

from __future__ import annotations

from collections import defaultdict

import sqlalchemy as sa
from alembic import op

from service.db.models import username_key

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "users", sa.Column("username_key", sa.String(600), nullable=False, server_default="")
    )
    bind = op.get_bind()
    by_key: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for uid, name in bind.execute(sa.text("SELECT id, username FROM users ORDER BY id")):
        by_key[username_key(name)].append((uid, name))
    twins = [[name for _, name in users] for users in by_key.values() if len(users) > 1]
    if twins:
        raise RuntimeError(
            f"users whose names differ only in Unicode form or case: {twins[:10]}; "
            "rename or merge them, then upgrade again"
        )
    update = sa.text("UPDATE users SET username_key = :key WHERE id = :id")
    for key, [(uid, _)] in by_key.items():
        bind.execute(update, {"key": key, "id": uid})
    op.create_index("uq_users_username_key", "users", ["username_key"], unique=True)
    op.drop_index("uq_users_username_lower", table_name="users")


def downgrade() -> None:
    op.create_index("uq_users_username_lower", "users", [sa.text("lower(username)")], unique=True)
    op.drop_index("uq_users_username_key", table_name="users")
    op.drop_column("users", "username_key")
