"""Kernels loaded from numba's on-disk cache run: a cache written by other processes is safe.

Numba stores with a cached kernel the functions to run when it is loaded; for a
``prange`` kernel that starts the thread pool and registers the parallel runtime's
symbols. A kernel that calls a ``prange`` kernel inherits that hook only when the
callee was compiled in the same process: compiled in a process that loaded the callee
from the cache, it is cached without it, and a later process that loads it first
jumps to an unresolved address (a segmentation fault). So no serial kernel calls a
``prange`` kernel: the parallel kernels are entered from Python
(:func:`test_no_serial_kernel_calls_a_parallel_one`), and the walk-forward sequence
that crashed runs from a cache written by two earlier processes
(:func:`test_the_walk_forward_notebook_sequence_runs_from_a_shared_cache`).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import njit, prange
from numba.core.registry import CPUDispatcher

import quantcore
from quantcore import _parallel
from tests.conftest import require_oracle

ROOT = Path(__file__).resolve().parents[2]


def _dispatchers() -> list[Any]:
    found: dict[int, Any] = {}
    for info in pkgutil.walk_packages(quantcore.__path__, "quantcore."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, CPUDispatcher):
                found[id(value)] = value
    for twin in _parallel._SERIAL.values():
        found[id(twin)] = twin
    return list(found.values())


def _callees(kernel: Any) -> list[Any]:
    """The dispatchers a kernel's code names (globals, and attributes of global modules)."""
    fn = kernel.py_func
    codes = [fn.__code__]
    names: set[str] = set()
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    out = []
    for name in names:
        value = fn.__globals__.get(name)
        if isinstance(value, types.ModuleType):
            out.extend(
                getattr(value, attr) for attr in names
                if isinstance(getattr(value, attr, None), CPUDispatcher)
            )  # fmt: skip
        elif isinstance(value, CPUDispatcher):
            out.append(value)
    return out


def _parallel_flag(kernel: Any) -> bool:
    return bool(kernel.targetoptions.get("parallel"))


def _offenders(kernels: list[Any]) -> list[str]:
    """``caller -> callee`` for each serial kernel that reaches a prange kernel."""
    found = []
    for kernel in kernels:
        if _parallel_flag(kernel):
            continue
        seen: set[int] = set()
        stack = _callees(kernel)
        while stack:
            callee = stack.pop()
            if id(callee) in seen:
                continue
            seen.add(id(callee))
            if _parallel_flag(callee):
                found.append(f"{kernel.py_func.__qualname__} -> {callee.py_func.__qualname__}")
                break
            stack.extend(_callees(callee))
    return found


def test_no_serial_kernel_calls_a_parallel_one() -> None:
    kernels = _dispatchers()
    assert sum(map(_parallel_flag, kernels)) > 5  # the scan sees the prange kernels
    assert not _offenders(kernels)


@njit(parallel=True)
def _add_one(x: np.ndarray) -> np.ndarray:
    for i in prange(x.shape[0]):
        x[i] += 1.0
    return x


@njit
def _serial_driver(x: np.ndarray) -> np.ndarray:
    return _add_one(x)


def test_the_scan_finds_a_serial_caller_of_a_prange_kernel() -> None:
    assert _offenders([_serial_driver, _add_one]) == ["_serial_driver -> _add_one"]


#: The warm-up's sweep: a writable panel compiles and caches the fast path's kernels.
_FIRST = """
import numpy as np
import quantcore.backtest as bt
rng = np.random.default_rng(0)
close = 100.0 * np.cumprod(1.0 + rng.normal(4e-4, 0.01, (300, 2)), axis=0)
bt.sweep(close, "moving_average", {"short_window": range(5, 15), "long_window": range(20, 30)})
print("ok")
"""

#: notebooks/06_walk_forward_cpcv.ipynb: a rebalance, then a walk-forward of the sweep on
#: read-only slices of a Series (another array type: numba compiles the sweep's kernels for it
#: in the second process, against the callees the first one cached; the third loads them).
_NOTEBOOK = """
import pandas as pd
from arch.data import nasdaq, sp500
from quantcore.backtest import rebalance, walk_forward
prices = pd.DataFrame(
    {"SP500": sp500.load()["Adj Close"], "NASDAQ": nasdaq.load()["Adj Close"]}
).dropna()
rebalance(prices, {"SP500": 0.6, "NASDAQ": 0.4}, every="M", fees=0.001)
grid = {"short_window": range(5, 55, 5), "long_window": range(20, 210, 10)}
wf = walk_forward(prices["SP500"], "moving_average", grid, train=504, test=126, fees=0.001)
print(repr(round(wf.metrics["total_return"], 12)))
"""


def _fresh_process(code: str, cache: Path) -> str:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT,
        timeout=1200,
    )  # fmt: skip
    assert done.returncode == 0, (
        f"exit status {done.returncode} (-11: segmentation fault)\n{done.stderr[-3000:]}"
    )
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.slow
def test_the_walk_forward_notebook_sequence_runs_from_a_shared_cache(tmp_path: Path) -> None:
    require_oracle("arch")
    assert _fresh_process(_FIRST, tmp_path) == "ok"  # compiles, caches
    compiled = _fresh_process(_NOTEBOOK, tmp_path)  # compiles against cached callees
    loaded = _fresh_process(_NOTEBOOK, tmp_path)  # loads all from the cache
    assert loaded == compiled
