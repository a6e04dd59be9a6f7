"""The moving-average sweep of two source trees timed alternately, beside vectorbt.

For "before and after" ratios on a shared machine: each round runs tree A, tree B
(each in its own process, best of 7 after a warm-up, its own numba cache) and
vectorbt on the same data and work as ``benchmarks/peers_backtest.py``'s MA sweep
(windows 5..104 on 2,520 S&P 500 closes, fees 0.1 %, slippage 0.05 %; total
return, Sharpe and max drawdown). Trees come from ``git archive``::

    mkdir -p /tmp/ab/old /tmp/ab/new
    git archive 589bd1d quantcore | tar -x -C /tmp/ab/old
    git archive HEAD quantcore | tar -x -C /tmp/ab/new
    .venv/bin/python benchmarks/ab_ma_sweep.py /tmp/ab/old /tmp/ab/new

Each line prints both trees' best and median wall time, best CPU time, their
ratio to vectorbt's time of the same round, and the sum of the total returns
(equal when both trees compute the same results).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np

_CHILD = r"""
import json, time
import numpy as np
from arch.data import sp500
from quantcore.backtest import sweep

close = sp500.load()["Adj Close"].iloc[-2520:]
w = np.arange(5, 105)
def run():
    grid = {"short_window": w, "long_window": w}
    out = sweep(close, "moving_average", grid, fees=0.001, slippage=0.0005)
    return out[["total_return", "sharpe_ratio", "max_drawdown"]]
result = run()
wall, cpu = [], []
for _ in range(7):
    t, c = time.perf_counter(), time.process_time()
    run()
    wall.append(time.perf_counter() - t)
    cpu.append(time.process_time() - c)
print(json.dumps({"best": min(wall), "median": sorted(wall)[3], "cpu": min(cpu),
                  "sum": float(result["total_return"].sum())}))
"""


def _tree(path: str) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=path, NUMBA_CACHE_DIR=os.path.join(path, ".nbcache"))
    done = subprocess.run(
        [sys.executable, "-c", _CHILD],
        env=env,
        cwd=path,
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _vectorbt() -> float:
    import vectorbt as vbt
    from arch.data import sp500

    close = sp500.load()["Adj Close"].iloc[-2520:]
    w = np.arange(5, 105)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        fast, slow = vbt.MA.run_combs(close, window=w, r=2, short_names=["fast", "slow"])
        pf = vbt.Portfolio.from_signals(
            close, fast.ma_crossed_above(slow), fast.ma_crossed_below(slow),
            size=np.inf, freq="1D", fees=0.001, slippage=0.0005,
        )  # fmt: skip
        pf.total_return(), pf.sharpe_ratio(), pf.max_drawdown()
        return time.perf_counter() - start


def main(a: str, b: str, rounds: int = 3) -> None:
    _tree(a), _tree(b), _vectorbt()  # compile both trees' caches, warm vectorbt
    for r in range(rounds):
        ta, tb, v = _tree(a), _tree(b), _vectorbt()
        print(
            f"round {r} (load {os.getloadavg()[0]:.1f}): vectorbt {v * 1e3:.0f} ms"
            + "".join(
                f" | {name}: best {t['best'] * 1e3:.1f} ms ({v / t['best']:.0f}x),"
                f" median {t['median'] * 1e3:.1f} ms, cpu {t['cpu'] * 1e3:.1f} ms,"
                f" sum {t['sum']:.12f}"
                for name, t in (("A", ta), ("B", tb))
            ),
            flush=True,
        )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
