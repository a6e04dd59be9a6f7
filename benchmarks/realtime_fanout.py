"""Fan-out of a forced price update to many WebSocket subscribers on one worker.

    python benchmarks/realtime_fanout.py            # 1,000 subscribers, 20 rounds
    python benchmarks/realtime_fanout.py --quick    # CI: 50 subscribers, 3 rounds

One uvicorn worker (``python -m service serve``, SQLite, in-memory channels, the
periodic feed slowed to once an hour so that only forced updates flow). N clients
(the ``websockets`` library, all in this process) subscribe to ``SPY``. Each round
posts ``POST /api/realtime/force_price_update/`` and records, for every client, the
time from sending the request to receiving the ``price_update`` that carries the
forced timestamp. Reported: delivery latency p50 / p99 / max over all deliveries
(the issue's goal: p99 under 100 ms at 1,000 subscribers) and messages per second
(N divided by the time until the last client has it, median over rounds).

The clients share this process and its event loop, so the figures include the
client side's own scheduling; they are an upper bound of the server's share.
Numbers are reported, never asserted; also written to
``bench-results/realtime_fanout.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import websockets

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

__all__ = ["FanoutResult", "main", "run"]


@dataclass
class FanoutResult:
    subscribers: int
    rounds: int
    deflate: bool  # permessage-deflate negotiated (as browsers do)
    p50_ms: float
    p99_ms: float
    max_ms: float
    messages_per_second: float
    round_best_ms: float  # time until the last subscriber has the update: best round
    round_median_ms: float
    round_worst_ms: float
    server_cpu_ms_per_round: float  # CPU time of the server process per forced update
    client_cpu_ms_per_round: float  # CPU time of the client process (all N clients)
    goal_p99_ms: float = 100.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _token(database_url: str) -> str:
    from service.auth.services import create_token, create_user
    from service.db import Database

    db = Database(database_url)
    try:
        user = await create_user(db, f"bench_{uuid.uuid4().hex[:8]}", "benchmark-password")
        return await create_token(db, user.id)
    finally:
        await db.dispose()


def _start(data_dir: Path) -> tuple[subprocess.Popen[bytes], int, str]:
    port = _free_port()
    url = f"sqlite+aiosqlite:///{data_dir / 'bench.db'}"
    env = {
        **os.environ,
        "QC_DATA_DIR": str(data_dir),
        "QC_DATABASE_URL": url,
        "QC_DEMO_DATA": "0",
        "QC_REDIS_URL": "",
        "QC_RATE_LIMIT_REALTIME": "100000/minute",
        "QC_RATE_LIMIT_ANONYMOUS": "1000000/hour",
        "QC_REALTIME_TICK_SECONDS": "3600",
        # every subscriber connects from 127.0.0.1: lift the per-IP connection cap
        "QC_REALTIME_MAX_CONNECTIONS_PER_IP": "100000",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "service", "serve", "--port", str(port), "--log-level", "warning"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc, port, url
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    proc.terminate()
    raise RuntimeError("server did not start")


async def _subscriber(
    url: str, ready: asyncio.Event, counter: list[int], n: int, deflate: bool
) -> Any:
    compression = "deflate" if deflate else None
    ws = await websockets.connect(url, max_queue=None, open_timeout=60, compression=compression)
    await ws.send(json.dumps({"type": "subscribe_asset", "symbol": "SPY"}))
    while json.loads(await ws.recv())["type"] != "price_update":  # subscribed, then the snapshot
        pass
    counter[0] += 1
    if counter[0] == n:
        ready.set()
    return ws


async def _await_update(ws: Any, stamp: asyncio.Future[str], arrivals: list[float]) -> None:
    while True:
        msg = json.loads(await ws.recv())
        now = time.perf_counter()
        if msg["type"] == "price_update" and msg["timestamp"] == await stamp:
            arrivals.append(now)
            return


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process."""
    import psutil  # a dependency of dask distributed

    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


