"""Invariants of PBO and the deflated Sharpe ratio on hypothesis-generated input."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as hs

from quantcore.overfitting import deflated_sharpe_ratio, probability_of_backtest_overfitting

_spec = importlib.util.spec_from_file_location(
    "test_overfitting_twin", Path(__file__).parents[1] / "unit" / "test_overfitting.py"
)
assert _spec is not None and _spec.loader is not None
_twin = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("test_overfitting_twin", _twin)
_spec.loader.exec_module(_twin)


@hs.composite
def matrices(draw: hs.DrawFn) -> tuple[np.ndarray, int]:
    s = draw(hs.sampled_from([2, 4, 6, 8]))
    n = draw(hs.integers(2, 12))
    t = draw(hs.integers(2 * s, 120))
    rng = np.random.default_rng(draw(hs.integers(0, 2**32 - 1)))
    skill = draw(hs.floats(0.0, 0.01))
    m = rng.normal(0.0, 0.01, (t, n)) + skill * rng.normal(size=n)
    return m, s


@settings(max_examples=150, deadline=None)
@given(matrices())
def test_pbo_in_unit_interval_and_equal_to_twin(case: tuple[np.ndarray, int]) -> None:
    m, s = case
    pbo = probability_of_backtest_overfitting(m, n_splits=s)
    assert 0.0 <= pbo <= 1.0
    assert pbo == _twin.pbo_twin(m, s)


@settings(max_examples=100, deadline=None)
@given(matrices(), hs.floats(0.5, 20.0))
def test_pbo_invariant_to_scaling_returns(case: tuple[np.ndarray, int], k: float) -> None:
    m, s = case
    # Sharpe ratios, hence ranks, do not change when every return is scaled
    scaled = probability_of_backtest_overfitting(m * k, n_splits=s)
    assert scaled == probability_of_backtest_overfitting(m, n_splits=s)


@settings(max_examples=200, deadline=None)
@given(
    sr=hs.floats(-0.3, 0.5),
    v=hs.floats(0.0, 0.05),
    t=hs.integers(2, 5000),
    g3=hs.floats(-2.0, 2.0),
    g4=hs.floats(3.0, 15.0),
    n=hs.integers(1, 10_000),
    more=hs.integers(1, 10_000),
)
def test_dsr_in_unit_interval_and_falls_as_trials_grow(
    sr: float, v: float, t: int, g3: float, g4: float, n: int, more: int
) -> None:
    if not 1.0 - g3 * sr + (g4 - 1.0) / 4.0 * sr * sr > 0.0:
        assert math.isnan(deflated_sharpe_ratio(sr, n, v, t, g3, g4))
        return
    a = deflated_sharpe_ratio(sr, n, v, t, g3, g4)
    b = deflated_sharpe_ratio(sr, n + more, v, t, g3, g4)
    assert 0.0 <= b <= a <= 1.0
    if v > 1e-6 and 0.0 < a < 1.0 and 0.0 < b:
        assert b < a


@settings(max_examples=100, deadline=None)
@given(
    sr=hs.floats(-0.2, 0.3),
    up=hs.floats(0.001, 0.2),
    n=hs.integers(1, 1000),
    t=hs.integers(10, 3000),
)
def test_dsr_rises_with_the_sharpe_ratio(sr: float, up: float, n: int, t: int) -> None:
    # normal returns: the denominator 1 + SR^2 / 2 grows slower than the numerator
    assert deflated_sharpe_ratio(sr + up, n, 0.01, t) >= deflated_sharpe_ratio(sr, n, 0.01, t)
