"""Income over time: amounts summed by calendar month, quarter or year.

Arrays in, arrays out: the dates of the income rows and one column per kind of
income (dividends, interest ...); the finance service calls this with its ledger's
rows converted to the portfolio's base currency.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["GroupBy", "period_labels", "sum_by_period"]

GroupBy = Literal["month", "quarter", "year"]
_GROUPS = ("month", "quarter", "year")


def _keys(dates: NDArray[np.datetime64], group_by: str) -> NDArray[np.int64]:
    """An integer per date, equal within a period and increasing with time."""
    if group_by not in _GROUPS:
        raise ValueError(f"group_by must be one of {', '.join(_GROUPS)}, got {group_by!r}")
    months = dates.astype("datetime64[M]").astype(np.int64)  # months since 1970-01
    if group_by == "month":
        return months
    if group_by == "quarter":
        return months // 3
    return months // 12


def _label(key: int, group_by: str) -> str:
    if group_by == "month":
        return f"{1970 + key // 12:04d}-{key % 12 + 1:02d}"
    if group_by == "quarter":
        return f"{1970 + key // 4:04d}-Q{key % 4 + 1}"
    return f"{1970 + key:04d}"


def period_labels(dates: ArrayLike, *, group_by: GroupBy) -> NDArray[np.str_]:
    """The period each date falls in: ``"2024-03"``, ``"2024-Q1"`` or ``"2024"``.

    Parameters
    ----------
    dates : array_like of datetime64 (or ISO date strings)
    group_by : {"month", "quarter", "year"}

    Returns
    -------
    ndarray of str
        One label per date (empty input: an empty array).

    Examples
    --------
    >>> period_labels(np.array(["2024-03-15", "2024-11-30"], dtype="datetime64[D]"),
    ...               group_by="quarter").tolist()
    ['2024-Q1', '2024-Q4']
    """
    days = np.asarray(dates, dtype="datetime64[D]")
    keys = _keys(days, group_by)
    return np.array([_label(int(k), group_by) for k in keys], dtype=np.str_)


def sum_by_period(
    dates: ArrayLike,
    amounts: ArrayLike,
    *,
    group_by: GroupBy,
    span: tuple[np.datetime64 | str, np.datetime64 | str] | None = None,
) -> tuple[NDArray[np.str_], NDArray[np.float64]]:
    """Sum the columns of ``amounts`` per calendar month, quarter or year of ``dates``.

    Parameters
    ----------
    dates : array_like of datetime64, shape (n,)
        The day of each row, in any order.
    amounts : array_like of float, shape (n,) or (n, k)
        Per row, one amount per kind of income. NaN counts as 0.
    group_by : {"month", "quarter", "year"}
    span : (first, last) days, optional
        When given, every period from the one holding ``first`` to the one holding
        ``last`` is returned (periods without rows sum to 0) and rows outside those
        periods are left out. Without it, only the periods holding rows.

    Returns
    -------
    labels : ndarray of str, shape (m,)
        The periods, oldest first (``"2024-03"``, ``"2024-Q1"`` or ``"2024"``).
    sums : ndarray of float, shape (m, k) (or (m,) for 1-D ``amounts``)
        The sums per period; empty input gives ``m = 0``.

    Notes
    -----
    One ``np.unique`` over integer period keys and one ``np.add.at`` scatter: no
    loop over rows.

    Examples
    --------
    >>> days = np.array(["2024-01-05", "2024-03-31", "2024-04-01", "2025-02-01"],
    ...                 dtype="datetime64[D]")
    >>> labels, sums = sum_by_period(days, np.array([[1.0, 0.5], [2.0, 0.0],
    ...                                              [4.0, 0.25], [8.0, 0.0]]),
    ...                              group_by="quarter")
    >>> labels.tolist()
    ['2024-Q1', '2024-Q2', '2025-Q1']
    >>> sums
    array([[3.  , 0.5 ],
           [4.  , 0.25],
           [8.  , 0.  ]])
    >>> sum_by_period(days, np.array([1.0, 2.0, 4.0, 8.0]), group_by="month",
    ...               span=("2024-02-01", "2024-04-30"))
    (array(['2024-02', '2024-03', '2024-04'], dtype='<U7'), array([0., 2., 4.]))
    """
    days = np.asarray(dates, dtype="datetime64[D]")
    values = np.nan_to_num(np.asarray(amounts, dtype=np.float64))
    if values.shape[0] != days.shape[0]:
        raise ValueError(f"amounts has {values.shape[0]} rows, dates {days.shape[0]}")
    keys = _keys(days, group_by)
    if span is None:
        unique, inverse = np.unique(keys, return_inverse=True)
    else:
        lo, hi = _keys(np.array(span, dtype="datetime64[D]"), group_by).tolist()
        unique = np.arange(lo, max(lo, hi + 1), dtype=np.int64)
        inside = (keys >= lo) & (keys <= hi)
        keys, values = keys[inside], values[inside]
        inverse = keys - lo
    sums = np.zeros((unique.size, *values.shape[1:]), dtype=np.float64)
    np.add.at(sums, inverse.reshape(-1), values)
    labels = np.array([_label(int(k), group_by) for k in unique], dtype=np.str_)
    return labels, sums
