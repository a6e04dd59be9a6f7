"""Drawdowns: how far the wealth index sits below its running peak.

The wealth index of a return series starts at 1 (the capital before the first
return) and compounds the valid returns; NaN returns are skipped. Drawdowns are
negative fractions in [-1, 0].
"""

from __future__ import annotations

from typing import cast, overload

import numpy as np
import pandas as pd

from quantcore._kernels.drawdown import drawdown_periods_nb, drawdown_series_nb, max_drawdown_nb
from quantcore._parallel import run
from quantcore._records import drawdown_dt
from quantcore._typing import ArrayOrFrame, Float64Array, Reduced, T
from quantcore._validation import as_float64_2d

__all__ = ["drawdown_periods", "drawdown_series", "max_drawdown"]


def drawdown_series(returns: T) -> T:
    """Drawdown from the running peak at each row.

    Parameters
    ----------
    returns : ndarray, Series or DataFrame
        Simple returns, axis 0 time.

    Returns
    -------
    ndarray, Series or DataFrame
        Same shape and kind as ``returns``, values in [-1, 0].

    Notes
    -----
    .. math::

        W_t = \\prod_{s \\le t} (1 + r_s), \\qquad
        DD_t = \\frac{W_t}{\\max(1, \\max_{s \\le t} W_s)} - 1

    The running peak includes the starting capital 1, so a first return of -5 %
    is a 5 % drawdown. NaN returns are skipped and give NaN on their rows. On
    the non-NaN rows this equals ``empyrical.drawdown_series``.

    Examples
    --------
    >>> drawdown_series(np.array([0.1, -0.5, 1.0]))
    array([ 0. , -0.5,  0. ])
    """
    x, w = as_float64_2d(returns, "returns")
    return cast(T, w.wrap(run(drawdown_series_nb, x)))


@overload
def max_drawdown(returns: pd.Series) -> float: ...


@overload
def max_drawdown(returns: pd.DataFrame) -> pd.Series: ...


@overload
def max_drawdown(returns: np.ndarray) -> float | Float64Array: ...


def max_drawdown(returns: ArrayOrFrame) -> Reduced:
    """Maximum drawdown: the worst peak-to-trough loss.

    Parameters
    ----------
    returns : ndarray, Series or DataFrame
        Simple returns, axis 0 time.

    Returns
    -------
    float, ndarray or Series
        One value per column in [-1, 0] (0 if the wealth never falls).

    Notes
    -----
    .. math:: MDD = \\min_t DD_t

    with :math:`DD_t` as in :func:`drawdown_series`. NaNs skipped; empty input
    or an all-NaN column: NaN. Equals ``empyrical.max_drawdown``.

    Examples
    --------
    >>> round(max_drawdown(np.array([0.1, -0.5, 1.0, -0.1])), 12)
    -0.5
    """
    x, w = as_float64_2d(returns, "returns", order="K")
    return w.wrap_reduced(run(max_drawdown_nb, x))


def drawdown_periods(returns: ArrayOrFrame) -> np.ndarray:
    """Every drawdown period, from its peak through its valley to its recovery.

    Parameters
    ----------
    returns : ndarray, Series or DataFrame
        Simple returns, axis 0 time.

    Returns
    -------
    ndarray of :data:`quantcore._records.drawdown_dt`
        One record per period, ordered by column then time, with fields

        - ``column``: column position (0 for a series);
        - ``peak``: row of the high-water mark the period falls from. When the
          drawdown starts on the first valid return the peak is the starting
          capital, placed on the row before it (-1 if that is row 0: for
          returns built from prices, row 0 is the first price);
        - ``valley``: row of the lowest wealth in the period;
        - ``recovery``: first row back at or above the peak, -1 if the period
          is still open at the end;
        - ``depth``: :math:`W_{valley} / W_{peak} - 1`, in [-1, 0);
        - ``duration``: rows from peak to recovery (to the last valid row if open).

        Positions are on axis 0 of the input: for pandas inputs map them with
        ``returns.index[rec["valley"]]``.

    Notes
    -----
    A period opens when the wealth index falls below its running maximum and
    closes when it gets back to it. NaN returns are skipped. The minimum of
    ``depth`` over a column equals :func:`max_drawdown` when there is a drawdown.

    Examples
    --------
    >>> rec = drawdown_periods(np.array([0.1, -0.5, 1.0, -0.1]))
    >>> rec[["peak", "valley", "recovery", "duration"]].tolist()
    [(0, 1, 2, 2), (2, 3, -1, 1)]
    >>> rec["depth"].round(12).tolist()
    [-0.5, -0.1]
    """
    x, _ = as_float64_2d(returns, "returns")
    ints, depth = run(drawdown_periods_nb, x)
    out = np.empty(ints.shape[0], dtype=drawdown_dt)
    out["column"] = ints[:, 0]
    out["peak"] = ints[:, 1]
    out["valley"] = ints[:, 2]
    out["recovery"] = ints[:, 3]
    out["depth"] = depth
    out["duration"] = ints[:, 4]
    return out
