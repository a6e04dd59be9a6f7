"""Load test of the finance service on a real uvicorn process, side by side with a bare Litestar app.

    python benchmarks/service_load.py            # full: 5 s per target, 32 connections
    python benchmarks/service_load.py --connections 64   # the tail-latency goal's setting
    python benchmarks/service_load.py --quick    # CI: 0.3 s per target, 2 connections
    python benchmarks/service_load.py --database-url postgresql+asyncpg://postgres@127.0.0.1:5432/qc_bench
    python benchmarks/service_load.py --tree /tmp/old    # before/after: another checkout's service too

``--tree OLD`` (a ``git archive`` of an older commit, say) starts OLD's service beside this
tree's (each from its own directory, its ``service`` first on ``PYTHONPATH``, on its own
SQLite file, with the same data) and runs every target on both, back to back, the trees
alternating (``--repeat`` rounds): one run, one load on the machine for both.

Start-up: the servers run with ``QC_WARM_UP=false`` unless ``--warm-up``. The full
warm-up compiles every kernel of every endpoint before the server answers, which on an
empty numba cache (another tree's files are another cache) at load 9-10 took over 20
minutes of wall time (the reason an earlier before/after run never started); the
kernels these targets use are loaded by the portfolio book's own warm-up either way,
before the start-up heap is frozen. Each server is given ``--start-timeout`` seconds
(default 900), and one that exits before answering is reported with the end of its
stderr.

Both servers run with the same uvicorn settings (1 worker, no access log, the
same event loop and HTTP parser). Targets:

* ``bare``: ``GET /api/const/`` of a Litestar app returning a constant;
* ``asset``: ``GET /api/assets/{id}/`` (anonymous; DB row + live quote + rate-limit counter);
* ``portfolios``: ``GET /api/portfolios/`` (token auth; 20 portfolios x 10 positions valued);
* the same list right after 200 writes (a buy into each position), without a warm-up, for
  8 s: every portfolio's book is cold, so the burst's first readers wait for them.

The load generator is a minimal keep-alive HTTP/1.1 client on asyncio streams (so
that the client, not the server, is not the bottleneck of the bare endpoint).
Numbers are reported, never asserted. Goals: the asset detail at >= 50 % and the
list at >= 25 % of the bare endpoint's req/s; with 64 connections, each service
endpoint's p99 within 5x the bare endpoint's p99 of the same run. Results also go to
``bench-results/service_load.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx
import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

__all__ = ["LoadResult", "Servers", "Service", "bare_app", "load", "main"]


def bare_app():  # type: ignore[no-untyped-def]
    """A Litestar app with one constant endpoint (the baseline)."""
    from litestar import Litestar, get

    @get("/api/const/", sync_to_thread=False)
    def const() -> dict[str, str]:
        return {"status": "ok"}

    return Litestar([const], openapi_config=None, logging_config=None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


START_TIMEOUT = 900.0  # seconds: start-up warms the kernels before answering


def _start(
    target: str,
    env: dict[str, str],
    *,
    cwd: Path = ROOT,
    timeout: float = START_TIMEOUT,
    log: Path | None = None,
) -> tuple[subprocess.Popen[bytes], int]:
    """Start ``uvicorn --factory target`` and wait until it answers; its stderr goes to ``log``."""
    port = _free_port()
    cmd = [
        sys.executable,
        "-m",
        "uvicorn",
        "--factory",
        target,
        "--app-dir",
        str(HERE),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        "1",
        "--no-access-log",
        "--log-level",
        "warning",
    ]
    err = log.open("wb") if log is not None else None
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stderr=err)
    if err is not None:
        err.close()  # the child holds its own descriptor
    atexit.register(_stop, proc)
    url = (
        f"http://127.0.0.1:{port}/health"
        if "service" in target
        else f"http://127.0.0.1:{port}/api/const/"
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                f"{target} ({cwd}) exited with {proc.returncode} before answering{_tail(log)}"
            )
        try:
            httpx.get(url, timeout=5)
            return proc, port
        except httpx.HTTPError:
            time.sleep(0.5)
    _stop(proc)
    raise RuntimeError(f"{target} ({cwd}) did not answer within {timeout:.0f} s{_tail(log)}")


def _tail(log: Path | None) -> str:
    if log is None or not log.exists():
        return ""
    return ":\n" + log.read_text(errors="replace")[-3000:]


def _cli(env: dict[str, str], cwd: Path, *args: str, stdin: bytes | None = None) -> str:
    """``python -m service ARGS`` of the tree at ``cwd``; its stderr shown when it fails."""
    proc = subprocess.run(
        [sys.executable, "-m", "service", *args],
        input=stdin,
        env=env,
        cwd=cwd,
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"python -m service {' '.join(args)} ({cwd}) failed: {proc.stderr.decode()[-3000:]}"
        )
    return proc.stdout.decode().strip()


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (Linux ``/proc``; NaN elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


AFTER_WRITES = "list, first 8 s after 200 writes"
PASSWORD = b"load-test-secret-7\n"  # must not contain the user name
SEED_TIMEOUT = 600.0  # seconds per set-up request


class Service:
    """One tree's service on uvicorn, migrated and seeded (SQLite under a temp dir by default)."""

    def __init__(
        self,
        tree: Path,
        database_url: str = "",
        start_timeout: float = START_TIMEOUT,
        warm_up: bool = False,
    ) -> None:
        self.tree = tree
        self.tmp = tempfile.mkdtemp(prefix="qc-bench-")
        env = {
            **os.environ,
            "PYTHONPATH": str(tree),
            "QC_DATA_DIR": self.tmp,
            "QC_WARM_UP": "true" if warm_up else "false",
            "QC_RATE_LIMIT_ANONYMOUS": "1000000000/hour",
            "QC_RATE_LIMIT_AUTHENTICATED": "1000000000/hour",
        }
        env.pop("QC_DATABASE_URL", None)
        if database_url:  # an empty PostgreSQL database, say; default: SQLite under tmp
            env["QC_DATABASE_URL"] = database_url
        _cli(env, tree, "migrate")
        self.proc, self.port = _start(
            "service.app:app_from_env", env, cwd=tree, timeout=start_timeout,
            log=Path(self.tmp) / "server.log",
        )  # fmt: skip
        self.token = self._seed(env)
        with httpx.Client(timeout=SEED_TIMEOUT) as c:
            found = c.get(f"http://127.0.0.1:{self.port}/api/assets/?symbol=SPY").json()
        self.asset_id = found["results"][0]["id"]

    def _seed(self, env: dict[str, str]) -> str:
        _cli(env, self.tree, "createuser", "bench", "--password-stdin", stdin=PASSWORD)
        token = _cli(env, self.tree, "token", "bench")
        h = {"Authorization": f"Token {token}"}
        base = f"http://127.0.0.1:{self.port}"
        # a first request may compile kernels (no full warm-up) on a loaded machine
        with httpx.Client(base_url=base, headers=h, timeout=SEED_TIMEOUT) as c:
            self.symbols = [
                a["symbol"] for a in c.get("/api/assets/?limit=100").json()["results"]
            ][:10]
            self.portfolio_ids = [
                c.post("/api/portfolios/", json={"name": f"bench {i:02d}"}).json()["id"]
                for i in range(20)
            ]
        self.write_positions(token)
        return token

    def write_positions(self, token: str) -> None:
        """200 writes: a buy into each of the 10 positions of the 20 portfolios."""
        h = {"Authorization": f"Token {token}"}
        base = f"http://127.0.0.1:{self.port}"
        with httpx.Client(base_url=base, headers=h, timeout=SEED_TIMEOUT) as c:
            for i, pid in enumerate(self.portfolio_ids):
                for j, sym in enumerate(self.symbols):
                    body = {
                        "asset_symbol": sym,
                        "quantity": f"{1 + i + j}.5",
                        "purchase_price": "100.00",
                        "purchase_date": "2025-01-02",
                    }
                    r = c.post(f"/api/portfolios/{pid}/positions/", json=body)
                    assert r.status_code == 201, r.text

    def close(self) -> None:
        _stop(self.proc)


