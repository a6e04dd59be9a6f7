"""Fixtures of the finance-service tests: every API test runs on SQLite and on PostgreSQL.

PostgreSQL: a fresh database ``qc_svc_<random>`` is created for the session on the
server of the ``postgres_url`` fixture and dropped at the end, so parallel runs
never collide. Redis tests use a unique key prefix.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from service.app import create_app
from service.auth.identity import hash_password
from service.auth.services import create_token
from service.db import Database, migrate
from service.db.models import User
from service.marketdata.simulated import SimulatedMarket
from service.marketdata.store import PriceStore
from service.settings import Settings

#: A fixed market clock (Friday 2026-11-20, after the US close): quotes are reproducible.
MARKET_NOW = dt.datetime(2026, 11, 20, 21, 30, tzinfo=dt.UTC)
PASSWORD = "correct horse battery"


def fixed_market() -> SimulatedMarket:
    return SimulatedMarket(clock=lambda: MARKET_NOW)


def _admin_dsn(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://")


async def _pg_admin(url: str, sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(_admin_dsn(url))
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@pytest.fixture(scope="session")
def pg_database(postgres_url: str) -> Iterator[str]:
    """A fresh, uniquely named PostgreSQL database for this session (dropped afterwards)."""
    name = f"qc_svc_{uuid.uuid4().hex[:12]}"
    asyncio.run(_pg_admin(postgres_url, f'CREATE DATABASE "{name}"'))
    base, _, _ = postgres_url.rpartition("/")
    url = f"{base}/{name}"
    asyncio.run(_migrate(url))
    yield url
    asyncio.run(_pg_admin(postgres_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(scope="session")
def sqlite_database(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("sqlite") / "service.db"
    url = f"sqlite+aiosqlite:///{path}"
    asyncio.run(_migrate(url))
    return url


async def _migrate(url: str) -> None:
    db = Database(url)
    try:
        await migrate(db)
    finally:
        await db.dispose()


@pytest.fixture(
    scope="session", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def database_url(request: pytest.FixtureRequest) -> str:
    """The URL of a migrated database: SQLite file, then the session's PostgreSQL database."""
    fixture = "sqlite_database" if request.param == "sqlite" else "pg_database"
    return str(request.getfixturevalue(fixture))


@dataclass
class Api:
    """A running app (Litestar test client) plus helpers to make users."""

    client: TestClient[Any]
    settings: Settings

    @property
    def db(self) -> Database:
        return self.client.app.state.resources.db  # type: ignore[no-any-return]

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run an async function in the app's event loop."""
        return self.client.blocking_portal.call(fn, *args)  # type: ignore[union-attr]

    def user(self, prefix: str = "u") -> tuple[str, dict[str, str]]:
        """A new user with password :data:`PASSWORD`; returns (username, Token auth headers).

        The Argon2 hash of :data:`PASSWORD` is computed once per session (hashing
        costs ~0.3 s here); logging in still verifies it for real.
        """
        name = f"{prefix}_{uuid.uuid4().hex[:10]}"
        user_id = self.call(_insert_user, self.db, name)
        token = self.call(create_token, self.db, user_id)
        return name, {"Authorization": f"Token {token}"}


@functools.cache
def password_hash() -> str:
    return hash_password(PASSWORD)


async def _insert_user(db: Database, name: str) -> int:
    user = User(username=name, password_hash=password_hash())
    async with db.write() as s:
        s.add(user)
    return user.id


def make_settings(database_url: str, data_dir: Path, **overrides: Any) -> Settings:
    """In-process apps skip the start-up warm-up (kernels compile on first use, the backtest
    pool starts with the first backtest): a test builds many apps, and the warm-up has its
    own tests (test_warm_start.py, tests/integration/test_make_serve.py)."""
    overrides.setdefault("warm_up", False)
    return Settings.from_env({}, database_url=database_url, data_dir=str(data_dir), **overrides)


@functools.cache
def shared_market() -> SimulatedMarket:
    return fixed_market()


def _build(
    database_url: str,
    data_dir: Path,
    extra_routers: Any = (),
    provider: SimulatedMarket | None = None,
    **overrides: Any,
) -> tuple[Api, TestClient[Any]]:
    settings = make_settings(database_url, data_dir, **overrides)
    app = create_app(
        settings,
        provider=provider or shared_market(),
        store=PriceStore(settings.prices_dir),
        extra_routers=extra_routers,
    )
    client = TestClient(app, base_url="http://testserver.local")
    client.__enter__()
    return Api(client, settings), client


@pytest.fixture
def api_factory(database_url: str, tmp_path: Path) -> Iterator[Callable[..., Api]]:
    """Build apps with custom settings on the parametrized database: ``api_factory(**overrides)``.

    ``provider``: a market of the app's own, for tests that move prices (ticks), which
    would otherwise change the shared market that other modules' expected figures use.
    """
    clients: list[TestClient[Any]] = []

    def build(
        *, extra_routers: Any = (), provider: SimulatedMarket | None = None, **overrides: Any
    ) -> Api:
        api, client = _build(database_url, tmp_path, extra_routers, provider, **overrides)
        clients.append(client)
        return api

    yield build
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture(scope="module")
def api(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """One app per test module and database (tests isolate themselves with fresh users).

    The anonymous rate limit is raised so that a module's anonymous requests never
    hit it; the rate-limit tests build their own apps with ``api_factory``.
    """
    api, client = _build(
        database_url, tmp_path_factory.mktemp("data"), rate_limit_anonymous="100000/hour"
    )
    yield api
    client.__exit__(None, None, None)
