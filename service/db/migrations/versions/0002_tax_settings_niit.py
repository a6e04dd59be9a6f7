"""tax settings: NIIT flag and capital-loss limit

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 15:40:00

``user_tax_settings`` gains the two inputs of ``quantcore.tax.TaxRates`` that the
first migration did not have: ``niit`` (add the 3.8% net investment income tax)
and ``loss_limit`` (net capital loss deductible per year: 3,000, or 1,500 married
filing separately).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import service.db.types

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("user_tax_settings", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("niit", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch_op.add_column(
            sa.Column(
                "loss_limit",
                service.db.types.ExactDecimal(precision=38, scale=8),
                nullable=False,
                server_default="3000",
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("user_tax_settings", schema=None) as batch_op:
        batch_op.drop_column("loss_limit")
        batch_op.drop_column("niit")
