"""The store on SQLite and on the real PostgreSQL (a fresh database per session), and shared state."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from litestar.testing import TestClient

from textgen.app import create_app
from textgen.settings import Settings
from textgen.store import Conflict, FileRecord, Store, hash_key, new_id

KEY = "store-test-key"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    return str(request.getfixturevalue("fresh_postgres"))


def run(url: str, body: Callable[[Store], Awaitable[None]]) -> None:
    async def main() -> None:
        store = Store(url)
        try:
            await store.create_schema()
            await store.create_schema()  # idempotent
            await body(store)
        finally:
            await store.dispose()

    asyncio.run(main())


def test_responses_round_trip(database_url: str) -> None:
    async def body(store: Store) -> None:
        rid = new_id("resp_")
        response = {"id": rid, "created_at": 1, "output": [{"type": "message"}], "metadata": {"k": "é"}}
        await store.save_response(response, [{"id": "msg_1"}], [{"role": "user", "text": "hi"}])
        got = await store.get_response(rid)
        assert got is not None
        assert got.body == response and got.input_items == [{"id": "msg_1"}]
        assert got.conversation == [{"role": "user", "text": "hi"}]
        assert await store.delete_response(rid)
        assert await store.get_response(rid) is None
        assert not await store.delete_response(rid)

    run(database_url, body)


def test_prompt_versions(database_url: str) -> None:
    async def body(store: Store) -> None:
        name = f"p-{new_id('')}"
        first = await store.create_prompt(name, "v1 {{x}}", None)
        with pytest.raises(Conflict):
            await store.create_prompt(name, "other", None)
        second = await store.add_prompt_version(first.id, [{"role": "user", "content": "v2"}], "ins")
        assert second is not None and second.version == 2
        current = await store.get_prompt(first.id)
        assert current is not None and current.version == 2 and current.instructions == "ins"
        assert current.template == [{"role": "user", "content": "v2"}]
        old = await store.get_prompt(first.id, 1)
        assert old is not None and old.template == "v1 {{x}}" and old.current_version == 2
        assert await store.get_prompt(first.id, 3) is None
        assert await store.add_prompt_version("pmpt_missing", "t", None) is None
        assert first.id in [p.id for p in await store.list_prompts()]

    run(database_url, body)


def test_files_and_keys(database_url: str) -> None:
    async def body(store: Store) -> None:
        record = FileRecord(new_id("file-"), "a.txt", 3, "user_data", 5)
        await store.add_file(record)
        assert await store.get_file(record.id) == record
        assert record in await store.list_files("user_data")
        assert record not in await store.list_files("batch")
        assert await store.delete_file(record.id) and await store.get_file(record.id) is None
        key = await store.create_key("alice")
        assert key.startswith("sk-tg-") and len(key) > 40
        assert await store.key_exists(hash_key(key))
        assert not await store.key_exists(hash_key(key + "x"))

    run(database_url, body)


@pytest.fixture
def two_apps(fresh_postgres: str, tmp_path: Path) -> Iterator[tuple[TestClient, TestClient]]:  # type: ignore[type-arg]
    """Two app instances (separate data dirs) sharing one PostgreSQL database."""
    apps = [
        create_app(Settings(database_url=fresh_postgres, data_dir=str(tmp_path / name), api_keys=(KEY,)))
        for name in ("a", "b")
    ]
    with TestClient(apps[0]) as a, TestClient(apps[1]) as b:
        for client in (a, b):
            client.headers["Authorization"] = f"Bearer {KEY}"
        yield a, b


@pytest.mark.postgres
def test_instances_share_conversation_state(two_apps: tuple[TestClient, TestClient]) -> None:  # type: ignore[type-arg]
    a, b = two_apps
    first = a.post("/v1/responses", json={"model": "textgen-ngram", "input": "the harbor"}).json()
    assert b.get(f"/v1/responses/{first['id']}").json()["output"] == first["output"]
    second = b.post("/v1/responses", json={"model": "textgen-ngram", "input": "more",
                                           "previous_response_id": first["id"]})
    assert second.status_code == 200 and second.json()["previous_response_id"] == first["id"]
    prompt = a.post("/v1/prompts", json={"template": "hi {{x}}"}).json()
    b.post(f"/v1/prompts/{prompt['id']}/versions", json={"template": "bye {{x}}"})
    assert a.get(f"/v1/prompts/{prompt['id']}").json()["version"] == "2"


def test_rate_limit_gives_429(tmp_path: Path) -> None:
    app = create_app(Settings(data_dir=str(tmp_path), api_keys=(KEY, "other"), rate_limit_per_minute=2))
    with TestClient(app) as client:
        mine = {"Authorization": f"Bearer {KEY}"}
        assert [client.get("/v1/models", headers=mine).status_code for _ in range(2)] == [200, 200]
        limited = client.get("/v1/models", headers=mine)
        assert limited.status_code == 429 and limited.headers["Retry-After"] == "60"
        assert limited.json()["error"]["code"] == "rate_limit_exceeded"
        assert limited.json()["error"]["type"] == "requests"
        other = client.get("/v1/models", headers={"Authorization": "Bearer other"})
        assert other.status_code == 200  # the limit is per key


def test_created_keys_authenticate(tmp_path: Path) -> None:
    settings = Settings(data_dir=str(tmp_path))
    app = create_app(settings)

    async def make_key() -> str:
        store = Store(settings.resolved_database_url)
        try:
            await store.create_schema()
            return await store.create_key("bob")
        finally:
            await store.dispose()

    key = asyncio.run(make_key())
    with TestClient(app) as client:
        assert client.get("/v1/models", headers={"Authorization": f"Bearer {key}"}).status_code == 200
        assert client.get("/v1/models", headers={"Authorization": f"Bearer {key}0"}).status_code == 401
        assert client.get("/v1/models", headers={"Authorization": f"Basic {key}"}).status_code == 401


def test_a_failed_save_is_reported_not_hidden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken_save(*args: object) -> None:
        raise OSError("disk full")

    app = create_app(Settings(data_dir=str(tmp_path), api_keys=(KEY,)))
    monkeypatch.setattr(app.state.store, "save_response", broken_save)
    with TestClient(app) as client:
        client.headers["Authorization"] = f"Bearer {KEY}"
        plain = client.post("/v1/responses", json={"model": "textgen-ngram", "input": "x"})
        assert plain.status_code == 500 and plain.json()["error"]["code"] == "server_error"
        assert "disk" not in plain.text
        streamed = client.post("/v1/responses", json={"model": "textgen-ngram", "input": "x", "stream": True})
        kinds = [line.removeprefix("event: ") for line in streamed.text.splitlines() if line.startswith("event: ")]
        assert kinds[-2:] == ["error", "response.failed"] and "response.completed" not in kinds
        unstored = client.post("/v1/responses", json={"model": "textgen-ngram", "input": "x", "store": False})
        assert unstored.status_code == 200
