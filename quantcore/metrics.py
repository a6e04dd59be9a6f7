"""Performance metrics: risk-adjusted ratios and a one-pass summary table.

Accepts a series or a panel, returns one value per column (a float for a
series). NaNs are skipped, so a column that starts later than the panel is
measured over its own history. Degenerate input (empty, all-NaN, fewer than two
valid values, zero dispersion in a denominator) gives NaN, never ``inf``.

Deprecated: ``rolling_sharpe`` lives in :mod:`quantcore.rolling`
(:func:`quantcore.rolling.rolling_sharpe`), ``probability_of_backtest_overfitting``
and ``deflated_sharpe_ratio`` in :mod:`quantcore.overfitting`; the old names here
still work and warn with a ``DeprecationWarning``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload

import numpy as np
import pandas as pd

from quantcore._deprecation import deprecated_aliases
from quantcore._kernels.metrics import (
    SUMMARY_BENCH_ROWS,
    SUMMARY_ROWS,
    calmar_ratio_nb,
    omega_ratio_nb,
    sharpe_ratio_nb,
    sortino_ratio_nb,
    stability_nb,
    summary_bench_nb,
    summary_column_nb,
    summary_nb,
    tail_ratio_nb,
)
from quantcore._kernels.risk import active_risk_nb
from quantcore._parallel import run
from quantcore._typing import ArrayOrFrame, Float64Array, Reduced
from quantcore._validation import (
    as_float64_2d,
    check_finite,
    check_positive,
    level_tail,
    with_benchmark,
)

__all__ = [
    "SUMMARY_METRICS",
    "calmar_ratio",
    "information_ratio",
    "omega_ratio",
    "sharpe_ratio",
    "sortino_ratio",
    "stability_of_timeseries",
    "summary",
    "tail_ratio",
]

#: Moved to :mod:`quantcore.rolling` and :mod:`quantcore.overfitting`; the old names warn.
__getattr__ = deprecated_aliases(
    __name__,
    {
        "deflated_sharpe_ratio": "quantcore.overfitting.deflated_sharpe_ratio",
        "probability_of_backtest_overfitting": "quantcore.overfitting.probability_of_backtest_overfitting",
        "rolling_sharpe": "quantcore.rolling.rolling_sharpe",
    },
)

#: Rows of :func:`summary`, in order; the last five need a benchmark.
SUMMARY_METRICS: tuple[str, ...] = SUMMARY_ROWS + SUMMARY_BENCH_ROWS


def _omega_threshold(required_return: Any, periods_per_year: float) -> float:
    req = check_finite(required_return, "required_return")
    if periods_per_year == 1:
        return req
    if req <= -1.0:
        raise ValueError(f"required_return must be > -1, got {required_return!r}")
    return float((1.0 + req) ** (1.0 / periods_per_year) - 1.0)


def _summary_series(
    x: Float64Array, b: Float64Array, rf: float, req: float, threshold: float, ppy: float,
    q: float, cutoff: float, zt: float, want: np.ndarray,
) -> Float64Array:  # fmt: skip
    """``summary_nb`` of one column, its per-column kernels called from here: a first
    call on one series compiles only them (not the panel loop, nor the benchmark rows
    when there is no benchmark)."""
    col = np.array(x[:, 0], dtype=np.float64, order="C")  # writable: one type per argument
    n = col.shape[0]
    out = np.full((len(want), 1), np.nan)
    buf = np.empty(n)
    cand = np.empty(n)
    summary_column_nb(col, buf, cand, rf, req, threshold, ppy, q, cutoff, zt, want, out, 0)
    if b.shape[1] > 0 and want[len(SUMMARY_ROWS) :].any():
        bcol = np.array(b[:, 0], dtype=np.float64, order="C")
        summary_bench_nb(col, bcol, buf, cand, rf, ppy, out, 0)
    return out


@overload
def sharpe_ratio(returns: pd.Series, *, risk_free: float = ..., periods_per_year: float = ...) -> float: ...


@overload
def sharpe_ratio(returns: pd.DataFrame, *, risk_free: float = ..., periods_per_year: float = ...) -> pd.Series: ...


@overload
def sharpe_ratio(returns: np.ndarray, *, risk_free: float = ..., periods_per_year: float = ...) -> float | Float64Array: ...


def sharpe_ratio(
    returns: ArrayOrFrame, *, risk_free: float = 0.0, periods_per_year: float = 252
) -> Reduced:
    """Annualized Sharpe ratio.

    Parameters
    ----------
    returns : ndarray, Series or DataFrame
        Simple returns, axis 0 time.
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
    .. math:: SR = \\sqrt{P} \\frac{\\overline{r - r_f}}{\\operatorname{std}(r - r_f)}

    with the sample standard deviation (ddof=1). NaNs skipped; fewer than 2
    valid values or constant returns: NaN (empyrical gives ``inf`` for the
    latter). Otherwise equals ``empyrical.sharpe_ratio``.

    References
    ----------
    .. [1] Sharpe, W. F. (1994), "The Sharpe Ratio", Journal of Portfolio
       Management 21(1).

    Examples
    --------
    >>> round(sharpe_ratio(np.array([0.01, 0.03, 0.01, 0.03]), periods_per_year=1), 12)
    1.732050807569
    """
    x, w = as_float64_2d(returns, "returns", order="K")
    rf = check_finite(risk_free, "risk_free")
    ppy = check_positive(periods_per_year, "periods_per_year")
    return w.wrap_reduced(run(sharpe_ratio_nb, x, rf, ppy))


@overload
def sortino_ratio(returns: pd.Series, *, required_return: float = ..., periods_per_year: float = ...) -> float: ...


@overload
def sortino_ratio(returns: pd.DataFrame, *, required_return: float = ..., periods_per_year: float = ...) -> pd.Series: ...


@overload
def sortino_ratio(returns: np.ndarray, *, required_return: float = ..., periods_per_year: float = ...) -> float | Float64Array: ...


def sortino_ratio(
    returns: ArrayOrFrame, *, required_return: float = 0.0, periods_per_year: float = 252
) -> Reduced:
    """Annualized Sortino ratio.

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
    .. math::

        SoR = \\frac{P\\, \\overline{r - q}}{\\sqrt{P} \\sqrt{\\frac1m \\sum_t \\min(r_t - q, 0)^2}}

    NaNs skipped; fewer than 2 valid values or no return below :math:`q`: NaN.
    Otherwise equals ``empyrical.sortino_ratio``.

    References
    ----------
    .. [1] Sortino, F. and Price, L. (1994), "Performance Measurement in a
       Downside Risk Framework", Journal of Investing 3(3).

    Examples
    --------
    >>> round(sortino_ratio(np.array([0.02, -0.01, 0.02, -0.01]), periods_per_year=1), 12)
    0.707106781187
    """
    x, w = as_float64_2d(returns, "returns", order="K")
    req = check_finite(required_return, "required_return")
    ppy = check_positive(periods_per_year, "periods_per_year")
    return w.wrap_reduced(run(sortino_ratio_nb, x, req, ppy))


@overload
def calmar_ratio(returns: pd.Series, *, periods_per_year: float = ...) -> float: ...


@overload
def calmar_ratio(returns: pd.DataFrame, *, periods_per_year: float = ...) -> pd.Series: ...


@overload
def calmar_ratio(returns: np.ndarray, *, periods_per_year: float = ...) -> float | Float64Array: ...


def calmar_ratio(returns: ArrayOrFrame, *, periods_per_year: float = 252) -> Reduced:
    """Calmar ratio: CAGR over the absolute maximum drawdown.

    Parameters
    ----------
    returns : ndarray, Series or DataFrame
        Simple returns, axis 0 time.
    periods_per_year : float, default 252
        Return periods per year.

    Returns
    -------
    float, ndarray or Series
        One value per column.

    Notes
    -----
    .. math:: CR = \\frac{\\mathrm{CAGR}}{|MDD|}

    with :func:`quantcore.returns.annualized_return` and
    :func:`quantcore.drawdown.max_drawdown`. No drawdown (MDD = 0), empty or
    all-NaN: NaN. Equals ``empyrical.calmar_ratio`` on a series without NaNs.

    Examples
    --------
    >>> round(calmar_ratio(np.array([0.5, -0.2]), periods_per_year=2), 12)
    1.0
    """
    x, w = as_float64_2d(returns, "returns")
    ppy = check_positive(periods_per_year, "periods_per_year")
    return w.wrap_reduced(run(calmar_ratio_nb, x, ppy))


@overload
def omega_ratio(returns: pd.Series, *, risk_free: float = ..., required_return: float = ..., periods_per_year: float = ...) -> float: ...


@overload
def omega_ratio(returns: pd.DataFrame, *, risk_free: float = ..., required_return: float = ..., periods_per_year: float = ...) -> pd.Series: ...


@overload
def omega_ratio(returns: np.ndarray, *, risk_free: float = ..., required_return: float = ..., periods_per_year: float = ...) -> float | Float64Array: ...


def omega_ratio(
    returns: ArrayOrFrame,
    *,
    risk_free: float = 0.0,
    required_return: float = 0.0,
    periods_per_year: float = 252,
) -> Reduced:
    """Omega ratio: probability-weighted gains over losses around a threshold.

    Parameters
    ----------
    returns : ndarray, Series or DataFrame
        Simple returns, axis 0 time.
    risk_free : float, default 0.0
        Risk-free return per period.
    required_return : float, default 0.0
        Minimum acceptable **annual** return, de-annualized to
        :math:`\\tau = (1 + q)^{1/P} - 1` (used as is when ``periods_per_year == 1``).
    periods_per_year : float, default 252
        Return periods per year.

    Returns
    -------
    float, ndarray or Series
        One value per column.

    Raises
    ------
    ValueError
        If ``required_return <= -1`` (with ``periods_per_year != 1``).

    Notes
    -----
    .. math::

        \\Omega = \\frac{\\sum_t \\max(r_t - r_f - \\tau, 0)}{\\sum_t \\max(r_f + \\tau - r_t, 0)}

    NaNs skipped; fewer than 2 valid values or no return below the threshold:
    NaN. Equals ``empyrical.omega_ratio(annualization=periods_per_year)``.

    References
    ----------
    .. [1] Keating, C. and Shadwick, W. F. (2002), "A Universal Performance
       Measure", Journal of Performance Measurement 6(3).

    Examples
    --------
    >>> round(omega_ratio(np.array([0.02, -0.01, 0.03, -0.01])), 12)
    2.5
    """
    x, w = as_float64_2d(returns, "returns")
    rf = check_finite(risk_free, "risk_free")
    ppy = check_positive(periods_per_year, "periods_per_year")
    return w.wrap_reduced(run(omega_ratio_nb, x, rf + _omega_threshold(required_return, ppy)))


@overload
def information_ratio(returns: pd.Series, benchmark: ArrayOrFrame, *, periods_per_year: float = ...) -> float: ...


@overload
def information_ratio(returns: pd.DataFrame, benchmark: ArrayOrFrame, *, periods_per_year: float = ...) -> pd.Series: ...


@overload
def information_ratio(returns: np.ndarray, benchmark: ArrayOrFrame, *, periods_per_year: float = ...) -> float | Float64Array: ...


def information_ratio(
    returns: ArrayOrFrame, benchmark: ArrayOrFrame, *, periods_per_year: float = 252
) -> Reduced:
    """Annualized information ratio: mean active return over tracking error.

    Parameters
    ----------
    returns : ndarray, Series or DataFrame
        Simple returns, axis 0 time.
    benchmark : ndarray, Series or DataFrame
        One benchmark column or one per column of ``returns``, same length
        (and same index for pandas inputs).
    periods_per_year : float, default 252
        Return periods per year.

    Returns
    -------
    float, ndarray or Series
        One value per column.

    Notes
    -----
    .. math:: IR = \\sqrt{P} \\frac{\\overline{r - b}}{\\operatorname{std}(r - b)}

    (ddof=1) over the rows where both are valid. Fewer than 2 such rows or a
    constant active return: NaN. empyrical has no ``information_ratio``; its
    un-annualized ``excess_sharpe`` equals ``IR / sqrt(P)``.

    Examples
    --------
    >>> round(information_ratio(np.array([0.03, 0.01]), np.zeros(2), periods_per_year=1), 12)
    1.414213562373
    """
    x, b, w = with_benchmark(returns, benchmark)
    ppy = check_positive(periods_per_year, "periods_per_year")
    return w.wrap_reduced(run(active_risk_nb, x, b, ppy, 1)[1])


@overload
def stability_of_timeseries(returns: pd.Series) -> float: ...


@overload
def stability_of_timeseries(returns: pd.DataFrame) -> pd.Series: ...


@overload
def stability_of_timeseries(returns: np.ndarray) -> float | Float64Array: ...


def stability_of_timeseries(returns: ArrayOrFrame) -> Reduced:
    """Stability: R² of a linear fit to the cumulative log returns.

    Parameters
    ----------
    returns : ndarray, Series or DataFrame
        Simple returns, axis 0 time.

    Returns
    -------
    float, ndarray or Series
        One value per column, in [0, 1].

    Notes
    -----
    With :math:`y_i = \\sum_{s \\le i} \\ln(1 + r_s)` over the valid returns and
    :math:`x_i = i`,

    .. math:: \\text{stability} = \\operatorname{corr}(x, y)^2

    Fewer than 2 valid values or a flat :math:`y` (all returns 0): NaN
    (empyrical gives 0.0 for the latter). Otherwise equals
    ``empyrical.stability_of_timeseries``.

    Examples
    --------
    >>> round(stability_of_timeseries(np.full(10, 0.01)), 12)
    1.0
    """
    x, w = as_float64_2d(returns, "returns")
    return w.wrap_reduced(run(stability_nb, x))


@overload
def tail_ratio(returns: pd.Series) -> float: ...


@overload
def tail_ratio(returns: pd.DataFrame) -> pd.Series: ...


@overload
def tail_ratio(returns: np.ndarray) -> float | Float64Array: ...


def tail_ratio(returns: ArrayOrFrame) -> Reduced:
    """Tail ratio: size of the right tail over the left tail.

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
    .. math:: TR = \\frac{|Q_{0.95}(r)|}{|Q_{0.05}(r)|}

    with numpy's linear-interpolation percentiles of the valid values. Fewer
    than 2 valid values or :math:`Q_{0.05} = 0`: NaN. Otherwise equals
    ``empyrical.tail_ratio``.

    Examples
    --------
    >>> round(tail_ratio(np.linspace(-0.01, 0.02, 101)), 12)
    2.176470588235
    """
    x, w = as_float64_2d(returns, "returns")
    return w.wrap_reduced(run(tail_ratio_nb, x))


@overload
def summary(
    returns: pd.Series,
    benchmark: ArrayOrFrame | None = None,
    *,
    periods_per_year: float = ...,
    risk_free: float = ...,
    required_return: float = ...,
    level: float = ...,
    metrics: Sequence[str] | None = ...,
) -> pd.Series: ...


@overload
def summary(
    returns: pd.DataFrame,
    benchmark: ArrayOrFrame | None = None,
    *,
    periods_per_year: float = ...,
    risk_free: float = ...,
    required_return: float = ...,
    level: float = ...,
    metrics: Sequence[str] | None = ...,
) -> pd.DataFrame: ...


@overload
def summary(
    returns: np.ndarray,
    benchmark: ArrayOrFrame | None = None,
    *,
    periods_per_year: float = ...,
    risk_free: float = ...,
    required_return: float = ...,
    level: float = ...,
    metrics: Sequence[str] | None = ...,
) -> pd.Series | pd.DataFrame: ...


def summary(
    returns: ArrayOrFrame,
    benchmark: ArrayOrFrame | None = None,
    *,
    periods_per_year: float = 252,
    risk_free: float = 0.0,
    required_return: float = 0.0,
    level: float = 0.95,
    metrics: Sequence[str] | None = None,
) -> pd.Series | pd.DataFrame:
    """All the metrics in one table, computed in one fused pass per column.

    Parameters
    ----------
    returns : ndarray, Series or DataFrame
        Simple returns, axis 0 time.
    benchmark : ndarray, Series or DataFrame, optional
        Benchmark returns (see :func:`quantcore.risk.beta`); adds the rows
        ``beta``, ``alpha``, ``correlation``, ``tracking_error``, ``information_ratio``.
    periods_per_year : float, default 252
        Return periods per year.
    risk_free : float, default 0.0
        Risk-free return per period (Sharpe, Omega, alpha).
    required_return : float, default 0.0
        Per-period minimum acceptable return for Sortino; for Omega it is
        treated as annual, as :func:`omega_ratio` does.
    level : float, default 0.95
        Confidence level of the historical VaR and ES.
    metrics : sequence of str, optional
        Rows to compute, in the order given (default: all of
        :data:`SUMMARY_METRICS`, the benchmark rows only with a benchmark).
        Leaving out ``stability_of_timeseries`` and ``tail_ratio`` skips their
        extra passes.

    Returns
    -------
    Series or DataFrame
        For one series (1-D ndarray or Series): a Series indexed by metric name.
        For a panel: a DataFrame with one row per metric and one column per
        asset (the DataFrame's columns, or 0..k-1 for an ndarray).

    Notes
    -----
    Each row equals the function of the same name with the same options
    (``value_at_risk``/``expected_shortfall`` historical, ``volatility``
    with ddof=1), up to rounding (the variance comes from sums shifted by the
    first value, about 1e-13 relative). One read of each column compacts its
    valid values and accumulates growth, drawdown and moments; Sortino and
    Omega take one more pass over the compacted values when asked for; VaR
    and ES share one quickselect of the lower tail. Columns run in parallel.

    NaN and edge cases follow the single functions: NaNs are skipped, an
    all-NaN or empty column is all NaN, one valid value gives only the level
    rows (total return, CAGR, max drawdown, Calmar), and a zero denominator
    gives NaN, never ``inf``.

    Examples
    --------
    >>> r = np.array([0.01, -0.02, 0.015, 0.003, -0.004])
    >>> s = summary(r, metrics=["total_return", "max_drawdown"])
    >>> s.round(6).to_dict()
    {'total_return': 0.00363, 'max_drawdown': -0.02}
    """
    has_bench = benchmark is not None
    if has_bench:
        x, b, w = with_benchmark(returns, benchmark, "K")
        b = np.asfortranarray(b)  # the benchmark rows read benchmark columns
    else:
        x, w = as_float64_2d(returns, "returns", order="K")
        b = np.empty((x.shape[0], 0), order="F")
    names = SUMMARY_METRICS if has_bench else SUMMARY_ROWS
    if metrics is None:
        chosen = list(names)
    else:
        if isinstance(metrics, str):
            raise ValueError("metrics must be a sequence of metric names, not one string")
        chosen = list(metrics)
        unknown = [m for m in chosen if m not in names]
        if unknown:
            hint = " (the benchmark rows need a benchmark)" if not has_bench else ""
            raise ValueError(f"unknown metrics {unknown}{hint}; choose from {list(names)}")
    ppy = check_positive(periods_per_year, "periods_per_year")
    rf = check_finite(risk_free, "risk_free")
    req = check_finite(required_return, "required_return")
    _, q, cutoff, zt = level_tail(level)
    threshold = _omega_threshold(req, ppy)
    want = np.array([name in chosen for name in names], dtype=np.bool_)
    if x.shape[1] == 1:
        out = _summary_series(x, b, rf, req, threshold, ppy, q, cutoff, zt, want)
    else:
        out = run(summary_nb, x, b, rf, req, threshold, ppy, q, cutoff, zt, want)
    rows = [names.index(name) for name in chosen]
    table = out[rows]
    if w.is_1d:
        return pd.Series(table[:, 0], index=pd.Index(chosen), name=w.name)
    columns = w.columns if w.columns is not None else pd.RangeIndex(x.shape[1])
    return pd.DataFrame(table, index=pd.Index(chosen), columns=columns)

