"""Panel kernels read C- and Fortran-ordered panels in place and give the same bits either way.

The reductions keep one accumulator per column and walk the rows, so each
column still sums its values in time order: a C-ordered panel, a Fortran-ordered
one, a non-contiguous view and each column passed alone must agree exactly
(``array_equal``, not ``allclose``), NaNs, constant and one-value columns included.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from quantcore import drawdown, metrics, returns, risk
from quantcore._kernels.tiles import CHUNK_MIN_COLS, GATHER_MAX_VALUES, TILE_COLS, TILE_ROWS
from quantcore._validation import as_float64_2d


def _panel(n: int, k: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    r = rng.standard_t(4, size=(n, k)) * 0.01 + 0.0003
    if k >= 6 and n >= 10:
        r[: n // 7, -1] = np.nan  # late starter
        r[::5, 1] = np.nan  # gaps
        r[:, 2] = 0.01  # constant: std exactly 0, Sharpe NaN
        r[:-1, 3] = np.nan  # one valid value
        r[:, 4] = np.nan  # nothing valid
        r[n // 2, 5] = np.nan
    return r


def _bench(n: int) -> np.ndarray:
    return (0.004 * np.sin(np.arange(n)) + 0.0002).reshape(-1, 1)


CALLS: dict[str, Callable[[np.ndarray, np.ndarray], Any]] = {
    "volatility": lambda r, b: risk.volatility(r),
    "volatility_ddof0": lambda r, b: risk.volatility(r, ddof=0, periods_per_year=12),
    "annualized_return": lambda r, b: returns.annualized_return(r),
    "total_return": lambda r, b: returns.total_return(r),
    "sharpe_ratio": lambda r, b: metrics.sharpe_ratio(r, risk_free=0.0001),
    "sortino_ratio": lambda r, b: metrics.sortino_ratio(r, required_return=0.0005),
    "downside_deviation": lambda r, b: risk.downside_deviation(r, required_return=-0.001),
    "max_drawdown": lambda r, b: drawdown.max_drawdown(r),
    "beta": lambda r, b: risk.beta(r, b),
    "alpha": lambda r, b: risk.alpha(r, b, risk_free=0.0001),
    "beta_per_column": lambda r, b: risk.beta(r, r[:, ::-1] * 0.5 + 0.001),
    "value_at_risk": lambda r, b: risk.value_at_risk(r, level=0.99),
    "expected_shortfall": lambda r, b: risk.expected_shortfall(r, level=0.9),
    "summary": lambda r, b: metrics.summary(r, b).to_numpy(),
}

# shapes around the tile edges: partial row and column tiles, one column, one row, and
# a row-major panel wide enough to be split into column chunks (the last one narrower)
SHAPES = [
    (2 * TILE_ROWS + 7, TILE_COLS + 5), (TILE_ROWS, TILE_COLS), (300, 9), (1, 8), (130, 1),
    (23, 4 * CHUNK_MIN_COLS + 13),
]  # fmt: skip


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_c_and_fortran_order_give_the_same_bits(name: str, shape: tuple[int, int]) -> None:
    r = _panel(*shape, seed=shape[0] * 1000 + shape[1])
    b = _bench(shape[0])
    call = CALLS[name]
    c_out = np.asarray(call(np.ascontiguousarray(r), b), dtype=float)
    f_out = np.asarray(call(np.asfortranarray(r), b), dtype=float)
    assert np.array_equal(c_out, f_out, equal_nan=True)
    # a strided view (neither layout) is copied once, same answer
    wide = np.empty((shape[0], 2 * shape[1]))
    wide[:, ::2] = r
    assert np.array_equal(np.asarray(call(wide[:, ::2], b), dtype=float), c_out, equal_nan=True)


@pytest.mark.parametrize(
    "name", ["volatility", "annualized_return", "total_return", "sharpe_ratio", "sortino_ratio",
             "downside_deviation", "max_drawdown", "beta", "alpha", "value_at_risk", "expected_shortfall"],
)  # fmt: skip
def test_panel_equals_each_column_alone(name: str) -> None:
    r = _panel(2 * TILE_ROWS + 7, TILE_COLS + 5, seed=3)
    b = _bench(r.shape[0])
    call = CALLS[name]
    panel = np.asarray(call(np.ascontiguousarray(r), b), dtype=float)
    alone = np.array([call(np.ascontiguousarray(r[:, j]), b[:, 0]) for j in range(r.shape[1])])
    assert np.array_equal(panel, alone, equal_nan=True)
    assert np.isnan(panel[4])  # the all-NaN column
    assert np.isfinite(panel[[0, 1, 5, -1]]).all()


@pytest.mark.parametrize("name", ["volatility", "sharpe_ratio", "beta", "alpha", "beta_per_column"])
def test_long_column_major_chunks_take_the_tile_path(name: str) -> None:
    # a 64-column chunk of more than GATHER_MAX_VALUES values is not copied whole:
    # the two-pass statistics transpose it tile by tile in each pass, same bits
    n = GATHER_MAX_VALUES // TILE_COLS + 3
    r = _panel(n, TILE_COLS + 2, seed=5)
    b = _bench(n)
    call = CALLS[name]
    c_out = np.asarray(call(np.ascontiguousarray(r), b), dtype=float)
    f_out = np.asarray(call(np.asfortranarray(r), b), dtype=float)
    assert np.array_equal(c_out, f_out, equal_nan=True)


def test_plain_loop_twin() -> None:
    # the accumulators must add in time order: compare with a loop down each column
    r = _panel(2 * TILE_ROWS + 7, 70, seed=11)
    got = returns.total_return(np.ascontiguousarray(r))
    want = np.full(r.shape[1], np.nan)
    for j in range(r.shape[1]):
        wealth, m = 1.0, 0
        for v in r[:, j]:
            if v == v:
                wealth *= 1.0 + v
                m += 1
        want[j] = wealth - 1.0 if m else np.nan
    assert np.array_equal(got, want, equal_nan=True)
    vol = risk.volatility(np.ascontiguousarray(r), periods_per_year=1)
    for j in (0, 1, 5, 69):
        col = r[:, j][~np.isnan(r[:, j])]
        s = 0.0
        for v in col:
            s += v
        mean = s / len(col)
        ss = 0.0
        for v in col:
            ss += (v - mean) * (v - mean)
        assert vol[j] == np.sqrt(ss / (len(col) - 1))
    assert vol[2] == 0.0  # constant column: exactly zero


def test_as_float64_2d_keeps_the_memory_order() -> None:
    c = np.zeros((4, 3))
    f = np.asfortranarray(c)
    for panel in (c, f):  # no copy: a read-only view of the same memory, in its order
        out = as_float64_2d(panel, order="K")[0]
        assert out.base is panel and not out.flags.writeable
        assert out.flags.c_contiguous == panel.flags.c_contiguous
    assert panel.flags.writeable  # the caller's array keeps its own flag
    assert as_float64_2d(c)[0].flags.f_contiguous  # the column kernels' default
    view = as_float64_2d(np.zeros((4, 6))[:, ::2], order="K")[0]
    assert view.flags.f_contiguous
