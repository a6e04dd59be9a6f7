"""Returns: from prices to returns, compounding, annualizing, TWR and XIRR.

Every function accepts one series (1-D ndarray or ``pd.Series``) or a panel
(2-D ndarray or ``pd.DataFrame``, axis 0 time, one column per asset) and gives
back the same kind: a time-shaped result keeps the index and columns, a
reduction gives a float for a series and one value per column for a panel.

NaN policy: statistics skip NaNs, so a column that starts later than the panel
(leading NaNs) is measured over its own history; a column without a single
valid value gives NaN.
"""

from __future__ import annotations

from typing import Any, cast, overload

import numpy as np
import pandas as pd

from quantcore._kernels.returns import (
    annualized_return_nb,
    cumulative_returns_nb,
    log_returns_nb,
    money_weighted_return_nb,
    simple_returns_nb,
    time_weighted_return_nb,
    total_return_nb,
)
from quantcore._parallel import run
from quantcore._typing import ArrayOrFrame, Float64Array, Reduced, T
from quantcore._validation import as_float64_2d, check_positive

__all__ = [
    "annualized_return",
    "cumulative_returns",
    "log_returns",
    "money_weighted_return",
    "simple_returns",
    "time_weighted_return",
    "total_return",
]


def simple_returns(prices: T) -> T:
    """Simple (arithmetic) returns of prices.

    Parameters
    ----------
    prices : ndarray, Series or DataFrame
        Prices, axis 0 time.

    Returns
    -------
    ndarray, Series or DataFrame
        Same shape and kind as ``prices``; row 0 is NaN.

    Notes
    -----
    .. math:: r_t = \\frac{p_t}{p_{t-1}} - 1

    Like ``DataFrame.pct_change(fill_method=None)``: a NaN price gives NaN on its
    own row and the next one. A previous price that is zero or negative gives
    NaN instead of an infinite or meaningless return. Empty input gives an
    empty result.

    Examples
    --------
    >>> simple_returns(np.array([100.0, 110.0, 99.0]))
    array([ nan,  0.1, -0.1])
    """
    x, w = as_float64_2d(prices, "prices")
    return cast(T, w.wrap(run(simple_returns_nb, x)))


def log_returns(prices: T) -> T:
    """Logarithmic (continuously compounded) returns of prices.

    Parameters
    ----------
    prices : ndarray, Series or DataFrame
        Prices, axis 0 time.

    Returns
    -------
    ndarray, Series or DataFrame
        Same shape and kind as ``prices``; row 0 is NaN.

    Notes
    -----
    .. math:: \\ell_t = \\ln \\frac{p_t}{p_{t-1}}

    NaN where either price is NaN or not strictly positive.

    Examples
    --------
    >>> log_returns(np.array([100.0, 100.0 * np.e]))
    array([nan,  1.])
    """
    x, w = as_float64_2d(prices, "prices")
    return cast(T, w.wrap(run(log_returns_nb, x)))


def cumulative_returns(returns: T) -> T:
    """Compounded return from the start up to each row.

    Parameters
    ----------
    returns : ndarray, Series or DataFrame
        Simple (non-cumulative) returns, axis 0 time.

    Returns
    -------
    ndarray, Series or DataFrame
        Same shape and kind as ``returns``.

    Notes
    -----
    .. math:: R_t = \\prod_{s \\le t} (1 + r_s) - 1

    NaN returns are skipped (they neither gain nor lose) and their own rows are
    NaN in the output; leading NaNs therefore stay NaN until the series starts.
    On the non-NaN rows this equals ``empyrical.cum_returns``.

    Examples
    --------
    >>> cumulative_returns(np.array([0.1, -0.1, 0.0]))
    array([ 0.1 , -0.01, -0.01])
    """
    x, w = as_float64_2d(returns, "returns")
    return cast(T, w.wrap(run(cumulative_returns_nb, x)))


@overload
def total_return(returns: pd.Series) -> float: ...


@overload
def total_return(returns: pd.DataFrame) -> pd.Series: ...


@overload
def total_return(returns: np.ndarray) -> float | Float64Array: ...


