"""transactions.lot_id: the buy whose lot a sell relieves

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23 09:00:00

A sell may name the buy transaction whose tax lot it sells (specific
identification, Treas. Reg. 1.1012-1(c)). The foreign key is ``ON DELETE NO
ACTION``: deleting a buy that a sell names is refused, while deleting the
portfolio (which cascades to both rows in one statement) still works; ``RESTRICT``
would be checked row by row and refuse that too. The index serves the key check
on deletes and the lookups of the sells naming a lot.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("transactions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("lot_id", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            "fk_transactions_lot_id", "transactions", ["lot_id"], ["id"], ondelete="NO ACTION"
        )
        batch_op.create_index(batch_op.f("ix_transactions_lot_id"), ["lot_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("transactions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_transactions_lot_id"))
        batch_op.drop_constraint("fk_transactions_lot_id", type_="foreignkey")
        batch_op.drop_column("lot_id")
