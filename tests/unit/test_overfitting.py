"""PBO (CSCV) and the deflated Sharpe ratio: the papers' definitions on worked cases.

Golden numbers: the deflated Sharpe ratio's numerical example is Bailey and
López de Prado (2014), "The deflated Sharpe ratio", J. Portfolio Management
40(5), section "A numerical example" (N = 100, T = 1250, annualized SR 2.5,
V = 1/2, skew -3, kurtosis 10, 250 days a year: E[max SR] = 0.1132, DSR = 0.9004).
The PBO paper (Bailey, Borwein, López de Prado and Zhu) illustrates PBO with
unseeded Monte Carlo runs, so its numbers cannot be reproduced exactly; PBO is
checked against a plain-Python twin of the paper's steps (a)-(h), on cases whose
answer follows from the definition, and in tests/property/test_overfitting_props.py.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm, rankdata

from quantcore.overfitting import deflated_sharpe_ratio, probability_of_backtest_overfitting


def pbo_twin(m: np.ndarray, s: int) -> float:
    """Steps (a)-(h) of CSCV with numpy: submatrices, combinations, Sharpe, ranks, logits."""
    t, n = m.shape
    rows = t // s
    blocks = np.split(m[t - rows * s :], s)
    logits = []
    for chosen in itertools.combinations(range(s), s // 2):
        train = np.vstack([blocks[i] for i in chosen])
        test = np.vstack([blocks[i] for i in range(s) if i not in chosen])
        sr_in = train.mean(axis=0) / train.std(axis=0, ddof=1)
        sr_out = test.mean(axis=0) / test.std(axis=0, ddof=1)
        best = int(np.argmax(sr_in))
        w = rankdata(sr_out)[best] / (n + 1)
        logits.append(math.log(w / (1 - w)))
    return float(np.mean(np.array(logits) <= 0))


def dsr_twin(sr: float, n: int, v: float, t: int, g3: float, g4: float) -> float:
    g = 0.5772156649015329
    sr0 = math.sqrt(v) * ((1 - g) * norm.ppf(1 - 1 / n) + g * norm.ppf(1 - 1 / (n * math.e)))
    return float(
        norm.cdf((sr - sr0) * math.sqrt(t - 1) / math.sqrt(1 - g3 * sr + (g4 - 1) / 4 * sr**2))
    )


def test_dsr_paper_numerical_example() -> None:
    sr = 2.5 / math.sqrt(250)
    v = 0.5 / 250
    g = np.euler_gamma
    sr0 = math.sqrt(v) * ((1 - g) * norm.ppf(1 - 1 / 100) + g * norm.ppf(1 - 1 / (100 * math.e)))
    assert round(sr0, 4) == 0.1132
    dsr = deflated_sharpe_ratio(sr, 100, v, 1250, -3.0, 10.0)
    assert round(dsr, 4) == 0.9004
    assert dsr == pytest.approx(dsr_twin(sr, 100, v, 1250, -3.0, 10.0), rel=1e-14)


def test_dsr_one_trial_is_psr_against_zero() -> None:
    # Bailey and López de Prado (2012), probabilistic Sharpe ratio with benchmark 0
    sr, t = 0.08, 500
    psr = norm.cdf(sr * math.sqrt(t - 1) / math.sqrt(1 + 0.5 * sr + (5.0 - 1) / 4 * sr**2))
    assert deflated_sharpe_ratio(sr, 1, 0.04, t, -0.5, 5.0) == pytest.approx(psr, rel=1e-14)


def test_dsr_normal_defaults_and_no_dispersion() -> None:
    assert deflated_sharpe_ratio(0.1, 50, 0.0, 252) == pytest.approx(
        norm.cdf(0.1 * math.sqrt(251) / math.sqrt(1 + 0.5 * 0.01)), rel=1e-14
    )


def test_dsr_impossible_moments_are_nan() -> None:
    # 1 - skew * SR + (kurtosis - 1) / 4 * SR^2 <= 0
    assert math.isnan(deflated_sharpe_ratio(1.0, 10, 0.1, 100, 3.0, 1.0))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_trials": 0}, "n_trials must be >= 1"),
        ({"n_trials": 2.5}, "n_trials must be an integer"),
        ({"var_trials": -0.1}, "var_trials must be >= 0"),
        ({"n_obs": 1}, "n_obs must be >= 2"),
        ({"sharpe": float("nan")}, "sharpe must be finite"),
        ({"skew": "x"}, "skew must be a number"),
        ({"kurtosis": float("inf")}, "kurtosis must be finite"),
    ],
)
def test_dsr_bad_arguments(kwargs: dict, match: str) -> None:
    args = {"sharpe": 0.1, "n_trials": 10, "var_trials": 0.01, "n_obs": 100} | kwargs
    with pytest.raises(ValueError, match=match):
        deflated_sharpe_ratio(**args)


def test_pbo_equals_twin_on_noise_and_skill() -> None:
    rng = np.random.default_rng(7)
    noise = rng.normal(0.0, 0.01, (1000, 30))
    mixed = noise + np.linspace(0.0, 0.0008, 30)
    for m, s in [(noise, 16), (noise, 8), (mixed, 10), (mixed[:997], 6)]:
        assert probability_of_backtest_overfitting(m, n_splits=s) == pbo_twin(m, s)


def test_pbo_persistent_skill_is_zero() -> None:
    rng = np.random.default_rng(1)
    m = np.linspace(0.0, 0.002, 8) + rng.normal(0.0, 0.0002, (800, 8))
    assert probability_of_backtest_overfitting(m, n_splits=8) == 0.0


def test_pbo_reversal_is_one() -> None:
    # the in-sample best is the out-of-sample worst: each half ranks the trials in reverse
    rng = np.random.default_rng(2)
    edge = np.linspace(-0.001, 0.001, 5)
    m = np.vstack([edge + rng.normal(0, 1e-4, (100, 5)), -edge + rng.normal(0, 1e-4, (100, 5))])
    assert probability_of_backtest_overfitting(m, n_splits=2) == 1.0


def test_pbo_median_rank_counts_as_overfit() -> None:
    # S = 2, three trials; in each combination the in-sample best lands exactly on
    # the median out of sample: w = 2 / 4, lambda = 0, which the paper's
    # integral up to 0 counts.
    a = np.array([[0.03, 0.02, 0.01], [0.01, 0.03, 0.02], [0.02, 0.01, 0.00], [0.00, 0.02, 0.01]])
    b = a[:, [0, 2, 1]]  # Sharpe ratios: a = (1.16, 2.45, 1.22), b = (1.16, 1.22, 2.45)
    m = np.vstack([a, b])
    assert pbo_twin(m, 2) == 1.0
    assert probability_of_backtest_overfitting(m, n_splits=2) == 1.0
    # one notch better out of sample in each half: rank 3 of 3, lambda > 0
    assert probability_of_backtest_overfitting(np.vstack([a, a]), n_splits=2) == 0.0


def test_pbo_accepts_frames_and_drops_leading_rows() -> None:
    rng = np.random.default_rng(3)
    m = rng.normal(0.0, 0.01, (403, 6))
    frame = pd.DataFrame(m, index=pd.bdate_range("2020-01-01", periods=403))
    assert probability_of_backtest_overfitting(frame, n_splits=4) == pbo_twin(m, 4)
    assert probability_of_backtest_overfitting(
        m, n_splits=4
    ) == probability_of_backtest_overfitting(m[3:], n_splits=4)


def test_pbo_zero_variance_trial_ranks_worst() -> None:
    rng = np.random.default_rng(4)
    m = rng.normal(0.001, 0.01, (200, 4))
    m[:, 0] = 0.0  # flat: Sharpe -inf, never selected, never above another
    assert 0.0 <= probability_of_backtest_overfitting(m, n_splits=4) <= 1.0


@pytest.mark.parametrize(
    ("m", "s", "match"),
    [
        (np.zeros((100, 1)), 4, "at least 2 trials"),
        (np.full((100, 3), np.nan), 4, "must be finite"),
        (np.zeros((100, 3)), 5, "n_splits must be even"),
        (np.zeros((100, 3)), 0, "n_splits must be >= 2"),
        (np.zeros((7, 3)), 4, "needs at least 8 rows"),
    ],
)
def test_pbo_bad_input(m: np.ndarray, s: int, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        probability_of_backtest_overfitting(m, n_splits=s)
