"""Risk: volatility, value at risk, expected shortfall and benchmark-relative risk.

Accepts a series or a panel and returns one value per column (a float for a
series). NaNs are skipped (pairwise for benchmark statistics), so a column that
starts later than the panel is measured over its own history. Fewer than two
valid observations give NaN. VaR and ES are **positive loss fractions**: a VaR
of 0.02 means a 2 % loss.

Deprecated: ``rolling_volatility`` and ``rolling_beta`` live in
:mod:`quantcore.rolling`; the old names here still work and warn with a
``DeprecationWarning``.
"""

from __future__ import annotations

from typing import Any, Literal, overload

import numpy as np
import pandas as pd
from scipy.special import ndtri

from quantcore._deprecation import deprecated_aliases
from quantcore._kernels.risk import (
    active_risk_nb,
    beta_alpha_nb,
    correlation_nb,
    downside_deviation_nb,
    moments_nb,
    value_at_risk_es_nb,
    volatility_nb,
)
from quantcore._parallel import run
from quantcore._typing import ArrayOrFrame, Float64Array, Reduced
from quantcore._validation import (
    as_float64_2d,
    check_finite,
    check_int,
    check_positive,
    level_tail,
    with_benchmark,
)

__all__ = [
    "alpha",
    "beta",
    "correlation",
    "downside_deviation",
    "expected_shortfall",
    "tracking_error",
    "value_at_risk",
    "volatility",
]

#: Moved to :mod:`quantcore.rolling`; the old names warn (DeprecationWarning).
__getattr__ = deprecated_aliases(
    __name__,
    {
        "rolling_beta": "quantcore.rolling.rolling_beta",
        "rolling_volatility": "quantcore.rolling.rolling_volatility",
    },
)

Method = Literal["historical", "parametric", "cornish_fisher"]
_METHODS = ("historical", "parametric", "cornish_fisher")


def _cornish_fisher_z(z: Any, skew: Any, kurt: Any) -> Any:
    return (
        z
        + (z**2 - 1.0) * skew / 6.0
        + (z**3 - 3.0 * z) * kurt / 24.0
        - (2.0 * z**3 - 5.0 * z) * skew**2 / 36.0
    )


@overload
def volatility(returns: pd.Series, *, periods_per_year: float = ..., ddof: int = ...) -> float: ...


@overload
def volatility(returns: pd.DataFrame, *, periods_per_year: float = ..., ddof: int = ...) -> pd.Series: ...


@overload
def volatility(returns: np.ndarray, *, periods_per_year: float = ..., ddof: int = ...) -> float | Float64Array: ...


def volatility(
    returns: ArrayOrFrame, *, periods_per_year: float = 252, ddof: int = 1
) -> Reduced:
    """Annualized volatility (standard deviation of returns).

    Parameters
    ----------
    returns : ndarray, Series or DataFrame
        Simple returns, axis 0 time.
    periods_per_year : float, default 252
        Return periods per year.
    ddof : int, default 1
        Delta degrees of freedom of the standard deviation.

    Returns
    -------
    float, ndarray or Series
        One value per column.

    Notes
    -----
    .. math:: \\sigma = \\sqrt{P} \\sqrt{\\frac{1}{m - d} \\sum_t (r_t - \\bar r)^2}

    NaNs skipped; fewer than 2 valid values: NaN; constant returns: exactly 0.
    Equals ``empyrical.annual_volatility`` (ddof=1).

    Examples
    --------
    >>> volatility(np.array([0.01, -0.01, 0.01, -0.01]), periods_per_year=1)  # doctest: +ELLIPSIS
    0.011547...
    """
    x, w = as_float64_2d(returns, "returns", order="K")
    ppy = check_positive(periods_per_year, "periods_per_year")
    dd = check_int(ddof, "ddof", minimum=0)
    return w.wrap_reduced(run(volatility_nb, x, ppy, dd))


