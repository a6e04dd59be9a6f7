"""ledger versions: a per-user counter that every portfolio or position write bumps

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 18:10:00

``ledger_versions.version`` changes whenever a row of the user's ``portfolios`` or
``positions`` is inserted, updated or deleted. Database triggers do the bumping, so
no write path (the API, the CLI, a cascade, a hand-written statement) can forget
it, and every worker process sees it. Readers that keep a user's portfolios in
memory (:mod:`service.portfolios.book`) compare one integer instead of re-reading
the rows.

On SQLite a later ``batch_alter_table`` that rebuilds ``users``, ``portfolios`` or
``positions`` drops that table's triggers: such a migration must create them again.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_BUMP = "UPDATE ledger_versions SET version = version + 1 WHERE user_id = {who};"
_OWNER = "(SELECT user_id FROM portfolios WHERE id = {row}.portfolio_id)"

_SQLITE_TRIGGERS = {
    "qc_users_ledger_version": (
        "AFTER INSERT ON users",
        "INSERT INTO ledger_versions (user_id, version) VALUES (NEW.id, 0);",
    ),
    "qc_portfolios_insert_version": (
        "AFTER INSERT ON portfolios",
        _BUMP.format(who="NEW.user_id"),
    ),
    "qc_portfolios_update_version": (
        "AFTER UPDATE ON portfolios",
        _BUMP.format(who="NEW.user_id")
        + " "
        + _BUMP.format(who="OLD.user_id").replace(";", " AND OLD.user_id <> NEW.user_id;"),
    ),
    "qc_portfolios_delete_version": (
        "AFTER DELETE ON portfolios",
        _BUMP.format(who="OLD.user_id"),
    ),
    "qc_positions_insert_version": (
        "AFTER INSERT ON positions",
        _BUMP.format(who=_OWNER.format(row="NEW")),
    ),
    "qc_positions_update_version": (
        "AFTER UPDATE ON positions",
        _BUMP.format(who=_OWNER.format(row="NEW")),
    ),
    "qc_positions_delete_version": (
        "AFTER DELETE ON positions",
        _BUMP.format(who=_OWNER.format(row="OLD")),
    ),
}

_POSTGRES_FUNCTIONS = (
    """
    CREATE FUNCTION qc_new_user_ledger_version() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO ledger_versions (user_id, version) VALUES (NEW.id, 0);
        RETURN NULL;
    END $$
    """,
    """
    CREATE FUNCTION qc_bump_ledger_version() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_TABLE_NAME = 'portfolios' THEN
            IF TG_OP <> 'DELETE' THEN
                UPDATE ledger_versions SET version = version + 1 WHERE user_id = NEW.user_id;
            END IF;
            IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD.user_id <> NEW.user_id) THEN
                UPDATE ledger_versions SET version = version + 1 WHERE user_id = OLD.user_id;
            END IF;
        ELSIF TG_OP = 'DELETE' THEN
            UPDATE ledger_versions SET version = version + 1
            WHERE user_id = (SELECT user_id FROM portfolios WHERE id = OLD.portfolio_id);
        ELSE
            UPDATE ledger_versions SET version = version + 1
            WHERE user_id = (SELECT user_id FROM portfolios WHERE id = NEW.portfolio_id);
        END IF;
        RETURN NULL;
    END $$
    """,
)
_POSTGRES_TRIGGERS = (
    "CREATE TRIGGER qc_users_ledger_version AFTER INSERT ON users"
    " FOR EACH ROW EXECUTE FUNCTION qc_new_user_ledger_version()",
    "CREATE TRIGGER qc_portfolios_ledger_version AFTER INSERT OR UPDATE OR DELETE ON portfolios"
    " FOR EACH ROW EXECUTE FUNCTION qc_bump_ledger_version()",
    "CREATE TRIGGER qc_positions_ledger_version AFTER INSERT OR UPDATE OR DELETE ON positions"
    " FOR EACH ROW EXECUTE FUNCTION qc_bump_ledger_version()",
)


def upgrade() -> None:
    op.create_table(
        "ledger_versions",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False, server_default="0"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id"),
    )
    op.execute("INSERT INTO ledger_versions (user_id, version) SELECT id, 0 FROM users")
    if op.get_bind().dialect.name == "postgresql":
        for statement in (*_POSTGRES_FUNCTIONS, *_POSTGRES_TRIGGERS):
            op.execute(statement)
    else:
        for name, (when, body) in _SQLITE_TRIGGERS.items():
            op.execute(f"CREATE TRIGGER {name} {when} FOR EACH ROW BEGIN {body} END")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER qc_positions_ledger_version ON positions")
        op.execute("DROP TRIGGER qc_portfolios_ledger_version ON portfolios")
        op.execute("DROP TRIGGER qc_users_ledger_version ON users")
        op.execute("DROP FUNCTION qc_bump_ledger_version()")
        op.execute("DROP FUNCTION qc_new_user_ledger_version()")
    else:
        for name in _SQLITE_TRIGGERS:
            op.execute(f"DROP TRIGGER {name}")
    op.drop_table("ledger_versions")
