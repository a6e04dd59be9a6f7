"""ledger versions without triggers: the application bumps them in its one write lock

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24 00:00:00

Migration 0004 made database triggers bump ``ledger_versions`` on every portfolio or
position write. A SQLite table rebuild (``batch_alter_table``) drops a table's
triggers silently, so the per-user read models could go stale after any later
migration. The rule is now the application's: every write of a user's portfolios,
transactions or positions calls :func:`service.portfolios.derive.lock_user_ledger`
in its transaction, which upserts the row with ``version + 1`` (and on PostgreSQL
holds its lock until commit). This drops the triggers and their functions; a user
without a row simply has no cached read model until their first write.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

_SQLITE_TRIGGERS = (
    "qc_users_ledger_version",
    "qc_portfolios_insert_version",
    "qc_portfolios_update_version",
    "qc_portfolios_delete_version",
    "qc_positions_insert_version",
    "qc_positions_update_version",
    "qc_positions_delete_version",
)
_POSTGRES_TRIGGERS = (
    ("qc_users_ledger_version", "users"),
    ("qc_portfolios_ledger_version", "portfolios"),
    ("qc_positions_ledger_version", "positions"),
)
_POSTGRES_FUNCTIONS = ("qc_bump_ledger_version()", "qc_new_user_ledger_version()")


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for name, table in _POSTGRES_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name} ON {table}")
        for function in _POSTGRES_FUNCTIONS:
            op.execute(f"DROP FUNCTION IF EXISTS {function}")
    else:
        for name in _SQLITE_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")


def _revision_0004() -> ModuleType:
    path = next(Path(__file__).parent.glob("0004_*.py"))
    spec = importlib.util.spec_from_file_location("qc_migration_0004", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def downgrade() -> None:
    """Create the triggers of 0004 again (as 0004 defines them)."""
    m = _revision_0004()
    if op.get_bind().dialect.name == "postgresql":
        for statement in (*m._POSTGRES_FUNCTIONS, *m._POSTGRES_TRIGGERS):
            op.execute(statement)
    else:
        for name, (when, body) in m._SQLITE_TRIGGERS.items():
            op.execute(f"CREATE TRIGGER {name} {when} FOR EACH ROW BEGIN {body} END")
