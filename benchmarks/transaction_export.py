"""``GET /api/transactions/?format=csv`` over a ledger of N rows: CPU and wall time.

    python benchmarks/transaction_export.py --rows 100000
    python benchmarks/transaction_export.py --rows 300000 --database postgresql+asyncpg://...

One user, one portfolio of N buys (20 a day, inserted in one statement: the export
reads rows, it needs no positions), an in-process app (Litestar's test client, no
server), the export requested twice. CPU time is the process's (the database driver's
thread included on SQLite). Numbers are reported, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import text  # noqa: E402

from tests.service.conftest import _build, _migrate  # noqa: E402

_INSERT = text(
    "INSERT INTO transactions (portfolio_id, asset_id, transaction_type, quantity, price, fees, "
    "transaction_date, created_at) VALUES (:p, :a, 'buy', :q, :px, :f, :d, CURRENT_TIMESTAMP)"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--database", default=None, help="default: SQLite in a temporary directory")
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp())
    url = args.database or f"sqlite+aiosqlite:///{data / 'export.db'}"
    asyncio.run(_migrate(url))
    api, client = _build(url, data, rate_limit_anonymous="100000/hour")
    _, h = api.user("bench")
    pid = client.post("/api/portfolios/", json={"name": "export"}, headers=h).json()["id"]
    aid = client.get("/api/assets/?search=AAPL", headers=h).json()["results"][0]["id"]
    rows = [
        {"p": pid, "a": aid, "d": dt.date(2000, 1, 1) + dt.timedelta(days=i // 20),
         "q": "1.00000000", "px": f"{100 + i % 50}.25", "f": "0.00"}
        for i in range(args.rows)
    ]  # fmt: skip

    async def fill(db: Any) -> None:
        async with db.write() as s:
            await s.execute(_INSERT, rows)

    api.call(fill, api.db)
    for _ in range(2):
        wall, cpu = time.perf_counter(), time.process_time()
        r = client.get(f"/api/transactions/?portfolio_id={pid}&format=csv", headers=h)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        lines = r.text.count("\n") - 1
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        print(f"rows={lines:,} wall={wall:.2f} s cpu={cpu:.2f} s bytes={len(r.content):,} peak RSS={rss} MiB")
    client.__exit__(None, None, None)


if __name__ == "__main__":
    main()
