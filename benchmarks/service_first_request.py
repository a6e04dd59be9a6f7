"""The finance service's first requests on an empty numba cache, with and without the start-up warm-up.

    python benchmarks/service_first_request.py            # both, side by side
    python benchmarks/service_first_request.py --runs warm

Each run starts ``python -m service serve`` in a fresh process on a fresh SQLite file and
an empty ``NUMBA_CACHE_DIR``, with the demo data: ``QC_WARM_UP=false`` is the behaviour
before the warm-up (each endpoint compiles its kernels inside its first request),
``QC_WARM_UP=true`` compiles them at start-up, before ``/ready``. It reports the time from
the process start to ``/ready``, then the first and second request of every analytics,
backtest and tax endpoint. Nothing is asserted: the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

__all__ = ["main"]

ROOT = Path(__file__).resolve().parent.parent
#: Every indicator the technical endpoint offers, at its defaults.
_ALL_INDICATORS = "sma_20,ema_20,wma_20,roc,rsi,macd,bollinger,atr,adx,williams_r,cci,stochastic,obv,vwap"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _requests(pid: int, asset: int, symbol: str) -> list[tuple[str, str, str, object]]:
    year = dt.date.today().year
    return [
        ("metrics", "GET", f"/api/analytics/portfolio/{pid}/metrics/", None),
        ("performance", "GET", f"/api/analytics/portfolio/{pid}/performance/", None),
        ("allocation", "GET", f"/api/analytics/portfolio/{pid}/allocation/", None),
        ("risk", "GET", f"/api/analytics/portfolio/{pid}/risk/", None),
        ("technical", "GET",
         f"/api/analytics/assets/{asset}/technical/?indicators={_ALL_INDICATORS}", None),
        ("tax summary", "GET", f"/api/tax/analytics/summary/?year={year}", None),
        ("loss harvesting", "GET", "/api/tax/loss-harvesting/", None),
        ("tax report", "POST", "/api/tax/reports/generate/", {"year": year}),
        ("quick backtest", "POST", "/api/backtesting/quick-backtest/", {
            "strategy_type": "moving_average", "asset_symbols": [symbol],
            "start_date": "2022-01-03", "end_date": "2024-12-31"}),
    ]  # fmt: skip


def run(warm_up: bool) -> dict[str, float]:
    """Start a server on an empty numba cache; seconds to /ready and per request."""
    with tempfile.TemporaryDirectory() as tmp:
        port = _free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("QC_")}
        env.update(
            NUMBA_CACHE_DIR=str(Path(tmp) / "numba"), QC_DATA_DIR=str(Path(tmp) / "var"),
            QC_DEMO_DATA="true", QC_WARM_UP=str(warm_up).lower(), QC_RATE_LIMIT_ENABLED="false",
        )  # fmt: skip
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "service", "serve", "--port", str(port)],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        out: dict[str, float] = {}
        try:
            base = f"http://127.0.0.1:{port}"
            while True:
                try:
                    if httpx.get(f"{base}/ready", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if proc.poll() is not None:
                    raise RuntimeError("the server exited")
                time.sleep(0.1)
            out["start to /ready"] = time.perf_counter() - start
            token = (Path(tmp) / "var" / "demo-token.txt").read_text().strip()
            with httpx.Client(base_url=base, timeout=600,
                              headers={"Authorization": f"Token {token}"}) as http:  # fmt: skip
                pid = http.get("/api/portfolios/").json()["results"][0]["id"]
                held = http.get(f"/api/portfolios/{pid}/positions/").json()
                first = (held["results"] if isinstance(held, dict) else held)[0]["asset"]
                symbol, asset = first["symbol"], first["id"]
                for name, method, url, body in _requests(pid, asset, symbol):
                    for attempt in ("first", "second"):
                        t0 = time.perf_counter()
                        r = http.request(method, url, json=body)
                        out[f"{name} ({attempt})"] = time.perf_counter() - t0
                        if r.status_code >= 300:
                            raise RuntimeError(f"{url}: {r.status_code} {r.text[:200]}")
        finally:
            proc.terminate()
            proc.wait(30)
        return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="+", choices=("lazy", "warm"), default=["lazy", "warm"])
    args = parser.parse_args(argv)
    results = {name: run(name == "warm") for name in args.runs}
    rows = list(next(iter(results.values())))
    header = "| | " + " | ".join(
        "no warm-up (before)" if n == "lazy" else "warm-up at start-up" for n in results
    ) + " |"
    print(header)
    print("|---" * (len(results) + 1) + "|")
    for row in rows:
        print(f"| {row} | " + " | ".join(f"{results[n][row]:.2f} s" for n in results) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
