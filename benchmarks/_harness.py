"""Side-by-side timing of quantcore against the libraries our users would otherwise pick.

A domain module ``benchmarks/peers_<domain>.py`` defines ``CASES: list[Case]``.
:func:`run_case` times both sides in this one process, on the same data, and
reports the ratio against the issue's goal. Nothing here asserts a time.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Case:
    """One comparison.

    ``goal`` is the required ``peer_time / our_time`` (``2.0``: we must be twice as
    fast; ``1 / 1.2``: we may take at most 1.2x the peer's time). ``setup(quick)``
    builds the inputs once; ``ours`` and ``peer`` take them.
    """

    name: str
    setup: Callable[[bool], Any]
    ours: Callable[[Any], Any]
    peer: Callable[[Any], Any] | None
    peer_name: str
    goal: float | None = None
    goal_text: str = ""
    quick: bool = True  # include in ``--quick`` (CI) runs
    notes: str = ""


@dataclass
class Result:
    case: Case
    first_call: float
    ours: float
    peer: float | None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def speedup(self) -> float | None:
        return None if self.peer is None else self.peer / self.ours

    @property
    def goal_met(self) -> bool | None:
        if self.case.goal is None or self.speedup is None:
            return None
        return self.speedup >= self.case.goal


def best_time(
    fn: Callable[[], Any], *, budget: float, min_runs: int = 3, max_runs: int = 50
) -> float:
    """Best wall time of ``fn`` over repeated runs within ``budget`` seconds."""
    best = float("inf")
    spent = 0.0
    runs = 0
    gc_enabled = gc.isenabled()
    gc.disable()
    try:
        while runs < min_runs or (spent < budget and runs < max_runs):
            t0 = time.perf_counter()
            fn()
            dt = time.perf_counter() - t0
            best = min(best, dt)
            spent += dt
            runs += 1
    finally:
        if gc_enabled:
            gc.enable()
    return best


def run_case(case: Case, *, quick: bool, budget: float) -> Result:
    data = case.setup(quick)
    t0 = time.perf_counter()
    case.ours(data)  # first call: JIT compile or load from numba's on-disk cache
    first = time.perf_counter() - t0
    ours = best_time(lambda: case.ours(data), budget=budget)
    peer = None
    if case.peer is not None:
        case.peer(data)
        peer = best_time(lambda: case.peer(data), budget=budget, min_runs=1 if quick else 3)
    return Result(case, first, ours, peer)


def fmt_seconds(s: float | None) -> str:
    if s is None:
        return "-"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} us"


def child_json(args: list[str], tree: Path) -> dict[str, Any]:
    """Run ``python *args`` with ``tree`` first on ``PYTHONPATH`` (the checkout whose
    service is measured) and return the JSON object its last line of output prints;
    a failing child exits this process with its status, after its stderr's end. The child
    runs in ``tree``: ``python -c`` puts its working directory first on ``sys.path``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, check=False, env=env, cwd=tree
    )
    if proc.returncode != 0:
        print(proc.stderr[-3000:], file=sys.stderr)
        raise SystemExit(proc.returncode)
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))
