"""``Database``: sessions, and ``read_scalar`` (the one point read outside a session).

``read_scalar`` must see every commit and never make the event loop wait: on a
locked SQLite file it gives up at once and reads through a session instead.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest
from sqlalchemy import bindparam, column, func, select, table, text

from service.db import Database, after_commit

T = TypeVar("T")


async def _setup(db: Database) -> None:
    async with db.engine.begin() as conn:
        await conn.execute(text("CREATE TABLE t (x INTEGER)"))
        await conn.execute(text("INSERT INTO t VALUES (1), (2)"))


def test_sqlite_session_read_sees_committed_rows(tmp_path: Path) -> None:
    async def main() -> list[int]:
        db = Database(f"sqlite+aiosqlite:///{tmp_path / 'a.db'}")
        try:
            await _setup(db)
            async with db.read() as s:
                return [r[0] for r in await s.execute(text("SELECT x FROM t ORDER BY x"))]
        finally:
            await db.dispose()

    assert asyncio.run(main()) == [1, 2]


def test_sqlite_point_read(tmp_path: Path) -> None:
    t = table("t", column("x"))

    async def main() -> tuple[object, object]:
        db = Database(f"sqlite+aiosqlite:///{tmp_path / 'p.db'}")
        try:
            await _setup(db)
            found = await db.read_scalar(select(t.c.x).where(t.c.x == bindparam("v")), {"v": 2})
            missing = await db.read_scalar(select(t.c.x).where(t.c.x == bindparam("v")), {"v": 9})
            return found, missing
        finally:
            await db.dispose()

    assert asyncio.run(main()) == (2, None)


async def read_while_locked(
    db: Database, path: Path, write: str, read: Callable[[], Awaitable[T]]
) -> tuple[T, int]:
    """Run ``read()`` while another connection holds ``path`` exclusively for 0.3 s.

    The holder runs ``write`` and commits when it lets go. Returns what ``read()``
    gave and how often the event loop ticked meanwhile (it must not have waited).
    """
    await db.engine.dispose()  # no pooled connection may hold the file during the lock
    locker = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    locker.execute("PRAGMA locking_mode=EXCLUSIVE")
    locker.execute("BEGIN EXCLUSIVE")
    locker.execute(write)
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
        value = await read()
    finally:
        timer.join()
        await tick
    return value, ticks


def test_sqlite_busy_point_read_moves_off_the_loop(tmp_path: Path) -> None:
    """``read_scalar`` on a locked database: no wait on the loop, retried through a session."""
    path = tmp_path / "c.db"
    count = select(func.count()).select_from(table("t"))

    async def main() -> tuple[int, int]:
        db = Database(f"sqlite+aiosqlite:///{path}", busy_timeout=30.0)
        await _setup(db)
        try:
            return await read_while_locked(
                db, path, "INSERT INTO t VALUES (3)", lambda: db.read_scalar(count, {})
            )
        finally:
            await db.dispose()

    value, ticks = asyncio.run(main())
    assert value == 3  # read after the writer committed
    assert ticks > 1


@pytest.mark.postgres
def test_postgres_point_read_sees_each_commit(pg_database: str) -> None:
    """``read_scalar`` on PostgreSQL is a session read: every commit is visible."""
    t = table("t_point", column("x"))
    by_value = select(t.c.x).where(t.c.x == bindparam("v"))

    async def main() -> list[object]:
        db = Database(pg_database)
        try:
            async with db.engine.begin() as conn:
                await conn.execute(text("DROP TABLE IF EXISTS t_point"))
                await conn.execute(text("CREATE TABLE t_point (x INTEGER)"))
            seen = [await db.read_scalar(by_value, {"v": 2})]
            async with db.engine.begin() as conn:
                await conn.execute(text("INSERT INTO t_point VALUES (2)"))
            seen.append(await db.read_scalar(by_value, {"v": 2}))
            async with db.engine.begin() as conn:
                await conn.execute(text("DROP TABLE t_point"))
            return seen
        finally:
            await db.dispose()

    assert asyncio.run(main()) == [None, 2]


def test_sqlite_write_locks_at_its_first_statement(tmp_path: Path) -> None:
    """``Database.write`` takes SQLite's write lock with its first statement, not on entry.

    Work before the first statement (hashing a password, a backtest) leaves other
    writers free; from the first statement (a read) the transaction holds the lock.
    """
    path = tmp_path / "w.db"

    def other_writer_gets_in() -> bool:
        other = sqlite3.connect(path, timeout=0, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            other.execute("ROLLBACK")
            return True
        except sqlite3.OperationalError:
            return False
        finally:
            other.close()

    async def main() -> tuple[bool, bool, list[int]]:
        db = Database(f"sqlite+aiosqlite:///{path}")
        try:
            await _setup(db)
            async with db.write() as s:
                before = other_writer_gets_in()
                await s.execute(text("SELECT count(*) FROM t"))
                after = other_writer_gets_in()
                await s.execute(text("INSERT INTO t VALUES (3)"))
            async with db.read() as s:
                rows = [r[0] for r in await s.execute(text("SELECT x FROM t ORDER BY x"))]
            return before, after, rows
        finally:
            await db.dispose()

    assert asyncio.run(main()) == (True, False, [1, 2, 3])


def test_after_commit_runs_after_the_commit_only(tmp_path: Path) -> None:
    """``after_commit`` callbacks see the committed rows; a rollback drops them uncalled."""
    path = tmp_path / "h.db"
    seen: list[object] = []

    def committed_count() -> None:
        with sqlite3.connect(path) as other:  # another connection: only committed rows
            seen.append(other.execute("SELECT count(*) FROM t").fetchone()[0])

    async def main() -> None:
        db = Database(f"sqlite+aiosqlite:///{path}")
        try:
            await _setup(db)
            async with db.write() as s:
                await s.execute(text("INSERT INTO t VALUES (3)"))
                after_commit(s, committed_count)
                seen.append("in transaction")
            with pytest.raises(RuntimeError):
                async with db.write() as s:
                    await s.execute(text("INSERT INTO t VALUES (4)"))
                    after_commit(s, committed_count)
                    raise RuntimeError("refused")
            async with db.write() as s:  # a later transaction of another session: nothing left
                await s.execute(text("INSERT INTO t VALUES (5)"))
        finally:
            await db.dispose()

    asyncio.run(main())
    assert seen == ["in transaction", 3]