def _var_es(returns: Any, level: Any, method: Any, which: int) -> Reduced:
    x, w = as_float64_2d(returns, "returns", order="K" if method == "historical" else "F")
    lv, q, cutoff, zt = level_tail(level)
    if method not in _METHODS:
        raise ValueError(f"method must be one of {', '.join(_METHODS)}; got {method!r}")
    if method == "historical":
        return w.wrap_reduced(run(value_at_risk_es_nb, x, q, cutoff, zt)[which])
    mean, sd, skew, kurt = run(moments_nb, x)
    alpha = 1.0 - lv
    z = float(ndtri(alpha))
    phi = np.exp(-0.5 * z * z) / np.sqrt(2.0 * np.pi)
    if method == "parametric":
        out = -(mean + z * sd) if which == 0 else -(mean - sd * phi / alpha)
    elif which == 0:
        out = -(mean + _cornish_fisher_z(z, skew, kurt) * sd)
    else:
        # tail moments of the standard normal: M_k = int_{-inf}^{z} u^k phi(u) du
        m0 = alpha
        m1 = -phi
        m2 = alpha - z * phi
        m3 = -(z * z + 2.0) * phi
        tail = m1 + (m2 - m0) * skew / 6.0 + (m3 - 3.0 * m1) * kurt / 24.0 - (2.0 * m3 - 5.0 * m1) * skew**2 / 36.0
        out = -(mean + sd * tail / alpha)
    return w.wrap_reduced(np.asarray(out, dtype=np.float64))


@overload
def value_at_risk(returns: pd.Series, *, level: float = ..., method: Method = ...) -> float: ...


@overload
def value_at_risk(returns: pd.DataFrame, *, level: float = ..., method: Method = ...) -> pd.Series: ...


@overload
def value_at_risk(returns: np.ndarray, *, level: float = ..., method: Method = ...) -> float | Float64Array: ...


def value_at_risk(
    returns: ArrayOrFrame, *, level: float = 0.95, method: Method = "historical"
) -> Reduced:
    """Value at risk: the loss not exceeded with probability ``level``, as a positive fraction.

    Parameters
    ----------
    returns : ndarray, Series or DataFrame
        Simple returns, axis 0 time.
    level : float, default 0.95
        Confidence level in (0, 1).
    method : {"historical", "parametric", "cornish_fisher"}
        Empirical quantile, normal quantile, or the Cornish-Fisher expansion of
        the normal quantile with the sample skewness and excess kurtosis.

    Returns
    -------
    float, ndarray or Series
        One value per column; negative when even the tail quantile is a gain.

    Notes
    -----
    With :math:`\\alpha = 1 - \\text{level}` and :math:`z = \\Phi^{-1}(\\alpha)`:

    - historical: :math:`-Q_\\alpha(r)`, numpy's linear-interpolation percentile,
      i.e. ``-np.percentile(r, 100 * (1 - level))`` = ``-empyrical.value_at_risk(r, cutoff=1 - level)``;
    - parametric: :math:`-(\\mu + z \\sigma)`;
    - cornish_fisher: :math:`-(\\mu + z_{cf} \\sigma)` with
      :math:`z_{cf} = z + (z^2-1)S/6 + (z^3-3z)K/24 - (2z^3-5z)S^2/36`.

    :math:`\\mu`, :math:`\\sigma` (ddof=1), :math:`S` and :math:`K` (biased
    skewness and excess kurtosis, as ``scipy.stats.skew``/``kurtosis``) are
    sample moments over the non-NaN values. Fewer than 2 valid values, or
    zero variance for the moment methods: NaN. Historical VaR is found by a
    quickselect of the lower tail (no full sort).

    References
    ----------
    .. [1] Favre, L. and Galeano, J.-A. (2002), "Mean-modified value-at-risk
       optimization with hedge funds", Journal of Alternative Investment 5(2).

    Examples
    --------
    >>> r = np.linspace(-0.05, 0.05, 101)
    >>> round(value_at_risk(r, level=0.95), 12)
    0.045
    """
    return _var_es(returns, level, method, 0)


@overload
def expected_shortfall(returns: pd.Series, *, level: float = ..., method: Method = ...) -> float: ...


@overload
def expected_shortfall(returns: pd.DataFrame, *, level: float = ..., method: Method = ...) -> pd.Series: ...


@overload
def expected_shortfall(returns: np.ndarray, *, level: float = ..., method: Method = ...) -> float | Float64Array: ...


