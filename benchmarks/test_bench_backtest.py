"""pytest-benchmark timings of the engine, the strategies and the fused sweep (small inputs)."""

from __future__ import annotations

import numpy as np
import pytest

from quantcore.backtest import run, run_strategy, strategies, sweep


@pytest.fixture(scope="module")
def close() -> np.ndarray:
    rng = np.random.default_rng(20261122)
    return 100.0 * np.exp(np.cumsum(rng.normal(0.0003, 0.01, 2520)))


def test_bench_run(benchmark, close: np.ndarray) -> None:
    e, x = strategies.moving_average(close, short_window=10, long_window=50)
    res = benchmark(run, close, e, x, fees=0.001, slippage=0.0005)
    assert res.total_trades > 0


def test_bench_run_strategy_next_open(benchmark, close: np.ndarray) -> None:
    prices = {"open": close * 1.001, "close": close}
    res = benchmark(run_strategy, prices, "rsi", window=14, fill="next_open", direction="both")
    assert res.total_trades > 0


def test_bench_sweep_ma_190(benchmark, close: np.ndarray) -> None:
    w = np.arange(5, 25)
    table = benchmark(
        sweep, close, "moving_average", {"short_window": w, "long_window": w}, fees=0.001
    )
    assert len(table) == 190


def test_bench_sweep_mean_reversion(benchmark, close: np.ndarray) -> None:
    grid = {"window": range(10, 60, 5), "num_std": [1.0, 1.5, 2.0, 2.5]}
    table = benchmark(sweep, close, "mean_reversion", grid)
    assert len(table) == 40
