"""The 1,000,000-combination moving-average sweep on 2,520 bars: time and peak memory.

    python benchmarks/sweep_memory.py            # 1,000,000 combinations
    python benchmarks/sweep_memory.py --n 1000   # short_window 1..n x long_window n+1..2n

The sweep runs in a fresh subprocess so that its peak resident set size
(``ru_maxrss``) is the sweep's own, interpreter and numba included. Reported,
never asserted (the goal: under 2 GB).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
import numpy as np
from quantcore.backtest import sweep

n = int(sys.argv[1])
rng = np.random.default_rng(20261122)
close = 100.0 * np.exp(np.cumsum(rng.normal(0.0003, 0.01, 2520)))
grid = {"short_window": range(1, n + 1), "long_window": range(n + 1, 2 * n + 1)}
sweep(close[:300], "moving_average", {"short_window": [2], "long_window": [3]})  # compile / load cache
cpu0 = resource.getrusage(resource.RUSAGE_SELF).ru_utime
t0 = time.perf_counter()
table = sweep(close, "moving_average", grid, fees=0.001, slippage=0.0005)
elapsed = time.perf_counter() - t0
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"rows": len(table), "seconds": elapsed, "cpu_seconds": usage.ru_utime - cpu0,
                  "peak_rss_bytes": usage.ru_maxrss * 1024}))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=1000, help="windows per side (n * n combinations)")
    args = parser.parse_args(argv)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(args.n)], capture_output=True, text=True, check=True
    )
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    gb = res["peak_rss_bytes"] / 2**30
    print(
        f"sweep {res['rows']:,} combinations x 2,520 bars: {res['seconds']:.1f} s wall "
        f"({res['cpu_seconds']:.1f} s CPU over all threads), "
        f"peak RSS {gb:.2f} GB (goal < 2 GB: {'met' if gb < 2 else 'NOT met'})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
