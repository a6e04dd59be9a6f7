"""quantcore.metrics: degenerate inputs, options, and summary == the single functions."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from quantcore import drawdown, metrics, returns, risk

NAN = np.nan


@pytest.fixture
def panel(rng: np.random.Generator) -> pd.DataFrame:
    r = pd.DataFrame(rng.standard_t(4, size=(600, 4)) * 0.01 + 0.0003, columns=["a", "b", "c", "d"])
    r.iloc[:150, 2] = NAN  # a late starter
    r.iloc[300:310, 3] = NAN  # a gap
    return r


RATIOS = [
    metrics.sharpe_ratio,
    metrics.sortino_ratio,
    metrics.calmar_ratio,
    metrics.omega_ratio,
    metrics.stability_of_timeseries,
    metrics.tail_ratio,
]


@pytest.mark.parametrize("fn", RATIOS)
@pytest.mark.parametrize("data", [[], [0.01], [NAN, NAN]], ids=["empty", "one", "all-nan"])
def test_degenerate_inputs_give_nan(fn: object, data: list[float]) -> None:
    assert math.isnan(fn(np.array(data, dtype=float)))  # type: ignore[operator]


@pytest.mark.parametrize(
    ("fn", "expected"),
    [
        (metrics.sharpe_ratio, NAN),  # no volatility
        (metrics.sortino_ratio, NAN),  # no downside
        (metrics.calmar_ratio, NAN),  # no drawdown
        (metrics.omega_ratio, NAN),  # nothing below the threshold
        (metrics.stability_of_timeseries, 1.0),  # a straight line
        (metrics.tail_ratio, 1.0),  # both tails at 0.001
    ],
)
def test_constant_gains_give_nan_never_inf(fn: object, expected: float) -> None:
    out = fn(np.full(30, 0.001))  # type: ignore[operator]
    np.testing.assert_allclose(out, expected, rtol=1e-12, equal_nan=True)


def test_flat_path_stability_is_nan() -> None:
    assert math.isnan(metrics.stability_of_timeseries(np.zeros(10)))


def test_information_ratio_edges() -> None:
    r = np.array([0.01, 0.02, 0.03])
    assert math.isnan(metrics.information_ratio(r, r))  # no active risk
    assert math.isnan(metrics.information_ratio(r[:1], r[:1]))


def test_omega_required_return_validation() -> None:
    with pytest.raises(ValueError, match="required_return"):
        metrics.omega_ratio(np.array([0.01, -0.01]), required_return=-1.0)
    # per-period threshold used as is when periods_per_year == 1
    r = np.array([0.03, -0.01, 0.02])
    assert metrics.omega_ratio(r, required_return=0.01, periods_per_year=1) == pytest.approx(0.03 / 0.02)


def test_kinds(panel: pd.DataFrame) -> None:
    assert isinstance(metrics.sharpe_ratio(panel["a"]), float)
    assert isinstance(metrics.sharpe_ratio(panel.to_numpy()), np.ndarray)
    out = metrics.sharpe_ratio(panel)
    assert isinstance(out, pd.Series)
    pd.testing.assert_index_equal(out.index, panel.columns)


def test_summary_rows_equal_single_functions(panel: pd.DataFrame) -> None:
    bench = panel["a"] * 0.5 + 0.0001
    rf, req, level = 2e-5, 1e-4, 0.975
    table = metrics.summary(
        panel, bench, risk_free=rf, required_return=req, level=level, periods_per_year=52
    )
    assert isinstance(table, pd.DataFrame)
    assert list(table.index) == list(metrics.SUMMARY_METRICS)
    pd.testing.assert_index_equal(table.columns, panel.columns)
    ppy = 52
    expected = {
        "total_return": returns.total_return(panel),
        "annualized_return": returns.annualized_return(panel, periods_per_year=ppy),
        "volatility": risk.volatility(panel, periods_per_year=ppy),
        "sharpe_ratio": metrics.sharpe_ratio(panel, risk_free=rf, periods_per_year=ppy),
        "sortino_ratio": metrics.sortino_ratio(panel, required_return=req, periods_per_year=ppy),
        "max_drawdown": drawdown.max_drawdown(panel),
        "calmar_ratio": metrics.calmar_ratio(panel, periods_per_year=ppy),
        "omega_ratio": metrics.omega_ratio(panel, risk_free=rf, required_return=req, periods_per_year=ppy),
        "stability_of_timeseries": metrics.stability_of_timeseries(panel),
        "tail_ratio": metrics.tail_ratio(panel),
        "value_at_risk": risk.value_at_risk(panel, level=level),
        "expected_shortfall": risk.expected_shortfall(panel, level=level),
        "beta": risk.beta(panel, bench),
        "alpha": risk.alpha(panel, bench, risk_free=rf, periods_per_year=ppy),
        "correlation": risk.correlation(panel, bench),
        "tracking_error": risk.tracking_error(panel, bench, periods_per_year=ppy),
        "information_ratio": metrics.information_ratio(panel, bench, periods_per_year=ppy),
    }
    for name, value in expected.items():
        np.testing.assert_allclose(table.loc[name], value, rtol=1e-11, err_msg=name)


def test_summary_one_series_subset_and_errors(panel: pd.DataFrame) -> None:
    s = metrics.summary(panel["b"], metrics=["max_drawdown", "sharpe_ratio"])
    assert isinstance(s, pd.Series) and s.name == "b"
    assert list(s.index) == ["max_drawdown", "sharpe_ratio"]
    assert s["sharpe_ratio"] == pytest.approx(metrics.sharpe_ratio(panel["b"]), rel=1e-11)
    arr = metrics.summary(panel.to_numpy())
    assert list(arr.columns) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="benchmark rows need a benchmark"):
        metrics.summary(panel, metrics=["beta"])
    with pytest.raises(ValueError, match="sequence of metric names"):
        metrics.summary(panel, metrics="sharpe_ratio")  # type: ignore[arg-type]


def test_summary_degenerate_columns() -> None:
    r = np.column_stack([np.full(5, NAN), np.full(5, 0.001), [0.01, NAN, NAN, NAN, NAN]])
    table = metrics.summary(r)
    assert table[0].isna().all()
    assert table.loc["volatility", 1] == 0.0
    assert math.isnan(table.loc["sharpe_ratio", 1])
    assert table.loc["total_return", 2] == pytest.approx(0.01)
    assert math.isnan(table.loc["volatility", 2])
    assert not np.isinf(table.to_numpy()).any()


def test_public_surface() -> None:
    """The names the metrics promise their users (add more, never rename)."""
    import quantcore.drawdown as qd
    import quantcore.returns as qr
    import quantcore.risk as qk

    contract = {
        qr: {
            "simple_returns", "log_returns", "cumulative_returns", "total_return",
            "annualized_return", "time_weighted_return", "money_weighted_return",
        },
        qk: {
            "volatility", "value_at_risk", "expected_shortfall", "beta", "alpha",
            "correlation", "downside_deviation", "tracking_error",
        },
        qd: {"drawdown_series", "max_drawdown", "drawdown_periods"},
        metrics: {
            "sharpe_ratio", "sortino_ratio", "calmar_ratio", "omega_ratio",
            "information_ratio", "stability_of_timeseries", "tail_ratio", "summary",
        },
    }
    for module, names in contract.items():
        assert names <= set(module.__all__), module.__name__
        assert module.__all__ == sorted(module.__all__)
        for name in module.__all__:
            assert hasattr(module, name)
