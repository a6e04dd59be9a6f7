"""quantcore.risk: edge cases, the moment-based VaR/ES against scipy, benchmark handling."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

from quantcore import risk

NAN = np.nan


@pytest.fixture
def sample(rng: np.random.Generator) -> np.ndarray:
    return rng.standard_t(5, size=750) * 0.01 + 0.0004


@pytest.mark.parametrize(
    "fn",
    [
        risk.volatility,
        risk.value_at_risk,
        risk.expected_shortfall,
        risk.downside_deviation,
        lambda r: risk.value_at_risk(r, method="parametric"),
        lambda r: risk.expected_shortfall(r, method="cornish_fisher"),
    ],
)
@pytest.mark.parametrize("data", [[], [0.01], [NAN, NAN, NAN], [NAN, 0.02]], ids=["empty", "one", "all-nan", "one-valid"])
def test_degenerate_inputs_give_nan(fn: object, data: list[float]) -> None:
    assert math.isnan(fn(np.array(data, dtype=float)))  # type: ignore[operator]


def test_constant_returns() -> None:
    r = np.full(20, 0.001)
    assert risk.volatility(r) == 0.0
    assert risk.value_at_risk(r) == pytest.approx(-0.001, rel=1e-15)  # a sure gain: negative loss
    assert math.isnan(risk.value_at_risk(r, method="parametric"))
    assert math.isnan(risk.expected_shortfall(r, method="cornish_fisher"))
    assert math.isnan(risk.beta(r, r))
    assert math.isnan(risk.correlation(r, np.linspace(0, 1, 20)))
    assert risk.tracking_error(r, r) == 0.0


def test_volatility_ddof_and_kind(sample: np.ndarray) -> None:
    df = pd.DataFrame({"x": sample, "y": sample * 2})
    out = risk.volatility(df, ddof=0, periods_per_year=12)
    assert isinstance(out, pd.Series)
    np.testing.assert_allclose(out, df.std(ddof=0) * math.sqrt(12), rtol=1e-12)
    with pytest.raises(ValueError, match="ddof"):
        risk.volatility(sample, ddof=-1)


@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_parametric_var_es_against_scipy(sample: np.ndarray, level: float) -> None:
    mu, sd = sample.mean(), sample.std(ddof=1)
    dist = stats.norm(mu, sd)
    assert risk.value_at_risk(sample, level=level, method="parametric") == pytest.approx(
        -dist.ppf(1 - level), rel=1e-10
    )
    tail_mean = dist.expect(lambda x: x, ub=dist.ppf(1 - level)) / (1 - level)
    assert risk.expected_shortfall(sample, level=level, method="parametric") == pytest.approx(-tail_mean, rel=1e-8)


@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_cornish_fisher_var_es_against_scipy(sample: np.ndarray, level: float) -> None:
    mu, sd = sample.mean(), sample.std(ddof=1)
    s, k = stats.skew(sample), stats.kurtosis(sample)

    def zcf(z: float) -> float:
        return z + (z**2 - 1) * s / 6 + (z**3 - 3 * z) * k / 24 - (2 * z**3 - 5 * z) * s**2 / 36

    alpha = 1 - level
    assert risk.value_at_risk(sample, level=level, method="cornish_fisher") == pytest.approx(
        -(mu + zcf(stats.norm.ppf(alpha)) * sd), rel=1e-10
    )
    # ES: the tail mean of the Cornish-Fisher quantile function, integrated numerically
    integral, _ = integrate.quad(lambda u: zcf(stats.norm.ppf(u)), 0, alpha, limit=200)
    assert risk.expected_shortfall(sample, level=level, method="cornish_fisher") == pytest.approx(
        -(mu + sd * integral / alpha), rel=1e-7
    )


def test_var_es_skip_nans_and_handle_ties() -> None:
    r = np.array([NAN, -0.05, 0.01, -0.05, -0.05, 0.02, 0.0, NAN])
    clean = r[~np.isnan(r)]
    assert risk.value_at_risk(r, level=0.8) == pytest.approx(-np.percentile(clean, 20), rel=1e-15)
    k = int((clean.size - 1) * (1 - 0.8))
    assert risk.expected_shortfall(r, level=0.8) == pytest.approx(-np.sort(clean)[: k + 1].mean(), rel=1e-15)


def test_bad_options_are_named(sample: np.ndarray) -> None:
    with pytest.raises(ValueError, match="level"):
        risk.value_at_risk(sample, level=1.0)
    with pytest.raises(ValueError, match="method"):
        risk.expected_shortfall(sample, method="monte_carlo")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="risk_free"):
        risk.alpha(sample, sample, risk_free=math.nan)
    with pytest.raises(ValueError, match="required_return"):
        risk.downside_deviation(sample, required_return="x")  # type: ignore[arg-type]


def test_benchmark_shape_and_index_checks(sample: np.ndarray) -> None:
    with pytest.raises(ValueError, match="same length"):
        risk.beta(sample, sample[:-1])
    with pytest.raises(ValueError, match="benchmark must have 1 or 2 columns"):
        risk.beta(np.column_stack([sample, sample]), np.column_stack([sample] * 3))
    a = pd.Series(sample, index=pd.RangeIndex(750))
    b = pd.Series(sample, index=pd.RangeIndex(1, 751))
    with pytest.raises(ValueError, match="same index"):
        risk.correlation(a, b)


def test_beta_alpha_pairwise_and_per_column_benchmark(rng: np.random.Generator) -> None:
    bench = rng.normal(0, 0.01, (300, 2))
    r = np.column_stack([1.5 * bench[:, 0], -0.5 * bench[:, 1] + 0.0001])
    r[:50, 1] = NAN  # late starter
    b = risk.beta(r, bench)
    np.testing.assert_allclose(b, [1.5, -0.5], rtol=1e-12)
    a = risk.alpha(r, bench, periods_per_year=1)
    np.testing.assert_allclose(a, [0.0, 0.0001], atol=1e-15)
    # a shared one-column benchmark applies to every column
    np.testing.assert_allclose(risk.correlation(r[:, :1], bench[:, 0]), [1.0])


def test_tracking_error_matches_pandas(rng: np.random.Generator) -> None:
    r = pd.DataFrame(rng.normal(0, 0.01, (100, 3)), columns=list("abc"))
    b = pd.Series(rng.normal(0, 0.01, 100))
    r.iloc[:10, 2] = NAN
    expected = r.sub(b, axis=0).std() * math.sqrt(252)
    pd.testing.assert_series_equal(risk.tracking_error(r, b), expected, rtol=1e-12)
