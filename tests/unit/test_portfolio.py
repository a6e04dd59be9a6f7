"""quantcore.portfolio against a plain-Python twin (the formulas written out per position)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quantcore.portfolio import mark_positions, portfolio_totals


def _twin(group, n_groups, qty, cost, price, change):  # type: ignore[no-untyped-def]
    """The same marks and totals with plain floats and loops."""
    marks = []
    totals = [[0.0, 0.0, 0] for _ in range(n_groups)]
    for g, q, c, p, d in zip(group, qty, cost, price, change, strict=True):
        v = q * p
        marks.append((v, v - c, (v - c) / c * 100.0 if c > 0 else math.nan, q * d))
        totals[g][0] += 0.0 if math.isnan(v) else v
        totals[g][1] += 0.0 if math.isnan(q * d) else q * d
        totals[g][2] += 1
    pct = [t[1] / (t[0] - t[1]) * 100.0 if t[0] - t[1] > 0 else 0.0 for t in totals]
    return marks, totals, pct


def _check(group, n_groups, qty, cost, price, change) -> None:  # type: ignore[no-untyped-def]
    m = mark_positions(qty, cost, price, change)
    t = portfolio_totals(np.asarray(group, dtype=np.int64), n_groups, m)
    marks, totals, pct = _twin(group, n_groups, qty, cost, price, change)
    got = np.column_stack([m.value, m.gain, m.gain_percent, m.daily_change])
    np.testing.assert_allclose(got, np.array(marks).reshape(-1, 4), rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(t.total_value, [x[0] for x in totals], rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(t.daily_change, [x[1] for x in totals], rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(t.position_count, [x[2] for x in totals])
    np.testing.assert_allclose(t.daily_change_percent, pct, rtol=1e-9, atol=1e-9)


def test_real_prices_twenty_portfolios(sp500, nasdaq, goog) -> None:  # type: ignore[no-untyped-def]
    """Positions priced with real closes (last close and its change) equal the twin."""
    rng = np.random.default_rng(7)
    closes = [df["Close"].to_numpy(dtype=np.float64) for df in (sp500, nasdaq, goog)]
    closes = [c[np.isfinite(c)] for c in closes]
    n = 200
    pick = rng.integers(0, 3, n)
    day = rng.integers(1, min(c.size for c in closes), n)
    price = np.array([closes[k][i] for k, i in zip(pick, day, strict=True)])
    change = np.array([closes[k][i] - closes[k][i - 1] for k, i in zip(pick, day, strict=True)])
    qty = rng.uniform(0.5, 100.0, n)
    cost = qty * price * rng.uniform(0.5, 1.5, n)
    price[::17] = np.nan  # unpriced positions
    change[::17] = np.nan
    group = np.sort(rng.integers(0, 20, n))
    _check(group.tolist(), 20, qty.tolist(), cost.tolist(), price.tolist(), change.tolist())


finite = st.floats(-1e6, 1e6, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 4),
            st.floats(0, 1e6),
            st.floats(0, 1e8),
            finite | st.just(math.nan),
            finite | st.just(math.nan),
        ),
        max_size=30,
    )
)
def test_matches_twin(rows) -> None:  # type: ignore[no-untyped-def]
    cols = list(zip(*rows, strict=True)) if rows else [[], [], [], [], []]
    _check(*([list(cols[0]), 5] + [list(c) for c in cols[1:]]))


def test_empty_portfolios_are_zero() -> None:
    t = portfolio_totals(np.array([], dtype=np.int64), 3, mark_positions([], [], [], []))
    assert t.total_value.tolist() == [0.0, 0.0, 0.0]
    assert t.daily_change_percent.tolist() == [0.0, 0.0, 0.0]
    assert t.position_count.tolist() == [0, 0, 0]


def test_zero_cost_gain_percent_is_nan() -> None:
    m = mark_positions([1.0], [0.0], [10.0], [1.0])
    assert math.isnan(m.gain_percent[0]) and m.gain[0] == 10.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"quantity": [1.0, 2.0]}, "same length"),
        ({"price": "abc"}, "price"),
        ({"cost_basis": np.ones((2, 2))}, "cost_basis"),
    ],
)
def test_mark_positions_bad_input(kwargs, message) -> None:  # type: ignore[no-untyped-def]
    args = {"quantity": [1.0], "cost_basis": [1.0], "price": [1.0], "change": [0.0]} | kwargs
    with pytest.raises(ValueError, match=message):
        mark_positions(**args)


@pytest.mark.parametrize(
    ("group", "n_groups", "message"),
    [
        ([0.5], 1, "integer"),
        ([1], 1, "n_groups"),
        ([-1], 1, "n_groups"),
        ([0, 0], 1, "marks cover"),
        ([0], -1, "n_groups"),
    ],
)
def test_portfolio_totals_bad_input(group, n_groups, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        portfolio_totals(group, n_groups, mark_positions([1.0], [1.0], [1.0], [0.0]))
