"""First-call cost of the analytics functions: JIT compile vs. numba's on-disk cache.

    python benchmarks/cold_start.py            # every function
    python benchmarks/cold_start.py -k summary # names containing "summary"

Each function is timed in a fresh subprocess, twice: first with an empty
``NUMBA_CACHE_DIR`` (cold: type inference + LLVM compile, then written to the
cache), then again in a new process with that cache (warm start: load from
disk). The import of quantcore is excluded; the call runs on a 252 x 4 panel
(``r``: returns, ``b``: a benchmark column, ``p``: prices).
Nothing is asserted: the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["CALLS", "main"]

ROOT = Path(__file__).resolve().parent.parent

#: name -> Python expression evaluated with ``r`` (252 x 4 returns) and ``b`` (benchmark) bound.
CALLS: dict[str, str] = {
    "returns.simple_returns": "qc.returns.simple_returns(1 + r)",
    "returns.cumulative_returns": "qc.returns.cumulative_returns(r)",
    "returns.annualized_return": "qc.returns.annualized_return(r)",
    "returns.time_weighted_return": "qc.returns.time_weighted_return(1 + r, r * 0)",
    "risk.volatility": "qc.risk.volatility(r)",
    "risk.value_at_risk": "qc.risk.value_at_risk(r)",
    "risk.value_at_risk(cornish_fisher)": "qc.risk.value_at_risk(r, method='cornish_fisher')",
    "risk.beta": "qc.risk.beta(r, b)",
    "drawdown.max_drawdown": "qc.drawdown.max_drawdown(r)",
    "drawdown.drawdown_periods": "qc.drawdown.drawdown_periods(r)",
    "metrics.sharpe_ratio": "qc.metrics.sharpe_ratio(r)",
    "metrics.tail_ratio": "qc.metrics.tail_ratio(r)",
    "metrics.summary": "qc.metrics.summary(r)",
    "metrics.summary(benchmark)": "qc.metrics.summary(r, b)",
    "indicators.sma": "qc.indicators.sma(p, 20)",
    "indicators.rsi": "qc.indicators.rsi(p, 14)",
    "indicators.macd": "qc.indicators.macd(p)",
    "indicators.bollinger_bands": "qc.indicators.bollinger_bands(p, 20)",
    "indicators.atr": "qc.indicators.atr(p * 1.01, p * 0.99, p, 14)",
}

_PROBE = """
import json, sys, time
import numpy as np
import quantcore as qc
import quantcore.returns, quantcore.risk, quantcore.drawdown, quantcore.metrics, quantcore.indicators
rng = np.random.default_rng(0)
r = np.asfortranarray(rng.normal(0.0004, 0.01, (252, 4)))
b = r[:, 0].copy()
p = 100.0 * np.cumprod(1.0 + r, axis=0)
t0 = time.perf_counter()
eval(sys.argv[1])
print(json.dumps(time.perf_counter() - t0))
"""


def _first_call(expr: str, cache_dir: str) -> float:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, expr], env=env, capture_output=True, text=True, check=True
    )
    return float(json.loads(done.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-k", default="", help="substring filter on function names")
    args = parser.parse_args(argv)
    print(f"{'function':<36} {'cold (compile)':>15} {'cached':>10}")
    total_cold = total_warm = 0.0
    for name, expr in CALLS.items():
        if args.k not in name:
            continue
        with tempfile.TemporaryDirectory(prefix="qc-numba-cache-") as cache:
            cold = _first_call(expr, cache)
            warm = _first_call(expr, cache)
        total_cold += cold
        total_warm += warm
        print(f"{name:<36} {cold:>13.2f} s {warm * 1e3:>7.1f} ms", flush=True)
    print(f"{'total':<36} {total_cold:>13.2f} s {total_warm * 1e3:>7.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
