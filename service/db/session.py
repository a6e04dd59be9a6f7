"""Engine and session handling, and the programmatic Alembic upgrade.

Writes that read-then-write (a sell checks the quantity held) must be serialized per
portfolio. On PostgreSQL the service locks the portfolio row (``SELECT ... FOR
UPDATE``); on SQLite :meth:`Database.write` opens the transaction with ``BEGIN
IMMEDIATE``, which takes the database write lock before the first read (WAL mode
keeps readers unblocked).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, Select, create_engine, event, make_url, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

__all__ = ["Database", "alembic_config", "migrate"]

T = TypeVar("T")
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_IMMEDIATE = "qc_sqlite_immediate"


def _sqlite_file(url: str) -> Path | None:
    prefix = "sqlite+aiosqlite:///"
    if url.startswith(prefix) and ":memory:" not in url:
        return Path(url[len(prefix) :].split("?", 1)[0])
    return None


class Database:
    """An async engine plus read and write session factories.

    Args:
        url: SQLAlchemy URL (``sqlite+aiosqlite:///...`` or ``postgresql+asyncpg://...``).
        pool_size: connections kept open per process.
        busy_timeout: seconds SQLite waits for the write lock before failing.
    """

    def __init__(self, url: str, *, pool_size: int = 10, busy_timeout: float = 30.0) -> None:
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        kwargs: dict[str, Any] = {}
        if self.is_sqlite:
            path = _sqlite_file(url)
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
            kwargs["connect_args"] = {"timeout": busy_timeout, "isolation_level": None}
        else:
            kwargs.update(pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True)
        self.engine: AsyncEngine = create_async_engine(url, **kwargs)
        if self.is_sqlite:
            _configure_sqlite(self.engine.sync_engine, busy_timeout)
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        # SQLite file: read snapshots (run_read) use plain pysqlite engines instead of one
        # aiosqlite thread hop per DBAPI call; see run_read.
        self._inline_engine: Engine | None = None
        self._sync_engine: Engine | None = None
        self._executor: ThreadPoolExecutor | None = None
        path = _sqlite_file(url) if self.is_sqlite else None
        if path is not None:
            self._inline_engine = _sqlite_sync_engine(path, 0.0, pool_size)
            self._sync_engine = _sqlite_sync_engine(path, busy_timeout, pool_size)
        self._threads = pool_size
        # read_scalar's own connections: on a SQLite file one autocommit pysqlite
        # connection used on the loop only; on PostgreSQL a small asyncpg pool
        self._point_path = path
        self._point: sqlite3.Connection | None = None
        self._point_sql: dict[Select[Any], tuple[str, tuple[str, ...]]] = {}
        self._pg_dsn = (
            make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
            if url.startswith("postgresql+asyncpg")
            else None
        )
        self._pg_pool: Any = None  # asyncpg.Pool, created on first use (it needs the loop)
        self._pg_lock = asyncio.Lock()

    def _compiled(self, stmt: Select[Any]) -> tuple[str, tuple[str, ...]]:
        """``stmt`` as the driver's SQL and the order of its parameters (compiled once)."""
        compiled = self._point_sql.get(stmt)
        if compiled is None:
            c = stmt.compile(dialect=self.engine.sync_engine.dialect)
            compiled = self._point_sql[stmt] = (str(c), tuple(c.positiontup or ()))
        return compiled

    async def read_scalar(self, stmt: Select[Any], params: dict[str, Any]) -> Any:
        """The first column of the first row of ``stmt`` (``None`` without rows), outside any transaction.

        For hot point reads (a primary-key lookup of one value): a single statement
        is a consistent snapshot by itself, so no transaction is opened, and the
        statement goes straight to the driver (compiled once): skipping SQLAlchemy's
        connection checkout, pre-ping and ``BEGIN``/``ROLLBACK`` makes it several
        times cheaper. On a SQLite file it runs on a plain autocommit sqlite3
        connection kept for this purpose; when SQLite answers "busy" it goes through
        :meth:`run_read` instead. On PostgreSQL it is one round trip on a small
        asyncpg pool (prepared statements cached by asyncpg).
        """
        sql, names = self._compiled(stmt)
        args = [params[n] for n in names]
        if self._point_path is not None:
            try:
                if self._point is None:
                    # timeout 0: never wait on the event loop; busy goes to run_read
                    self._point = sqlite3.connect(
                        self._point_path, timeout=0, isolation_level=None, check_same_thread=False
                    )
                row = self._point.execute(sql, args).fetchone()
                return None if row is None else row[0]
            except sqlite3.OperationalError as exc:
                if not _sqlite_busy(exc):
                    raise
        elif self._pg_dsn is not None:
            return await (await self._pg_points()).fetchval(sql, *args)
        return await self.run_read(lambda conn: conn.execute(stmt, params).scalar())

    async def _pg_points(self) -> Any:
        """The asyncpg pool of :meth:`read_scalar` (as many connections as the engine's pool)."""
        if self._pg_pool is None:
            async with self._pg_lock:
                if self._pg_pool is None:
                    import asyncpg

                    self._pg_pool = await asyncpg.create_pool(
                        self._pg_dsn, min_size=1, max_size=self._threads
                    )
        return self._pg_pool

    async def run_read(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn(connection)`` in one read transaction (a consistent snapshot), rolled back after.

        ``fn`` is synchronous Core code for short, bounded reads (a page of rows).

        On a SQLite file it first runs right here on the event loop, on a pysqlite
        connection whose busy timeout is 0: in WAL mode readers never wait for
        writers, so the snapshot costs only its CPU (a worker thread would not overlap
        that CPU anyway under the GIL, and each hand-off costs more than a small read).
        If SQLite answers "busy" (rare for readers: WAL recovery, a checkpoint
        reset) the loop does not wait; the read is retried in a worker thread with
        the normal busy timeout. Other databases go through
        :meth:`AsyncConnection.run_sync` on the async engine.
        """
        if self._inline_engine is not None:
            try:
                with self._inline_engine.connect() as conn:
                    return fn(conn)
            except OperationalError as exc:
                if not _sqlite_busy(exc):
                    raise
        if self._sync_engine is not None:
            engine = self._sync_engine
            if self._executor is None:  # created on use: dispose() may be followed by reuse
                self._executor = ThreadPoolExecutor(self._threads, thread_name_prefix="qc-sqlite")

            def work() -> T:
                with engine.connect() as conn:
                    return fn(conn)

            return await asyncio.get_running_loop().run_in_executor(self._executor, work)
        async with self.engine.connect() as async_conn:
            return await async_conn.run_sync(fn)

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        """A session for reads; whatever it started is rolled back on exit."""
        async with self.sessions() as session:
            yield session

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncSession]:
        """A session in one write transaction: committed on success, rolled back on error."""
        async with self.sessions() as session:
            if self.is_sqlite:
                await session.connection(execution_options={_IMMEDIATE: True})
            async with session.begin() if not session.in_transaction() else _nullcontext():
                yield session
            if session.in_transaction():
                await session.commit()

    async def ping(self) -> None:
        """Run ``SELECT 1`` (raises when the database does not answer)."""
        async with self.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))

    async def dispose(self) -> None:
        if self._point is not None:
            self._point.close()
            self._point = None
        if self._pg_pool is not None:
            await self._pg_pool.close()
            self._pg_pool = None
        await self.engine.dispose()
        for engine in (self._inline_engine, self._sync_engine):
            if engine is not None:
                engine.dispose()
        if self._executor is not None:
            self._executor.shutdown(wait=False)
            self._executor = None


@asynccontextmanager
async def _nullcontext() -> AsyncIterator[None]:
    yield


def _sqlite_sync_engine(path: Path, busy_timeout: float, pool_size: int) -> Engine:
    """A plain pysqlite engine on ``path`` configured like the async one."""
    engine = create_engine(
        f"sqlite:///{path}",
        connect_args={"timeout": busy_timeout, "isolation_level": None},
        pool_size=pool_size,
    )
    _configure_sqlite(engine, busy_timeout)
    return engine


def _sqlite_busy(exc: OperationalError | sqlite3.OperationalError) -> bool:
    """Whether SQLite refused because the database is locked or busy (worth a retry).

    Takes SQLAlchemy's wrapper or the driver's own exception.
    """
    text_ = str(getattr(exc, "orig", exc)).lower()
    return "locked" in text_ or "busy" in text_


def _configure_sqlite(engine: Engine, busy_timeout: float) -> None:
    """WAL, foreign keys, busy timeout, and explicit BEGIN / BEGIN IMMEDIATE (SQLAlchemy recipe)."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        immediate = conn.get_execution_options().get(_IMMEDIATE, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def alembic_config(url: str) -> Config:
    """An Alembic config pointing at the migrations shipped inside the package."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


async def migrate(db: Database, revision: str = "head") -> None:
    """Upgrade the database to ``revision`` (idempotent)."""

    def _upgrade(connection: Connection) -> None:
        cfg = alembic_config(db.url)
        cfg.attributes["connection"] = connection
        command.upgrade(cfg, revision)

    async with db.engine.begin() as conn:
        await conn.run_sync(_upgrade)
