"""quantcore.drawdown: series, maximum and periods against a plain-Python twin."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from quantcore import drawdown as qd
from quantcore._records import drawdown_dt

NAN = np.nan


def periods_twin(returns: np.ndarray) -> list[tuple[int, int, int, float, int]]:
    """(peak, valley, recovery, depth, duration) of one series, the slow obvious way."""
    valid = [i for i in range(len(returns)) if not math.isnan(returns[i])]
    if not valid:
        return []
    rows = [valid[0] - 1, *valid]
    wealth = [1.0]
    for i in valid:
        wealth.append(wealth[-1] * (1 + returns[i]))
    out = []
    peak_pos = 0
    t = 1
    while t < len(wealth):
        if wealth[t] >= wealth[peak_pos]:
            peak_pos = t
            t += 1
            continue
        # under water from t until the first position back at the peak
        end = next((u for u in range(t, len(wealth)) if wealth[u] >= wealth[peak_pos]), None)
        stop = len(wealth) if end is None else end
        valley_pos = min(range(t, stop), key=lambda u: (wealth[u], u))
        depth = wealth[valley_pos] / wealth[peak_pos] - 1
        recovery = -1 if end is None else rows[end]
        duration = (rows[-1] if end is None else rows[end]) - rows[peak_pos]
        out.append((rows[peak_pos], rows[valley_pos], recovery, depth, duration))
        if end is None:
            break
        peak_pos = end
        t = end + 1
    return out


def test_drawdown_series_keeps_kind_and_marks_nans() -> None:
    idx = pd.date_range("2024-01-01", periods=4)
    df = pd.DataFrame({"a": [0.1, -0.5, 1.0, -0.1], "b": [NAN, -0.2, 0.1, 0.2]}, index=idx)
    out = qd.drawdown_series(df)
    assert isinstance(out, pd.DataFrame)
    pd.testing.assert_index_equal(out.index, idx)
    np.testing.assert_allclose(out["a"], [0.0, -0.5, 0.0, -0.1], atol=1e-15)
    np.testing.assert_allclose(out["b"], [NAN, -0.2, 0.8 * 1.1 - 1, 0.0], atol=1e-15, equal_nan=True)


def test_max_drawdown_edges() -> None:
    assert math.isnan(qd.max_drawdown(np.array([])))
    assert math.isnan(qd.max_drawdown(np.array([NAN, NAN])))
    assert qd.max_drawdown(np.array([0.01, 0.02])) == 0.0
    assert qd.max_drawdown(np.array([-1.0, 0.5])) == -1.0
    out = qd.max_drawdown(pd.DataFrame({"x": [0.1, -0.2], "y": [NAN, NAN]}))
    assert isinstance(out, pd.Series)
    np.testing.assert_allclose(out, [-0.2, NAN], equal_nan=True)


def test_drawdown_periods_record_layout() -> None:
    rec = qd.drawdown_periods(np.array([0.1, -0.5, 1.0, -0.1]))
    assert rec.dtype == drawdown_dt
    assert rec.tolist() == [(0, 0, 1, 2, pytest.approx(-0.5), 2), (0, 2, 3, -1, pytest.approx(-0.1), 1)]


def test_drawdown_periods_peak_is_row_before_first_return() -> None:
    # returns from prices: row 0 is NaN and holds the starting capital
    rec = qd.drawdown_periods(np.array([NAN, -0.1, 0.2]))
    assert rec[["peak", "valley", "recovery", "duration"]].tolist() == [(0, 1, 2, 2)]
    # with no row before, the peak is -1 (the capital before row 0)
    rec = qd.drawdown_periods(np.array([-0.1, 0.2]))
    assert rec[["peak", "valley", "recovery", "duration"]].tolist() == [(-1, 0, 1, 2)]


def test_drawdown_periods_empty_and_no_drawdown() -> None:
    assert qd.drawdown_periods(np.array([])).shape == (0,)
    assert qd.drawdown_periods(np.array([0.1, 0.0, 0.2])).shape == (0,)


def test_drawdown_periods_match_twin_and_max_drawdown(rng: np.random.Generator) -> None:
    r = rng.normal(0.0005, 0.02, (400, 3))
    r[:60, 1] = NAN
    r[200:210, 2] = NAN
    rec = qd.drawdown_periods(r)
    assert np.all(np.diff(rec["column"]) >= 0)
    mdd = qd.max_drawdown(r)
    for j in range(3):
        mine = rec[rec["column"] == j]
        twin = periods_twin(r[:, j])
        assert len(mine) == len(twin)
        for got, exp in zip(mine, twin, strict=True):
            assert (got["peak"], got["valley"], got["recovery"], got["duration"]) == (exp[0], exp[1], exp[2], exp[4])
            assert got["depth"] == pytest.approx(exp[3], rel=1e-12)
        assert mine["depth"].min() == pytest.approx(mdd[j], rel=1e-12)
