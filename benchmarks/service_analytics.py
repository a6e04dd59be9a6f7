"""Analytics and backtesting latency on a real uvicorn process.

    python benchmarks/service_analytics.py            # full: 400 requests per target
    python benchmarks/service_analytics.py --quick    # CI: 30 requests per target

Targets (warm, one keep-alive connection, requests in sequence, so the latency is
the server's time plus a loopback round trip):

* ``metrics``: ``GET /api/analytics/portfolio/{id}/metrics/?period=2y`` of a
  portfolio of 50 positions (41 simulated assets and 9 imported from CSV) bought
  over the last 2 years (goal: p50 under 10 ms);
* ``quick-backtest``: ``POST /api/backtesting/quick-backtest/`` of a moving-average
  strategy on one asset over 10 years, which also stores a strategy and a backtest
  (goal: p50 under 20 ms);
* ``/health`` alone, then while 10 clients run quick backtests back to back
  (the backtests run in the worker pool; the event loop must stay responsive).

Numbers are reported, never asserted; they also go to ``bench-results/service_analytics.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
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
sys.path.insert(0, str(HERE))

from service_load import PASSWORD, _start, _stop  # noqa: E402

__all__ = ["Latency", "main", "run"]

IMPORTED = [f"IMP{i}" for i in range(9)]


@dataclass
class Latency:
    target: str
    requests: int
    p50_ms: float
    p99_ms: float
    max_ms: float
    errors: int
    goal: str = ""


def _csv(path: Path, seed: int, days: int = 800) -> None:
    """A Yahoo-style CSV of a seeded random walk ending yesterday."""
    rng = np.random.default_rng(seed)
    end = dt.date.today() - dt.timedelta(days=1)
    dates = [end - dt.timedelta(days=i) for i in range(days)][::-1]
    dates = [d for d in dates if d.weekday() < 5]
    close = 50.0 * np.exp(np.cumsum(rng.normal(0.0003, 0.015, len(dates))))
    lines = ["Date,Open,High,Low,Close,Adj Close,Volume"]
    for d, c in zip(dates, close, strict=True):
        lines.append(
            f"{d},{c * 0.999:.4f},{c * 1.01:.4f},{c * 0.99:.4f},{c:.4f},{c:.4f},{int(rng.integers(1e5, 1e6))}"
        )
    path.write_text("\n".join(lines) + "\n")


class Server:
    """The service on SQLite under a temp dir, a user, and a 50-position portfolio."""

    def __init__(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="qc-bench-analytics-")
        env = {**os.environ, "QC_DATA_DIR": self.tmp, "QC_RATE_LIMIT_AUTHENTICATED": "1000000000/hour",
               "QC_RATE_LIMIT_ANONYMOUS": "1000000000/hour"}  # fmt: skip
        env.pop("QC_DATABASE_URL", None)

        def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
            cmd = [sys.executable, "-m", "service", *args]
            return subprocess.run(
                cmd, env=env, cwd=ROOT, check=True, capture_output=True, input=stdin
            )

        run("migrate")
        files = []
        for i, sym in enumerate(IMPORTED):
            path = Path(self.tmp) / f"{sym}.csv"
            _csv(path, 1000 + i)
            files.append(str(path))
        run("import-prices", *files, "--sector", "Imported")
        run("createuser", "bench", "--password-stdin", stdin=PASSWORD)
        self.token = run("token", "bench").stdout.decode().strip()
        self.proc, self.port = _start("service.app:app_from_env", env)
        self.headers = {"Authorization": f"Token {self.token}"}
        self.portfolio = self._seed()

    def _seed(self) -> int:
        base = f"http://127.0.0.1:{self.port}"
        with httpx.Client(base_url=base, headers=self.headers, timeout=60) as c:
            symbols = [a["symbol"] for a in c.get("/api/assets/?limit=100").json()["results"]]
            symbols += [s for s in IMPORTED if s not in symbols]
            assert len(set(symbols)) >= 50, len(symbols)
            pid = c.post("/api/portfolios/", json={"name": "bench 50"}).json()["id"]
            today = dt.date.today()
            for i, sym in enumerate(sorted(set(symbols))[:50]):
                for k, age in enumerate((720 - 7 * i, 360 - 3 * i)):
                    day = today - dt.timedelta(days=age)
                    body = {"portfolio": pid, "asset_symbol": sym, "transaction_type": "buy",
                            "quantity": f"{1 + k + i % 7}.25", "price": "100", "fees": "1",
                            "transaction_date": day.isoformat()}  # fmt: skip
                    r = c.post("/api/transactions/", json=body)
                    assert r.status_code == 201, r.text
            return int(pid)

    def close(self) -> None:
        _stop(self.proc)


async def _loop(
    port: int, request: bytes, count: int, until: float | None, lat: list[float], errors: list[int]
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        n = 0
        while (n < count) if until is None else (time.perf_counter() < until):
            t0 = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            length = next(
                (int(x[15:]) for x in head.split(b"\r\n") if x[:15].lower() == b"content-length:"),
                0,
            )
            await reader.readexactly(length)
            lat.append(time.perf_counter() - t0)
            if status >= 300:
                errors.append(status)
            n += 1
    finally:
        writer.close()


def _request(
    port: int, method: str, path: str, headers: dict[str, str], body: bytes = b""
) -> bytes:
    extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    if body:
        extra += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}\r\n".encode() + body


def _summary(
    name: str, lat: list[float], errors: list[int], goal_ms: float | None = None
) -> Latency:
    ms = np.asarray(lat) * 1e3
    p50 = float(np.percentile(ms, 50))
    goal = (
        "" if goal_ms is None else f"p50 < {goal_ms:g} ms {'met' if p50 < goal_ms else 'NOT met'}"
    )
    return Latency(
        name, len(lat), p50, float(np.percentile(ms, 99)), float(ms.max()), len(errors), goal
    )


async def _measure(srv: Server, count: int, busy_seconds: float) -> list[Latency]:
    port, h = srv.port, srv.headers
    start = (dt.date.today() - dt.timedelta(days=3650)).isoformat()
    quick = json.dumps({"strategy_type": "moving_average", "asset_symbols": ["SPY"], "start_date": start,
                        "end_date": dt.date.today().isoformat(), "initial_capital": 100000}).encode()  # fmt: skip
    metrics_req = _request(
        port, "GET", f"/api/analytics/portfolio/{srv.portfolio}/metrics/?period=2y", h
    )
    quick_req = _request(port, "POST", "/api/backtesting/quick-backtest/", h, quick)
    health_req = _request(port, "GET", "/health", {})
    out = []
    for name, req, goal in (("GET metrics/ (50 positions x 2 years)", metrics_req, 10.0),
                            ("POST quick-backtest/ (1 asset x 10 years)", quick_req, 20.0),
                            ("GET /health (idle)", health_req, None)):  # fmt: skip
        await _loop(port, req, max(5, count // 10), None, [], [])  # warm-up
        lat: list[float] = []
        errors: list[int] = []
        await _loop(port, req, count, None, lat, errors)
        out.append(_summary(name, lat, errors, goal))
    until = time.perf_counter() + busy_seconds
    health: list[float] = []
    bt: list[float] = []
    herr: list[int] = []
    berr: list[int] = []
    await asyncio.gather(
        _loop(port, health_req, 0, until, health, herr),
        *(_loop(port, quick_req, 0, until, bt, berr) for _ in range(10)),
    )
    out.append(_summary("GET /health while 10 backtests run", health, herr))
    out.append(_summary("POST quick-backtest/ x 10 concurrent", bt, berr))
    return out


def run(*, quick: bool) -> list[Latency]:
    srv = Server()
    try:
        return asyncio.run(_measure(srv, 30 if quick else 400, 1.0 if quick else 5.0))
    finally:
        srv.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=str(ROOT / "bench-results" / "service_analytics.json"))
    args = parser.parse_args(argv)
    results = run(quick=args.quick)
    print(
        f"{'target':<44} {'requests':>8} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'errors':>6}  goal"
    )
    for r in results:
        print(
            f"{r.target:<44} {r.requests:>8} {r.p50_ms:>8.2f} {r.p99_ms:>8.2f} {r.max_ms:>8.2f} {r.errors:>6}  {r.goal}"
        )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps([asdict(r) for r in results], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
