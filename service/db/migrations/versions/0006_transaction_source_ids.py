"""transaction source ids: the broker's id of an imported row, unique per portfolio

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 23:55:00

``transactions.source_id`` holds where an imported row came from (an OFX ``FITID``,
or a hash of a CSV row); ``NULL`` for rows typed by hand. The unique index on
``(portfolio_id, source_id)`` makes importing the same statement twice add nothing.
Both SQLite and PostgreSQL let any number of ``NULL`` source ids coexist under it.
The column is added with ``op.add_column`` and the index created apart, so no table
is rebuilt on SQLite.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("transactions", sa.Column("source_id", sa.String(128), nullable=True))
    op.create_index(
        "uq_transactions_portfolio_source",
        "transactions",
        ["portfolio_id", "source_id"],
        unique=True,
    )


def downgrade() -> None:
    op.drop_index("uq_transactions_portfolio_source", table_name="transactions")
    op.drop_column("transactions", "source_id")