def expected_shortfall(
    returns: ArrayOrFrame, *, level: float = 0.95, method: Method = "historical"
) -> Reduced:
    """Expected shortfall (CVaR): the mean loss beyond the VaR, as a positive fraction.

    Parameters
    ----------
    returns : ndarray, Series or DataFrame
        Simple returns, axis 0 time.
    level : float, default 0.95
        Confidence level in (0, 1).
    method : {"historical", "parametric", "cornish_fisher"}
        See :func:`value_at_risk`.

    Returns
    -------
    float, ndarray or Series
        One value per column; ``expected_shortfall >= value_at_risk``.

    Notes
    -----
    With :math:`\\alpha = 1 - \\text{level}`, :math:`z = \\Phi^{-1}(\\alpha)` and
    :math:`\\varphi` the normal density:

    - historical: minus the mean of the :math:`\\lfloor (m-1)\\alpha \\rfloor + 1`
      smallest returns, equal to ``-empyrical.conditional_value_at_risk(r, cutoff=1 - level)``;
    - parametric: :math:`-(\\mu - \\sigma \\varphi(z) / \\alpha)`;
    - cornish_fisher: :math:`-(\\mu + \\frac{\\sigma}{\\alpha}\\int_0^\\alpha z_{cf}(\\Phi^{-1}(u))\\,du)`,
      the tail mean of the Cornish-Fisher quantile function, integrated in
      closed form with the truncated normal moments
      :math:`M_k = \\int_{-\\infty}^{z} u^k \\varphi(u)\\,du`.

    Same NaN and degenerate-input rules as :func:`value_at_risk`.

    References
    ----------
    .. [1] Acerbi, C. and Tasche, D. (2002), "On the coherence of expected
       shortfall", Journal of Banking & Finance 26(7).

    Examples
    --------
    >>> r = np.linspace(-0.05, 0.05, 101)
    >>> round(expected_shortfall(r, level=0.95), 12)
    0.0475
    """
    return _var_es(returns, level, method, 1)


@overload
def beta(returns: pd.Series, benchmark: ArrayOrFrame) -> float: ...


@overload
def beta(returns: pd.DataFrame, benchmark: ArrayOrFrame) -> pd.Series: ...


@overload
def beta(returns: np.ndarray, benchmark: ArrayOrFrame) -> float | Float64Array: ...


def beta(returns: ArrayOrFrame, benchmark: ArrayOrFrame) -> Reduced:
    """Beta of returns on a benchmark (OLS slope).

    Parameters
    ----------
    returns : ndarray, Series or DataFrame
        Simple returns, axis 0 time.
    benchmark : ndarray, Series or DataFrame
        Benchmark returns: one column shared by all, or one per column of
        ``returns``; same length (and same index for pandas inputs).

    Returns
    -------
    float, ndarray or Series
        One value per column.

    Notes
    -----
    .. math:: \\beta = \\frac{\\operatorname{cov}(r, b)}{\\operatorname{var}(b)}

    over the rows where both are valid. Fewer than 2 such rows or a benchmark
    variance below 1e-30 (empyrical's threshold): NaN. Equals
    ``empyrical.beta`` (a risk-free rate does not change the slope).

    Examples
    --------
    >>> b = np.array([0.01, -0.02, 0.03, 0.0])
    >>> round(beta(2.0 * b + 0.001, b), 12)
    2.0
    """
    x, b, w = with_benchmark(returns, benchmark, "K")
    return w.wrap_reduced(run(beta_alpha_nb, x, b, 0.0, 252.0)[0])


@overload
def alpha(returns: pd.Series, benchmark: ArrayOrFrame, *, risk_free: float = ..., periods_per_year: float = ...) -> float: ...


@overload
def alpha(returns: pd.DataFrame, benchmark: ArrayOrFrame, *, risk_free: float = ..., periods_per_year: float = ...) -> pd.Series: ...


@overload
def alpha(returns: np.ndarray, benchmark: ArrayOrFrame, *, risk_free: float = ..., periods_per_year: float = ...) -> float | Float64Array: ...


def alpha(
    returns: ArrayOrFrame,
    benchmark: ArrayOrFrame,
    *,
    risk_free: float = 0.0,
    periods_per_year: float = 252,
) -> Reduced:
    """Jensen's alpha, annualized by compounding.

    Parameters
    ----------
    returns, benchmark : ndarray, Series or DataFrame
        As in :func:`beta`.
    risk_free : float, default 0.0
        Risk-free return per period.
    periods_per_year : float, default 252
        Return periods per year.

    Returns
    -------
    float, ndarray or Series
        One value per column.

    Notes
    -----
    .. math:: \\alpha = \\big(1 + \\overline{(r - r_f) - \\beta (b - r_f)}\\big)^{P} - 1

    over the rows where both are valid; NaN when beta is NaN. Equals the alpha
    of ``empyrical.alpha_beta``.

    Examples
    --------
    >>> b = np.array([0.01, -0.02, 0.03, 0.0])
    >>> round(alpha(2.0 * b + 0.001, b, periods_per_year=1), 12)
    0.001
    """
    x, b, w = with_benchmark(returns, benchmark, "K")
    rf = check_finite(risk_free, "risk_free")
    ppy = check_positive(periods_per_year, "periods_per_year")
    return w.wrap_reduced(run(beta_alpha_nb, x, b, rf, ppy)[1])


@overload
def correlation(returns: pd.Series, benchmark: ArrayOrFrame) -> float: ...


