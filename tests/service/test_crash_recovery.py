"""A real uvicorn server killed with SIGKILL in the middle of a write load restarts with a consistent ledger.

Run on the embedded SQLite database (WAL), where durability is the service's own
business; PostgreSQL's crash safety is the server's, and the concurrency tests
already exercise the PostgreSQL locking path.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pandas as pd
import pytest
from sqlalchemy import select

from quantcore import tax
from quantcore.tax.lots import from_fixed
from service.auth.services import create_token
from service.db import Database
from service.db.models import Position, Transaction
from tests.conftest import ServerProcess, free_port, start_process
from tests.service.conftest import _insert_user

pytestmark = pytest.mark.slow


class Server:
    """``uvicorn --factory service.app:app_from_env`` in a child process (restartable)."""

    def __init__(self, database_url: str, data_dir: Path) -> None:
        self.port = free_port()
        self.data_dir = data_dir
        self.env = {
            **os.environ,
            "QC_DATABASE_URL": database_url,
            "QC_DATA_DIR": str(data_dir),
            "QC_RATE_LIMIT_AUTHENTICATED": "1000000/hour",
        }
        self.process: ServerProcess | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        cmd = [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            "service.app:app_from_env",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--log-level",
            "warning",
        ]
        log = self.data_dir / f"uvicorn-{self.port}-{time.monotonic_ns()}.log"
        self.process = start_process(cmd, log=log, env=self.env, url=f"{self.url}/health")

    def kill(self) -> None:
        assert self.process is not None
        self.process.proc.send_signal(signal.SIGKILL)
        self.process.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()


@pytest.fixture
def database_url(sqlite_database: str) -> str:
    return sqlite_database


@pytest.fixture
def server(database_url: str, tmp_path: Path) -> Iterator[Server]:
    srv = Server(database_url, tmp_path)
    yield srv
    srv.stop()


async def _user_token(url: str) -> str:
    db = Database(url)
    try:
        import uuid

        uid = await _insert_user(db, f"crash_{uuid.uuid4().hex[:8]}")
        return await create_token(db, uid)
    finally:
        await db.dispose()


async def _ledger(url: str, pid: int) -> tuple[list[Transaction], list[Position]]:
    db = Database(url)
    try:
        async with db.read() as s:
            txns = list(
                (
                    await s.execute(
                        select(Transaction)
                        .where(Transaction.portfolio_id == pid)
                        .order_by(Transaction.id)
                    )
                ).scalars()
            )
            pos = list(
                (await s.execute(select(Position).where(Position.portfolio_id == pid))).scalars()
            )
        return txns, pos
    finally:
        await db.dispose()


def test_sigkill_mid_write_load(server: Server, database_url: str) -> None:
    token = asyncio.run(_user_token(database_url))
    h = {"Authorization": f"Token {token}"}
    server.start()
    pid = httpx.post(f"{server.url}/api/portfolios/", json={"name": "crash"}, headers=h).json()[
        "id"
    ]
    acknowledged: list[int] = []
    errors: list[str] = []
    stop = threading.Event()

    def writer(seed: int) -> None:
        with httpx.Client(base_url=server.url, headers=h, timeout=10) as client:
            i = 0
            while not stop.is_set():
                kind = "buy" if (i + seed) % 3 else "sell"
                body = {
                    "portfolio": pid,
                    "asset_symbol": "SPY",
                    "transaction_type": kind,
                    "quantity": "1.5",
                    "price": f"{100 + i % 7}.25",
                    "transaction_date": "2025-01-02",
                    "fees": "0.10",
                }
                try:
                    r = client.post("/api/transactions/", json=body)
                except httpx.HTTPError:
                    return  # the server is gone
                if r.status_code == 201:
                    acknowledged.append(r.json()["id"])
                elif not (
                    r.status_code == 400 and r.json()["details"]["code"] == "insufficient_quantity"
                ):
                    errors.append(r.text)
                i += 1

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 30
    while len(acknowledged) < 40 and time.monotonic() < deadline:
        time.sleep(0.02)
    server.kill()  # mid-load: writers are still sending
    stop.set()
    for t in threads:
        t.join(timeout=15)
    assert not errors
    assert len(acknowledged) >= 40

    server.start()
    txns, positions = asyncio.run(_ledger(database_url, pid))
    ids = {t.id for t in txns}
    assert set(acknowledged) <= ids  # every acknowledged write survived
    # the ledger relieves (no oversell ever committed) and the position is its open lots
    # (quantcore.tax, FIFO), rows in the service's day order: buys, then sells by amounts
    rank = {"dividend": 0, "buy": 1, "sell": 2}
    rows = sorted(
        (t.transaction_date, rank[t.transaction_type], t.price, t.quantity, t.fees, t.id)
        for t in txns
    )
    kinds = {v: k for k, v in rank.items()}
    table = pd.DataFrame(
        [("SPY", d, kinds[k], q, p, f) for d, k, p, q, f, _ in rows],
        columns=["symbol", "date", "type", "quantity", "price", "fees"],
    )
    _, qty_fixed, basis_fixed = tax.match_lots(table).position_totals()
    if qty_fixed.size == 0:
        assert positions == []
    else:
        want = (from_fixed(int(qty_fixed[0])), from_fixed(int(basis_fixed[0])))
        assert [(p.quantity, p.cost_basis) for p in positions] == [want]
    r = httpx.get(f"{server.url}/api/portfolios/{pid}/", headers=h)
    assert r.status_code == 200 and r.json()["position_count"] == len(positions)
    # the restarted server keeps accepting writes
    r = httpx.post(
        f"{server.url}/api/transactions/",
        headers=h,
        json={
            "portfolio": pid,
            "asset_symbol": "SPY",
            "transaction_type": "buy",
            "quantity": "1",
            "price": "1",
            "transaction_date": "2025-01-03",
        },
    )
    assert r.status_code == 201, r.text
