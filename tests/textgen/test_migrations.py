"""The store's Alembic migrations: a new database, one at an older revision, instances starting at once,
and the migrations against the tables the code declares (autogenerate finds no difference)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext

from textgen.store import VERSION_TABLE, Lease, Store, metadata, new_id
from textgen.store_schema import MIGRATIONS


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def blank_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database of its own (a new PostgreSQL database, dropped afterwards)."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'blank.db'}"
        return
    import asyncpg

    postgres_url = str(request.getfixturevalue("postgres_url"))
    admin, name = postgres_url.replace("postgresql+asyncpg://", "postgresql://"), f"textgen_mig_{new_id('')[:12]}"

    async def admin_sql(sql: str) -> None:
        conn = await asyncpg.connect(admin)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(admin_sql(f'CREATE DATABASE "{name}"'))
    try:
        yield postgres_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        asyncio.run(admin_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


async def _revision_and_diff(store: Store) -> tuple[str | None, list[object]]:
    def read(conn: sa.Connection) -> tuple[str | None, list[object]]:
        context = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE})
        return context.get_current_revision(), list(compare_metadata(context, metadata))

    async with store.engine.connect() as conn:
        return await conn.run_sync(read)


def test_a_new_database_is_migrated_to_the_declared_tables(blank_url: str) -> None:
    async def main() -> None:
        store, rival = Store(blank_url), Store(blank_url)
        try:
            await asyncio.gather(store.create_schema(), rival.create_schema())  # two instances start at once
            await store.create_schema()  # and a later start finds nothing to do
            revision, diff = await _revision_and_diff(store)
            assert revision == "0002" and diff == []
        finally:
            await store.dispose()
            await rival.dispose()

    asyncio.run(main())


def test_a_database_at_the_baseline_is_upgraded_keeping_its_rows(blank_url: str) -> None:
    async def main() -> None:
        store = Store(blank_url)
        try:
            def baseline(conn: sa.Connection) -> None:
                config = Config()
                config.set_main_option("script_location", str(MIGRATIONS))
                config.attributes["connection"] = conn
                command.upgrade(config, "0001")

            async with store.engine.begin() as conn:
                await conn.run_sync(baseline)
                await conn.execute(sa.text(
                    "INSERT INTO textgen_responses (id, created_at, body, input_items, project, status, entries) "
                    "VALUES ('resp_old', 1, '{\"id\": \"resp_old\"}', '[]', 'default', 'in_progress', '[]')"))
            assert (await _revision_and_diff(store))[0] == "0001"
            await store.create_schema()
            revision, diff = await _revision_and_diff(store)
            assert revision == "0002" and diff == []
            old = await store.get_response("resp_old", "default")
            assert old is not None and old.status == "in_progress"
            orphan = await store.claim_orphan(Lease("inst_me", 10.0), 5.0)  # no lease yet: free to take
            assert orphan is not None and orphan.id == "resp_old" and orphan.job is None
        finally:
            await store.dispose()

    asyncio.run(main())
