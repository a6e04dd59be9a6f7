"""Projects: every resource belongs to the project of the key that made it; other projects get 404s.

The ownership matrix runs on SQLite and on the real PostgreSQL, in-process, with
two keys of two projects; the key commands run through ``python -m textgen``'s ``main``.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from textgen.__main__ import main
from textgen.app import create_app
from textgen.backends.builtin import NgramBackend
from textgen.settings import Settings
from textgen.store import Store

NGRAM = NgramBackend()
MODEL = "textgen-ngram"


async def _keys(url: str) -> tuple[str, str, str]:
    store = Store(url)
    try:
        await store.create_schema()
        (_, a), (_, b), (revocable_id, _) = (await store.create_key("a", "alpha"),
                                             await store.create_key("b", "beta"),
                                             await store.create_key("c", "alpha"))
        return a, b, revocable_id
    finally:
        await store.dispose()


class Caller:
    """One key's view of the app: paths are under ``/v1``."""

    def __init__(self, client: TestClient, key: str) -> None:  # type: ignore[type-arg]
        self.client, self.headers = client, {"Authorization": f"Bearer {key}"}

    def get(self, path: str, **kw: Any) -> Any:
        return self.client.get(f"/v1{path}", headers=self.headers, **kw)

    def post(self, path: str, **kw: Any) -> Any:
        return self.client.post(f"/v1{path}", headers=self.headers, **kw)

    def delete(self, path: str, **kw: Any) -> Any:
        return self.client.delete(f"/v1{path}", headers=self.headers, **kw)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def callers(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Caller, Caller]]:
    """Key A of project ``alpha`` and key B of project ``beta`` on one app."""
    url = "" if request.param == "sqlite" else str(request.getfixturevalue("fresh_postgres"))
    settings = Settings(data_dir=str(tmp_path), database_url=url, rate_limit_per_minute=0)
    key_a, key_b, _ = asyncio.run(_keys(settings.resolved_database_url))
    with TestClient(create_app(settings, backends=[NGRAM])) as client:
        yield Caller(client, key_a), Caller(client, key_b)


def _own(a: Caller) -> dict[str, Any]:
    """Project alpha's resources: a file, a prompt, a stored and a background response."""
    file = a.post("/files", files={"file": ("notes.txt", b"alpha secret notes")}, data={"purpose": "user_data"})
    assert file.status_code == 200, file.text
    prompt = a.post("/prompts", json={"template": "Say {{x}}", "name": "shared-name"})
    assert prompt.status_code == 200, prompt.text
    response = a.post("/responses", json={"model": MODEL, "input": [{"role": "user", "content": [
        {"type": "input_text", "text": "read"}, {"type": "input_file", "file_id": file.json()["id"]}]}]})
    assert response.status_code == 200, response.text
    background = a.post("/responses", json={"model": MODEL, "input": "later", "background": True})
    assert background.status_code == 200, background.text
    conversation = a.post("/conversations", json={"items": [{"role": "user", "content": "alpha secret"}]})
    assert conversation.status_code == 200, conversation.text
    return {"conversation": conversation.json()["id"], "file": file.json()["id"], "prompt": prompt.json()["id"], "response": response.json()["id"],
            "background": background.json()["id"], "item": response.json()["output"][0]["id"]}


def _error(reply: Any, status: int) -> dict[str, Any]:
    assert reply.status_code == status, (reply.status_code, reply.text)
    body: dict[str, Any] = reply.json()["error"]
    return body


