"""Per-request cost of service endpoints called in-process (ASGI, no server, no network).

    python benchmarks/service_inprocess.py                 # 3,000 requests per endpoint
    python benchmarks/service_inprocess.py --profile       # plus a cProfile of the list

Steadier than the load test (``service_load.py``) on a shared machine: one client,
one event loop, the app called directly with a prepared ASGI scope. The data is
the load test's: 20 portfolios of 10 positions for one token user, SQLite under a
temporary directory. Numbers are reported, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from service_load import PASSWORD  # noqa: E402


def _cli(env: dict[str, str], *args: str, stdin: bytes | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "service", *args],
        input=stdin,
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    return done.stdout.decode().strip()


async def _seed(c: Any, token: str) -> int:
    """The load test's data through the API; returns the first asset's id."""
    h = {"Authorization": f"Token {token}"}
    assets = (await c.get("/api/assets/?limit=100")).json()["results"]
    for i in range(20):
        pid = (await c.post("/api/portfolios/", json={"name": f"b{i:02d}"}, headers=h)).json()["id"]
        for j, asset in enumerate(assets[:10]):
            body = {
                "asset_symbol": asset["symbol"],
                "quantity": f"{1 + i + j}.5",
                "purchase_price": "100.00",
                "purchase_date": "2025-01-02",
            }
            r = await c.post(f"/api/portfolios/{pid}/positions/", json=body, headers=h)
            assert r.status_code == 201, r.text
    return int(assets[0]["id"])


async def _time(
    app: Any, path: str, token: str | None, n: int, profile: bool
) -> tuple[float, float]:
    """Seconds per request: wall clock, and CPU of the process (every thread)."""
    headers = [(b"host", b"127.0.0.1")]
    if token:
        headers.append((b"authorization", f"Token {token}".encode()))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 5555),
        "server": ("127.0.0.1", 8000),
    }
    sent: list[Any] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    async def once() -> None:
        sent.clear()
        await app(dict(scope), receive, send)
        assert sent[0]["status"] == 200, sent

    for _ in range(200):
        await once()
    profiler = cProfile.Profile() if profile else None
    if profiler:
        profiler.enable()
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(n):
        await once()
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    if profiler:
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)
    return elapsed / n, cpu / n


async def _main(n: int, profile: bool) -> None:
    from litestar.testing import AsyncTestClient

    from service.app import app_from_env

    app = app_from_env()
    async with AsyncTestClient(app) as client:  # runs the lifespan (asset sync)
        asset_id = await _seed(client, os.environ["QC_BENCH_TOKEN"])
        token = os.environ["QC_BENCH_TOKEN"]
        for name, path, tok, prof in [
            ("GET /api/assets/{id}/ (anonymous)", f"/api/assets/{asset_id}/", None, False),
            ("GET /api/portfolios/ (20x10, token)", "/api/portfolios/", token, profile),
        ]:
            wall, cpu = await _time(app, path, tok, n, prof)
            print(f"{name:<40} {wall * 1e3:8.3f} ms/request  {cpu * 1e3:8.3f} ms CPU/request")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=3000, help="requests per endpoint")
    parser.add_argument("--profile", action="store_true", help="cProfile the portfolio list")
    args = parser.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="qc-inproc-")
    env = {
        **os.environ,
        "QC_DATA_DIR": tmp,
        "QC_RATE_LIMIT_AUTHENTICATED": "1000000000/hour",
        "QC_RATE_LIMIT_ANONYMOUS": "1000000000/hour",
    }
    env.pop("QC_DATABASE_URL", None)
    _cli(env, "migrate")
    _cli(env, "createuser", "bench", "--password-stdin", stdin=PASSWORD)
    env["QC_BENCH_TOKEN"] = _cli(env, "token", "bench")
    os.environ.update({k: v for k, v in env.items() if k.startswith("QC_")})
    asyncio.run(_main(args.n, args.profile))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