async def _bench(
    port: int, pid: int, token: str, n: int, rounds: int, deflate: bool
) -> FanoutResult:
    url = f"ws://127.0.0.1:{port}/ws/realtime/"
    ready, counter = asyncio.Event(), [0]
    sockets: list[Any] = []
    for start in range(0, n, 100):  # connect in batches (the listen backlog is finite)
        sockets += await asyncio.gather(
            *(
                _subscriber(url, ready, counter, n, deflate)
                for _ in range(start, min(start + 100, n))
            )
        )
    await ready.wait()
    latencies: list[float] = []
    rates: list[float] = []
    completions: list[float] = []
    server0, client0 = _cpu_seconds(pid), time.process_time()
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
        for _ in range(rounds):
            arrivals: list[float] = []
            stamp: asyncio.Future[str] = asyncio.get_running_loop().create_future()
            waiters = [asyncio.create_task(_await_update(ws, stamp, arrivals)) for ws in sockets]
            await asyncio.sleep(0)  # every waiter is reading before the update is forced
            t0 = time.perf_counter()
            r = await http.post(
                "/api/realtime/force_price_update/",
                json={"symbols": ["SPY"]},
                headers={"Authorization": f"Token {token}"},
            )
            r.raise_for_status()
            stamp.set_result(r.json()["updated"][0]["timestamp"])
            await asyncio.wait_for(asyncio.gather(*waiters), 60)
            latencies += [a - t0 for a in arrivals]
            rates.append(n / (max(arrivals) - t0))
            completions.append((max(arrivals) - t0) * 1000.0)
            await asyncio.sleep(0.05)
    server_cpu = (_cpu_seconds(pid) - server0) / rounds * 1000.0
    client_cpu = (time.process_time() - client0) / rounds * 1000.0
    await asyncio.gather(*(ws.close() for ws in sockets))
    lat = np.array(latencies) * 1000.0
    return FanoutResult(
        subscribers=n,
        rounds=rounds,
        deflate=deflate,
        p50_ms=float(np.percentile(lat, 50)),
        p99_ms=float(np.percentile(lat, 99)),
        max_ms=float(lat.max()),
        messages_per_second=float(np.median(rates)),
        round_best_ms=float(min(completions)),
        round_median_ms=float(np.median(completions)),
        round_worst_ms=float(max(completions)),
        server_cpu_ms_per_round=server_cpu,
        client_cpu_ms_per_round=client_cpu,
    )


def run(*, subscribers: int, rounds: int, deflate: bool = True) -> FanoutResult:
    """Start a server, measure, stop it (``deflate``: clients negotiate permessage-deflate)."""
    with tempfile.TemporaryDirectory(prefix="qc-fanout-") as tmp:
        proc, port, url = _start(Path(tmp))
        try:
            token = asyncio.run(_token(url))
            return asyncio.run(_bench(port, proc.pid, token, subscribers, rounds, deflate))
        finally:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="50 subscribers, 3 rounds")
    parser.add_argument("--subscribers", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument(
        "--no-deflate",
        action="store_true",
        help="clients decline permessage-deflate (browsers negotiate it; the default here)",
    )
    parser.add_argument("--out", default=str(ROOT / "bench-results" / "realtime_fanout.json"))
    args = parser.parse_args(argv)
    n = args.subscribers or (50 if args.quick else 1000)
    rounds = args.rounds or (3 if args.quick else 20)
    result = run(subscribers=n, rounds=rounds, deflate=not args.no_deflate)
    print(
        f"realtime fan-out, 1 worker, {result.subscribers} subscribers x {result.rounds} forced updates,"
        f" permessage-deflate {'on' if result.deflate else 'off'}\n"
        f"  delivery latency  p50 {result.p50_ms:7.1f} ms   p99 {result.p99_ms:7.1f} ms"
        f"   max {result.max_ms:7.1f} ms   (goal: p99 < {result.goal_p99_ms:.0f} ms)\n"
        f"  throughput        {result.messages_per_second:,.0f} messages/s (median round)\n"
        f"  all delivered in  best {result.round_best_ms:.1f} ms, median {result.round_median_ms:.1f} ms,"
        f" worst {result.round_worst_ms:.1f} ms (per round)\n"
        f"  CPU per update    server {result.server_cpu_ms_per_round:.1f} ms,"
        f" clients {result.client_cpu_ms_per_round:.1f} ms"
    )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(asdict(result), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
