"""durable background work: a response's job and the lease of the instance generating it

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

__all__ = ["downgrade", "upgrade"]

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("textgen_responses") as batch:
        batch.add_column(sa.Column("job", sa.Text(), nullable=True))
        batch.add_column(sa.Column("lease_owner", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("lease_expires", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("textgen_responses") as batch:
        batch.drop_column("lease_expires")
        batch.drop_column("lease_owner")
        batch.drop_column("job")
