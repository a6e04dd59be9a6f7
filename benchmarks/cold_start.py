"""First-call cost of the analytics functions: JIT compile vs. numba's on-disk cache.

    python benchmarks/cold_start.py            # every function
    python benchmarks/cold_start.py -k summary # names containing "summary"
    python benchmarks/cold_start.py --quickstart --kernels 25
    python benchmarks/cold_start.py --quickstart --kernels 25 --before main

``--quickstart`` times the README's library quick start (``metrics.summary``,
``value_at_risk``, ``macd``, ``run_strategy``, a 100 x 100 moving-average sweep on
its 2,520-day price series) in one fresh process on an empty cache, step by step.
``--kernels N`` lists the N kernels that took longest to compile during it
(exclusive CPU time of the compiling thread: a kernel's own type inference and
LLVM compile, without the kernels it calls, from numba's ``numba:compile``
events; with the step that first compiled it, and the sum per step); "cpu" is
the process CPU time of each step, steadier than wall time on a shared machine.
``--before REF`` runs the same on the quantcore of a git ref (``git archive`` into
a temp dir) and prints both side by side.

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
from typing import Any

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


#: The README's library quick start, step by step (``close``: its 2,520-day price series).
QUICKSTART: dict[str, str] = {
    "import quantcore": (
        "import quantcore as qc; import quantcore.backtest, quantcore.indicators, quantcore.metrics,"
        " quantcore.returns, quantcore.risk"
    ),
    "simple_returns": "returns = qc.returns.simple_returns(close)",
    "metrics.summary": "qc.metrics.summary(returns)",
    "risk.value_at_risk": "qc.risk.value_at_risk(returns, level=0.99, method='cornish_fisher')",
    "indicators.macd": "qc.indicators.macd(close)",
    "backtest.run_strategy": (
        "qc.backtest.run_strategy(close, 'moving_average', short_window=10, long_window=50, fees=0.001)"
    ),
    "backtest.sweep (100 x 100)": (
        "qc.backtest.sweep(close, 'moving_average',"
        " {'short_window': range(5, 105), 'long_window': range(5, 105)})"
    ),
}

_QUICKSTART_PROBE = """
import json, sys, time
from collections import defaultdict
import numba.core.event as ev
import numpy as np
import pandas as pd

rng = np.random.default_rng(7)  # the README's series
days = pd.bdate_range("2015-01-02", periods=2520)
close = pd.Series(100 * np.exp(np.cumsum(rng.normal(3e-4, 0.012, days.size))), days, name="ACME")
steps = json.loads(sys.argv[1])
stack, own, count, first_step = [], defaultdict(float), defaultdict(int), {}
step = ""


class Compiles(ev.Listener):
    def on_start(self, event):
        stack.append([event.data["dispatcher"].py_func, time.thread_time(), 0.0])

    def on_end(self, event):
        fn, t0, children = stack.pop()
        took = time.thread_time() - t0
        name = fn.__module__.replace("quantcore._kernels.", "") + "." + fn.__qualname__
        own[name] += took - children
        count[name] += 1
        first_step.setdefault(name, step)
        if stack:
            stack[-1][2] += took


times, cpu = {}, {}
with ev.install_listener("numba:compile", Compiles()):
    for step, code in steps.items():
        t0, c0 = time.perf_counter(), time.process_time()
        exec(code, globals())
        times[step] = time.perf_counter() - t0
        cpu[step] = time.process_time() - c0
print(json.dumps({"steps": times, "cpu": cpu, "kernels": own, "count": count, "step": first_step}))
"""


def _quickstart(cache_dir: str, root: Path) -> dict[str, dict[str, Any]]:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, PYTHONPATH=str(root))
    done = subprocess.run(
        [sys.executable, "-c", _QUICKSTART_PROBE, json.dumps(QUICKSTART)],
        env=env, capture_output=True, text=True, check=True, cwd=root,
    )  # fmt: skip
    result: dict[str, dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _checkout(ref: str, into: str) -> Path:
    """The ``quantcore`` package of git ``ref`` extracted under ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "quantcore"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)
    return Path(into)


def _report_quickstart(kernels: int, before: str | None) -> None:
    runs: dict[str, dict[str, dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="qc-before-") as src:
        roots = {"before": _checkout(before, src)} if before else {}
        roots["now"] = ROOT
        for label, root in roots.items():
            with tempfile.TemporaryDirectory(prefix="qc-numba-cache-") as cache:
                cold = _quickstart(cache, root)  # empty cache: compile, write the cache
                warm = _quickstart(cache, root)  # a new process on that cache
            runs[label] = {
                "cold": cold["steps"], "cpu": cold["cpu"], "warm": warm["steps"],
                "kernels": cold["kernels"], "count": cold["count"], "step": cold["step"],
            }  # fmt: skip
    labels = list(runs)
    head = "".join(f"{lb + ' cold':>14}{lb + ' cpu':>11}{lb + ' warm':>13}" for lb in labels)
    print(f"{'quick start step':<28}{head}")

    def row(values: dict[str, float]) -> str:
        return f"{values['cold']:>12.2f} s{values['cpu']:>9.2f} s{values['warm'] * 1e3:>10.1f} ms"

    for step in QUICKSTART:
        cells = "".join(
            row({k: runs[lb][k][step] for k in ("cold", "cpu", "warm")}) for lb in labels
        )
        print(f"{step:<28}{cells}")
    cells = "".join(
        row({k: sum(runs[lb][k].values()) for k in ("cold", "cpu", "warm")}) for lb in labels
    )
    print(f"{'total':<28}{cells}")
    if kernels:
        for lb in labels:
            own, count, where = runs[lb]["kernels"], runs[lb]["count"], runs[lb]["step"]
            n_sigs = int(sum(count.values()))
            print(
                f"\n{lb}: {len(own)} kernels, {n_sigs} specializations, compiled in "
                f"{sum(own.values()):.2f} s CPU; the {kernels} slowest:"
            )
            print(f"{'kernel':<62}{'specializations':>16}{'compile':>10}  first compiled in")
            for name, took in sorted(own.items(), key=lambda kv: -kv[1])[:kernels]:
                print(f"{name:<62}{int(count[name]):>16}{took:>8.2f} s  {where[name]}")
            by_step: dict[str, float] = {}
            for name, took in own.items():
                by_step[where[name]] = by_step.get(where[name], 0.0) + took
            print(
                "compile CPU per step: " + ", ".join(f"{k} {v:.2f} s" for k, v in by_step.items())
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-k", default="", help="substring filter on function names")
    parser.add_argument(
        "--quickstart", action="store_true", help="time the README quick start instead"
    )
    parser.add_argument(
        "--kernels", type=int, default=0, help="with --quickstart: the N slowest compiles"
    )
    parser.add_argument("--before", default=None, help="with --quickstart: also run git ref BEFORE")
    args = parser.parse_args(argv)
    if args.quickstart:
        _report_quickstart(args.kernels, args.before)
        return 0
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