def total_return(returns: ArrayOrFrame) -> Reduced:
    """Compounded return over the whole series.

    Parameters
    ----------
    returns : ndarray, Series or DataFrame
        Simple returns, axis 0 time.

    Returns
    -------
    float, ndarray or Series
        One value per column.

    Notes
    -----
    .. math:: R = \\prod_t (1 + r_t) - 1

    NaNs are skipped; empty input or an all-NaN column gives NaN. Equals
    ``empyrical.cum_returns_final``.

    Examples
    --------
    >>> round(total_return(np.array([0.1, -0.1])), 12)
    -0.01
    """
    x, w = as_float64_2d(returns, "returns", order="K")
    return w.wrap_reduced(run(total_return_nb, x))


@overload
def annualized_return(returns: pd.Series, *, periods_per_year: float = ...) -> float: ...


@overload
def annualized_return(returns: pd.DataFrame, *, periods_per_year: float = ...) -> pd.Series: ...


@overload
def annualized_return(returns: np.ndarray, *, periods_per_year: float = ...) -> float | Float64Array: ...


def annualized_return(returns: ArrayOrFrame, *, periods_per_year: float = 252) -> Reduced:
    """Compound annual growth rate (CAGR).

    Parameters
    ----------
    returns : ndarray, Series or DataFrame
        Simple returns, axis 0 time.
    periods_per_year : float, default 252
        Number of return periods in a year (252 daily, 52 weekly, 12 monthly).

    Returns
    -------
    float, ndarray or Series
        One value per column.

    Notes
    -----
    .. math:: \\mathrm{CAGR} = \\Big(\\prod_{t=1}^{m} (1 + r_t)\\Big)^{P/m} - 1

    with :math:`m` the number of valid (non-NaN) returns and :math:`P` the
    periods per year. Equals ``empyrical.annual_return`` on a series without
    NaNs. empyrical counts NaN rows as periods (``len(returns)``); here a column
    that starts later is annualized over its own history. Empty or all-NaN: NaN.
    A total loss below -100 % (negative wealth) gives NaN.

    References
    ----------
    .. [1] empyrical-reloaded, ``empyrical.stats.annual_return``.

    Examples
    --------
    >>> annualized_return(np.full(252, 0.001))  # doctest: +ELLIPSIS
    0.2864...
    """
    x, w = as_float64_2d(returns, "returns", order="K")
    ppy = check_positive(periods_per_year, "periods_per_year")
    return w.wrap_reduced(run(annualized_return_nb, x, ppy))


@overload
def time_weighted_return(values: pd.Series, cash_flows: ArrayOrFrame) -> float: ...


@overload
def time_weighted_return(values: pd.DataFrame, cash_flows: ArrayOrFrame) -> pd.Series: ...


@overload
def time_weighted_return(values: np.ndarray, cash_flows: ArrayOrFrame) -> float | Float64Array: ...


def time_weighted_return(values: ArrayOrFrame, cash_flows: ArrayOrFrame) -> Reduced:
    """Time-weighted return of a portfolio with external cash flows.

    Parameters
    ----------
    values : ndarray, Series or DataFrame
        Portfolio value at the end of each period (after the period's flow).
    cash_flows : ndarray, Series or DataFrame
        External flow at the start of each period, same shape as ``values``:
        deposits positive, withdrawals negative. The first period starts with
        ``cash_flows[0]`` (an account opened with a deposit); if it is 0,
        ``values[0]`` is the starting value.

    Returns
    -------
    float, ndarray or Series
        The chain-linked return over the whole span, one value per column.

    Notes
    -----
    .. math::

        \\mathrm{TWR} = \\prod_t \\frac{V_t}{V_{t-1} + F_t} - 1, \\qquad V_{-1} = 0

    Flows are invested at the start of their period, so they earn that
    period's return. Rows where the value is NaN are skipped (their flow is
    carried to the next valued row); NaN flows count as 0. Periods that start
    with no capital are skipped. No valid period: NaN.

    References
    ----------
    .. [1] CFA Institute, Global Investment Performance Standards (GIPS), 2020,
       time-weighted return.

    Examples
    --------
    A 10 % gain, then a deposit of 100, then another 10 % gain:

    >>> round(time_weighted_return(np.array([110.0, 231.0]), np.array([100.0, 100.0])), 12)
    0.21
    """
    v, w = as_float64_2d(values, "values")
    f, _ = as_float64_2d(cash_flows, "cash_flows")
    if f.shape != v.shape:
        raise ValueError(f"cash_flows must have the shape of values {v.shape}, got {f.shape}")
    return w.wrap_reduced(run(time_weighted_return_nb, v, f))