def test_ownership_matrix(callers: tuple[Caller, Caller]) -> None:
    a, b = callers
    ids = _own(a)
    secret = b"alpha secret notes"
    rid, fid, pid, bid = ids["response"], ids["file"], ids["prompt"], ids["background"]
    cid = ids["conversation"]
    citem = a.get(f"/conversations/{cid}/items").json()["data"][0]["id"]
    reads = {
        "GET response": b.get(f"/responses/{rid}"),
        "GET response stream": b.get(f"/responses/{bid}", params={"stream": "true", "starting_after": 0}),
        "GET input_items": b.get(f"/responses/{rid}/input_items"),
        "POST cancel": b.post(f"/responses/{bid}/cancel"),
        "DELETE response": b.delete(f"/responses/{rid}"),
        "GET file": b.get(f"/files/{fid}"),
        "GET file content": b.get(f"/files/{fid}/content"),
        "DELETE file": b.delete(f"/files/{fid}"),
        "GET prompt": b.get(f"/prompts/{pid}"),
        "GET prompt version": b.get(f"/prompts/{pid}", params={"version": "1"}),
        "POST prompt version": b.post(f"/prompts/{pid}/versions", json={"template": "hijacked"}),
        "previous_response_id": b.post("/responses", json={"model": MODEL, "input": "go on",
                                                           "previous_response_id": rid}),
        "input_file.file_id": b.post("/responses", json={"model": MODEL, "input": [{"role": "user", "content": [
            {"type": "input_file", "file_id": fid}]}]}),
        "input_image.file_id": b.post("/responses", json={"model": MODEL, "input": [{"role": "user", "content": [
            {"type": "input_text", "text": "x"}, {"type": "input_image", "file_id": fid}]}]}),
        "item_reference": b.post("/responses", json={"model": MODEL, "input": [
            {"type": "item_reference", "id": ids["item"]}]}),
        "GET conversation": b.get(f"/conversations/{cid}"),
        "POST conversation": b.post(f"/conversations/{cid}", json={"metadata": {"x": "y"}}),
        "GET conversation items": b.get(f"/conversations/{cid}/items"),
        "POST conversation items": b.post(f"/conversations/{cid}/items", json={"items": [
            {"role": "user", "content": "x"}]}),
        "GET conversation item": b.get(f"/conversations/{cid}/items/{citem}"),
        "DELETE conversation item": b.delete(f"/conversations/{cid}/items/{citem}"),
        "DELETE conversation": b.delete(f"/conversations/{cid}"),
        "conversation": b.post("/responses", json={"model": MODEL, "input": "x", "conversation": cid}),
        "prompt.id": b.post("/responses", json={"model": MODEL, "prompt": {"id": pid, "variables": {"x": "1"}}}),
        "input_tokens previous_response_id": b.post("/responses/input_tokens", json={
            "model": MODEL, "input": "x", "previous_response_id": rid}),
        "input_tokens conversation": b.post("/responses/input_tokens", json={
            "model": MODEL, "input": "x", "conversation": cid}),
        "input_tokens file_id": b.post("/responses/input_tokens", json={"model": MODEL, "input": [
            {"role": "user", "content": [{"type": "input_file", "file_id": fid}]}]}),
        "input_tokens item_reference": b.post("/responses/input_tokens", json={"model": MODEL, "input": [
            {"type": "item_reference", "id": ids["item"]}]}),
        "conversation item_reference": b.post("/conversations", json={"items": [
            {"type": "item_reference", "id": ids["item"]}]}),
        "GET conversation items include": b.get(f"/conversations/{cid}/items",
                                                params={"include": "reasoning.encrypted_content"}),
        "GET input_items include": b.get(f"/responses/{rid}/input_items",
                                         params={"include[]": "message.output_text.logprobs"}),
    }
    for route, reply in reads.items():
        error = _error(reply, 404)  # never 403, never data
        assert secret.decode() not in reply.text and "alpha" not in reply.text, route
        assert error["type"] == "invalid_request_error", route
    assert _error(reads["previous_response_id"], 404)["param"] == "previous_response_id"
    assert _error(reads["input_file.file_id"], 404)["param"] == "input[0].content[0].file_id"
    assert _error(reads["input_image.file_id"], 404)["param"] == "input[0].content[1].file_id"
    assert _error(reads["prompt.id"], 404)["param"] == "prompt.id"
    assert _error(reads["conversation"], 404)["param"] == "conversation"
    assert _error(reads["input_tokens previous_response_id"], 404)["param"] == "previous_response_id"
    assert _error(reads["input_tokens conversation"], 404)["param"] == "conversation"
    # lists show only the caller's project
    assert b.get("/files").json()["data"] == [] and b.get("/prompts").json()["data"] == []
    assert [f["id"] for f in a.get("/files").json()["data"]] == [fid]
    assert [p["id"] for p in a.get("/prompts").json()["data"]] == [pid]
    # a prompt name is unique per project, so beta may reuse alpha's name
    assert b.post("/prompts", json={"template": "mine", "name": "shared-name"}).status_code == 200
    # nothing of alpha's changed, and alpha still reads everything
    assert a.get(f"/responses/{rid}").status_code == 200
    assert a.get(f"/files/{fid}/content").content == secret
    assert a.get(f"/prompts/{pid}").json()["version"] == "1"
    assert [i["id"] for i in a.get(f"/conversations/{cid}/items").json()["data"]] == [citem]
    follow = a.post("/responses", json={"model": MODEL, "input": "more", "previous_response_id": rid})
    assert follow.status_code == 200
    assert a.post("/responses", json={"model": MODEL, "prompt": {"id": pid, "variables": {"x": "1"}}}).status_code == 200
    inline = base64.b64encode(b"inline text").decode()
    own = b.post("/responses", json={"model": MODEL, "input": [{"role": "user", "content": [
        {"type": "input_file", "file_data": inline, "filename": "x.txt"}]}]})
    assert own.status_code == 200  # beta works normally in its own project


