"""rebalance() against the plain-Python twin of its rules, on hypothesis-generated markets."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as hs

from quantcore._kernels.backtest_rebalance import rebalance_nb
from quantcore.backtest import rebalance

_spec = importlib.util.spec_from_file_location(
    "test_rebalance_twin", Path(__file__).parents[1] / "unit" / "test_rebalance.py"
)
assert _spec is not None and _spec.loader is not None
_twin = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("test_rebalance_twin", _twin)
_spec.loader.exec_module(_twin)


@hs.composite
def markets(draw: hs.DrawFn) -> dict:
    rng = np.random.default_rng(draw(hs.integers(0, 2**32 - 1)))
    n = draw(hs.integers(1, 60))
    k = draw(hs.integers(1, 4))
    close = 20.0 * np.exp(np.cumsum(rng.normal(0.0, 0.04, (n, k)), axis=0))
    for j in range(k):  # late listings and missing bars
        if draw(hs.booleans()):
            close[: draw(hs.integers(0, n)), j] = np.nan
        if n > 2 and draw(hs.booleans()):
            close[draw(hs.integers(1, n - 1)), j] = np.nan
    raw = rng.random((n, k)) * (rng.random((n, k)) < 0.8)
    scale = draw(hs.floats(0.2, 1.0))
    targets = raw / np.maximum(raw.sum(axis=1, keepdims=True), 1e-12) * scale
    return {
        "close": close,
        "targets": np.ascontiguousarray(targets),
        "candidate": rng.random(n) < draw(hs.floats(0.05, 1.0)),
        "threshold": draw(hs.one_of(hs.none(), hs.floats(0.0, 0.3))),
        "fees": draw(hs.sampled_from([0.0, 0.001, 0.02])),
        "slip": draw(hs.sampled_from([0.0, 0.0005, 0.01])),
        "integer": draw(hs.booleans()),
        "init": draw(hs.sampled_from([1_000.0, 100_000.0])),
    }


@settings(max_examples=300, deadline=None)
@given(markets())
def test_kernel_equals_twin(m: dict) -> None:
    equity, cash, positions, traded, costs, _ = rebalance_nb(
        m["close"], m["targets"], m["candidate"],
        -1.0 if m["threshold"] is None else m["threshold"],
        m["init"], m["fees"], m["slip"], m["integer"],
    )  # fmt: skip
    eq, pos = _twin.twin(
        m["close"], m["targets"], m["candidate"],
        m["threshold"], m["init"], m["fees"], m["slip"], m["integer"],
    )  # fmt: skip
    np.testing.assert_allclose(equity, eq, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(positions, pos, rtol=1e-10, atol=1e-9)
    # the books balance: cash never below zero (beyond rounding), costs never negative
    assert (cash > -1e-9 * m["init"]).all()
    assert (costs >= 0).all() and (traded >= 0).all()
    assert (positions >= 0).all()


@settings(max_examples=100, deadline=None)
@given(markets())
def test_costless_rebalance_lands_on_the_targets(m: dict) -> None:
    close = np.nan_to_num(m["close"], nan=1.0)  # every asset priced on every bar
    n, k = close.shape
    w = m["targets"][0]
    res = rebalance(close, w, every=1)
    value = res.positions * close
    held = value / res.equity[:, None]
    np.testing.assert_allclose(held, np.broadcast_to(w, (n, k)), atol=1e-9)
    cash = res.equity - value.sum(axis=1)
    np.testing.assert_allclose(cash, res.equity * (1.0 - w.sum()), atol=1e-6)
