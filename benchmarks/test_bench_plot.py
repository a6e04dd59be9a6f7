"""pytest-benchmark timings of the figures and the tear sheet (seeded returns, CI-sized).

pytest benchmarks/test_bench_plot.py --benchmark-only
N=5030 pytest benchmarks/test_bench_plot.py --benchmark-only   # 20 years of days
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

from quantcore import plot, report

__all__: list[str] = []

N = int(os.environ.get("N", "1000"))

CALLS: dict[str, Callable[[pd.Series, pd.Series], Any]] = {
    "equity_curve": lambda r, b: plot.equity_curve(r, b),
    "underwater": lambda r, b: plot.underwater(r),
    "return_distribution": lambda r, b: plot.return_distribution(r),
    "rolling_sharpe_volatility": lambda r, b: plot.rolling_sharpe_volatility(r),
    "tearsheet_png": lambda r, b: report.tearsheet(r, b),
    "tearsheet_svg": lambda r, b: report.tearsheet(r, b, image_format="svg"),
}


@pytest.fixture(scope="module")
def data() -> tuple[pd.Series, pd.Series]:
    rng = np.random.default_rng(20261122)
    index = pd.bdate_range("2000-01-03", periods=N)
    b = pd.Series(rng.normal(0.0003, 0.012, N), index=index, name="benchmark")
    r = (0.8 * b + pd.Series(rng.normal(0.0002, 0.006, N), index=index)).rename("strategy")
    return r, b


@pytest.mark.parametrize("name", list(CALLS))
def test_bench_plot(benchmark: Any, data: tuple[pd.Series, pd.Series], name: str) -> None:
    benchmark.group = f"plot n={N}"
    benchmark(CALLS[name], *data)
