"""cash rows, currencies and the cash policy

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24 09:00:00

- ``transactions.asset_id`` becomes nullable: a cash row (``deposit``, ``withdrawal``,
  ``interest``, ``fee``) has no asset. ``transactions.currency`` is the currency of a
  cash row (NULL on a security row, whose cash moves in its asset's currency).
- ``assets.currency``: the ISO 4217 code an asset is quoted and traded in (``USD``
  for every existing row).
- ``portfolios.base_currency`` (``USD``) and ``portfolios.cash_policy`` (``track``:
  cash may go negative; ``strict``: a write that would make it negative is refused).

On SQLite the nullable change rebuilds ``transactions`` (``batch_alter_table``);
since 0008 no trigger lives on it, so nothing is lost.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("assets", sa.Column("currency", sa.String(3), nullable=False, server_default="USD"))
    op.add_column(
        "portfolios", sa.Column("base_currency", sa.String(3), nullable=False, server_default="USD")
    )
    op.add_column(
        "portfolios", sa.Column("cash_policy", sa.String(8), nullable=False, server_default="track")
    )
    op.add_column("transactions", sa.Column("currency", sa.String(3), nullable=True))
    with op.batch_alter_table("transactions", reflect_kwargs={"resolve_fks": False}) as batch:
        batch.alter_column("asset_id", existing_type=sa.Integer(), nullable=True)


def downgrade() -> None:
    op.execute("DELETE FROM transactions WHERE asset_id IS NULL")
    with op.batch_alter_table("transactions", reflect_kwargs={"resolve_fks": False}) as batch:
        batch.alter_column("asset_id", existing_type=sa.Integer(), nullable=False)
    op.drop_column("transactions", "currency")
    op.drop_column("portfolios", "cash_policy")
    op.drop_column("portfolios", "base_currency")
    op.drop_column("assets", "currency")
