"""Fixtures of the textgen tests: a real uvicorn server, SDK clients, a fresh PostgreSQL database."""

from __future__ import annotations

import asyncio
import os
import secrets
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import openai
import pytest

from tests.conftest import ServerProcess, free_port, start_process

HERE = Path(__file__).parent
API_KEY = "sk-test-" + "0" * 24


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL (``http://127.0.0.1:<port>/v1``) of a real uvicorn process with a temp data dir."""
    data_dir = tmp_path_factory.mktemp("textgen")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEXTGEN_")}
    base = f"http://127.0.0.1:{port}/v1"
    proc = start_process(
        [sys.executable, str(HERE / "serve_for_tests.py"), str(port), str(data_dir), API_KEY],
        log=data_dir / "server.log", env=env, url=f"{base}/models",
        headers={"Authorization": f"Bearer {API_KEY}"}, timeout=30,
    )
    try:
        yield base
    finally:
        proc.stop()


@pytest.fixture(scope="session")
def client(server: str) -> openai.OpenAI:
    """The official SDK, validating every response strictly."""
    return openai.OpenAI(base_url=server, api_key=API_KEY, max_retries=0, _strict_response_validation=True)


@pytest.fixture(scope="session")
def http(server: str) -> Iterator[httpx.Client]:
    """A raw HTTP client with the key, for endpoints the SDK does not cover."""
    with httpx.Client(base_url=server, headers={"Authorization": f"Bearer {API_KEY}"}, timeout=30) as c:
        yield c


@pytest.fixture(scope="session")
def fresh_postgres(postgres_url: str) -> Iterator[str]:
    """A uniquely named database created for this session on the real server, dropped at the end."""
    import asyncpg

    name = f"textgen_test_{secrets.token_hex(6)}"
    admin = postgres_url.replace("postgresql+asyncpg://", "postgresql://")

    async def run(sql: str) -> None:
        conn = await asyncpg.connect(admin)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(run(f'CREATE DATABASE "{name}"'))
    try:
        yield postgres_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        asyncio.run(run(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


Spawn = Callable[..., str]


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Spawn]:
    """Starts ``serve_shared.py`` processes; returns each one's base URL."""
    procs: list[ServerProcess] = []

    def start(name: str = "a", *, key: str = API_KEY, **env: str) -> str:
        port, data_dir = free_port(), tmp_path / name
        data_dir.mkdir(exist_ok=True)
        clean = {k: v for k, v in os.environ.items() if not k.startswith("TEXTGEN_")}
        clean.update({f"TEXTGEN_{k.upper()}": v for k, v in env.items()})
        clean.setdefault("TEXTGEN_RATE_LIMIT_PER_MINUTE", "0")
        base = f"http://127.0.0.1:{port}/v1"
        procs.append(start_process(
            [sys.executable, str(HERE / "serve_shared.py"), str(port), str(data_dir), key],
            log=tmp_path / f"{name}.log", env=clean, url=f"{base}/models",
            headers={"Authorization": f"Bearer {key}"},
            # 429: up, and the static key's project (default) is over a limit shared through Redis
            statuses=(200, 429),
        ))
        return base

    yield start
    for proc in procs:
        proc.stop()


@pytest.fixture(scope="session")
def auth_headers() -> dict[str, str]:
    """The test server's ``Authorization`` header."""
    return {"Authorization": f"Bearer {API_KEY}"}