class Servers:
    """The bare app and this tree's service (``service``, ``port``, ``token``, ``asset_id``);
    with ``trees``, those trees' services too (``services``: theirs first, this tree's last)."""

    def __init__(
        self,
        database_url: str = "",
        trees: tuple[Path, ...] = (),
        start_timeout: float = START_TIMEOUT,
        warm_up: bool = False,
    ) -> None:
        if trees and database_url:
            raise SystemExit("--tree runs each tree on its own SQLite file: no --database-url")
        self.tmp = tempfile.mkdtemp(prefix="qc-bench-bare-")
        self.bare, self.bare_port = _start(
            "service_load:bare_app", dict(os.environ), timeout=start_timeout,
            log=Path(self.tmp) / "bare.log",
        )  # fmt: skip
        self.services: list[Service] = []
        try:
            for tree in (*trees, ROOT):
                self.services.append(Service(tree, database_url, start_timeout, warm_up))
        except BaseException:
            self.close()
            raise
        this = self.services[-1]
        self.service, self.port, self.token, self.asset_id = (
            this.proc,
            this.port,
            this.token,
            this.asset_id,
        )

    def close(self) -> None:
        _stop(self.bare)
        for service in self.services:
            service.close()


@dataclass
class LoadResult:
    target: str
    requests: int
    seconds: float
    rps: float
    p50_ms: float
    p99_ms: float
    errors: int
    cpu_ms_per_request: float  # server process user+system CPU (steadier than req/s on a busy host)


