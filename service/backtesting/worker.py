"""The backtest worker pool: runs ``quantcore.backtest`` off the event loop.

A backtest is CPU work in numba kernels plus pandas glue that holds the GIL, so
it runs in a :class:`~concurrent.futures.ProcessPoolExecutor` (``spawn`` start
method: safe next to the server's threads). Workers import ``quantcore`` and
load the cached kernels once, in the initializer, so the first request does not
pay for it. The pool is process-wide and created on first use; its size is
``Settings.backtest_workers`` (``QC_BACKTEST_WORKERS``, default ``min(4,
cpu_count)``), handed over by the app at startup (:func:`configure`); ``0`` runs
jobs in a thread instead (``anyio.to_thread``), for debugging.

Jobs and results are plain arrays and dicts (cheap to pickle): the service loads
the prices, the worker only computes.
"""

from __future__ import annotations

import asyncio
import atexit
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import numpy as np
from numpy.typing import NDArray

from service.settings import default_backtest_workers

__all__ = ["BacktestJob", "configure", "execute", "pool", "run_job", "shutdown", "start", "warm_up"]


@dataclass(frozen=True, slots=True)
class BacktestJob:
    """Everything one run needs (picklable).

    Attributes:
        days: trading days as ``datetime64[D]`` integers (days since 1970-01-01).
        close: closes, ``(n_days, n_assets)``, NaN before an asset's first bar.
        symbols: the columns of ``close``.
        benchmark: benchmark closes on ``days`` (or ``None``).
    """

    days: NDArray[np.int64]
    close: NDArray[np.float64]
    symbols: tuple[str, ...]
    strategy_type: str
    parameters: dict[str, Any]
    initial_capital: float
    fees: float
    slippage: float
    max_position_size: float
    benchmark: NDArray[np.float64] | None


def run_job(job: BacktestJob) -> dict[str, Any]:
    """Run one backtest with :func:`quantcore.backtest.run_strategy` (in a worker), or
    :func:`quantcore.backtest.rebalance` for the ``rebalance`` type.

    Returns:
        ``metrics`` (floats by :data:`quantcore.backtest.METRIC_NAMES`), ``equity``
        (list of floats, one per day) and ``trades`` (list of dicts).
    """
    import pandas as pd

    from quantcore.backtest import EXIT_REASONS, METRIC_NAMES, rebalance, run_strategy

    index = pd.DatetimeIndex(job.days.astype("datetime64[D]"))
    prices = pd.DataFrame(job.close, index=index, columns=list(job.symbols))
    if job.strategy_type == "rebalance":  # target weights; max_position_size does not apply
        p = job.parameters
        res = rebalance(
            prices, p.get("weights") or {s: 1.0 / len(job.symbols) for s in job.symbols},
            every=p.get("every"), threshold=p.get("threshold"), fees=job.fees,
            slippage=job.slippage, initial_capital=job.initial_capital, benchmark=job.benchmark,
        )  # fmt: skip
    else:
        res = run_strategy(
            prices if len(job.symbols) > 1 else prices.iloc[:, 0],
            job.strategy_type,
            **job.parameters,
            initial_capital=job.initial_capital,
            fees=job.fees,
            slippage=job.slippage,
            **_engine_size(job),
            benchmark=job.benchmark,
        )
    equity = np.asarray(res.equity, dtype=np.float64)
    t = res.trades
    trades = [
        {
            "symbol": job.symbols[int(t["column"][i])],
            "direction": "long" if int(t["direction"][i]) >= 0 else "short",
            "status": "closed" if int(t["exit_idx"][i]) >= 0 else "open",
            "entry_idx": int(t["entry_idx"][i]),
            "exit_idx": int(t["exit_idx"][i]),
            "size": float(t["size"][i]),
            "entry_price": float(t["entry_price"][i]),
            "exit_price": float(t["exit_price"][i]),
            "fees": float(t["entry_fees"][i] + t["exit_fees"][i]),
            "pnl": float(t["pnl"][i]),
            "return": float(t["ret"][i]),
            "exit_reason": EXIT_REASONS[int(t["exit_reason"][i])],
        }
        for i in range(t.size)
    ]
    return {
        # NaN (no closed trade, a rebalance's win rate) is stored as null: JSON has no NaN
        "metrics": {
            name: float(v) if np.isfinite(v := getattr(res, name)) else None
            for name in METRIC_NAMES
        },
        "equity": equity.tolist(),
        "trades": trades,
    }


