"""The store's schema: Alembic migrations (``textgen/migrations``), run at startup by ``Store.create_schema``.

A new database is created by the migrations; every start upgrades to head. A database of a release
before migrations (``textgen_*`` tables without the ``textgen_alembic_version`` table) is upgraded the
former way once, which adds the columns newer releases added, drops the old per-turn copy and makes
prompt names unique per project (rows kept), and is then stamped at head. Add a migration with
``alembic revision`` against ``textgen/migrations`` (``script_location``), numbered after the last one.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError
from sqlalchemy.ext.asyncio import AsyncEngine

from textgen.store_tables import VERSION_TABLE, metadata, prompts

__all__ = ["MIGRATIONS", "create_schema"]

MIGRATIONS = Path(__file__).parent / "migrations"
_LOCK_KEY = 0x7467_7363  # "tgsc": the advisory lock of the schema step on PostgreSQL
_PROMPT_NAME_UNIQUE = "uq_textgen_prompts_project_name"


def _add_missing_columns(conn: sa.Connection) -> None:
    """Bring tables of an older release up to date: add new columns (with their defaults)."""
    inspector = sa.inspect(conn)
    preparer = conn.dialect.identifier_preparer
    for table in metadata.sorted_tables:
        have = {c["name"] for c in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name in have:
                continue
            kind = column.type.compile(conn.dialect)
            default = f" DEFAULT '{column.server_default.arg}'" if column.server_default is not None else ""  # type: ignore[attr-defined]
            null = " NOT NULL" if not column.nullable and default else ""
            conn.execute(sa.text(f"ALTER TABLE {preparer.quote(table.name)} ADD COLUMN "
                                 f"{preparer.quote(column.name)} {kind}{default}{null}"))
        if table.name == "textgen_responses" and "conversation" in have:  # the former per-turn full copy
            conn.execute(sa.text("ALTER TABLE textgen_responses DROP COLUMN conversation"))




def _prompt_name_uniqueness(conn: sa.Connection) -> tuple[list[str | None], list[str], bool]:
    """How ``textgen_prompts`` enforces unique names: the global unique constraints and unique
    indexes on ``name`` alone (an older release's, to remove) and whether ``(project, name)`` is unique."""
    inspector = sa.inspect(conn)
    constraints = inspector.get_unique_constraints(prompts.name)
    indexes = [i for i in inspector.get_indexes(prompts.name)  # PostgreSQL lists a constraint's index too
               if i.get("unique") and not i.get("duplicates_constraint")]
    global_constraints = [c["name"] for c in constraints if list(c["column_names"]) == ["name"]]
    global_indexes = [str(i["name"]) for i in indexes if list(i["column_names"]) == ["name"]]
    per_project = any(sorted(c["column_names"]) == ["name", "project"] for c in constraints) or any(
        sorted(str(n) for n in i["column_names"]) == ["name", "project"] for i in indexes)
    return global_constraints, global_indexes, per_project


def _prompt_names_per_project_postgres(conn: sa.Connection) -> None:
    """Replace an older release's global unique prompt name by a per-project one (PostgreSQL).

    Runs inside the schema transaction, so the drop and the new constraint commit together; the
    table lock makes concurrent starts wait and then find the work done.
    """
    global_constraints, global_indexes, per_project = _prompt_name_uniqueness(conn)
    if not (global_constraints or global_indexes or not per_project):
        return
    conn.execute(sa.text("LOCK TABLE textgen_prompts IN ACCESS EXCLUSIVE MODE"))
    global_constraints, global_indexes, per_project = _prompt_name_uniqueness(conn)  # after the lock
    preparer = conn.dialect.identifier_preparer
    for name in global_constraints:
        conn.execute(sa.text(f"ALTER TABLE textgen_prompts DROP CONSTRAINT {preparer.quote(str(name))}"))
    for name in global_indexes:
        conn.execute(sa.text(f"DROP INDEX {preparer.quote(name)}"))
    if not per_project:
        conn.execute(sa.text(f"ALTER TABLE textgen_prompts ADD CONSTRAINT {_PROMPT_NAME_UNIQUE} "
                             "UNIQUE (project, name)"))


def _legacy_sqlite(conn: sa.Connection) -> None:
    """The former upgrade on SQLite (inside the ``BEGIN IMMEDIATE`` transaction, foreign keys off).

    SQLite cannot drop a table constraint, so an older release's global unique prompt name is removed
    by rebuilding the table with the current definition, SQLite's documented procedure: create the new
    table, copy the rows, drop the old one, rename, check the foreign keys.
    """
    metadata.create_all(conn, checkfirst=True)
    _add_missing_columns(conn)
    global_constraints, global_indexes, per_project = _prompt_name_uniqueness(conn)
    preparer = conn.dialect.identifier_preparer
    for name in global_indexes:
        conn.exec_driver_sql(f"DROP INDEX {preparer.quote(name)}")
    if global_constraints:
        rebuilt = prompts.to_metadata(sa.MetaData(), name="textgen_prompts_rebuild")
        rebuilt.create(conn)
        columns = ", ".join(preparer.quote(c.name) for c in prompts.columns)
        conn.exec_driver_sql(f"INSERT INTO textgen_prompts_rebuild ({columns}) "
                             f"SELECT {columns} FROM textgen_prompts")
        conn.exec_driver_sql("DROP TABLE textgen_prompts")
        conn.exec_driver_sql("ALTER TABLE textgen_prompts_rebuild RENAME TO textgen_prompts")
        broken = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
        if broken:
            raise RuntimeError(f"rebuilding textgen_prompts broke foreign keys: {broken}")
    elif not per_project:
        conn.exec_driver_sql(f"CREATE UNIQUE INDEX {_PROMPT_NAME_UNIQUE} ON textgen_prompts (project, name)")


def _legacy_postgres(conn: sa.Connection) -> None:
    """The former upgrade on PostgreSQL (inside the schema transaction)."""
    metadata.create_all(conn, checkfirst=True)
    _add_missing_columns(conn)
    _prompt_names_per_project_postgres(conn)


def _alembic(conn: sa.Connection, action: str) -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = conn
    if action == "stamp":
        command.stamp(config, "head")
    else:
        command.upgrade(config, "head")


def _migrate(conn: sa.Connection) -> None:
    """Within the schema transaction: a database of a release before migrations (``textgen_`` tables, no
    version table) gets the former upgrade and is stamped at head; any other is upgraded to head."""
    tables = set(sa.inspect(conn).get_table_names())
    if VERSION_TABLE not in tables and any(t.startswith("textgen_") for t in tables):
        (_legacy_sqlite if conn.dialect.name == "sqlite" else _legacy_postgres)(conn)
        _alembic(conn, "stamp")
    else:
        _alembic(conn, "upgrade")


def _migrate_sqlite(conn: sa.Connection) -> None:
    """:func:`_migrate` in one ``BEGIN IMMEDIATE`` transaction: it takes the write lock first, so instances
    starting at once run it one after the other (the later ones find the work done)."""
    conn.exec_driver_sql("PRAGMA foreign_keys=OFF")  # has effect only outside a transaction
    try:
        conn.exec_driver_sql("BEGIN IMMEDIATE")  # waits up to busy_timeout for another instance
        try:
            _migrate(conn)
            conn.exec_driver_sql("COMMIT")
        except BaseException:
            conn.exec_driver_sql("ROLLBACK")
            raise
    finally:
        conn.exec_driver_sql("PRAGMA foreign_keys=ON")


async def create_schema(engine: AsyncEngine) -> None:
    """Migrate the database to head; instances starting at once take turns (SQLite: ``BEGIN IMMEDIATE``;
    PostgreSQL: a transaction-scoped advisory lock), and the later ones find the work done."""
    for attempt in range(3):
        try:
            if engine.dialect.name == "sqlite":
                async with engine.connect() as conn:
                    await conn.run_sync(_migrate_sqlite)
                return
            async with engine.begin() as conn:
                await conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
                await conn.run_sync(_migrate)
            return
        except (IntegrityError, ProgrammingError, OperationalError):
            if attempt == 2:  # another instance kept racing us: give up loudly
                raise
