"""The migrations build exactly the schema the models describe, on SQLite and PostgreSQL.

Alembic's ``compare_metadata`` (the engine behind ``alembic revision --autogenerate``)
lists every table, column, index and unique constraint that differs between the
migrated database and ``service.db.models``; an empty list means no migration is
missing and no model drifted from the database. Downgrading to the initial revision
and upgrading again must work too, so every ``downgrade`` is runnable.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.engine import Connection

from service.db import Database, migrate
from service.db.models import Base
from service.db.session import alembic_config
from tests.service.conftest import _pg_admin

# SQLAlchemy cannot reflect an expression index (lower(username)) on SQLite; it is then
# left out of the comparison there and checked on PostgreSQL.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Skipped unsupported reflection of expression-based index"),
    pytest.mark.filterwarnings("ignore:autogenerate skipping metadata-specified expression-based"),
]


def _differences(connection: Connection) -> list[Any]:
    context = MigrationContext.configure(connection, opts={"compare_type": False})
    return list(compare_metadata(context, Base.metadata))


async def _check(url: str) -> list[Any]:
    db = Database(url)
    try:
        await migrate(db)
        async with db.engine.connect() as conn:
            before = await conn.run_sync(_differences)

        def _cycle(connection: Connection) -> None:
            cfg = alembic_config(url)
            cfg.attributes["connection"] = connection
            command.downgrade(cfg, "0001")
            command.upgrade(cfg, "head")

        async with db.engine.begin() as conn:
            await conn.run_sync(_cycle)
        async with db.engine.connect() as conn:
            after = await conn.run_sync(_differences)
        return before + after
    finally:
        await db.dispose()


def test_sqlite_schema_equals_models(tmp_path: Path) -> None:
    assert asyncio.run(_check(f"sqlite+aiosqlite:///{tmp_path / 'm.db'}")) == []


@pytest.mark.postgres
def test_postgres_schema_equals_models(postgres_url: str) -> None:
    name = f"qc_mig_{uuid.uuid4().hex[:12]}"
    asyncio.run(_pg_admin(postgres_url, f'CREATE DATABASE "{name}"'))
    try:
        base, _, _ = postgres_url.rpartition("/")
        assert asyncio.run(_check(f"{base}/{name}")) == []
    finally:
        asyncio.run(_pg_admin(postgres_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