@overload
def correlation(returns: pd.DataFrame, benchmark: ArrayOrFrame) -> pd.Series: ...


@overload
def correlation(returns: np.ndarray, benchmark: ArrayOrFrame) -> float | Float64Array: ...


def correlation(returns: ArrayOrFrame, benchmark: ArrayOrFrame) -> Reduced:
    """Pearson correlation of returns with a benchmark.

    Parameters
    ----------
    returns, benchmark : ndarray, Series or DataFrame
        As in :func:`beta`.

    Returns
    -------
    float, ndarray or Series
        One value per column, in [-1, 1].

    Notes
    -----
    .. math:: \\rho = \\frac{\\operatorname{cov}(r, b)}{\\sigma_r \\sigma_b}

    over the rows where both are valid (as ``Series.corr``). Fewer than 2 such
    rows or either side constant: NaN.

    Examples
    --------
    >>> b = np.array([0.01, -0.02, 0.03, 0.0])
    >>> round(correlation(-3.0 * b, b), 12)
    -1.0
    """
    x, b, w = with_benchmark(returns, benchmark)
    return w.wrap_reduced(run(correlation_nb, x, b))


@overload
def downside_deviation(returns: pd.Series, *, required_return: float = ..., periods_per_year: float = ...) -> float: ...


@overload
def downside_deviation(returns: pd.DataFrame, *, required_return: float = ..., periods_per_year: float = ...) -> pd.Series: ...


@overload
def downside_deviation(returns: np.ndarray, *, required_return: float = ..., periods_per_year: float = ...) -> float | Float64Array: ...


def downside_deviation(
    returns: ArrayOrFrame, *, required_return: float = 0.0, periods_per_year: float = 252
) -> Reduced:
    """Annualized downside deviation below a required return.

    Parameters
    ----------
    returns : ndarray, Series or DataFrame
        Simple returns, axis 0 time.
    required_return : float, default 0.0
        Minimum acceptable return per period.
    periods_per_year : float, default 252
        Return periods per year.

    Returns
    -------
    float, ndarray or Series
        One value per column.

    Notes
    -----
    .. math:: DD = \\sqrt{P} \\sqrt{\\frac{1}{m} \\sum_t \\min(r_t - q, 0)^2}

    The mean runs over all :math:`m` valid returns (those above :math:`q`
    count as 0). Fewer than 2 valid values: NaN. Equals ``empyrical.downside_risk``.

    Examples
    --------
    >>> downside_deviation(np.array([0.02, -0.02, 0.02, -0.02]), periods_per_year=1)  # doctest: +ELLIPSIS
    0.01414...
    """
    x, w = as_float64_2d(returns, "returns", order="K")
    req = check_finite(required_return, "required_return")
    ppy = check_positive(periods_per_year, "periods_per_year")
    return w.wrap_reduced(run(downside_deviation_nb, x, req, ppy))


@overload
def tracking_error(returns: pd.Series, benchmark: ArrayOrFrame, *, periods_per_year: float = ..., ddof: int = ...) -> float: ...


@overload
def tracking_error(returns: pd.DataFrame, benchmark: ArrayOrFrame, *, periods_per_year: float = ..., ddof: int = ...) -> pd.Series: ...


@overload
def tracking_error(returns: np.ndarray, benchmark: ArrayOrFrame, *, periods_per_year: float = ..., ddof: int = ...) -> float | Float64Array: ...


def tracking_error(
    returns: ArrayOrFrame,
    benchmark: ArrayOrFrame,
    *,
    periods_per_year: float = 252,
    ddof: int = 1,
) -> Reduced:
    """Annualized tracking error: volatility of the active return ``r - b``.

    Parameters
    ----------
    returns, benchmark : ndarray, Series or DataFrame
        As in :func:`beta`.
    periods_per_year : float, default 252
        Return periods per year.
    ddof : int, default 1
        Delta degrees of freedom of the standard deviation.

    Returns
    -------
    float, ndarray or Series
        One value per column.

    Notes
    -----
    .. math:: TE = \\sqrt{P}\\, \\operatorname{std}(r - b)

    over the rows where both are valid; fewer than 2 such rows: NaN; a
    constant active return: exactly 0.

    Examples
    --------
    >>> round(tracking_error(np.array([0.02, 0.0]), np.zeros(2), periods_per_year=1), 12)
    0.014142135624
    """
    x, b, w = with_benchmark(returns, benchmark)
    ppy = check_positive(periods_per_year, "periods_per_year")
    dd = check_int(ddof, "ddof", minimum=0)
    return w.wrap_reduced(run(active_risk_nb, x, b, ppy, dd)[0])

