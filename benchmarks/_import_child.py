"""The child process of the import benchmarks (``imports_csv.py``, ``imports_ofx.py``).

    PYTHONPATH=TREE python benchmarks/_import_child.py {csv|ofx} N URL [--symbols "A B"] [--parse] [--profile F]

One tree's import service (the ``service`` package on ``PYTHONPATH``, which may be an
older checkout's) on a fresh database: SQLite in a temporary directory (``URL`` is
``sqlite``) or a scratch PostgreSQL database created on that server and dropped. The
statement comes from this directory (the script's own, first on ``sys.path``), so every
tree imports the same file: ``ledger_scale.statement`` (generic CSV, ``--symbols``) or
``imports_ofx.statement`` (OFX 2.x).

A user with a portfolio of the strict cash policy and a warm-up portfolio; a warm-up
import of the statement's first rows (numba's cached kernels loaded, SQL compiled); with
``--parse`` the parser alone; then a dry run, the import and the same file again, each
as the endpoint runs it. Prints one JSON line: per stage (wall, CPU) seconds and the
CPU seconds of the PostgreSQL server's backends on the database (``<stage>_server_cpu``,
read from ``/proc``: the server must run on this machine; 0 on SQLite), the rows
added and skipped, the import's counts, the rows ignored, peak RSS before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import json
import os
import resource
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from service.db import Database, migrate
from service.db.models import Portfolio, User
from service.imports import parse_statement
from service.imports import services as imports


def _statements(fmt: str, n: int, symbols: list[str]) -> tuple[bytes, bytes]:
    """The statement of ``n`` rows and the warm-up one (its first few rows)."""
    if fmt == "csv":
        import ledger_scale

        lines = ledger_scale.statement(n, symbols)
        return ("\n".join(lines) + "\n").encode(), ("\n".join(lines[:6]) + "\n").encode()
    import imports_ofx

    return imports_ofx.statement(n), imports_ofx.statement(8)


async def import_once(db: Database, uid: int, pid: int, data: bytes, opts: Any) -> Any:
    """The import as ``POST .../import/`` runs it in this tree: the service takes the
    request's session (a write transaction, committed here) and a dry run its own read
    session; an older tree's service took the ``Database`` and opened its sessions."""
    if next(iter(inspect.signature(imports.import_statement).parameters)) == "db":
        return await imports.import_statement(db, uid, pid, data, opts)
    if opts.dry_run:
        return await imports.preview_statement(db, uid, pid, data, opts)
    async with db.write() as s:
        return await imports.import_statement(s, uid, pid, data, opts)


async def _admin(url: str, sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


async def bench_user(db: Database, *portfolios: dict[str, Any]) -> tuple[int, list[int]]:
    """Migrate ``db``, add the user ``bench`` and one portfolio per keyword set: their ids."""
    await migrate(db)
    async with db.write() as s:
        user = User(username="bench", password_hash="x")
        s.add(user)
        await s.flush()
        rows = [Portfolio(user_id=user.id, **kw) for kw in portfolios]
        s.add_all(rows)
        await s.flush()
        return user.id, [p.id for p in rows]


async def server_cpu(db: Database) -> dict[int, float]:
    """CPU seconds so far of each PostgreSQL backend serving ``db``'s database, by process
    id (read from ``/proc``: the server on this machine); empty on SQLite or elsewhere."""
    if db.engine.dialect.name != "postgresql":
        return {}
    async with db.engine.connect() as conn:
        pids = (
            await conn.exec_driver_sql(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
            )
        ).scalars().all()
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[int, float] = {}
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            out[pid] = (int(fields[11]) + int(fields[12])) / tick  # utime + stime
    return out


def on_scratch_database(url: str, run: Callable[[str], Awaitable[Any]]) -> Any:
    """``run(database URL)`` on a fresh database: SQLite in a temporary directory when
    ``url`` is ``sqlite``, else one created on that PostgreSQL server and dropped after."""
    if url == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            return asyncio.run(run(f"sqlite+aiosqlite:///{tmp}/bench.db"))
    name = f"qc_bench_{uuid.uuid4().hex[:10]}"
    asyncio.run(_admin(url, f'CREATE DATABASE "{name}"'))
    try:
        return asyncio.run(run(url.rpartition("/")[0] + "/" + name))
    finally:
        asyncio.run(_admin(url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


async def _run(db_url: str, args: argparse.Namespace, data: bytes, warm: bytes) -> dict[str, Any]:
    db = Database(db_url)
    out: dict[str, Any] = {}
    try:
        uid, (pid, warm_id) = await bench_user(
            db,
            {"name": "imported", "cash_policy": "strict"},
            {"name": "warm-up", "cash_policy": "strict"},
        )
        options = imports.ImportOptions
        await import_once(db, uid, warm_id, warm, options(format=args.format, create_assets=True))
        out["rss_before"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        if args.parse:
            w, c = time.perf_counter(), time.process_time()
            parse_statement(data, args.format, columns=True)  # as the service reads a statement
            out["parse"] = (time.perf_counter() - w, time.process_time() - c)
        for label, dry in (("dry_run", True), ("import", False), ("again", False)):
            opts = options(format=args.format, dry_run=dry, create_assets=True)
            profiler = None
            if args.profile and label == "import":
                import cProfile

                profiler = cProfile.Profile()
                profiler.enable()
            before = await server_cpu(db)
            w, c = time.perf_counter(), time.process_time()
            report = await import_once(db, uid, pid, data, opts)
            out[label] = (time.perf_counter() - w, time.process_time() - c)
            after = await server_cpu(db)
            out[label + "_server_cpu"] = sum(t - before.get(k, 0.0) for k, t in after.items())
            if profiler is not None:
                profiler.disable()
                profiler.dump_stats(args.profile)
            assert not report.errors, report.errors[:3]
            out[label + "_added"] = report.added
            out[label + "_skipped"] = report.skipped_duplicates
            if label == "import":
                out["counts"] = report.counts
                out["ignored"] = len(report.ignored)
        out["rss_after"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    finally:
        await db.dispose()
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("format", choices=("csv", "ofx"))
    p.add_argument("rows", type=int)
    p.add_argument("url", help="sqlite, or a PostgreSQL server's postgresql+asyncpg://... URL")
    p.add_argument("--symbols", default="", help="the CSV statement's symbols, space-separated")
    p.add_argument("--parse", action="store_true", help="also time the parser alone")
    p.add_argument("--profile", default="", help="write cProfile stats of the import here")
    args = p.parse_args()
    symbols = args.symbols.split()
    data, warm = _statements(args.format, args.rows, symbols)
    res = on_scratch_database(args.url, lambda db_url: _run(db_url, args, data, warm))
    print(json.dumps({"rows": args.rows, "bytes": len(data), **res}))


if __name__ == "__main__":
    main()
