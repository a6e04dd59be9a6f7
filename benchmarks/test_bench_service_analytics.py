"""pytest-benchmark timings of the analytics building blocks (small inputs; CI runs one round).

The end-to-end HTTP numbers (p50/p99 on a uvicorn process) are in
``benchmarks/service_analytics.py``.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from quantcore import metrics
from service.analytics import technical
from service.analytics.history import LedgerRow, value_history
from service.analytics.prices import ClosePanel
from service.backtesting.worker import BacktestJob, run_job


@pytest.fixture(scope="module")
def portfolio() -> tuple[ClosePanel, list[LedgerRow]]:
    """50 assets x 504 trading days, two buys per asset."""
    rng = np.random.default_rng(7)
    n, k = 504, 50
    days = np.arange(np.datetime64("2024-01-01"), np.datetime64("2024-01-01") + n).astype(
        "datetime64[D]"
    )
    close = 100.0 * np.exp(np.cumsum(rng.normal(0.0, 0.015, (n, k)), axis=0))
    symbols = [f"S{j:02d}" for j in range(k)]
    rows = []
    for j, s in enumerate(symbols):
        for i in (j, 250 + j):
            rows.append(LedgerRow(s, "buy", 10.0, float(close[i, j]), 1.0, days[i].astype(dt.date)))
    rows.sort(key=lambda r: r.date)
    return ClosePanel(days, close, symbols), rows


def test_bench_value_history_and_metrics(benchmark, portfolio) -> None:
    panel, rows = portfolio
    bench = np.random.default_rng(8).normal(0.0, 0.01, panel.dates.size)

    def run() -> object:
        h = value_history(rows, panel)
        return metrics.summary(
            h.returns, bench, metrics=["total_return", "volatility", "sharpe_ratio", "beta"]
        )

    out = benchmark(run)
    assert np.isfinite(out["volatility"])


def test_bench_technical(benchmark) -> None:
    c = 100.0 + np.cumsum(np.random.default_rng(9).normal(0.0, 1.0, 252))
    bars = {"close": c, "high": c + 1.0, "low": c - 1.0, "open": c, "volume": np.full(252, 1e6)}
    requests = technical.parse(
        ["sma_20", "ema_50", "rsi", "macd", "bollinger_20_2", "atr", "stochastic"]
    )
    out = benchmark(technical.compute, requests, bars)
    assert len(out) == 12  # macd and bollinger have 3 outputs, stochastic 2


def test_bench_backtest_job(benchmark) -> None:
    n = 2520
    close = (100.0 * np.exp(np.cumsum(np.random.default_rng(10).normal(0.0, 0.01, n)))).reshape(
        -1, 1
    )
    job = BacktestJob(np.arange(n, dtype=np.int64), close, ("X",), "moving_average",
                      {"short_window": 10, "long_window": 50}, 1e5, 0.001, 0.0, 1.0, close[:, 0].copy())  # fmt: skip
    out = benchmark(run_job, job)
    assert len(out["equity"]) == n
