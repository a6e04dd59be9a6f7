"""The store on SQLite and on the real PostgreSQL (a fresh database per session), and shared state."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import sqlalchemy as sa
from litestar.testing import TestClient
from sqlalchemy.exc import IntegrityError

from textgen.app import create_app
from textgen.backends.builtin import NgramBackend
from textgen.events import OutputTextDelta, ResponseCreated, ResponseObject, ResponseQueued
from textgen.settings import Settings
from textgen.store import Conflict, FileRecord, Store, hash_key, new_id
from textgen.stored_items import InputTextPart, MessageItem, OutputTextPart

KEY = "store-test-key"
NGRAM = NgramBackend()


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


def _response(**fields: Any) -> ResponseObject:
    return msgspec.convert(fields, ResponseObject)


def test_responses_round_trip(database_url: str) -> None:
    async def body(store: Store) -> None:
        rid = new_id("resp_")
        created = _response(id=rid, created_at=1, status="in_progress", output=[], metadata={"k": "é"})
        asked = MessageItem(id="msg_1", role="user", content=[InputTextPart(text="hi")])
        await store.create_response("p1", created, [asked], None)
        got = await store.get_response(rid, "p1")
        assert got is not None and got.status == "in_progress" and got.body == created and got.entries == []
        assert await store.get_response(rid, "p2") is None  # another project's id is unknown
        answer = MessageItem(id="msg_2", role="assistant", content=[OutputTextPart(text="yo", logprobs=[])])
        final = msgspec.structs.replace(created, status="completed", output=[answer])
        assert await store.settle_response(final, [{"role": "user", "text": "hi"}])
        assert not await store.settle_response(msgspec.structs.replace(final, status="failed"))  # settled once only
        got = await store.get_response(rid, "p1")
        assert got is not None and got.body == final and got.input_items == [asked]
        assert got.entries == [{"role": "user", "text": "hi"}] and got.status == "completed"
        assert not await store.delete_response(rid, "p2")
        assert await store.find_item("msg_1", "p1") == asked and await store.find_item("msg_1", "p2") is None
        assert await store.find_item("msg_2", "p1") == answer
        assert await store.delete_response(rid, "p1")
        assert await store.find_item("msg_1", "p1") is None  # deleting a response removes its text
        assert await store.get_response(rid, "p1") is None
        assert not await store.delete_response(rid, "p1")

    run(database_url, body)


def test_history_walks_the_chain_within_the_project(database_url: str) -> None:
    async def body(store: Store) -> None:
        project, previous = new_id("chain-"), None
        for turn in range(50):
            rid = new_id("resp_")
            await store.create_response(project, _response(id=rid, created_at=turn, status="in_progress"), [],
                                        previous)
            await store.settle_response(_response(id=rid, created_at=turn, status="completed"),
                                        [{"role": "user", "text": f"q{turn}"}, {"role": "assistant", "text": f"a{turn}"}])
            previous = rid
        assert previous is not None
        history = await store.history(previous, project)
        assert history is not None and [e["text"] for e in history[:3]] == ["q0", "a0", "q1"]
        assert len(history) == 100 and history[-1]["text"] == "a49"
        assert await store.history(previous, "p2") is None
        async with store.engine.connect() as conn:  # each turn stored once: linear, not quadratic
            stored = (await conn.execute(sa.text("SELECT entries FROM textgen_responses WHERE project = :p"),
                                         {"p": project})).scalars().all()
        assert sum(s.count('"text"') for s in stored) == 100

    run(database_url, body)


def test_events_and_cancel(database_url: str) -> None:
    async def body(store: Store) -> None:
        rid = new_id("resp_")
        queued = _response(id=rid, created_at=1, status="queued")
        await store.create_response("p1", queued, [], None)
        await store.add_events(rid, [ResponseCreated(sequence_number=0, response=queued),
                                     ResponseQueued(sequence_number=1, response=queued)])
        await store.add_events(rid, [OutputTextDelta(sequence_number=2, item_id="m", output_index=0,
                                                     content_index=0, delta="d")])
        assert [e.type for e in await store.events_after(rid, 0)] == ["response.queued", "response.output_text.delta"]
        assert await store.cancel_response(rid, "p2") is None
        cancelled = await store.cancel_response(rid, "p1")
        assert cancelled is not None and cancelled.status == "cancelled"
        assert await store.response_status(rid) == "cancelled"
        assert not await store.settle_response(_response(id=rid, created_at=1, status="completed"))
        assert await store.delete_response(rid, "p1") and await store.events_after(rid, -1) == []

    run(database_url, body)


def test_prompt_versions(database_url: str) -> None:
    async def body(store: Store) -> None:
        name = f"p-{new_id('')}"
        first = await store.create_prompt("p1", name, "v1 {{x}}", None)
        with pytest.raises(Conflict):
            await store.create_prompt("p1", name, "other", None)
        await store.create_prompt("p2", name, "same name, other project", None)
        assert await store.add_prompt_version("p2", first.id, "t", None) is None
        second = await store.add_prompt_version("p1", first.id, [{"role": "user", "content": "v2"}], "ins")
        assert second is not None and second.version == 2
        current = await store.get_prompt("p1", first.id)
        assert current is not None and current.version == 2 and current.instructions == "ins"
        assert current.template == [{"role": "user", "content": "v2"}]
        old = await store.get_prompt("p1", first.id, 1)
        assert old is not None and old.template == "v1 {{x}}" and old.current_version == 2
        assert await store.get_prompt("p1", first.id, 3) is None
        assert await store.get_prompt("p2", first.id) is None
        assert await store.add_prompt_version("p1", "pmpt_missing", "t", None) is None
        assert first.id in [p.id for p in await store.list_prompts("p1")]
        assert first.id not in [p.id for p in await store.list_prompts("p2")]

    run(database_url, body)


def test_files_and_keys(database_url: str) -> None:
    async def body(store: Store) -> None:
        record = FileRecord(new_id("file-"), "a.txt", 3, "user_data", 5, "p1")
        await store.add_file(record)
        assert await store.get_file(record.id, "p1") == record and await store.get_file(record.id, "p2") is None
        assert record in await store.list_files("p1", "user_data")
        assert record not in await store.list_files("p1", "batch") and record not in await store.list_files("p2")
        assert not await store.delete_file(record.id, "p2")
        assert await store.delete_file(record.id, "p1") and await store.get_file(record.id, "p1") is None
        key_id, key = await store.create_key("alice", "research")
        assert key.startswith("sk-tg-") and len(key) > 40 and key_id.startswith("key_")
        assert await store.key_project(hash_key(key)) == "research"
        assert await store.key_project(hash_key(key + "x")) is None
        assert any(k.id == key_id and k.project == "research" and k.revoked_at is None
                   for k in await store.list_keys())
        assert await store.revoke_key(key_id) and not await store.revoke_key(key_id)
        assert await store.key_project(hash_key(key)) is None

    run(database_url, body)


@pytest.fixture
def two_apps(fresh_postgres: str, tmp_path: Path) -> Iterator[tuple[TestClient, TestClient]]:  # type: ignore[type-arg]
    """Two app instances (separate data dirs) sharing one PostgreSQL database."""
    apps = [
        create_app(Settings(database_url=fresh_postgres, data_dir=str(tmp_path / name), api_keys=(KEY,)),
                   backends=[NgramBackend()])
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


def test_rate_limit_gives_429_per_project(tmp_path: Path) -> None:
    settings = Settings(data_dir=str(tmp_path), api_keys=(KEY,), rate_limit_per_minute=2)
    other = asyncio.run(_make_key(settings, "other"))
    app = create_app(settings, backends=[NGRAM])
    with TestClient(app) as client:
        mine = {"Authorization": f"Bearer {KEY}"}
        assert [client.get("/v1/models", headers=mine).status_code for _ in range(2)] == [200, 200]
        limited = client.get("/v1/models", headers=mine)
        assert limited.status_code == 429 and 0 < int(limited.headers["Retry-After"]) <= 60
        assert limited.json()["error"]["code"] == "rate_limit_exceeded"
        assert limited.json()["error"]["type"] == "requests"
        elsewhere = client.get("/v1/models", headers={"Authorization": f"Bearer {other}"})
        assert elsewhere.status_code == 200  # the limit is per project


async def _make_key(settings: Settings, project: str = "default") -> str:
    store = Store(settings.resolved_database_url)
    try:
        await store.create_schema()
        return (await store.create_key("bob", project))[1]
    finally:
        await store.dispose()


def test_created_keys_authenticate(tmp_path: Path) -> None:
    settings = Settings(data_dir=str(tmp_path))
    app = create_app(settings, backends=[NgramBackend()])

    async def make_key() -> str:
        store = Store(settings.resolved_database_url)
        try:
            await store.create_schema()
            return (await store.create_key("bob"))[1]
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

    app = create_app(Settings(data_dir=str(tmp_path), api_keys=(KEY,)), backends=[NgramBackend()])
    monkeypatch.setattr(app.state.store, "settle_response", broken_save)
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


def test_tables_of_an_older_release_are_brought_up_to_date(blank_database_url: str) -> None:
    url = blank_database_url

    async def main() -> None:
        store = Store(url)
        try:
            async with store.engine.begin() as conn:  # the previous release's tables, with a row each
                await conn.execute(sa.text("CREATE TABLE textgen_api_keys (id VARCHAR(64) PRIMARY KEY, "
                                           "name VARCHAR(200) NOT NULL, key_hash VARCHAR(64) NOT NULL UNIQUE, "
                                           "created_at BIGINT NOT NULL)"))
                await conn.execute(sa.text("CREATE TABLE textgen_responses (id VARCHAR(64) PRIMARY KEY, "
                                           "created_at BIGINT NOT NULL, body TEXT NOT NULL, "
                                           "input_items TEXT NOT NULL, conversation TEXT NOT NULL)"))
                await conn.execute(sa.text("INSERT INTO textgen_api_keys VALUES ('key_old', 'old', :h, 1)"),
                                   {"h": hash_key("old-key")})
                await conn.execute(sa.text("INSERT INTO textgen_responses VALUES "
                                           "('resp_old', 1, '{\"id\": \"resp_old\"}', :items, '[]')"),
                                   {"items": '[{"id": "msg_old", "role": "user", "content": []}]'})
            await store.create_schema()
            assert await store.key_project(hash_key("old-key")) == "default"
            old = await store.get_response("resp_old", "default")
            assert old is not None and old.status == "completed" and old.entries == []
            assert old.input_items == [MessageItem(id="msg_old", role="user")]  # stored without a type
            rid = new_id("resp_")
            await store.create_response("default", _response(id=rid, created_at=2, status="in_progress"), [], None)
            assert await store.get_response(rid, "default") is not None
        finally:
            await store.dispose()

    asyncio.run(main())


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def blank_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database of its own (a new PostgreSQL database, dropped afterwards)."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
        return
    import asyncpg

    postgres_url = str(request.getfixturevalue("postgres_url"))
    admin, name = postgres_url.replace("postgresql+asyncpg://", "postgresql://"), f"textgen_old_{new_id('')[:12]}"

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


# The prompt tables as the first release created them: a prompt name was unique across the whole server.
_FIRST_RELEASE_PROMPTS = [
    "CREATE TABLE textgen_prompts (id VARCHAR(64) NOT NULL, name VARCHAR(200), current_version INTEGER NOT NULL, "
    "created_at BIGINT NOT NULL, PRIMARY KEY (id), UNIQUE (name))",
    "CREATE TABLE textgen_prompt_versions (prompt_id VARCHAR(64) NOT NULL, version INTEGER NOT NULL, "
    "template TEXT NOT NULL, instructions TEXT, created_at BIGINT NOT NULL, PRIMARY KEY (prompt_id, version), "
    "FOREIGN KEY(prompt_id) REFERENCES textgen_prompts (id))",
    "INSERT INTO textgen_prompts VALUES ('pmpt_old', 'greeting', 2, 1)",
    "INSERT INTO textgen_prompts VALUES ('pmpt_old2', 'farewell', 1, 2)",
    "INSERT INTO textgen_prompt_versions VALUES ('pmpt_old', 1, '\"hello {{x}}\"', NULL, 1)",
    "INSERT INTO textgen_prompt_versions VALUES ('pmpt_old', 2, '\"hi {{x}}\"', 'be brief', 3)",
    "INSERT INTO textgen_prompt_versions VALUES ('pmpt_old2', 1, '\"bye\"', NULL, 2)",
]


def test_global_prompt_names_of_an_older_release_become_per_project(blank_database_url: str) -> None:
    async def main() -> None:
        store, rival = Store(blank_database_url), Store(blank_database_url)
        try:
            async with store.engine.begin() as conn:
                for sql in _FIRST_RELEASE_PROMPTS:
                    await conn.execute(sa.text(sql))
            async with store.engine.connect() as conn:  # the old database refuses a second "greeting"
                with pytest.raises(IntegrityError):
                    await conn.execute(sa.text("INSERT INTO textgen_prompts VALUES ('pmpt_x', 'greeting', 1, 4)"))
            await asyncio.gather(store.create_schema(), rival.create_schema())  # two instances start at once
            await store.create_schema()  # and a later start finds nothing to do

            old = await store.get_prompt("default", "pmpt_old")  # rows and versions kept, in the default project
            assert old is not None and (old.name, old.version, old.template, old.instructions) == (
                "greeting", 2, "hi {{x}}", "be brief")
            first = await store.get_prompt("default", "pmpt_old", 1)
            assert first is not None and first.template == "hello {{x}}"
            assert [p.id for p in await store.list_prompts("default")] == ["pmpt_old2", "pmpt_old"]

            mine = await store.create_prompt("p1", "greeting", "mine", None)  # same name, other projects
            theirs = await store.create_prompt("p2", "greeting", "theirs", None)
            assert mine.id != theirs.id
            with pytest.raises(Conflict):  # still unique within one project
                await store.create_prompt("p1", "greeting", "again", None)
            with pytest.raises(Conflict):
                await store.create_prompt("default", "farewell", "again", None)
            got = await store.get_prompt("p2", theirs.id)
            assert got is not None and got.template == "theirs"
            assert await store.get_prompt("p1", theirs.id) is None
            assert await store.add_prompt_version("p1", mine.id, "mine v2", None) is not None

            async with store.engine.connect() as conn:  # versions still need an existing prompt
                with pytest.raises(IntegrityError):
                    await conn.execute(sa.text("INSERT INTO textgen_prompt_versions VALUES ('pmpt_none', 1, '\"t\"', "
                                               "NULL, 5)"))
                await conn.rollback()
                count = (await conn.execute(sa.text("SELECT count(*) FROM textgen_prompt_versions"))).scalar()
            assert count == 3 + 2 + 1
        finally:
            await store.dispose()
            await rival.dispose()

    asyncio.run(main())
