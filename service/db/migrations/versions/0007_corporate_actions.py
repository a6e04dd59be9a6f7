"""corporate actions on the ledger: ratio, target, basis allocation, cash

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24 00:05:00

A ledger row may now be a corporate action (``split``, ``stock_dividend``,
``return_of_capital``, ``spin_off``, ``merger``; see :mod:`quantcore.tax.lots`):

- ``ratio``: a split's or stock dividend's share multiplier (``split_ratio``), or new
  shares per old share of a spin-off or merger;
- ``target_asset_id``: the asset a spin-off or merger delivers (a plain integer, no
  foreign key: adding a constraint would rebuild the table on SQLite and drop the
  ledger-version triggers; the service checks the asset exists in the write), indexed:
  every ledger write looks up the assets spin-offs and mergers link to its asset;
- ``basis_allocation``: the fraction of the old basis a spin-off moves to the new shares;
- ``cash``: cash in lieu of fractional shares (split, stock dividend; a total), or cash
  per old share of a merger.

``transaction_type`` grows to 32 characters (``return_of_capital`` is 17) on
PostgreSQL; SQLite does not enforce a VARCHAR length, so it is left alone there and
nothing is rebuilt. Every column is added with ``op.add_column``.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import service.db.types

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_DECIMALS = ("ratio", "basis_allocation", "cash")


def upgrade() -> None:
    for name in _DECIMALS:
        op.add_column(
            "transactions",
            sa.Column(name, service.db.types.ExactDecimal(precision=38, scale=8), nullable=True),
        )
    op.add_column("transactions", sa.Column("target_asset_id", sa.Integer(), nullable=True))
    op.create_index("ix_transactions_target_asset_id", "transactions", ["target_asset_id"])
    if op.get_bind().dialect.name != "sqlite":
        op.alter_column(
            "transactions", "transaction_type", type_=sa.String(32), existing_type=sa.String(16), existing_nullable=False
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        op.alter_column(
            "transactions", "transaction_type", type_=sa.String(16), existing_type=sa.String(32), existing_nullable=False
        )
    op.drop_index("ix_transactions_target_asset_id", table_name="transactions")
    op.drop_column("transactions", "target_asset_id")
    for name in reversed(_DECIMALS):
        op.drop_column("transactions", name)
