"""A generic-CSV statement of N rows imported through the import service: rows/s, wall and CPU.

    python benchmarks/imports_csv.py                        # 100,000 rows, SQLite
    python benchmarks/imports_csv.py --rows 20000 --database-url postgresql+asyncpg://127.0.0.1/test
    python benchmarks/imports_csv.py --tree /tmp/old        # also the same on another checkout

The statement is ``benchmarks/ledger_scale.py``'s (``date,type,symbol,quantity,price,fees,
amount,id``: one deposit, then buys, sells and dividends over 2016-2025 in 40 symbols).
Each tree runs in a fresh subprocess on a fresh database (SQLite in a temporary
directory, or a scratch PostgreSQL database created and dropped):
``service.imports.services.import_statement`` (what ``POST /api/portfolios/{id}/import/``
calls) after a warm-up import of a few rows into another portfolio, as a dry run, the
import, and the same file again (every row a duplicate), into a portfolio with the strict
cash policy. Wall and CPU seconds of the process (the machine may be shared: CPU is the
steadier figure): rows/s by wall and by CPU seconds; with ``--repeat``, the run of least
CPU of each tree, the trees alternating. Reported, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

CHILD = r"""
import asyncio, json, sys, tempfile, time, uuid

sys.path.insert(0, sys.argv[3])
import ledger_scale as ls
from service.db import Database, migrate
from service.db.models import Portfolio, User
from service.imports.services import ImportOptions, import_statement

n, url, profile = int(sys.argv[1]), sys.argv[2], sys.argv[4]
symbols = sys.argv[5].split()
lines = ls.statement(n, symbols)
data = ("\n".join(lines) + "\n").encode()
warm_data = ("\n".join(lines[:6]) + "\n").encode()


async def admin(sql):
    import asyncpg
    conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


async def run(db_url):
    db = Database(db_url)
    out = {}
    try:
        await migrate(db)
        async with db.write() as s:
            user = User(username="bench", password_hash="x")
            s.add(user)
            await s.flush()
            portfolio = Portfolio(user_id=user.id, name="imported", cash_policy="strict")
            warm = Portfolio(user_id=user.id, name="warm-up", cash_policy="strict")
            s.add_all([portfolio, warm])
            await s.flush()
            uid, pid, warm_id = user.id, portfolio.id, warm.id
        opts = ImportOptions(format="csv", create_assets=True)
        await import_statement(db, uid, warm_id, warm_data, opts)
        for label, dry in (("dry_run", True), ("import", False), ("again", False)):
            o = ImportOptions(format="csv", dry_run=dry, create_assets=True)
            if profile and label == "import":
                import cProfile
                prof = cProfile.Profile()
                prof.enable()
            w, c = time.perf_counter(), time.process_time()
            report = await import_statement(db, uid, pid, data, o)
            out[label] = (time.perf_counter() - w, time.process_time() - c)
            if profile and label == "import":
                prof.disable()
                prof.dump_stats(profile)
            assert not report.errors, report.errors[:3]
            out[label + "_added"] = report.added
            out[label + "_skipped"] = report.skipped_duplicates
    finally:
        await db.dispose()
    return out

if url == "sqlite":
    with tempfile.TemporaryDirectory() as tmp:
        res = asyncio.run(run(f"sqlite+aiosqlite:///{tmp}/bench.db"))
else:
    name = f"qc_bench_{uuid.uuid4().hex[:10]}"
    asyncio.run(admin(f'CREATE DATABASE "{name}"'))
    try:
        res = asyncio.run(run(url.rpartition("/")[0] + "/" + name))
    finally:
        asyncio.run(admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
print(json.dumps({"rows": n, "bytes": len(data), **res}))
"""


def _symbols() -> list[str]:
    sys.path.insert(0, str(HERE / "benchmarks"))
    import ledger_scale

    return ledger_scale._symbols(HERE)


def _run(tree: Path, n: int, url: str, symbols: list[str], profile: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(n), url, str(HERE / "benchmarks"), profile, " ".join(symbols)],
        capture_output=True, text=True, check=False, env=env,
    )  # fmt: skip
    if proc.returncode != 0:
        print(proc.stderr[-3000:], file=sys.stderr)
        raise SystemExit(proc.returncode)
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument(
        "--database-url", default="sqlite", help="postgresql+asyncpg://... (default: SQLite)"
    )
    parser.add_argument("--tree", action="append", default=[], help="another checkout to time too")
    parser.add_argument("--repeat", type=int, default=1, help="runs per tree; the one of least CPU")
    parser.add_argument("--profile", default="", help="write cProfile stats of the import here")
    args = parser.parse_args(argv)
    symbols = _symbols()
    backend = "SQLite" if args.database_url == "sqlite" else "PostgreSQL"
    print(f"generic CSV, {args.rows:,} rows, {backend}, strict cash policy")
    print(
        "| tree | dry run rows/s wall / CPU (s) | import rows/s wall / CPU (s) "
        "| same file again rows/s wall / CPU (s) |"
    )
    print("|---|---|---|---|")
    trees = [*map(Path, args.tree), HERE]
    best: dict[Path, dict[str, tuple[float, float]]] = {t: {} for t in trees}
    for _ in range(args.repeat):  # trees alternate: a change of load hits each alike
        for tree in trees:
            res = _run(
                tree, args.rows, args.database_url, symbols, args.profile if tree == HERE else ""
            )
            for label in ("dry_run", "import", "again"):
                wall, cpu = res[label]  # type: ignore[misc]
                if label not in best[tree] or cpu < best[tree][label][1]:
                    best[tree][label] = (wall, cpu)
    for tree in trees:
        cells = []
        for label in ("dry_run", "import", "again"):
            wall, cpu = best[tree][label]
            cells.append(
                f"{args.rows / wall:,.0f} / {args.rows / cpu:,.0f} ({wall:.2f} / {cpu:.2f})"
            )
        name = "this tree" if tree == HERE else str(tree)
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
