"""Engine and session handling, and the programmatic Alembic upgrade.

Writes that read-then-write (a sell checks the quantity held) must be serialized per
portfolio. On PostgreSQL the service locks the portfolio row (``SELECT ... FOR
UPDATE``); on SQLite :meth:`Database.write` opens the transaction with ``BEGIN
IMMEDIATE``, which takes the database write lock before the first read (WAL mode
keeps readers unblocked).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import Connection
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
        # SQLite file: hot read paths run on a plain pysqlite engine in a worker thread, one
        # thread hop per snapshot instead of one per DBAPI call through aiosqlite.
        self._sync_engine: Engine | None = None
        self._executor: ThreadPoolExecutor | None = None
        path = _sqlite_file(url) if self.is_sqlite else None
        if path is not None:
            self._sync_engine = create_engine(
                f"sqlite:///{path}",
                connect_args={"timeout": busy_timeout, "isolation_level": None},
                pool_size=pool_size,
            )
            _configure_sqlite(self._sync_engine, busy_timeout)
        self._threads = pool_size

    async def run_read(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn(connection)`` in one read transaction (a consistent snapshot), rolled back after.

        ``fn`` is synchronous Core code. On a SQLite file it runs in a worker thread on a
        pysqlite connection (one hop for the whole snapshot); elsewhere through
        :meth:`AsyncConnection.run_sync` on the async engine.
        """
        if self._sync_engine is not None:
            engine = self._sync_engine
            if self._executor is None:  # created on use: dispose() may be followed by reuse
                self._executor = ThreadPoolExecutor(self._threads, thread_name_prefix="qc-sqlite")

            def work() -> T:
                with engine.connect() as conn:
                    return fn(conn)

            return await asyncio.get_running_loop().run_in_executor(self._executor, work)
        async with self.engine.connect() as conn:
            return await conn.run_sync(fn)

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
        await self.engine.dispose()
        if self._sync_engine is not None:
            self._sync_engine.dispose()
        if self._executor is not None:
            self._executor.shutdown(wait=False)
            self._executor = None


@asynccontextmanager
async def _nullcontext() -> AsyncIterator[None]:
    yield


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
