"""`make serve`'s script as a user runs it: both servers up, no secret in any log line, a clean stop.

One real run of ``scripts/serve.sh`` (the finance API and the Responses API, SQLite under a
temporary ``var/``): a session that uses every kind of credential the servers take (an API
token, also in a WebSocket URL as browsers must send it; an API key; a browser session; a
password; a Responses API key), then SIGTERM. The script must stop both servers within
10 seconds, exit 0, leave no process of its group behind, and no credential, nor
Python's warning about leaked semaphores, may appear in what the servers printed.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

from tests.conftest import ServerProcess, free_port, launch_process, wait_until_ready

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path, dict[str, str]]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QC_", "TEXTGEN_"))}
    ports = {"PORT": str(free_port()), "TEXTGEN_PORT": str(free_port())}
    env.update(ports, PY=sys.executable, QC_RATE_LIMIT_ENABLED="false")
    (tmp_path / "var").mkdir()
    key = subprocess.run(
        [sys.executable, "-m", "textgen", "keys", "create", "demo"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    (tmp_path / "var" / "textgen-demo-key").write_text(key + "\n")
    log = tmp_path / "serve.log"
    proc = launch_process(
        ["bash", str(ROOT / "scripts" / "serve.sh")],
        log=log, env=env, cwd=tmp_path, start_new_session=True,
    ).proc  # fmt: skip
    try:
        yield proc, log, {**ports, "key": key}
    finally:
        if _group_alive(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def test_serve_redacts_secrets_and_stops_cleanly_on_sigterm(
    served: tuple[subprocess.Popen[bytes], Path, dict[str, str]],
) -> None:
    proc, log, info = served
    api = f"http://127.0.0.1:{info['PORT']}"
    responses = f"http://127.0.0.1:{info['TEXTGEN_PORT']}/v1"
    # the first start may compile kernels on a loaded machine
    wait_until_ready(ServerProcess(proc, log), f"{api}/ready", timeout=600)
    wait_until_ready(
        ServerProcess(proc, log), f"{responses}/models",
        headers={"Authorization": f"Bearer {info['key']}"}, timeout=600,
    )  # fmt: skip

    password = "walkthrough-2026"  # public: the banner prints it
    typed = "x-" + secrets.token_hex(8)  # a password as a careless client would put it in a URL
    with httpx.Client(base_url=api, timeout=30) as http:
        token = http.post("/api/auth/token/", json={"username": "demo", "password": password})
        token = token.json()["token"]
        auth = {"Authorization": f"Token {token}"}
        api_key = http.post("/api/auth/api-keys/", json={"name": "ci"}, headers=auth).json()["key"]
        login = http.post("/api/auth/login/", json={"username": "demo", "password": password})
        session = login.cookies.get("qc_session") or next(iter(login.cookies.values()))
        # Credentials in URLs, as careless clients send them: each line is logged.
        http.get(f"/api/portfolios/?token={token}")
        http.get(f"/api/portfolios/?api_key={api_key}")
        http.get(f"/api/auth/me/?session={session}")
        http.get(f"/api/auth/login/?password={typed}")
    with connect(f"ws://127.0.0.1:{info['PORT']}/ws/realtime/?token={token}") as ws:
        ws.send(json.dumps({"type": "subscribe_asset", "symbol": "AAPL"}))
        ws.recv(timeout=30)
    httpx.get(f"{responses}/models?api_key={info['key']}", timeout=30)

    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 0
    while _group_alive(proc.pid) and time.monotonic() - start < 10:
        time.sleep(0.1)
    assert not _group_alive(proc.pid), "a server outlived serve.sh"

    text = log.read_text()
    assert "ws/realtime" in text and "/api/portfolios/" in text  # the access log was written
    for secret in (token, api_key, session, typed, info["key"]):
        assert secret not in text
    assert "leaked semaphore" not in text
