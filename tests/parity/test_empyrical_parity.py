"""Parity with empyrical-reloaded on real prices (S&P 500, NASDAQ, GOOG).

Every non-NaN value must agree to a relative error of 1e-9 (with an absolute
floor of 1e-14 for values that are zero up to rounding), for one series and
for the panel, whose GOOG column starts five years after the others.

empyrical's ``annual_return``/``calmar_ratio``/``value_at_risk`` count or
propagate NaN rows, so for a column with leading NaNs the reference is
empyrical on that column with its NaNs dropped (what "the column starts
later" means); NaN-aware empyrical functions are also checked on the raw panel.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import empyrical as ep
import empyrical.stats
import numpy as np
import pandas as pd
import pytest

from quantcore import drawdown, metrics, returns, risk

RTOL = 1e-9
ATOL = 1e-14


def assert_parity(ours: Any, ref: Any) -> None:
    a = np.asarray(ours, dtype=np.float64)
    b = np.asarray(ref, dtype=np.float64)
    assert a.shape == b.shape
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    ok = ~np.isnan(a)
    assert ok.any()
    np.testing.assert_allclose(a[ok], b[ok], rtol=RTOL, atol=ATOL)


def per_column(panel: pd.DataFrame, fn: Callable[[pd.Series], float]) -> pd.Series:
    return pd.Series({c: fn(panel[c].dropna()) for c in panel.columns})


# (name, ours(returns), empyrical(returns without NaN))
REDUCTIONS: list[tuple[str, Callable[[Any], Any], Callable[[pd.Series], float]]] = [
    ("total_return", returns.total_return, ep.cum_returns_final),
    ("annualized_return", returns.annualized_return, ep.annual_return),
    (
        "annualized_return_monthly",
        lambda r: returns.annualized_return(r, periods_per_year=12),
        lambda s: ep.annual_return(s, annualization=12),
    ),
    ("volatility", risk.volatility, ep.annual_volatility),
    ("max_drawdown", drawdown.max_drawdown, ep.max_drawdown),
    (
        "sharpe_ratio",
        lambda r: metrics.sharpe_ratio(r, risk_free=1e-4),
        lambda s: ep.sharpe_ratio(s, risk_free=1e-4),
    ),
    (
        "sortino_ratio",
        lambda r: metrics.sortino_ratio(r, required_return=2e-4),
        lambda s: ep.sortino_ratio(s, required_return=2e-4),
    ),
    (
        "downside_deviation",
        lambda r: risk.downside_deviation(r, required_return=1e-4),
        lambda s: ep.downside_risk(s, required_return=1e-4),
    ),
    ("calmar_ratio", metrics.calmar_ratio, ep.calmar_ratio),
    (
        "omega_ratio",
        lambda r: metrics.omega_ratio(r, risk_free=1e-5, required_return=0.05),
        lambda s: ep.omega_ratio(s, risk_free=1e-5, required_return=0.05),
    ),
    ("stability_of_timeseries", metrics.stability_of_timeseries, ep.stability_of_timeseries),
    ("tail_ratio", metrics.tail_ratio, ep.tail_ratio),
    ("value_at_risk_95", risk.value_at_risk, lambda s: -ep.value_at_risk(s, cutoff=0.05)),
    (
        "value_at_risk_99",
        lambda r: risk.value_at_risk(r, level=0.99),
        lambda s: -ep.value_at_risk(s, cutoff=1 - 0.99),
    ),
    (
        "expected_shortfall_95",
        risk.expected_shortfall,
        lambda s: -ep.conditional_value_at_risk(s, cutoff=0.05),
    ),
    (
        "expected_shortfall_99",
        lambda r: risk.expected_shortfall(r, level=0.99),
        lambda s: -ep.conditional_value_at_risk(s, cutoff=1 - 0.99),
    ),
]


@pytest.mark.parametrize(("name", "ours", "ref"), REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
def test_reduction_1d(name: str, ours: Callable[[Any], Any], ref: Callable[[pd.Series], float], sp500: pd.DataFrame) -> None:
    r = sp500["Adj Close"].pct_change(fill_method=None).dropna()
    value = ours(r)
    assert isinstance(value, float)
    assert_parity(value, ref(r))
    assert_parity(ours(r.to_numpy()), ref(r))


@pytest.mark.parametrize(("name", "ours", "ref"), REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
def test_reduction_panel(
    name: str, ours: Callable[[Any], Any], ref: Callable[[pd.Series], float], returns_panel: pd.DataFrame
) -> None:
    assert returns_panel["GOOG"].isna().sum() > 1000  # the late starter is really there
    expected = per_column(returns_panel, ref)
    got = ours(returns_panel)
    assert isinstance(got, pd.Series)
    pd.testing.assert_index_equal(got.index, returns_panel.columns)
    assert_parity(got, expected)
    assert_parity(ours(returns_panel.to_numpy()), expected.to_numpy())


@pytest.mark.parametrize(
    ("ours", "ref"),
    [
        (risk.volatility, ep.annual_volatility),
        (lambda r: metrics.sharpe_ratio(r, risk_free=1e-4), lambda r: ep.sharpe_ratio(r, risk_free=1e-4)),
        (metrics.sortino_ratio, ep.sortino_ratio),
        (risk.downside_deviation, ep.downside_risk),
        (drawdown.max_drawdown, ep.max_drawdown),
        (returns.total_return, ep.cum_returns_final),
    ],
    ids=["volatility", "sharpe", "sortino", "downside", "max_drawdown", "total_return"],
)
def test_nan_aware_functions_on_the_raw_panel(
    ours: Callable[[Any], Any], ref: Callable[[Any], Any], returns_panel: pd.DataFrame
) -> None:
    assert_parity(ours(returns_panel), ref(returns_panel))


@pytest.mark.parametrize(
    ("ours", "ref"),
    [
        (returns.cumulative_returns, ep.cum_returns),
        (drawdown.drawdown_series, ep.stats.drawdown_series),
    ],
    ids=["cumulative_returns", "drawdown_series"],
)
def test_time_series_parity(ours: Callable[[Any], Any], ref: Callable[[Any], Any], returns_panel: pd.DataFrame) -> None:
    got = ours(returns_panel)
    assert isinstance(got, pd.DataFrame)
    pd.testing.assert_index_equal(got.index, returns_panel.index)
    for col in returns_panel.columns:
        s = returns_panel[col].dropna()
        assert_parity(got[col].dropna(), ref(s))
        assert_parity(ours(s.to_numpy()), ref(s.to_numpy()))


def test_simple_returns_parity(close_panel: pd.DataFrame) -> None:
    got = returns.simple_returns(close_panel)
    expected = close_panel.pct_change(fill_method=None)
    assert_parity(got, expected)
    s = close_panel["GOOG"].dropna()
    assert_parity(returns.simple_returns(s.to_numpy())[1:], ep.simple_returns(s.to_numpy()))


def test_log_returns_parity(close_panel: pd.DataFrame) -> None:
    got = returns.log_returns(close_panel)
    assert_parity(got, np.log(close_panel / close_panel.shift(1)))


@pytest.fixture(scope="module")
def with_benchmark(returns_panel: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    return returns_panel[["SP500", "GOOG"]], returns_panel["NASDAQ"]


def test_alpha_beta_parity(with_benchmark: tuple[pd.DataFrame, pd.Series]) -> None:
    panel, bench = with_benchmark
    rf = 5e-5
    expected = {c: ep.alpha_beta(panel[c], bench, risk_free=rf) for c in panel.columns}
    assert_parity(risk.beta(panel, bench), [expected[c][1] for c in panel.columns])
    assert_parity(risk.alpha(panel, bench, risk_free=rf), [expected[c][0] for c in panel.columns])
    # one series, pandas and numpy
    s = panel["GOOG"]
    assert_parity(risk.beta(s, bench), expected["GOOG"][1])
    assert_parity(risk.alpha(s.to_numpy(), bench.to_numpy(), risk_free=rf), expected["GOOG"][0])


def test_correlation_parity(with_benchmark: tuple[pd.DataFrame, pd.Series]) -> None:
    panel, bench = with_benchmark
    assert_parity(risk.correlation(panel, bench), panel.corrwith(bench))


def test_information_ratio_and_tracking_error_parity(with_benchmark: tuple[pd.DataFrame, pd.Series]) -> None:
    panel, bench = with_benchmark
    active = panel.sub(bench, axis=0)
    expected_ir = [
        ep.excess_sharpe(panel[c].to_numpy(), bench.to_numpy()) * math.sqrt(252) for c in panel.columns
    ]
    assert_parity(metrics.information_ratio(panel, bench), expected_ir)
    assert_parity(risk.tracking_error(panel, bench), active.std(ddof=1) * math.sqrt(252))


def test_summary_matches_empyrical(returns_panel: pd.DataFrame) -> None:
    table = metrics.summary(returns_panel, returns_panel["NASDAQ"], risk_free=1e-5)
    assert list(table.index) == list(metrics.SUMMARY_METRICS)
    ref = {
        "total_return": ep.cum_returns_final,
        "annualized_return": ep.annual_return,
        "volatility": ep.annual_volatility,
        "sharpe_ratio": lambda s: ep.sharpe_ratio(s, risk_free=1e-5),
        "sortino_ratio": ep.sortino_ratio,
        "max_drawdown": ep.max_drawdown,
        "calmar_ratio": ep.calmar_ratio,
        "omega_ratio": lambda s: ep.omega_ratio(s, risk_free=1e-5),
        "stability_of_timeseries": ep.stability_of_timeseries,
        "tail_ratio": ep.tail_ratio,
        "value_at_risk": lambda s: -ep.value_at_risk(s),
        "expected_shortfall": lambda s: -ep.conditional_value_at_risk(s),
    }
    for name, fn in ref.items():
        assert_parity(table.loc[name], per_column(returns_panel, fn))
    bench = returns_panel["NASDAQ"]
    for c in ("SP500", "GOOG"):
        a, b = ep.alpha_beta(returns_panel[c], bench, risk_free=1e-5)
        assert_parity(table.loc[["alpha", "beta"], c], [a, b])