async def _connection(
    port: int, request: bytes, until: float, lat: list[float], errors: list[int]
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while time.perf_counter() < until:
            t0 = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            await reader.readexactly(length)
            lat.append(time.perf_counter() - t0)
            if status != 200:
                errors.append(status)
    finally:
        writer.close()


async def load(
    port: int,
    path: str,
    *,
    seconds: float,
    connections: int,
    headers: dict[str, str] | None = None,
    name: str = "",
    server_pid: int | None = None,
    cold: bool = False,
) -> LoadResult:
    """Keep ``connections`` keep-alive connections busy on ``GET path`` for ``seconds``
    (after one connection's short warm-up unless ``cold``)."""
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}\r\n".encode()
    if not cold:
        warm: list[float] = []
        await _connection(port, request, time.perf_counter() + min(0.3, seconds / 2), warm, [])
    lat: list[float] = []
    errors: list[int] = []
    cpu0 = _cpu_seconds(server_pid) if server_pid else float("nan")
    start = time.perf_counter()
    until = start + seconds
    await asyncio.gather(
        *(_connection(port, request, until, lat, errors) for _ in range(connections))
    )
    elapsed = time.perf_counter() - start
    cpu = (_cpu_seconds(server_pid) - cpu0) if server_pid else float("nan")
    arr = np.asarray(lat) * 1e3
    return LoadResult(
        name or path,
        len(lat),
        elapsed,
        len(lat) / elapsed,
        float(np.percentile(arr, 50)),
        float(np.percentile(arr, 99)),
        len(errors),
        cpu / max(len(lat), 1) * 1e3,
    )


