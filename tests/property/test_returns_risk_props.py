"""Invariants of returns, risk, drawdown and metrics on hypothesis-generated returns."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from quantcore import drawdown, metrics, returns, risk

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# daily-like returns in (-50 %, +50 %), with repeated values (ties) likely
finite_returns = st.floats(-0.5, 0.5, allow_nan=False, allow_subnormal=False).map(lambda v: round(v, 4))
maybe_nan = st.one_of(finite_returns, finite_returns, finite_returns, st.just(math.nan))


def series(min_size: int = 0, max_size: int = 80, nan: bool = True) -> st.SearchStrategy[np.ndarray]:
    return arrays(np.float64, st.integers(min_size, max_size), elements=maybe_nan if nan else finite_returns)


def panels(max_rows: int = 60, max_cols: int = 4) -> st.SearchStrategy[np.ndarray]:
    shape = st.tuples(st.integers(0, max_rows), st.integers(1, max_cols))
    return arrays(np.float64, shape, elements=maybe_nan)


levels = st.floats(0.5, 0.995)


@SETTINGS
@given(n=st.integers(1, 50))
def test_cumulative_of_zero_returns_is_zero(n: int) -> None:
    assert np.all(returns.cumulative_returns(np.zeros(n)) == 0.0)
    assert returns.total_return(np.zeros(n)) == 0.0


@SETTINGS
@given(r=series(min_size=1))
def test_total_return_is_last_cumulative(r: np.ndarray) -> None:
    cum = returns.cumulative_returns(r)
    valid = cum[~np.isnan(cum)]
    total = returns.total_return(r)
    if valid.size == 0:
        assert math.isnan(total)
    else:
        assert total == valid[-1]


@SETTINGS
@given(r=series())
def test_drawdowns_within_bounds(r: np.ndarray) -> None:
    dd = drawdown.drawdown_series(r)
    ok = ~np.isnan(dd)
    assert np.all((dd[ok] <= 0.0) & (dd[ok] >= -1.0))
    mdd = drawdown.max_drawdown(r)
    if ok.any():
        assert -1.0 <= mdd <= 0.0
        assert mdd == dd[ok].min()
        rec = drawdown.drawdown_periods(r)
        if mdd < 0:
            assert math.isclose(rec["depth"].min(), mdd, rel_tol=1e-12)
        assert np.all(rec["duration"] >= 1)
        assert np.all((rec["recovery"] == -1) | (rec["recovery"] > rec["valley"]))
    else:
        assert math.isnan(mdd)


@SETTINGS
@given(r=series(min_size=2, nan=False), lv=st.tuples(levels, levels))
def test_var_monotone_in_level_and_es_above_var(r: np.ndarray, lv: tuple[float, float]) -> None:
    lo, hi = sorted(lv)
    for method in ("historical", "parametric"):
        v_lo = risk.value_at_risk(r, level=lo, method=method)
        v_hi = risk.value_at_risk(r, level=hi, method=method)
        es_hi = risk.expected_shortfall(r, level=hi, method=method)
        if math.isnan(v_hi):
            assert method == "parametric" and np.ptp(r) == 0
            continue
        assert v_hi >= v_lo - 1e-12
        assert es_hi >= v_hi - 1e-12


@SETTINGS
@given(r=series(), lv=levels)
def test_historical_var_es_equal_numpy_twin(r: np.ndarray, lv: float) -> None:
    clean = r[~np.isnan(r)]
    var = risk.value_at_risk(r, level=lv)
    es = risk.expected_shortfall(r, level=lv)
    if clean.size < 2:
        assert math.isnan(var) and math.isnan(es)
        return
    cutoff = 1 - lv
    k = int((clean.size - 1) * cutoff)
    assert math.isclose(var, -np.percentile(clean, 100 * cutoff), rel_tol=1e-12, abs_tol=1e-15)
    assert math.isclose(es, -np.sort(clean)[: k + 1].mean(), rel_tol=1e-12, abs_tol=1e-15)


@SETTINGS
@given(r=series())
def test_tail_ratio_equals_numpy_twin(r: np.ndarray) -> None:
    clean = r[~np.isnan(r)]
    got = metrics.tail_ratio(r)
    if clean.size < 2 or np.percentile(clean, 5) == 0:
        assert math.isnan(got)
    else:
        expected = abs(np.percentile(clean, 95)) / abs(np.percentile(clean, 5))
        assert math.isclose(got, expected, rel_tol=1e-12)


COLUMNWISE: list[tuple[str, Callable[[Any], Any]]] = [
    ("cumulative_returns", returns.cumulative_returns),
    ("total_return", returns.total_return),
    ("annualized_return", returns.annualized_return),
    ("volatility", risk.volatility),
    ("value_at_risk", risk.value_at_risk),
    ("expected_shortfall", risk.expected_shortfall),
    ("cornish_fisher", lambda r: risk.value_at_risk(r, method="cornish_fisher")),
    ("downside_deviation", risk.downside_deviation),
    ("drawdown_series", drawdown.drawdown_series),
    ("max_drawdown", drawdown.max_drawdown),
    ("sharpe_ratio", metrics.sharpe_ratio),
    ("sortino_ratio", metrics.sortino_ratio),
    ("calmar_ratio", metrics.calmar_ratio),
    ("omega_ratio", metrics.omega_ratio),
    ("stability", metrics.stability_of_timeseries),
    ("tail_ratio", metrics.tail_ratio),
]


@SETTINGS
@given(x=panels())
def test_2d_equals_column_by_column(x: np.ndarray) -> None:
    for name, fn in COLUMNWISE:
        whole = np.asarray(fn(x))
        for j in range(x.shape[1]):
            one = np.asarray(fn(x[:, j].copy()))
            col = whole[:, j] if whole.ndim == 2 else whole[j]
            np.testing.assert_array_equal(col, one, err_msg=name)


@SETTINGS
@given(x=panels(), data=st.data())
def test_benchmark_functions_2d_equal_columnwise(x: np.ndarray, data: st.DataObject) -> None:
    b = data.draw(arrays(np.float64, x.shape[0], elements=maybe_nan))
    for fn in (risk.beta, risk.alpha, risk.correlation, risk.tracking_error, metrics.information_ratio):
        whole = fn(x, b)
        for j in range(x.shape[1]):
            np.testing.assert_array_equal(whole[j], fn(x[:, j].copy(), b))


@SETTINGS
@given(x=panels(max_rows=80))
def test_summary_equals_single_functions(x: np.ndarray) -> None:
    table = metrics.summary(x)
    single = {
        "total_return": returns.total_return(x),
        "annualized_return": returns.annualized_return(x),
        "volatility": risk.volatility(x),
        "sharpe_ratio": metrics.sharpe_ratio(x),
        "sortino_ratio": metrics.sortino_ratio(x),
        "max_drawdown": drawdown.max_drawdown(x),
        "calmar_ratio": metrics.calmar_ratio(x),
        "omega_ratio": metrics.omega_ratio(x),
        "stability_of_timeseries": metrics.stability_of_timeseries(x),
        "tail_ratio": metrics.tail_ratio(x),
        "value_at_risk": risk.value_at_risk(x),
        "expected_shortfall": risk.expected_shortfall(x),
    }
    for name, value in single.items():
        # the summary's variance comes from shifted one-pass sums: equal up to rounding
        np.testing.assert_allclose(table.loc[name].to_numpy(), value, rtol=1e-9, atol=1e-12, err_msg=name)


@SETTINGS
@given(values=arrays(np.float64, st.integers(2, 40), elements=st.floats(1.0, 1e6)))
def test_twr_without_flows_is_value_ratio(values: np.ndarray) -> None:
    got = returns.time_weighted_return(values, np.zeros_like(values))
    assert math.isclose(got, values[-1] / values[0] - 1, rel_tol=1e-10, abs_tol=1e-12)


@SETTINGS
@given(rate=st.floats(-0.9, 2.0), years=st.integers(1, 10))
def test_xirr_recovers_a_constant_rate(rate: float, years: int) -> None:
    dates = np.array([np.datetime64("2001-01-01") + np.timedelta64(365 * y, "D") for y in range(years + 1)])
    flows = np.zeros(years + 1)
    flows[0] = 100.0
    got = returns.money_weighted_return(dates, flows, 100.0 * (1 + rate) ** years)
    assert math.isclose(got, rate, rel_tol=1e-9, abs_tol=1e-12)