def test_revoked_key_is_refused_on_its_next_request(tmp_path: Path) -> None:
    settings = Settings(data_dir=str(tmp_path), rate_limit_per_minute=0)
    key_a, _, _ = asyncio.run(_keys(settings.resolved_database_url))
    app = create_app(settings, backends=[NGRAM])

    async def revoke_all_of(project: str) -> None:
        store = Store(settings.resolved_database_url)
        try:
            for key in await store.list_keys():
                if key.project == project:
                    assert await store.revoke_key(key.id)
        finally:
            await store.dispose()

    with TestClient(app) as client:
        client.headers["Authorization"] = f"Bearer {key_a}"
        assert client.get("/v1/models").status_code == 200
        asyncio.run(revoke_all_of("alpha"))
        refused = client.get("/v1/models")
        assert _error(refused, 401)["code"] == "invalid_api_key"


def test_keys_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TEXTGEN_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("TEXTGEN_DATABASE_URL", raising=False)
    assert main(["keys", "create", "alice", "--project", "research"]) == 0
    key = capsys.readouterr().out.strip()
    assert key.startswith("sk-tg-")
    assert main(["keys", "create", "bob"]) == 0
    capsys.readouterr()
    assert main(["keys", "list"]) == 0
    listing = capsys.readouterr().out
    rows = sorted((line.split("\t") for line in listing.strip().splitlines()[1:]), key=lambda r: r[1])
    assert [(r[1], r[2], r[4]) for r in rows] == [("alice", "research", "active"), ("bob", "default", "active")]
    assert key not in listing  # keys are shown once, at creation
    alice_id = rows[0][0]
    app = create_app(Settings(data_dir=str(tmp_path), rate_limit_per_minute=0), backends=[NGRAM])
    with TestClient(app) as client:
        client.headers["Authorization"] = f"Bearer {key}"
        assert client.get("/v1/models").status_code == 200
        assert main(["keys", "revoke", alice_id]) == 0
        assert client.get("/v1/models").status_code == 401
    assert main(["keys", "revoke", alice_id]) == 2  # already revoked: a clear error
    assert "no live key" in capsys.readouterr().err
    assert main(["keys", "list"]) == 0
    assert "revoked" in capsys.readouterr().out
