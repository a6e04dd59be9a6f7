"""The tax figures after typed writes, in process: CPU per request, this tree beside others.

    python benchmarks/tax_after_write.py                       # 100,000 rows, SQLite
    python benchmarks/tax_after_write.py --tree /tmp/old       # ... and another checkout
    python benchmarks/tax_after_write.py --profile /tmp/tax    # cProfile of each request after a write
    python benchmarks/tax_after_write.py --database-url postgresql+asyncpg://127.0.0.1:5432/test

The statement is ``benchmarks/ledger_scale.py``'s (one deposit, then buys, sells and
dividends over 2016-2025 in 40 symbols), imported into one portfolio. Each tree runs in a
fresh subprocess on a fresh database (SQLite in a temporary directory, or a scratch
PostgreSQL database created and dropped): after the import, each tax request (the tax
summary of 2025, loss harvesting, the generation of the 2025 report ``all``) is called
as its endpoint calls the service (the request's session, the market of the server):
*warm* (the median of ``--repeat`` calls at one ledger version), *after a write* (one
typed buy of one share of the first symbol through ``service.ledger.writes.record``
after a read of the tax figures, then the request) and *after unread writes* (``--unread``
buys with no tax read between, as ``ledger_scale.py`` does: the writes before its tax
summary read other figures). Figures are the CPU milliseconds of the process (the wall
time on a shared 2-core machine is mostly waiting for a core), medians of ``--repeat``
rounds, and the elapsed time beside them (``(wall)``: on PostgreSQL the database's own
work is there only). Never asserted.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from _harness import child_json

HERE = Path(__file__).resolve().parent.parent

CHILD = r"""
import cProfile, datetime as dt, json, statistics, sys, time
from decimal import Decimal

sys.path.insert(0, sys.argv[3])
import ledger_scale as ls
from _import_child import bench_user, import_once, on_scratch_database
from service.app import default_provider
from service.assets.market import MarketData
from service.imports.services import ImportOptions
from service.ledger import read
from service.ledger.writes import LedgerEntry, record
from service.settings import Settings
from service.tax import services as tax
from service.db import Database

n, url, repeat, unread = int(sys.argv[1]), sys.argv[2], int(sys.argv[4]), int(sys.argv[5])
symbols = sys.argv[6].split()
profile = sys.argv[7] if len(sys.argv) > 7 else ""
data = ("\n".join(ls.statement(n, symbols)) + "\n").encode()


async def run(db_url):
    db = Database(db_url)
    market = MarketData(*default_provider(Settings.from_env()))
    try:
        uid, (pid,) = await bench_user(db, {"name": "long-lived"})
        await import_once(db, uid, pid, data, ImportOptions(format="csv", create_assets=True))
        calls = {
            "tax summary": lambda s: tax.summary(s, market, uid, 2025, pid),
            "loss harvesting": lambda s: tax.harvest(
                s, market, uid, pid, min_loss=Decimal(0), min_loss_pct=Decimal(0), as_of=None
            ),
            "tax report generate": lambda s: tax.generate_report(s, market, uid, 2025, "all", pid, "http://x"),
        }

        async def timed(name, label=""):
            prof = cProfile.Profile(time.process_time) if profile and label else None
            c, w = time.process_time(), time.perf_counter()
            if prof:
                prof.enable()
            async with db.write() as s:
                await calls[name](s)
            if prof:
                prof.disable()
                prof.dump_stats(f"{profile}-{name.replace(' ', '-')}-{label}.prof")
            walls.append((time.perf_counter() - w) * 1e3)
            return (time.process_time() - c) * 1e3

        async def write(i):
            entry = LedgerEntry(symbols[0], "buy", Decimal(1), Decimal(100), Decimal(0), dt.date(2025, 12, 30))
            async with db.write() as s:
                await record(s, uid, pid, entry)

        out = {}
        k = 0
        walls = []
        for name in calls:
            await timed(name)  # the first: kernels loaded, the lot ledger derived
            walls.clear()
            warm = statistics.median([await timed(name) for _ in range(repeat)])
            warm_wall = statistics.median(walls)
            after, chained, after_wall, chained_wall = [], [], [], []
            for r in range(repeat):
                await timed(name)  # read at this version: the next write splices from it
                await write(k); k += 1
                after.append(await timed(name, "after" if r == 0 else ""))
                after_wall.append(walls[-1])
                for _ in range(unread):
                    await write(k); k += 1
                chained.append(await timed(name, "unread" if r == 0 else ""))
                chained_wall.append(walls[-1])
            out[name] = [warm, statistics.median(after), statistics.median(chained)]
            out[name + " (wall)"] = [warm_wall, statistics.median(after_wall), statistics.median(chained_wall)]
    finally:
        await db.dispose()
    return out

print(json.dumps(on_scratch_database(url, run)))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument(
        "--database-url", default="sqlite", help="postgresql+asyncpg://... (default: SQLite)"
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--unread", type=int, default=9, help="writes with no tax read between")
    parser.add_argument("--tree", action="append", default=[], help="another checkout to time too")
    parser.add_argument("--profile", default="", help="path prefix of cProfile dumps (this tree)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE / "benchmarks"))
    import ledger_scale

    symbols = ledger_scale._symbols(HERE)
    backend = "SQLite" if args.database_url == "sqlite" else "PostgreSQL"
    print(
        f"tax requests at {args.rows:,} rows, {backend}, in process, load {os.getloadavg()[0]:.1f}"
    )
    trees = [*map(Path, args.tree), HERE]
    results = {}
    for tree in trees:
        extra = [args.profile] if args.profile and tree == HERE else []
        child = [
            "-c", CHILD, str(args.rows), args.database_url, str(HERE / "benchmarks"), str(args.repeat),
            str(args.unread), " ".join(symbols), *extra,
        ]  # fmt: skip
        results[tree] = child_json(child, tree)
    print(f"load after: {os.getloadavg()[0]:.1f}")
    head = " | ".join(
        f"{'this tree' if t == HERE else t}: warm / after a write / after {args.unread + 1} writes"
        for t in trees
    )
    print(f"| CPU ms (wall: elapsed ms) | {head} |")
    print("|---|" + "---|" * len(trees))
    for name in results[HERE]:
        cells = " | ".join(" / ".join(f"{x:,.0f}" for x in results[t][name]) for t in trees)
        print(f"| {name} | {cells} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