def run(
    *,
    quick: bool,
    database_url: str = "",
    connections: int = 0,
    trees: tuple[Path, ...] = (),
    repeat: int = 1,
    start_timeout: float = START_TIMEOUT,
    warm_up: bool = False,
) -> list[tuple[str, LoadResult]]:
    """Every target, ``repeat`` rounds; in a round each service target runs on every tree
    back to back. Returns (tree label, result) pairs, the bare app labelled ``bare``."""
    seconds, conns = (0.3, 2) if quick else (5.0, 32)
    burst = 0.3 if quick else 8.0
    conns = connections or conns
    servers = Servers(database_url, trees, start_timeout, warm_up)
    labels = [str(t) for t in trees] + ["this tree"]
    out: list[tuple[str, LoadResult]] = []
    try:
        for _ in range(repeat):
            out.append((
                "bare",
                asyncio.run(load(
                    servers.bare_port, "/api/const/", seconds=seconds, connections=conns,
                    name="bare Litestar constant", server_pid=servers.bare.pid,
                )),
            ))  # fmt: skip
            for path, auth, name in (
                ("/api/assets/{id}/", False, "GET /api/assets/{id}/"),
                ("/api/portfolios/", True, "GET /api/portfolios/ (20x10)"),
            ):
                for label, svc in zip(labels, servers.services, strict=True):
                    headers = {"Authorization": f"Token {svc.token}"} if auth else None
                    out.append((
                        label,
                        asyncio.run(load(
                            svc.port, path.replace("{id}", str(svc.asset_id)), seconds=seconds,
                            connections=conns, headers=headers, name=name, server_pid=svc.proc.pid,
                        )),
                    ))  # fmt: skip
            # The list's first seconds right after a burst of writes: every book is cold.
            for label, svc in zip(labels, servers.services, strict=True):
                svc.write_positions(svc.token)
                out.append((
                    label,
                    asyncio.run(load(
                        svc.port, "/api/portfolios/", seconds=burst, connections=conns,
                        headers={"Authorization": f"Token {svc.token}"}, name=AFTER_WRITES,
                        server_pid=svc.proc.pid, cold=True,
                    )),
                ))  # fmt: skip
    finally:
        servers.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--database-url",
        default="",
        help="serve from this (empty, migrated here) database instead of SQLite, e.g. "
        "postgresql+asyncpg://postgres@127.0.0.1:5432/qc_bench",
    )
    parser.add_argument(
        "--connections",
        type=int,
        default=0,
        help="keep-alive connections (default 32; 2 with --quick)",
    )
    parser.add_argument(
        "--tree",
        action="append",
        default=[],
        type=Path,
        help="another checkout whose service runs the same targets, interleaved (before/after)",
    )
    parser.add_argument("--repeat", type=int, default=1, help="rounds of every target")
    parser.add_argument(
        "--start-timeout",
        type=float,
        default=START_TIMEOUT,
        help="seconds a server may take to answer",
    )
    parser.add_argument(
        "--warm-up", action="store_true", help="the servers' full kernel warm-up (QC_WARM_UP)"
    )
    parser.add_argument("--out", default=str(ROOT / "bench-results" / "service_load.json"))
    args = parser.parse_args(argv)
    trees = tuple(t.resolve() for t in args.tree)
    results = run(
        quick=args.quick, database_url=args.database_url, connections=args.connections,
        trees=trees, repeat=args.repeat, start_timeout=args.start_timeout, warm_up=args.warm_up,
    )  # fmt: skip
    goals = {"GET /api/assets/{id}/": 0.50, "GET /api/portfolios/ (20x10)": 0.25}
    tail_goals = (*goals, AFTER_WRITES)
    judged = args.connections >= 64 and not args.quick  # the tail goal is set at 64 connections
    print(
        f"{'tree':<12} {'target':<30} {'requests':>9} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} "
        f"{'errors':>7} {'CPU ms/req':>10} {'vs bare':>8} {'p99/bare':>8}  goal"
    )
    bare = results[0][1]
    rows = []
    for label, r in results:
        if label == "bare":
            bare = r
        ratio = r.rps / bare.rps if bare.rps else float("nan")
        tail = r.p99_ms / bare.p99_ms if bare.p99_ms else float("nan")
        goal = ""
        if r.target in goals:
            goal = f">= {goals[r.target]:.0%} {'met' if ratio >= goals[r.target] else 'NOT met'}; "
        if r.target in tail_goals:
            goal += f"p99 <= 5x {('met' if tail <= 5 else 'NOT met') if judged else '(judged at 64)'}"
        name = label if len(label) <= 12 else "…" + label[-11:]
        print(
            f"{name:<12} {r.target:<30} {r.requests:>9} {r.rps:>9.0f} {r.p50_ms:>8.2f} "
            f"{r.p99_ms:>8.2f} {r.errors:>7} {r.cpu_ms_per_request:>10.3f} {ratio:>7.0%} "
            f"{tail:>7.1f}x  {goal}"
        )
        rows.append({"tree": label, **asdict(r), "vs_bare": ratio, "p99_vs_bare": tail})
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
