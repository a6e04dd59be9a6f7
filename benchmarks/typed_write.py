"""Typed writes into a long-lived ledger: CPU and wall per write, this tree beside others.

    python benchmarks/typed_write.py                         # 100,000 rows, SQLite
    python benchmarks/typed_write.py --tree /tmp/old --repeat 2
    python benchmarks/typed_write.py --database-url postgresql+asyncpg://127.0.0.1:5432/test

The statement is ``benchmarks/ledger_scale.py``'s (one deposit, then buys, sells and
dividends over 2016-2025 in 40 symbols), imported into one portfolio. Each tree runs in a
fresh subprocess on a fresh database (SQLite in a temporary directory, or a scratch
PostgreSQL database created and dropped): after the import one read keeps the user's
ledger columns (as the server's first read does), then ``--writes`` typed writes through
``service.ledger.writes.record`` (buys and sells of one share of the first symbol,
alternating, each in its own write transaction). Reported: the median CPU seconds of the
process per write (the steadier figure on a shared machine) and the median wall time,
the first three writes left out; with ``--repeat``, the run of least CPU of each tree,
the trees alternating. Never asserted.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from _harness import child_json

HERE = Path(__file__).resolve().parent.parent

CHILD = r"""
import datetime as dt, json, statistics, sys, time
from decimal import Decimal

sys.path.insert(0, sys.argv[3])
import ledger_scale as ls
from _import_child import bench_user, import_once, on_scratch_database
from service.db import Database
from service.imports.services import ImportOptions
from service.ledger import read
from service.ledger.writes import LedgerEntry, record

n, url, writes = int(sys.argv[1]), sys.argv[2], int(sys.argv[4])
symbols = sys.argv[5].split()
data = ("\n".join(ls.statement(n, symbols)) + "\n").encode()


async def run(db_url):
    db = Database(db_url)
    try:
        uid, (pid,) = await bench_user(db, {"name": "long-lived"})
        await import_once(db, uid, pid, data, ImportOptions(format="csv", create_assets=True))
        async with db.read() as s:
            await read.columns(await s.connection(), uid)
        cpu, wall = [], []
        for i in range(writes):
            kind = "buy" if i % 2 == 0 else "sell"
            entry = LedgerEntry(symbols[0], kind, Decimal(1), Decimal("100.5"), Decimal(0), dt.date(2025, 12, 31))
            w, c = time.perf_counter(), time.process_time()
            async with db.write() as s:
                await record(s, uid, pid, entry)
            wall.append(time.perf_counter() - w)
            cpu.append(time.process_time() - c)
    finally:
        await db.dispose()
    return {"cpu": statistics.median(cpu[3:]), "wall": statistics.median(wall[3:])}

print(json.dumps(on_scratch_database(url, run)))
"""


def _run(tree: Path, n: int, url: str, writes: int, symbols: list[str]) -> dict[str, float]:
    args = ["-c", CHILD, str(n), url, str(HERE / "benchmarks"), str(writes), " ".join(symbols)]
    return child_json(args, tree)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--writes", type=int, default=15)
    parser.add_argument("--database-url", default="sqlite", help="postgresql+asyncpg://... (default: SQLite)")
    parser.add_argument("--tree", action="append", default=[], help="another checkout to time too")
    parser.add_argument("--repeat", type=int, default=1, help="runs per tree; the one of least CPU")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE / "benchmarks"))
    import ledger_scale

    symbols = ledger_scale._symbols(HERE)
    backend = "SQLite" if args.database_url == "sqlite" else "PostgreSQL"
    print(f"typed write into {args.rows:,} rows, {backend}, load {os.getloadavg()[0]:.1f}")
    print("| tree | CPU per write (ms) | wall per write (ms) |")
    print("|---|---|---|")
    trees = [*map(Path, args.tree), HERE]
    best: dict[Path, dict[str, float]] = {}
    for _ in range(args.repeat):  # trees alternate: a change of load hits each alike
        for tree in trees:
            res = _run(tree, args.rows, args.database_url, args.writes, symbols)
            if tree not in best or res["cpu"] < best[tree]["cpu"]:
                best[tree] = res
    for tree in trees:
        name = "this tree" if tree == HERE else str(tree)
        print(f"| {name} | {best[tree]['cpu'] * 1e3:.1f} | {best[tree]['wall'] * 1e3:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
