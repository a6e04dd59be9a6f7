"""One long-lived account: every ledger read of the service at 10k, 100k (and 1M) transactions.

    python benchmarks/ledger_scale.py                                  # 10,000 and 100,000 rows, SQLite
    python benchmarks/ledger_scale.py --rows 10000 --tree /tmp/old     # the same on another checkout
    python benchmarks/ledger_scale.py --database-url postgresql+asyncpg://127.0.0.1/test
    python benchmarks/ledger_scale.py --rows 100000 --import-only --against /tmp/old  # the import alone

A generic-CSV statement (``date,type,symbol,quantity,price,fees,amount,id``) of N rows:
one deposit, then buys, sells and dividends from 2016 to 2025 in 40 symbols of the
simulated universe (sells never exceed the shares held, dividends are paid on the
shares held at the previous close), imported into one portfolio through
``POST /api/portfolios/{id}/import/`` of a ``python -m service serve`` process run from
``--tree`` (default: this checkout), on a fresh SQLite file or a scratch PostgreSQL
database (created and dropped). A statement above 60 MiB is imported in parts.

Then the server is restarted and each request is timed: *first* (the first such
request after the start), *warm* (median of ``--repeat`` more at the same ledger
version), and *after a write* (one typed buy through ``POST /api/transactions/``,
itself timed, then the request once: what no response cache can hide). The typed
write's figure is the median of those writes. Times are wall-clock milliseconds at
the client (httpx, keep-alive, one connection); nothing is asserted. The server's peak
resident set (``VmHWM``, with its children) closes the table: the process that imported
the statement, then the one that served the reads.

The table is printed as Markdown (``docs/service.md``, "The ledger", has the runs).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent.parent
PASSWORD = "long-lived ledger 1"  # must not contain the user name
FIRST_DAY, LAST_DAY = dt.date(2016, 1, 4), dt.date(2025, 12, 31)
PART_BYTES = 60 * 1024 * 1024

__all__ = ["main", "statement"]


def _symbols(tree: Path) -> list[str]:
    code = (
        "from service.marketdata.universe import UNIVERSE\n"
        "print(' '.join(a.symbol for a in UNIVERSE if a.currency == 'USD' and a.asset_type != 'crypto'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return out.stdout.split()[:40]


def statement(n: int, symbols: list[str], seed: int = 7) -> list[str]:
    """The CSV lines (header first) of an ``n``-row statement: one deposit, then trades."""
    rng = random.Random(seed)
    days = [
        FIRST_DAY + dt.timedelta(days=i)
        for i in range((LAST_DAY - FIRST_DAY).days + 1)
        if (FIRST_DAY + dt.timedelta(days=i)).weekday() < 5
    ]
    lines = ["date,type,symbol,quantity,price,fees,amount,id"]
    lines.append(f"{days[0]},deposit,,,,0,1000000000.00,r0")
    held = dict.fromkeys(symbols, 0)
    per_day = max((n - 1) / len(days), 1e-9)
    k = 1
    for d, day in enumerate(days):
        want = round((d + 1) * per_day) - (k - 1)
        at_open = dict(held)  # a dividend is paid on the shares held at the previous close
        for _ in range(max(want, 0)):
            if k >= n:
                break
            sym = rng.choice(symbols)
            price = rng.uniform(10, 500)
            roll = rng.random()
            if roll < 0.1 and at_open[sym] > 0:
                q = at_open[sym]
                per = rng.uniform(0.05, 1.5)
                lines.append(f"{day},dividend,{sym},{q},{per:.2f},0,{q * round(per, 2):.2f},r{k}")
            elif roll < 0.4 and held[sym] > 0:
                q = rng.randint(1, held[sym])
                held[sym] -= q
                lines.append(f"{day},sell,{sym},{q},{price:.2f},1.00,{q * round(price, 2) - 1:.2f},r{k}")
            else:
                q = rng.randint(1, 20)
                held[sym] += q
                lines.append(f"{day},buy,{sym},{q},{price:.2f},1.00,{-(q * round(price, 2) + 1):.2f},r{k}")
            k += 1
    return lines


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``python -m service serve`` of a tree on a database, started and stopped on demand."""

    def __init__(self, tree: Path, database_url: str, data_dir: Path) -> None:
        self.tree = tree
        self.env = {
            **os.environ,
            "PYTHONPATH": str(tree),
            "QC_DATABASE_URL": database_url,
            "QC_DATA_DIR": str(data_dir),
            "QC_DEMO_DATA": "false",
            "QC_RATE_LIMIT_ENABLED": "false",
            "QC_MAX_BODY_BYTES": str(64 * 1024 * 1024),
            "QC_BACKTEST_WORKERS": "0",
        }
        self.port = _free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def cli(self, *args: str, stdin: str | None = None) -> str:
        out = subprocess.run(
            [sys.executable, "-m", "service", *args], cwd=self.tree, env=self.env,
            input=stdin, capture_output=True, text=True, check=True,
        )  # fmt: skip
        return out.stdout.strip()

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "service", "serve", "--port", str(self.port), "--log-level", "warning"],
            cwd=self.tree, env=self.env, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 900  # start-up warms the kernels before answering
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/health", timeout=1).status_code < 500:
                    return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("the server did not start")

    def peak_rss_mib(self) -> float:
        """The server process's peak resident set (``VmHWM``, Linux), with any children it started."""
        if self.proc is None:
            return 0.0
        pids, peak = [self.proc.pid], 0.0
        while pids:
            pid = pids.pop()
            with contextlib.suppress(OSError):
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]) / 1024)
                for task in Path(f"/proc/{pid}/task").iterdir():
                    pids.extend(int(c) for c in (task / "children").read_text().split())
        return peak

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _ms(fn: Callable[[], httpx.Response]) -> float:
    t = time.perf_counter()
    r = fn()
    elapsed = (time.perf_counter() - t) * 1000
    if r.status_code >= 400:
        raise RuntimeError(f"{r.request.method} {r.request.url}: {r.status_code} {r.text[:300]}")
    return elapsed


