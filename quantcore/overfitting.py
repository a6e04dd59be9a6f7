"""Backtest overfitting statistics: PBO by CSCV and the deflated Sharpe ratio.

Both are exposed as :mod:`quantcore.metrics` functions.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from quantcore._kernels.overfitting import cscv_logits_nb
from quantcore._validation import as_float64_2d, check_finite, check_int

__all__ = ["deflated_sharpe_ratio", "probability_of_backtest_overfitting"]


def probability_of_backtest_overfitting(performance: Any, n_splits: int = 16) -> float:
    """Probability that the in-sample best of N trials is below median out of sample.

    Parameters
    ----------
    performance : DataFrame or 2-D array, shape (T, N)
        Per-period returns (rows in time order) of the N trials (strategy
        configurations) compared, N >= 2, no NaN.
    n_splits : int, default 16
        S, the number of contiguous blocks of rows: even, >= 2. When S does not
        divide T the first ``T mod S`` rows are dropped so that blocks are equal.

    Returns
    -------
    float
        PBO in [0, 1].

    Raises
    ------
    ValueError
        For fewer than 2 trials, a NaN or inf return, an odd or too large
        ``n_splits`` (each block needs two rows).

    Notes
    -----
    Combinatorially symmetric cross-validation (CSCV): for each of the
    ``comb(S, S/2)`` ways to pick S/2 blocks as the in-sample set (the other
    half out of sample), find the trial with the best in-sample Sharpe ratio
    ``mean / std``, take its relative rank ``w = rank / (N + 1)`` among the
    out-of-sample Sharpe ratios (rank 1 = worst, ties averaged) and its logit
    ``lambda = ln(w / (1 - w))``. PBO is the share of combinations with
    ``lambda <= 0``: the selected trial did no better than the median out of
    sample. A trial without variance in a set has Sharpe ratio -inf there. The
    first in-sample best wins a tie.

    References
    ----------
    D. H. Bailey, J. M. Borwein, M. López de Prado and Q. J. Zhu, "The
    probability of backtest overfitting", *Journal of Computational Finance*
    20(4), 2017 (SSRN 2326253, 2015), section 2.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> skill = np.linspace(0.0, 0.002, 10)          # trial j earns j * 0.0002 a day
    >>> returns = skill + rng.normal(0.0, 0.001, (1000, 10))
    >>> probability_of_backtest_overfitting(returns, n_splits=8)
    0.0
    >>> noise = rng.normal(0.0, 0.01, (1000, 50))   # no skill: PBO near 1/2
    >>> 0.3 < probability_of_backtest_overfitting(noise) < 0.7
    True
    """
    values, _ = as_float64_2d(performance, "performance")
    t, n = values.shape
    if n < 2:
        raise ValueError(f"performance must have at least 2 trials (columns), got {n}")
    if not np.isfinite(values).all():
        raise ValueError("performance must be finite (no NaN or inf)")
    s = check_int(n_splits, "n_splits", minimum=2)
    if s % 2:
        raise ValueError(f"n_splits must be even, got {s}")
    rows = t // s
    if rows < 2:
        raise ValueError(f"n_splits={s} needs at least {2 * s} rows, got {t}")
    blocks = values[t - rows * s :].reshape(s, rows, n)
    sums = np.ascontiguousarray(blocks.sum(axis=1))
    sums2 = np.ascontiguousarray((blocks * blocks).sum(axis=1))
    combos = np.zeros((math.comb(s, s // 2), s), dtype=np.bool_)
    for c, chosen in enumerate(itertools.combinations(range(s), s // 2)):
        combos[c, list(chosen)] = True
    logits = cscv_logits_nb(sums, sums2, rows, combos)
    return float(np.mean(logits <= 0.0))


def deflated_sharpe_ratio(
    sharpe: float,
    n_trials: int,
    var_trials: float,
    n_obs: int,
    skew: float = 0.0,
    kurtosis: float = 3.0,
) -> float:
    """Probability that the true Sharpe ratio of the best of ``n_trials`` trials is positive.

    Parameters
    ----------
    sharpe : float
        Estimated Sharpe ratio of the selected trial, per period (not annualized).
    n_trials : int
        Number of independent trials the selection was made from, >= 1.
    var_trials : float
        Variance of the trials' estimated Sharpe ratios, in the same (per-period)
        units, >= 0.
    n_obs : int
        Number of returns the Sharpe ratio was estimated on, >= 2.
    skew : float, default 0.0
        Skewness of the selected trial's returns.
    kurtosis : float, default 3.0
        Kurtosis of those returns (Pearson's: 3 for a normal distribution, not
        the excess).

    Returns
    -------
    float
        DSR in [0, 1]; NaN when ``1 - skew * SR + (kurtosis - 1) / 4 * SR**2``
        is not positive (moments no distribution has).

    Raises
    ------
    ValueError
        For a non-finite argument or one out of range.

    Notes
    -----
    The probabilistic Sharpe ratio against the expected maximum Sharpe ratio of
    ``N`` trials without skill,

    .. math::

        SR_0 = \\sqrt{V}\\left((1 - \\gamma)\\,\\Phi^{-1}(1 - 1/N)
               + \\gamma\\,\\Phi^{-1}(1 - 1/(N e))\\right),

        DSR = \\Phi\\left(\\frac{(\\widehat{SR} - SR_0)\\sqrt{T - 1}}
              {\\sqrt{1 - \\gamma_3 \\widehat{SR} + \\frac{\\gamma_4 - 1}{4}\\widehat{SR}^2}}\\right)

    with :math:`\\gamma` the Euler-Mascheroni constant. ``SR_0`` rises with
    ``N``, so DSR falls as trials grow; with one trial ``SR_0 = 0`` and DSR is
    the probabilistic Sharpe ratio against zero.

    References
    ----------
    D. H. Bailey and M. López de Prado, "The deflated Sharpe ratio: correcting
    for selection bias, backtest overfitting and non-normality", *Journal of
    Portfolio Management* 40(5), 2014, pp. 94-107, equations (1)-(2).

    Examples
    --------
    The paper's numerical example: 100 trials, five years of daily returns
    (250 a year), annualized SR 2.5 with variance 0.5 across trials, skewness
    -3, kurtosis 10.

    >>> round(deflated_sharpe_ratio(2.5 / 250 ** 0.5, 100, 0.5 / 250, 1250, -3.0, 10.0), 4)
    0.9004
    """
    from scipy.stats import norm  # imported here: metrics stays cheap to import

    sr = check_finite(sharpe, "sharpe")
    n = check_int(n_trials, "n_trials")
    v = check_finite(var_trials, "var_trials")
    if v < 0.0:
        raise ValueError(f"var_trials must be >= 0, got {var_trials!r}")
    t = check_int(n_obs, "n_obs", minimum=2)
    g3 = check_finite(skew, "skew")
    g4 = check_finite(kurtosis, "kurtosis")
    sr0 = 0.0
    if n > 1:
        gamma = np.euler_gamma
        sr0 = math.sqrt(v) * (
            (1.0 - gamma) * norm.ppf(1.0 - 1.0 / n) + gamma * norm.ppf(1.0 - 1.0 / (n * math.e))
        )
    denom = 1.0 - g3 * sr + (g4 - 1.0) / 4.0 * sr * sr
    if not denom > 0.0:
        return float("nan")
    return float(norm.cdf((sr - sr0) * math.sqrt(t - 1) / math.sqrt(denom)))
