"""pytest-benchmark timings of the analytics functions on a small panel (CI-sized).

    pytest benchmarks/test_bench_metrics.py --benchmark-only -p no:doctest
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from quantcore import drawdown, metrics, returns, risk

__all__: list[str] = []

CALLS: dict[str, Callable[[np.ndarray, np.ndarray], Any]] = {
    "cumulative_returns": lambda r, b: returns.cumulative_returns(r),
    "annualized_return": lambda r, b: returns.annualized_return(r),
    "volatility": lambda r, b: risk.volatility(r),
    "value_at_risk": lambda r, b: risk.value_at_risk(r),
    "expected_shortfall": lambda r, b: risk.expected_shortfall(r),
    "value_at_risk_cornish_fisher": lambda r, b: risk.value_at_risk(r, method="cornish_fisher"),
    "beta": lambda r, b: risk.beta(r, b),
    "drawdown_series": lambda r, b: drawdown.drawdown_series(r),
    "max_drawdown": lambda r, b: drawdown.max_drawdown(r),
    "drawdown_periods": lambda r, b: drawdown.drawdown_periods(r),
    "sharpe_ratio": lambda r, b: metrics.sharpe_ratio(r),
    "stability_of_timeseries": lambda r, b: metrics.stability_of_timeseries(r),
    "tail_ratio": lambda r, b: metrics.tail_ratio(r),
    "summary": lambda r, b: metrics.summary(r),
    "summary_with_benchmark": lambda r, b: metrics.summary(r, b),
}


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(20261122)
    r = np.asfortranarray(rng.standard_t(4, size=(2520, 50)) * 0.01 + 0.0003)
    r[:252, -1] = np.nan
    return r, r[:, 0] * 0.8 + rng.normal(0, 0.002, 2520)


@pytest.mark.parametrize("name", list(CALLS))
def test_bench(benchmark: Any, data: tuple[np.ndarray, np.ndarray], name: str) -> None:
    r, b = data
    fn = CALLS[name]
    fn(r, b)  # compile or load from cache outside the timing
    benchmark.group = "analytics 2520x50"
    benchmark(fn, r, b)
