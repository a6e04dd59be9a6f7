"""Micro-benchmarks of the service's hot helpers (small inputs; never asserted)."""

from __future__ import annotations

import numpy as np
import pytest

from quantcore.portfolio import mark_positions, portfolio_totals


@pytest.fixture
def positions() -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(20261122)
    n = 200  # 20 portfolios x 10 positions
    qty = rng.uniform(1, 100, n)
    cost = qty * rng.uniform(10, 500, n)
    price = rng.uniform(10, 500, n)
    change = rng.normal(0, 2, n)
    group = np.repeat(np.arange(20), 10)
    return qty, cost, price, change, group


def test_bench_valuation_20x10(benchmark, positions) -> None:
    qty, cost, price, change, group = positions

    def run() -> object:
        return portfolio_totals(group, 20, mark_positions(qty, cost, price, change))

    totals = benchmark(run)
    assert totals.position_count.sum() == 200