def _requests(c: httpx.Client, pid: int) -> dict[str, Callable[[], httpx.Response]]:
    return {
        "portfolio detail": lambda: c.get(f"/api/portfolios/{pid}/"),
        "portfolio list": lambda: c.get("/api/portfolios/"),
        "positions": lambda: c.get(f"/api/portfolios/{pid}/positions/"),
        "transactions page": lambda: c.get(f"/api/transactions/?portfolio_id={pid}"),
        "metrics 1y": lambda: c.get(f"/api/analytics/portfolio/{pid}/metrics/?period=1y"),
        "performance": lambda: c.get(f"/api/analytics/portfolio/{pid}/performance/"),
        "allocation": lambda: c.get(f"/api/analytics/portfolio/{pid}/allocation/"),
        "risk": lambda: c.get(f"/api/analytics/portfolio/{pid}/risk/"),
        "tax summary": lambda: c.get(f"/api/tax/analytics/summary/?year=2025&portfolio_id={pid}"),
        "loss harvesting": lambda: c.get(f"/api/tax/loss-harvesting/?portfolio_id={pid}"),
        "tax report generate": lambda: c.post(
            "/api/tax/reports/generate/", json={"year": 2025, "report_type": "all", "portfolio_id": pid}
        ),
    }


def _import(c: httpx.Client, pid: int, lines: list[str]) -> None:
    body = ("\n".join(lines) + "\n").encode()
    r = c.post(
        f"/api/portfolios/{pid}/import/",
        files={"file": ("statement.csv", body, "text/csv")},
        data={"format": "csv"},
    )
    if r.status_code >= 400:
        raise RuntimeError(f"import: {r.status_code} {r.text[:500]}")


def _buy(c: httpx.Client, pid: int, symbol: str) -> httpx.Response:
    return c.post(
        "/api/transactions/",
        json={"portfolio": pid, "asset_symbol": symbol, "transaction_type": "buy", "quantity": "1",
              "price": "100", "transaction_date": "2025-12-30"},
    )  # fmt: skip


