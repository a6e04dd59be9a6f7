"""Several portfolios as one account: values and external flows summed, returns re-chained.

Each portfolio's daily value, inflow and outflow (from
:func:`quantcore.valuation.ledger_value_history`, in one currency and on one calendar)
are the columns of 2-D arrays; the account's daily time-weighted return uses the same
rule as one portfolio's, on the sums.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["AccountValues", "combine_accounts"]

F64 = NDArray[np.float64]


class AccountValues(NamedTuple):
    """Daily value, external flows and time-weighted returns of the combined account."""

    value: F64
    inflow: F64
    outflow: F64
    returns: F64


def combine_accounts(value: ArrayLike, inflow: ArrayLike, outflow: ArrayLike) -> AccountValues:
    """Sum portfolios (columns) into one account and chain its daily returns.

    Parameters
    ----------
    value, inflow, outflow : array_like of float, shape (n_days, n_portfolios)
        Each portfolio's end-of-day value, money put in at the start of the day and
        taken out at its end (a 1-D input is one portfolio). Days before a
        portfolio's first day should hold 0 value and 0 flows.

    Returns
    -------
    AccountValues
        ``value`` :math:`V_t = \\sum_j V_{t,j}` (NaN when any portfolio's is NaN),
        ``inflow`` :math:`B_t` and ``outflow`` :math:`W_t` likewise summed (NaN flows
        count as 0), and ``returns``
        :math:`r_t = (V_t + W_t) / (V_{t-1} + B_t) - 1` (:math:`V_{-1} = 0`), NaN
        where :math:`V_{t-1} + B_t \\le 0` (no capital at work) or the value is NaN.

    Notes
    -----
    A transfer between two portfolios recorded as a withdrawal from one and a
    deposit into the other is an outflow and an inflow of the account on the same
    day: it adds no gain, and the values are unchanged. On that day the amount is
    capital at work twice (in one portfolio until the day's end, in the other from
    its start), so the day's return is the gain over the capital plus the amount
    (``tests/unit/test_accounts.py``). The account's return is not a weighted mean
    of the portfolios' returns when flows happen; it is the return of the summed money.

    Examples
    --------
    Two portfolios, 100 each at the start; one gains 10 %, the other 0 %:

    >>> v = np.array([[100.0, 100.0], [110.0, 100.0]])
    >>> b = np.array([[100.0, 100.0], [0.0, 0.0]])
    >>> a = combine_accounts(v, b, np.zeros((2, 2)))
    >>> a.value
    array([200., 210.])
    >>> np.round(a.returns, 6)
    array([0.  , 0.05])
    """
    v = np.asarray(value, dtype=np.float64)
    v = v[:, None] if v.ndim == 1 else v
    b = np.nan_to_num(np.asarray(inflow, dtype=np.float64)).reshape(v.shape)
    w = np.nan_to_num(np.asarray(outflow, dtype=np.float64)).reshape(v.shape)
    total = v.sum(axis=1)
    put_in = b.sum(axis=1)
    taken = w.sum(axis=1)
    before = np.concatenate(([0.0], total[:-1])) + put_in
    with np.errstate(divide="ignore", invalid="ignore"):
        rets = np.where(before > 1e-9, (total + taken) / before - 1.0, np.nan)
    return AccountValues(total, put_in, taken, rets)
