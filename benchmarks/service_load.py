"""Load test of the finance service on a real uvicorn process, side by side with a bare Litestar app.

    python benchmarks/service_load.py            # full: 5 s per target, 32 connections
    python benchmarks/service_load.py --connections 64   # the tail-latency goal's setting
    python benchmarks/service_load.py --quick    # CI: 0.3 s per target, 2 connections
    python benchmarks/service_load.py --database-url postgresql+asyncpg://postgres@127.0.0.1:5432/qc_bench

Both servers run with the same uvicorn settings (1 worker, no access log, the
same event loop and HTTP parser). Targets:

* ``bare``: ``GET /api/const/`` of a Litestar app returning a constant;
* ``asset``: ``GET /api/assets/{id}/`` (anonymous; DB row + live quote + rate-limit counter);
* ``portfolios``: ``GET /api/portfolios/`` (token auth; 20 portfolios x 10 positions valued).

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

__all__ = ["LoadResult", "Servers", "bare_app", "load", "main"]


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


def _start(target: str, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], int]:
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
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT)
    atexit.register(_stop, proc)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            httpx.get(
                f"http://127.0.0.1:{port}/health"
                if "service" in target
                else f"http://127.0.0.1:{port}/api/const/",
                timeout=1,
            )
            return proc, port
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError(f"{target} did not start")


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


class Servers:
    """The bare app and the service (SQLite under a temp dir), with the benchmark data."""

    def __init__(self, database_url: str = "") -> None:
        self.tmp = tempfile.mkdtemp(prefix="qc-bench-")
        env = {
            **os.environ,
            "QC_DATA_DIR": self.tmp,
            "QC_RATE_LIMIT_ANONYMOUS": "1000000000/hour",
            "QC_RATE_LIMIT_AUTHENTICATED": "1000000000/hour",
        }
        env.pop("QC_DATABASE_URL", None)
        if database_url:  # an empty PostgreSQL database, say; default: SQLite under tmp
            env["QC_DATABASE_URL"] = database_url
        subprocess.run(
            [sys.executable, "-m", "service", "migrate"],
            env=env,
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        self.bare, self.bare_port = _start("service_load:bare_app", env)
        self.service, self.port = _start("service.app:app_from_env", env)
        self.token = self._seed(env)
        self.asset_id = httpx.get(f"http://127.0.0.1:{self.port}/api/assets/?symbol=SPY").json()[
            "results"
        ][0]["id"]

    def _seed(self, env: dict[str, str]) -> str:
        subprocess.run(
            [sys.executable, "-m", "service", "createuser", "bench", "--password-stdin"],
            input=b"load-test-secret-7\n",
            env=env,
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        token = (
            subprocess.run(
                [sys.executable, "-m", "service", "token", "bench"],
                env=env,
                cwd=ROOT,
                check=True,
                capture_output=True,
            )
            .stdout.decode()
            .strip()
        )
        h = {"Authorization": f"Token {token}"}
        base = f"http://127.0.0.1:{self.port}"
        symbols = [
            a["symbol"] for a in httpx.get(f"{base}/api/assets/?limit=100").json()["results"]
        ][:10]
        with httpx.Client(base_url=base, headers=h, timeout=30) as c:
            for i in range(20):
                pid = c.post("/api/portfolios/", json={"name": f"bench {i:02d}"}).json()["id"]
                for j, sym in enumerate(symbols):
                    body = {
                        "asset_symbol": sym,
                        "quantity": f"{1 + i + j}.5",
                        "purchase_price": "100.00",
                        "purchase_date": "2025-01-02",
                    }
                    assert c.post(f"/api/portfolios/{pid}/positions/", json=body).status_code == 201
        return token

    def close(self) -> None:
        _stop(self.bare)
        _stop(self.service)


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
) -> LoadResult:
    """Keep ``connections`` keep-alive connections busy on ``GET path`` for ``seconds``."""
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}\r\n".encode()
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


def run(*, quick: bool, database_url: str = "", connections: int = 0) -> list[LoadResult]:
    seconds, conns = (0.3, 2) if quick else (5.0, 32)
    conns = connections or conns
    servers = Servers(database_url)
    try:
        auth = {"Authorization": f"Token {servers.token}"}
        return [
            asyncio.run(
                load(
                    servers.bare_port,
                    "/api/const/",
                    seconds=seconds,
                    connections=conns,
                    name="bare Litestar constant",
                    server_pid=servers.bare.pid,
                )
            ),
            asyncio.run(
                load(
                    servers.port,
                    f"/api/assets/{servers.asset_id}/",
                    seconds=seconds,
                    connections=conns,
                    name="GET /api/assets/{id}/",
                    server_pid=servers.service.pid,
                )
            ),
            asyncio.run(
                load(
                    servers.port,
                    "/api/portfolios/",
                    seconds=seconds,
                    connections=conns,
                    headers=auth,
                    name="GET /api/portfolios/ (20x10)",
                    server_pid=servers.service.pid,
                )
            ),
        ]
    finally:
        servers.close()


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
    parser.add_argument("--out", default=str(ROOT / "bench-results" / "service_load.json"))
    args = parser.parse_args(argv)
    results = run(quick=args.quick, database_url=args.database_url, connections=args.connections)
    base = results[0].rps
    goals = {1: 0.50, 2: 0.25}
    print(
        f"{'target':<32} {'requests':>9} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7} {'CPU ms/req':>10} {'vs bare':>8}  goal"
    )
    for i, r in enumerate(results):
        ratio = r.rps / base if base else float("nan")
        goal = (
            f">= {goals[i]:.0%} {'met' if ratio >= goals[i] else 'NOT met'}" if i in goals else ""
        )
        print(
            f"{r.target:<32} {r.requests:>9} {r.rps:>9.0f} {r.p50_ms:>8.2f} {r.p99_ms:>8.2f} {r.errors:>7} {r.cpu_ms_per_request:>10.3f} {ratio:>7.0%}  {goal}"
        )
    bare_p99 = results[0].p99_ms
    judged = args.connections >= 64 and not args.quick  # the tail goal is set at 64 connections
    for r in results[1:]:
        tail = r.p99_ms / bare_p99 if bare_p99 else float("nan")
        verdict = ("met" if tail <= 5 else "NOT met") if judged else "(judged at --connections 64)"
        print(f"p99 {r.target:<28} {tail:>5.1f}x bare p99  goal <= 5x {verdict}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps([asdict(r) | {"vs_bare": r.rps / base} for r in results], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
