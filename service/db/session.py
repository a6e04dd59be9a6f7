"""Engine and session handling, and the programmatic Alembic upgrade.

There is one way to the database: an :class:`~sqlalchemy.ext.asyncio.AsyncSession`
of :attr:`Database.sessions`. A request reads through one session (opened on first
use, closed after the handler); a write is one transaction of :meth:`Database.write`.

One documented exception, kept because the load benchmark needs it
(``docs/service.md``, "Data path"): :meth:`Database.read_scalar`, a single-value
point read that on a SQLite file goes straight to an autocommit ``sqlite3``
connection on the event loop (about 3 us instead of about 0.5 ms of CPU for a
session's checkout, ``BEGIN``, query and ``ROLLBACK`` through aiosqlite's thread).
Elsewhere, and whenever SQLite answers "busy", it is one autocommit statement on
the engine's pool.

Writes that read-then-write (a sell checks the quantity held) must be serialized per
user. On PostgreSQL the service locks the user's ``ledger_versions`` row
(:func:`service.ledger.positions.lock_user_ledger`); on SQLite
:meth:`Database.write` opens the transaction with ``BEGIN IMMEDIATE``, which takes
the database write lock before the first read (WAL mode keeps readers unblocked).
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, Select, event, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.orm import Session

__all__ = ["Database", "after_commit", "alembic_config", "migrate"]

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_IMMEDIATE = "qc_sqlite_immediate"
_AFTER_COMMIT = "qc_after_commit"


class _Session(Session):
    """The sessions of :class:`Database` (a class of their own for the commit hooks)."""


def after_commit(session: AsyncSession, fn: Callable[[], None]) -> None:
    """Call ``fn`` once the transaction of ``session`` has committed; never if it rolls back.

    For what must follow the commit, not precede it: a credential revoked in the
    request's transaction is dropped from the identity cache only once the revocation
    is visible, or a concurrent lookup could cache it again from the old rows.
    """
    session.sync_session.info.setdefault(_AFTER_COMMIT, []).append(fn)


@event.listens_for(_Session, "after_commit")
def _run_after_commit(session: Session) -> None:
    for fn in session.info.pop(_AFTER_COMMIT, ()):
        fn()


@event.listens_for(_Session, "after_rollback")
def _drop_after_commit(session: Session) -> None:
    session.info.pop(_AFTER_COMMIT, None)


def _sqlite_file(url: str) -> Path | None:
    prefix = "sqlite+aiosqlite:///"
    if url.startswith(prefix) and ":memory:" not in url:
        return Path(url[len(prefix) :].split("?", 1)[0])
    return None


class Database:
    """An async engine and its session factory.

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
            if path is not None:
                kwargs.update(pool_size=pool_size, max_overflow=pool_size)
        else:
            kwargs.update(pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True)
        self.engine: AsyncEngine = create_async_engine(url, **kwargs)
        if self.is_sqlite:
            _configure_sqlite(self.engine.sync_engine, busy_timeout)
        self.sessions = async_sessionmaker(
            self.engine, expire_on_commit=False, sync_session_class=_Session
        )
        # the same pool; on SQLite its connections begin with BEGIN IMMEDIATE
        self._writer = (
            self.engine.execution_options(**{_IMMEDIATE: True}) if self.is_sqlite else self.engine
        )
        self._point_path = _sqlite_file(url) if self.is_sqlite else None
        self._point: sqlite3.Connection | None = None
        self._point_sql: dict[Select[Any], tuple[str, tuple[str, ...]]] = {}

    async def read_scalar(self, stmt: Select[Any], params: dict[str, Any]) -> Any:
        """The first column of the first row of ``stmt`` (``None`` without rows).

        For hot single-value reads (a primary-key lookup) that need no transaction:
        one statement is a consistent snapshot by itself. On a SQLite file the
        statement (compiled once) runs on an autocommit ``sqlite3`` connection kept
        for this, with a busy timeout of 0 so that the event loop never waits (in WAL
        mode readers do not wait for writers; a "busy" answer, rare, goes to a
        connection instead). Other databases: one autocommit statement on a pooled
        connection of the engine (no ``BEGIN``/``ROLLBACK`` round trips).
        """
        if self._point_path is not None:
            sql, names = self._compiled(stmt)
            try:
                if self._point is None:
                    self._point = sqlite3.connect(
                        self._point_path, timeout=0, isolation_level=None, check_same_thread=False
                    )
                row = self._point.execute(sql, [params[n] for n in names]).fetchone()
                return None if row is None else row[0]
            except sqlite3.OperationalError as exc:
                if not _sqlite_busy(exc):
                    raise
        async with self.engine.connect() as conn:
            # one statement is its own snapshot: no BEGIN / ROLLBACK round trips
            auto = await conn.execution_options(isolation_level="AUTOCOMMIT")
            return (await auto.execute(stmt, params)).scalar()

    def _compiled(self, stmt: Select[Any]) -> tuple[str, tuple[str, ...]]:
        """``stmt`` as SQLite's SQL and the order of its parameters (compiled once)."""
        compiled = self._point_sql.get(stmt)
        if compiled is None:
            c = stmt.compile(dialect=self.engine.sync_engine.dialect)
            compiled = self._point_sql[stmt] = (str(c), tuple(c.positiontup or ()))
        return compiled

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        """A session for reads; whatever it started is rolled back on exit."""
        async with self.sessions() as session:
            yield session

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncSession]:
        """A session in one write transaction: committed on success, rolled back on error.

        The transaction begins with the session's first statement (on SQLite with
        ``BEGIN IMMEDIATE``, which takes the write lock before that first read), not
        when the session opens: work done before the first statement (hashing a
        password, running a backtest) holds no lock, and a session that runs no
        statement never touches the database.
        """
        async with self.sessions(bind=self._writer) as session, session.begin():
            yield session

    async def ping(self) -> None:
        """Run ``SELECT 1`` (raises when the database does not answer)."""
        async with self.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))

    async def dispose(self) -> None:
        if self._point is not None:
            self._point.close()
            self._point = None
        await self.engine.dispose()


def _sqlite_busy(exc: sqlite3.OperationalError) -> bool:
    """Whether SQLite refused because the database is locked or busy."""
    text_ = str(exc).lower()
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
