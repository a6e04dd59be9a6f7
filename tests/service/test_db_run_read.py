"""``Database.run_read``: one consistent read snapshot, never waiting on the event loop."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest
from sqlalchemy import Connection, text

from service.db import Database


def _read(conn: Connection) -> list[int]:
    conn.execute(text("CREATE TABLE IF NOT EXISTS t (x INTEGER)"))
    return [r[0] for r in conn.execute(text("SELECT x FROM t ORDER BY x"))]


async def _setup(db: Database) -> None:
    async with db.engine.begin() as conn:
        await conn.execute(text("CREATE TABLE t (x INTEGER)"))
        await conn.execute(text("INSERT INTO t VALUES (1), (2)"))


def test_sqlite_read_sees_committed_rows(tmp_path: Path) -> None:
    async def main() -> list[int]:
        db = Database(f"sqlite+aiosqlite:///{tmp_path / 'a.db'}")
        try:
            await _setup(db)
            return await db.run_read(_read)
        finally:
            await db.dispose()

    assert asyncio.run(main()) == [1, 2]


def test_sqlite_busy_read_moves_off_the_loop(tmp_path: Path) -> None:
    """A locked database: the inline attempt gives up at once, the thread retry waits."""
    path = tmp_path / "b.db"

    async def main() -> tuple[list[int], int]:
        db = Database(f"sqlite+aiosqlite:///{path}", busy_timeout=30.0)
        await _setup(db)
        await db.engine.dispose()  # no pooled connection may hold the file during the lock
        locker = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        locker.execute("PRAGMA locking_mode=EXCLUSIVE")
        locker.execute("BEGIN EXCLUSIVE")
        locker.execute("INSERT INTO t VALUES (3)")
        ticks = 0
        released = threading.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not released.is_set():
                ticks += 1
                await asyncio.sleep(0.01)

        def release() -> None:
            locker.execute("COMMIT")
            locker.close()  # an exclusive-mode WAL connection keeps its lock until closed
            released.set()

        tick = asyncio.create_task(ticker())
        timer = threading.Timer(0.3, release)
        timer.start()
        try:
            rows = await db.run_read(_read)
        finally:
            timer.join()
            await tick
            await db.dispose()
        return rows, ticks

    rows, ticks = asyncio.run(main())
    assert rows == [1, 2, 3]  # read after the writer committed
    assert ticks > 1  # the loop kept running while the read waited for the lock


@pytest.mark.postgres
def test_postgres_read(pg_database: str) -> None:
    async def main() -> list[int]:
        db = Database(pg_database)
        try:
            async with db.engine.begin() as conn:
                await conn.execute(text("DROP TABLE IF EXISTS t"))
            await _setup(db)
            rows = await db.run_read(_read)
            async with db.engine.begin() as conn:
                await conn.execute(text("DROP TABLE t"))
            return rows
        finally:
            await db.dispose()

    assert asyncio.run(main()) == [1, 2]
