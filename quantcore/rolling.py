"""Rolling metrics: volatility, Sharpe ratio and beta over a sliding window of rows.

Each function takes a series or a panel (axis 0 time) and returns the same kind
and shape, with its index and columns. Row ``t`` is the metric of rows
``t - window + 1 .. t``; the first ``window - 1`` rows are NaN.

NaN policy: a window that holds a NaN or an infinity (in the returns, or for
beta in either series) is NaN, like ``pandas.DataFrame.rolling(window)``; on
NaN-free data the values equal empyrical's ``roll_annual_volatility``,
``roll_sharpe_ratio`` and ``roll_beta`` (which return only the full windows,
i.e. our rows ``window - 1`` onward). This module is the one home of rolling
metrics; the former names ``quantcore.risk.rolling_volatility``,
``quantcore.risk.rolling_beta`` and ``quantcore.metrics.rolling_sharpe`` still
work and warn with a ``DeprecationWarning``.
"""

from __future__ import annotations

from typing import cast

from quantcore._kernels.rolling import SHARPE, VOLATILITY, rolling_beta_nb, rolling_moments_nb
from quantcore._parallel import run
from quantcore._typing import ArrayOrFrame, T
from quantcore._validation import (
    as_float64_2d,
    check_finite,
    check_int,
    check_positive,
    with_benchmark,
)

__all__ = ["rolling_beta", "rolling_sharpe", "rolling_volatility"]


def rolling_volatility(
    returns: T, window: int, *, periods_per_year: float = 252, ddof: int = 1
) -> T:
    """Annualized volatility over a rolling window.

    Parameters
    ----------
    returns : ndarray, Series or DataFrame
        Simple returns, axis 0 time.
    window : int
        Rows per window (>= 2). A window longer than the data gives all NaN.
    periods_per_year : float, default 252
        Return periods per year.
    ddof : int, default 1
        Delta degrees of freedom of the standard deviation (< ``window``).

    Returns
    -------
    ndarray, Series or DataFrame
        Same kind and shape as ``returns``; the first ``window - 1`` rows NaN.

    Notes
    -----
    .. math:: \\sigma_t = \\sqrt{P} \\sqrt{\\frac{1}{w - d} \\sum_{s=t-w+1}^{t} (r_s - \\bar r)^2}

    A window with a NaN or infinity: NaN; a window of equal returns: exactly 0.
    Equals ``empyrical.roll_annual_volatility`` on NaN-free data.

    Examples
    --------
    >>> import numpy as np
    >>> rolling_volatility(np.array([0.01, -0.01, 0.01, -0.01]), 3, periods_per_year=1)
    array([       nan,        nan, 0.01154701, 0.01154701])
    """
    x, w = as_float64_2d(returns, "returns", order="K")
    win = check_int(window, "window", minimum=2)
    ppy = check_positive(periods_per_year, "periods_per_year")
    dd = check_int(ddof, "ddof", minimum=0)
    if dd >= win:
        raise ValueError(f"ddof must be < window ({win}), got {dd}")
    return cast(T, w.wrap(run(rolling_moments_nb, x, win, 0.0, ppy, dd, VOLATILITY)))


def rolling_sharpe(
    returns: T, window: int, *, risk_free: float = 0.0, periods_per_year: float = 252
) -> T:
    """Annualized Sharpe ratio over a rolling window.

    Parameters
    ----------
    returns : ndarray, Series or DataFrame
        Simple returns, axis 0 time.
    window : int
        Rows per window (>= 2). A window longer than the data gives all NaN.
    risk_free : float, default 0.0
        Risk-free return per period.
    periods_per_year : float, default 252
        Return periods per year.

    Returns
    -------
    ndarray, Series or DataFrame
        Same kind and shape as ``returns``; the first ``window - 1`` rows NaN.

    Notes
    -----
    .. math:: SR_t = \\sqrt{P} \\frac{\\overline{r - r_f}}{\\operatorname{std}(r - r_f)}

    over the window, sample standard deviation (ddof=1). A window with a NaN
    or infinity, or of equal returns: NaN (empyrical gives ``inf`` for the
    latter, as for :func:`quantcore.metrics.sharpe_ratio`). Otherwise equals
    ``empyrical.roll_sharpe_ratio``.

    Examples
    --------
    >>> import numpy as np
    >>> rolling_sharpe(np.array([0.01, 0.03, 0.01, 0.03, 0.03]), 4, periods_per_year=1)
    array([       nan,        nan,        nan, 1.73205081, 2.5       ])
    """
    x, w = as_float64_2d(returns, "returns", order="K")
    win = check_int(window, "window", minimum=2)
    rf = check_finite(risk_free, "risk_free")
    ppy = check_positive(periods_per_year, "periods_per_year")
    return cast(T, w.wrap(run(rolling_moments_nb, x, win, rf, ppy, 1, SHARPE)))


def rolling_beta(returns: T, benchmark: ArrayOrFrame, window: int) -> T:
    """Beta of returns on a benchmark (OLS slope) over a rolling window.

    Parameters
    ----------
    returns : ndarray, Series or DataFrame
        Simple returns, axis 0 time.
    benchmark : ndarray, Series or DataFrame
        Benchmark returns: one column shared by all, or one per column of
        ``returns``; same length (and same index for pandas inputs).
    window : int
        Rows per window (>= 2). A window longer than the data gives all NaN.

    Returns
    -------
    ndarray, Series or DataFrame
        Same kind and shape as ``returns``; the first ``window - 1`` rows NaN.

    Notes
    -----
    .. math:: \\beta_t = \\frac{\\operatorname{cov}(r, b)}{\\operatorname{var}(b)}

    over the window. A window with a NaN or infinity in either series, or a
    benchmark variance below 1e-30 (empyrical's threshold): NaN. Equals
    ``empyrical.roll_beta`` on NaN-free data.

    Examples
    --------
    >>> import numpy as np
    >>> b = np.array([0.01, -0.02, 0.03, 0.0, 0.01])
    >>> rolling_beta(2.0 * b + 0.001, b, 3)
    array([nan, nan,  2.,  2.,  2.])
    """
    x, b, w = with_benchmark(returns, benchmark, "K")
    win = check_int(window, "window", minimum=2)
    return cast(T, w.wrap(run(rolling_beta_nb, x, b, win)))