@overload
def money_weighted_return(dates: Any, cash_flows: pd.Series, final_value: Any) -> float: ...


@overload
def money_weighted_return(dates: Any, cash_flows: pd.DataFrame, final_value: Any) -> pd.Series: ...


@overload
def money_weighted_return(
    dates: Any, cash_flows: np.ndarray, final_value: Any
) -> float | Float64Array: ...


def money_weighted_return(dates: Any, cash_flows: ArrayOrFrame, final_value: Any) -> Reduced:
    """Money-weighted return (XIRR): the annual rate that equates flows and final value.

    Parameters
    ----------
    dates : DatetimeIndex, array of datetime64 or date strings
        Date of each cash flow, non-decreasing; the last date is the valuation date.
    cash_flows : ndarray, Series or DataFrame
        External flows into the portfolio on ``dates`` (deposits positive,
        withdrawals negative); a panel holds one portfolio per column.
    final_value : float or array of floats
        Portfolio value on the last date (one per column for a panel).

    Returns
    -------
    float, ndarray or Series
        Annual rate, one per column.

    Raises
    ------
    ValueError
        If the inputs are malformed, the dates do not span a positive period,
        or no rate solves the equation (e.g. every flow has the sign of the final value).

    Notes
    -----
    Solves, with :math:`\\tau_i` = (last date - date :math:`i`) in days / 365
    (Actual/365, as spreadsheet ``XIRR``),

    .. math:: \\sum_i F_i (1 + r)^{\\tau_i} = V

    by Newton's method from 10 %, falling back to bracketing and bisection on
    (-1, inf) when Newton leaves the domain or stalls. NaN flows count as 0.
    With mixed-sign flows several rates may solve the equation; one is returned.

    References
    ----------
    .. [1] Microsoft, "XIRR function", Excel documentation.

    Examples
    --------
    100 invested for exactly one year (365 days) that ends at 110:

    >>> round(money_weighted_return(["2025-01-01", "2026-01-01"], [100.0, 0.0], 110.0), 10)
    0.1
    """
    f, w = as_float64_2d(cash_flows, "cash_flows")
    n, k = f.shape
    try:
        when = pd.DatetimeIndex(pd.to_datetime(np.asarray(dates).ravel()))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"dates must be dates or datetimes: {exc}") from None
    if when.shape[0] != n:
        raise ValueError(f"dates and cash_flows must have the same length, got {when.shape[0]} and {n}")
    if n == 0:
        raise ValueError("cash_flows must not be empty")
    if when.hasnans:
        raise ValueError("dates must not contain missing values")
    if not when.is_monotonic_increasing:
        raise ValueError("dates must be sorted in non-decreasing order")
    tau = np.asarray((when[-1] - when) / pd.Timedelta(days=365), dtype=np.float64)
    if tau[0] <= 0.0:
        raise ValueError("dates must span a positive period (first date before the last)")
    try:
        fv = np.asarray(final_value, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"final_value must be a number or an array of numbers, got {final_value!r}") from None
    if fv.shape[0] == 1:
        fv = np.repeat(fv, k)
    if fv.shape[0] != k:
        raise ValueError(f"final_value must have 1 or {k} values, got {fv.shape[0]}")
    if not np.all(np.isfinite(fv)):
        raise ValueError("final_value must be finite")
    out = run(money_weighted_return_nb, tau, f, fv, shape=f.shape)
    bad = np.flatnonzero(np.isnan(out))
    if bad.size:
        where = "" if w.is_1d else f" (column {bad[0]})"
        raise ValueError(
            f"money_weighted_return: no rate solves the cash flows{where}; "
            "check the signs (deposits positive, final_value the ending value)"
        )
    return w.wrap_reduced(out)