@contextlib.contextmanager
def _database(url: str | None, data_dir: Path) -> Iterator[str]:
    if url is None:
        yield f"sqlite+aiosqlite:///{data_dir / 'bench.db'}"
        return
    import asyncpg

    name = f"qc_ledger_scale_{uuid.uuid4().hex[:8]}"
    admin = url.replace("postgresql+asyncpg://", "postgresql://")

    async def sql(q: str) -> None:
        conn = await asyncpg.connect(admin)
        try:
            await conn.execute(q)
        finally:
            await conn.close()

    asyncio.run(sql(f'CREATE DATABASE "{name}"'))
    try:
        yield f"{url.rpartition('/')[0]}/{name}"
    finally:
        asyncio.run(sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (``/proc``, Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _backends_cpu(url: str) -> dict[int, float]:
    """CPU seconds so far of each PostgreSQL backend on ``url``'s database (the server on
    this machine), by process id; empty on SQLite."""
    if not url.startswith("postgresql"):
        return {}
    import asyncpg

    async def pids() -> list[int]:
        conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
        try:
            sql = "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
            return [r[0] for r in await conn.fetch(sql)]
        finally:
            await conn.close()

    out = {}
    for pid in asyncio.run(pids()):
        with contextlib.suppress(OSError):
            out[pid] = _cpu_seconds(pid)
    return out


@contextlib.contextmanager
def _signed_in(server: Server, lines: list[str]) -> Iterator[tuple[httpx.Client, dict[str, str], float]]:
    """A new user on a started ``server``, its client, its auth headers and the seconds of
    the warm-up: a few rows into another portfolio (kernels loaded, prices generated)."""
    server.cli("createuser", "bench", "--password-stdin", stdin=PASSWORD + "\n")
    token = server.cli("token", "bench").split()[-1]
    headers = {"Authorization": f"Token {token}"}
    with httpx.Client(base_url=server.url, headers=headers, timeout=600) as c:
        spare = c.post("/api/portfolios/", json={"name": "warm-up"}).json()["id"]
        t = time.perf_counter()
        _import(c, spare, [*lines[:4]])
        yield c, headers, time.perf_counter() - t


def import_only(tree: Path, n: int, database_url: str | None) -> dict[str, float]:
    """The import alone: ``tree``'s server on a fresh database, the warm-up import, then the
    ``n``-row statement into an empty portfolio: rows/s at the client, the server
    process's CPU seconds during it and, on PostgreSQL, its backends' on the database, and
    the server's peak resident set (``VmHWM``)."""
    symbols = _symbols(tree)
    lines = statement(n, symbols)
    with tempfile.TemporaryDirectory() as tmp, _database(database_url, Path(tmp)) as url:
        server = Server(tree, url, Path(tmp))
        server.start()
        try:
            with _signed_in(server, lines) as (c, _, _):
                pid = c.post("/api/portfolios/", json={"name": "scale"}).json()["id"]
                assert server.proc is not None
                backends = _backends_cpu(url)
                cpu, t = _cpu_seconds(server.proc.pid), time.perf_counter()
                _import(c, pid, lines)
                wall = time.perf_counter() - t
                cpu = _cpu_seconds(server.proc.pid) - cpu
                after = _backends_cpu(url)
                db_cpu = sum(v - backends.get(k, 0.0) for k, v in after.items())
                return {
                    "rows/s": n / wall, "server CPU s": cpu, "database CPU s": db_cpu,
                    "peak MiB": server.peak_rss_mib(),
                }  # fmt: skip
        finally:
            server.stop()


def run(tree: Path, n: int, database_url: str | None, repeat: int) -> dict[str, Any]:
    """Import an ``n``-row statement with ``tree``'s server and time every request."""
    symbols = _symbols(tree)
    lines = statement(n, symbols)
    out: dict[str, Any] = {"rows": n}
    with tempfile.TemporaryDirectory() as tmp, _database(database_url, Path(tmp)) as url:
        server = Server(tree, url, Path(tmp))
        server.start()
        try:
            with _signed_in(server, lines) as (c, headers, warm_up):
                out["warm-up import s"] = warm_up
                pid = c.post("/api/portfolios/", json={"name": "scale"}).json()["id"]
                parts: list[list[str]] = [[]]
                size = 0
                for line in lines[1:]:
                    if size + len(line) > PART_BYTES and parts[-1]:
                        parts.append([])
                        size = 0
                    parts[-1].append(line)
                    size += len(line) + 1
                t = time.perf_counter()
                for part in parts:
                    _import(c, pid, [lines[0], *part])
                out["import rows/s"] = n / (time.perf_counter() - t)
        finally:
            out["peak RSS MiB"] = [server.peak_rss_mib()]
            server.stop()
        server.start()  # "first": the first request after a start
        try:
            with httpx.Client(base_url=server.url, headers=headers, timeout=600) as c:
                calls = _requests(c, pid)
                for name, call in calls.items():
                    first = _ms(call)
                    warm = statistics.median(_ms(call) for _ in range(repeat))
                    out[name] = [first, warm]
                writes = []
                for name, call in calls.items():
                    writes.append(_ms(lambda: _buy(c, pid, symbols[0])))
                    out[name].append(_ms(call))
                out["typed write"] = statistics.median(writes)
        finally:
            out["peak RSS MiB"].append(server.peak_rss_mib())
            server.stop()
    return out


def _fmt(ms: float) -> str:
    return f"{ms:,.0f}" if ms >= 10 else f"{ms:.1f}"


def table(results: list[tuple[str, dict[str, Any]]]) -> str:
    """Markdown: one column per run (first / warm / after a write, ms)."""
    head = "| request | " + " | ".join(f"{label} first / warm / after write (ms)" for label, _ in results) + " |"
    rows = [head, "|---|" + "---|" * len(results)]
    for name in _requests(httpx.Client(), 0):
        rows.append(f"| {name} | " + " | ".join(" / ".join(_fmt(x) for x in r[name]) for _, r in results) + " |")
    rows.append("| typed write (median) | " + " | ".join(_fmt(r["typed write"]) for _, r in results) + " |")
    rows.append("| import (rows/s) | " + " | ".join(f"{r['import rows/s']:,.0f}" for _, r in results) + " |")
    rss = (" / ".join(f"{m:,.0f}" for m in r["peak RSS MiB"]) for _, r in results)
    rows.append("| server peak RSS, import / reads (MiB) | " + " | ".join(rss) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, action="append", help="statement size (repeatable)")
    p.add_argument("--tree", type=Path, default=HERE, help="the checkout whose server runs")
    p.add_argument("--database-url", default=None, help="a PostgreSQL server (scratch database)")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument(
        "--import-only", action="store_true",
        help="time only the import, --repeat times (a fresh server and database each)",
    )  # fmt: skip
    p.add_argument(
        "--against", type=Path, action="append", default=[], metavar="TREE",
        help="with --import-only: another checkout's server too, the trees alternating",
    )  # fmt: skip
    args = p.parse_args(argv)
    if args.import_only:
        trees = [*(t.resolve() for t in args.against), args.tree.resolve()]
        for n in args.rows or [100_000]:
            for k in range(args.repeat):  # the trees alternate: a change of load hits each alike
                for tree in trees:
                    r = import_only(tree, n, args.database_url)
                    pg = f", PostgreSQL backends {r['database CPU s']:.2f}" if args.database_url else ""
                    print(f"{n:,} rows, {tree}, run {k + 1}: {r['rows/s']:,.0f} rows/s at the "
                          f"client; CPU s: server process {r['server CPU s']:.2f}{pg}; server peak RSS "
                          f"{r['peak MiB']:,.0f} MiB", flush=True)
        return 0
    results = []
    for n in args.rows or [10_000, 100_000]:
        r = run(args.tree.resolve(), n, args.database_url, args.repeat)
        results.append((f"{n:,} rows", r))
        print(f"# {n:,} rows done", file=sys.stderr, flush=True)
    db = "PostgreSQL" if args.database_url else "SQLite"
    print(f"{args.tree} on {db}; warm-up import (s): "
          + ", ".join(f"{r['warm-up import s']:.1f}" for _, r in results) + "\n")
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
