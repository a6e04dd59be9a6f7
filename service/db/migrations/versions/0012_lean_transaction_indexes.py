"""cheaper inserts of transactions: partial lot and target indexes, source ids compared bytewise

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-29 16:00:00

An import inserts up to hundreds of thousands of rows in one statement, and each row
costs every index of ``transactions``. Most rows name no lot and no target asset, so
``ix_transactions_lot_id`` and ``ix_transactions_target_asset_id`` become partial
(``WHERE ... IS NOT NULL``): the NULLs are no longer indexed. Every lookup through
them is ``lot_id = x`` (the sells naming a buy, the key check when a buy is deleted)
or ``target_asset_id = x``, which implies ``IS NOT NULL``: both databases still use
them.

On PostgreSQL, ``source_id`` takes the ``"C"`` collation: the unique index on
``(portfolio_id, source_id)`` then compares bytes instead of calling the locale's
``strcoll`` for each comparison. A source id is an opaque key: only its equality
matters, and equality is the same under both collations. SQLite compares bytes
already (``BINARY``).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

_PARTIAL = {"ix_transactions_lot_id": "lot_id", "ix_transactions_target_asset_id": "target_asset_id"}


def _source_id_collation(collation: str) -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f'ALTER TABLE transactions ALTER COLUMN source_id TYPE varchar(128) COLLATE "{collation}"')


def upgrade() -> None:
    for name, column in _PARTIAL.items():
        where = sa.text(f"{column} IS NOT NULL")
        op.drop_index(name, table_name="transactions")
        op.create_index(name, "transactions", [column], sqlite_where=where, postgresql_where=where)
    _source_id_collation("C")


def downgrade() -> None:
    _source_id_collation("default")
    for name, column in _PARTIAL.items():
        op.drop_index(name, table_name="transactions")
        op.create_index(name, "transactions", [column])
