"""CPU time of each panel reduction and rolling metric beside its numpy floor, both layouts.

    NUMBA_NUM_THREADS=1 python benchmarks/metrics_floor_cpu.py          # every function
    NUMBA_NUM_THREADS=1 python benchmarks/metrics_floor_cpu.py sharpe   # names containing "sharpe"

The 2,520 x 1,000 panel of ``peers_metrics.py`` (Student-t returns, one late
starter), in C and Fortran order. Each line is the least ``time.process_time``
of ``--reps`` calls, ours and the floor interleaved: one ``numpy.sum(axis=0)``
for the reductions, one ``numpy.cumsum(axis=0)`` for the rolling metrics
(window 63). CPU time of this process, not wall time, so that a busy shared
machine (where a parallel region waits for a descheduled worker) measures the
work rather than the queue; with one numba thread both sides run on one core.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from quantcore import drawdown, metrics, returns, risk, rolling

Fn = Callable[[np.ndarray, np.ndarray], Any]

#: name -> (call, floor): floor "sum" is numpy.sum(axis=0), "cumsum" numpy.cumsum(axis=0).
CALLS: dict[str, tuple[Fn, str]] = {
    "returns.total_return": (lambda r, b: returns.total_return(r), "sum"),
    "returns.annualized_return": (lambda r, b: returns.annualized_return(r), "sum"),
    "risk.volatility": (lambda r, b: risk.volatility(r), "sum"),
    "metrics.sharpe_ratio": (lambda r, b: metrics.sharpe_ratio(r), "sum"),
    "metrics.sortino_ratio": (lambda r, b: metrics.sortino_ratio(r), "sum"),
    "risk.downside_deviation": (lambda r, b: risk.downside_deviation(r), "sum"),
    "drawdown.max_drawdown": (lambda r, b: drawdown.max_drawdown(r), "sum"),
    "risk.beta": (lambda r, b: risk.beta(r, b), "sum"),
    "risk.alpha": (lambda r, b: risk.alpha(r, b), "sum"),
    "rolling.rolling_volatility": (lambda r, b: rolling.rolling_volatility(r, 63), "cumsum"),
    "rolling.rolling_sharpe": (lambda r, b: rolling.rolling_sharpe(r, 63), "cumsum"),
    "rolling.rolling_beta": (lambda r, b: rolling.rolling_beta(r, b, 63), "cumsum"),
}


def _panel(order: str) -> tuple[np.ndarray, np.ndarray]:
    n, k = 2520, 1000
    rng = np.random.default_rng(20261122)
    r = rng.standard_t(4, size=(n, k)) * 0.01 + 0.0003
    r[: n // 10, -1] = np.nan
    b = r[:, :1] * 0.5 + 0.001 * np.sin(np.arange(n))[:, None]
    return (np.asfortranarray(r) if order == "F" else np.ascontiguousarray(r)), np.ascontiguousarray(b)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("filter", nargs="?", default="", help="substring of the function names")
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args(argv)
    print(f"{'function':<28} {'layout':>6} {'ours':>10} {'floor':>10} {'ours/floor':>11}")
    for order in ("C", "F"):
        r, b = _panel(order)
        for name, (call, kind) in CALLS.items():
            if args.filter not in name:
                continue
            floor = np.sum if kind == "sum" else np.cumsum
            call(r, b)  # compile or load from the cache
            ours = best = float("inf")
            for _ in range(args.reps):
                t0 = time.process_time()
                floor(r, axis=0)
                best = min(best, time.process_time() - t0)
                t0 = time.process_time()
                call(r, b)
                ours = min(ours, time.process_time() - t0)
            print(
                f"{name:<28} {order:>6} {ours * 1e3:8.2f} ms {best * 1e3:7.2f} ms {ours / best:10.2f}x",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
