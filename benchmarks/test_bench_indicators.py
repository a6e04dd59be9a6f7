"""pytest-benchmark timings of quantcore.indicators on small inputs (CI runs one round).

One 10,000-bar series and one 252 x 50 panel (a year of fifty assets) per
indicator. Side-by-side ratios against TA-Lib are in ``peers_indicators.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from quantcore import indicators as qi

Bars = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]

CALLS: dict[str, Callable[[Bars], Any]] = {
    "sma": lambda b: qi.sma(b[2], 20),
    "ema": lambda b: qi.ema(b[2], 20),
    "wma": lambda b: qi.wma(b[2], 20),
    "rsi": lambda b: qi.rsi(b[2]),
    "macd": lambda b: qi.macd(b[2]),
    "bollinger_bands": lambda b: qi.bollinger_bands(b[2]),
    "roc": lambda b: qi.roc(b[2], 10),
    "atr": lambda b: qi.atr(b[0], b[1], b[2]),
    "stochastic": lambda b: qi.stochastic(b[0], b[1], b[2]),
    "williams_r": lambda b: qi.williams_r(b[0], b[1], b[2]),
    "cci": lambda b: qi.cci(b[0], b[1], b[2]),
    "adx": lambda b: qi.adx(b[0], b[1], b[2]),
    "obv": lambda b: qi.obv(b[2], b[3]),
    "vwap": lambda b: qi.vwap(b[0], b[1], b[2], b[3]),
}


def _bars(shape: tuple[int, ...]) -> Bars:
    rng = np.random.default_rng(20261122)
    close = np.asfortranarray(100.0 * np.exp(np.cumsum(rng.normal(0.0, 0.01, shape), axis=0)))
    spread = np.asfortranarray(close * rng.uniform(0.001, 0.02, shape))
    volume = np.asfortranarray(rng.integers(1_000, 10_000, shape).astype(np.float64))
    return close + spread, close - spread, close, volume


@pytest.fixture(scope="module")
def series() -> Bars:
    return _bars((10_000,))


@pytest.fixture(scope="module")
def panel() -> Bars:
    return _bars((252, 50))


@pytest.mark.parametrize("name", list(CALLS))
def test_bench_series(benchmark: Any, series: Bars, name: str) -> None:
    out = benchmark(CALLS[name], series)
    first = out[0] if isinstance(out, tuple) else out
    assert first.shape == series[2].shape


@pytest.mark.parametrize("name", list(CALLS))
def test_bench_panel(benchmark: Any, panel: Bars, name: str) -> None:
    out = benchmark(CALLS[name], panel)
    first = out[0] if isinstance(out, tuple) else out
    assert first.shape == panel[2].shape
