"""quantcore.returns: kinds, edge cases, TWR and XIRR against plain-Python twins."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import brentq

from quantcore import returns as qr

NAN = np.nan


def test_simple_and_log_returns_keep_kind_and_index() -> None:
    idx = pd.date_range("2024-01-01", periods=4)
    prices = pd.DataFrame({"a": [100.0, 110.0, 99.0, 99.0], "b": [NAN, 50.0, 55.0, 0.0]}, index=idx)
    simple = qr.simple_returns(prices)
    assert isinstance(simple, pd.DataFrame)
    pd.testing.assert_index_equal(simple.index, idx)
    pd.testing.assert_index_equal(simple.columns, prices.columns)
    np.testing.assert_allclose(simple["a"], [NAN, 0.1, -0.1, 0.0], equal_nan=True)
    np.testing.assert_allclose(simple["b"], [NAN, NAN, 0.1, -1.0], equal_nan=True)
    logs = qr.log_returns(prices["b"])
    assert isinstance(logs, pd.Series) and logs.name == "b"
    # log of a zero price is undefined: NaN, never -inf
    np.testing.assert_allclose(logs, [NAN, NAN, math.log(1.1), NAN], equal_nan=True)


def test_zero_previous_price_gives_nan_not_inf() -> None:
    out = qr.simple_returns(np.array([0.0, 10.0, 11.0]))
    np.testing.assert_allclose(out, [NAN, NAN, 0.1], equal_nan=True)


def test_empty_inputs() -> None:
    assert qr.simple_returns(np.array([])).shape == (0,)
    assert qr.cumulative_returns(np.empty((0, 3))).shape == (0, 3)
    assert math.isnan(qr.total_return(np.array([])))
    assert math.isnan(qr.annualized_return(np.array([])))
    np.testing.assert_array_equal(np.isnan(qr.total_return(np.empty((0, 2)))), [True, True])


def test_cumulative_returns_skip_nans_and_mark_them() -> None:
    r = np.array([NAN, 0.1, NAN, -0.1])
    np.testing.assert_allclose(qr.cumulative_returns(r), [NAN, 0.1, NAN, 1.1 * 0.9 - 1], equal_nan=True)


def test_total_and_annualized_return_all_nan_column() -> None:
    r = np.array([[0.01, NAN], [0.02, NAN]])
    tot = qr.total_return(r)
    assert isinstance(tot, np.ndarray)
    np.testing.assert_allclose(tot, [1.01 * 1.02 - 1, NAN], equal_nan=True)
    cagr = qr.annualized_return(r, periods_per_year=2)
    np.testing.assert_allclose(cagr, [1.01 * 1.02 - 1, NAN], equal_nan=True)


def test_annualized_return_counts_only_valid_periods() -> None:
    # a column that starts later is annualized over its own history
    late = np.array([NAN, NAN, 0.01, 0.01])
    assert qr.annualized_return(late, periods_per_year=2) == pytest.approx(1.01**2 - 1, rel=1e-15)


def test_annualized_return_of_wipe_out_below_minus_one_is_nan() -> None:
    assert math.isnan(qr.annualized_return(np.array([-1.5, 0.1])))
    assert qr.annualized_return(np.array([-1.0, 0.1])) == -1.0


def test_periods_per_year_is_validated() -> None:
    with pytest.raises(ValueError, match="periods_per_year"):
        qr.annualized_return(np.array([0.1]), periods_per_year=0)


def _twr_twin(values: list[float], flows: list[float]) -> float:
    growth, prev, pending, used = 1.0, 0.0, 0.0, 0
    for v, f in zip(values, flows, strict=True):
        pending += 0.0 if math.isnan(f) else f
        if math.isnan(v):
            continue
        start = prev + pending
        pending = 0.0
        if start != 0.0:
            growth *= v / start
            used += 1
        prev = v
    return growth - 1.0 if used else math.nan


def test_time_weighted_return_matches_twin_and_ignores_flow_timing(rng: np.random.Generator) -> None:
    n = 50
    period = rng.normal(0.001, 0.02, n)
    flows = np.where(rng.random(n) < 0.2, rng.normal(0, 500, n), 0.0)
    flows[0] = 1000.0
    values = np.empty(n)
    prev = 0.0
    for t in range(n):
        values[t] = (prev + flows[t]) * (1 + period[t])
        prev = values[t]
    twr = qr.time_weighted_return(values, flows)
    # the TWR removes the flows: it is the compounded period return
    assert twr == pytest.approx(np.prod(1 + period) - 1, rel=1e-12)
    assert twr == pytest.approx(_twr_twin(list(values), list(flows)), rel=1e-14)


def test_time_weighted_return_without_flows_is_value_ratio() -> None:
    values = pd.Series([100.0, 105.0, 103.0])
    assert qr.time_weighted_return(values, np.zeros(3)) == pytest.approx(0.03, rel=1e-14)


def test_time_weighted_return_panel_with_nan_and_shape_check() -> None:
    values = np.array([[NAN, 100.0], [100.0, 110.0], [121.0, 121.0]])
    flows = np.array([[0.0, 100.0], [100.0, 0.0], [0.0, 0.0]])
    out = qr.time_weighted_return(values, flows)
    np.testing.assert_allclose(out, [0.21, 0.21])
    with pytest.raises(ValueError, match="cash_flows must have the shape of values"):
        qr.time_weighted_return(values, flows[:2])


def _xirr_twin(days: list[int], flows: list[float], final: float) -> float:
    tau = [(days[-1] - d) / 365.0 for d in days]
    return brentq(lambda r: sum(f * (1 + r) ** t for f, t in zip(flows, tau, strict=True)) - final, -0.99, 10)


def test_money_weighted_return_matches_brentq_twin() -> None:
    dates = pd.to_datetime(["2020-01-15", "2020-06-30", "2021-03-01", "2022-12-31"])
    flows = [1000.0, 500.0, -200.0, 100.0]
    final = 1700.0
    days = [int((d - dates[0]).days) for d in dates]
    got = qr.money_weighted_return(dates, flows, final)
    assert got == pytest.approx(_xirr_twin(days, flows, final), rel=1e-10)


def test_money_weighted_return_panel_and_negative_rate() -> None:
    dates = np.array(["2020-01-01", "2021-01-01", "2022-01-01"], dtype="datetime64[D]")
    flows = pd.DataFrame({"gain": [100.0, 0.0, 0.0], "loss": [100.0, 100.0, 0.0]})
    out = qr.money_weighted_return(dates, flows, [121.0, 150.0])
    assert isinstance(out, pd.Series)
    days = [0, 366, 731]
    assert out["gain"] == pytest.approx(_xirr_twin(days, [100.0, 0.0, 0.0], 121.0), rel=1e-10)
    assert out["loss"] < 0
    assert out["loss"] == pytest.approx(_xirr_twin(days, [100.0, 100.0, 0.0], 150.0), rel=1e-10)


def test_money_weighted_return_far_from_newton_start_uses_bracketing() -> None:
    # half the money lost in 30 days is -99.98 % a year: Newton from +10 % overshoots
    # below -100 %, the bracketing fallback still finds the root
    got = qr.money_weighted_return(["2020-01-01", "2020-01-31"], [100.0, 0.0], 50.0)
    expected = brentq(lambda r: 100.0 * (1 + r) ** (30 / 365) - 50.0, -0.9999999, 1.0, xtol=1e-16)
    assert got == pytest.approx(expected, rel=1e-9)
    assert got == pytest.approx(0.5 ** (365 / 30) - 1, rel=1e-9)


@pytest.mark.parametrize(
    ("dates", "flows", "final", "match"),
    [
        (["2020-01-01", "2021-01-01"], [-100.0, 0.0], 110.0, "no rate solves"),
        (["2020-01-01", "2020-01-01"], [100.0, 0.0], 110.0, "positive period"),
        (["2021-01-01", "2020-01-01"], [100.0, 0.0], 110.0, "sorted"),
        (["2020-01-01"], [100.0, 0.0], 110.0, "same length"),
        (["2020-01-01", "not a date"], [100.0, 0.0], 110.0, "dates"),
        (["2020-01-01", "2021-01-01"], [100.0, 0.0], "x", "final_value"),
        (["2020-01-01", "2021-01-01"], [100.0, 0.0], [1.0, 2.0, 3.0], "final_value must have 1 or 1"),
        (["2020-01-01", "2021-01-01"], [100.0, 0.0], math.inf, "final_value must be finite"),
    ],
)
def test_money_weighted_return_errors(dates: object, flows: object, final: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        qr.money_weighted_return(dates, flows, final)