def _engine_size(job: BacktestJob) -> dict[str, float]:
    """``max_position_size`` as the engine's percent ``size``, unless ``parameters`` size it."""
    p = job.parameters
    if "size" in p or p.get("size_type", "percent") != "percent":
        return {}
    return {"size": job.max_position_size}


def _exit_with_parent(parent: int) -> None:
    """Leave when the server process is gone (even after a SIGKILL, which skips cleanup)."""
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(0)


def warm_up(parent: int | None = None) -> None:
    """Pool initializer: watch the parent process, then load ``quantcore.backtest`` and
    its compiled kernels so that the first job does not pay for them.

    Ctrl-C reaches the whole terminal's process group: a worker ignores it and leaves
    when the server shuts the pool down (an interrupted worker would leak the pool's
    semaphores)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if parent is not None:
        threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()
    days = np.arange(60, dtype=np.int64)
    close = (100.0 + np.sin(np.arange(60) / 5.0)).reshape(-1, 1)
    run_job(
        BacktestJob(days, close, ("X",), "moving_average", {"short_window": 2, "long_window": 5},
                    1000.0, 0.0, 0.0, 1.0, close[:, 0].copy())
    )  # fmt: skip


_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None
_size = default_backtest_workers()  # until the app calls configure()
_pool_size = 0  # the size _pool was made with


def configure(workers: int) -> None:
    """Size the pool (``Settings.backtest_workers``; ``0``: run jobs in a thread).

    A running pool of another size is retired: its jobs finish, new ones go to a new pool.

    Raises:
        ValueError: ``workers`` below 0.
    """
    global _pool, _size
    if workers < 0:
        raise ValueError(f"backtest_workers must be >= 0, got {workers}")
    with _lock:
        _size = workers
        if _pool is not None and _pool_size != workers:
            _pool.shutdown(wait=False)
            _pool = None


def pool() -> Executor | None:
    """The process-wide pool (``None`` when the size is 0)."""
    global _pool, _pool_size
    with _lock:
        if _size == 0:
            return None
        if _pool is None:
            _pool = ProcessPoolExecutor(
                max_workers=_size,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=warm_up,
                initargs=(os.getpid(),),
            )
            _pool_size = _size
        return _pool


def shutdown() -> None:
    """Stop the pool (registered with :mod:`atexit`)."""
    global _pool
    with _lock:
        if _pool is not None:
            _pool.shutdown(wait=True, cancel_futures=True)
            _pool = None


atexit.register(shutdown)


def _ready(_: int) -> int:
    return os.getpid()


def start() -> None:
    """Start every worker of the pool now and wait until each has run :func:`warm_up`, so
    that the first backtest does not pay for spawning and loading a worker."""
    executor = pool()
    if executor is not None:
        list(executor.map(_ready, range(_size)))


async def execute(job: BacktestJob) -> dict[str, Any]:
    """Run ``job`` in the pool and await its result without blocking the event loop.

    Raises:
        ValueError: what ``quantcore`` raised for bad input (re-raised from the worker).
    """
    executor = pool()
    if executor is None:
        return await anyio.to_thread.run_sync(run_job, job)
    try:
        return await asyncio.wrap_future(executor.submit(run_job, job))
    except BrokenProcessPool:
        shutdown()  # a worker died (killed, out of memory): the next job gets a new pool
        raise RuntimeError(
            "the backtest worker stopped unexpectedly; run the backtest again"
        ) from None
