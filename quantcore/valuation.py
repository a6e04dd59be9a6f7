"""Portfolio value histories, time-weighted daily returns and concentration.

A ledger (buys, sells, dividends) valued on a calendar of closes: holdings, value,
flows and the daily time-weighted return; the calendar helpers the analytics need
(periods per year, the last row of each week or month, compounding between them);
and the weights of positions with their concentration (Herfindahl index, sums
per group). Arrays in, arrays out; the finance service calls these with its rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray

from quantcore.returns import money_weighted_return

__all__ = [
    "BUY",
    "DIVIDEND",
    "SELL",
    "LedgerValues",
    "group_weights",
    "herfindahl_index",
    "interval_returns",
    "ledger_value_history",
    "money_weighted",
    "period_ends",
    "periods_per_year",
    "position_weights",
]

F64 = NDArray[np.float64]

#: Kinds of ledger rows (``kind`` argument of :func:`ledger_value_history`).
BUY, SELL, DIVIDEND = 0, 1, 2


class LedgerValues(NamedTuple):
    """Daily value, flows, returns and holdings of a ledger on a calendar."""

    value: F64
    inflow: F64
    outflow: F64
    returns: F64
    holdings: F64  # (n_days, n_assets)


def ledger_value_history(
    day: NDArray[np.int64],
    column: NDArray[np.int64],
    kind: NDArray[np.int64],
    quantity: F64,
    price: F64,
    fees: F64,
    close: F64,
) -> LedgerValues:
    """Holdings x closes and time-weighted daily returns of a ledger.

    Parameters
    ----------
    day : ndarray of int
        Per ledger row, the calendar row it applies on (``0 .. n_days``; ``n_days``
        means after the calendar: ignored).
    column : ndarray of int
        Per row, the asset's column in ``close``.
    kind : ndarray of int
        Per row, :data:`BUY`, :data:`SELL` or :data:`DIVIDEND`.
    quantity, price, fees : ndarray of float
        Per row (a dividend's ``quantity x price`` is the amount received).
    close : ndarray of float, shape (n_days, n_assets)
        Closes on the calendar (carried forward over days an asset did not trade;
        NaN before its first close).

    Returns
    -------
    LedgerValues
        ``value``, ``inflow``, ``outflow`` and ``returns`` of length ``n_days``;
        ``holdings`` of the shape of ``close``.

    Notes
    -----
    With holdings :math:`q_{t,i}` (cumulative buys minus sells up to day *t*):

    * value :math:`V_t = \\sum_i q_{t,i} p_{t,i}` (NaN when a held asset has no close);
    * inflow :math:`B_t`: the day's buys at cost (quantity x price + fees),
      invested at the start of the day;
    * outflow :math:`W_t`: the day's sale proceeds and dividends (quantity x price -
      fees), withdrawn at the end of the day;
    * return :math:`r_t = (V_t + W_t) / (V_{t-1} + B_t) - 1`, NaN when
      :math:`V_{t-1} + B_t \\le 0` (no capital at work).

    The product of :math:`1 + r_t` is the time-weighted return: deposits and
    withdrawals are not gains; a dividend is income and counts as return. It equals
    :func:`quantcore.returns.time_weighted_return` on each day split in two
    sub-periods (values :math:`V_t + W_t` then :math:`V_t`, flows :math:`B_t` then
    :math:`-W_t`). Holdings below ``1e-12`` in magnitude count as none.

    Examples
    --------
    >>> close = np.array([[10.0], [11.0], [12.1]])
    >>> h = ledger_value_history(np.array([0]), np.array([0]), np.array([BUY]),
    ...                          np.array([2.0]), np.array([10.0]), np.array([0.0]), close)
    >>> h.value
    array([20. , 22. , 24.2])
    >>> np.round(h.returns, 6)
    array([0. , 0.1, 0.1])
    """
    close = np.asarray(close, dtype=np.float64)
    n, k = close.shape
    delta = np.zeros((n + 1, k))
    inflow = np.zeros(n + 1)
    outflow = np.zeros(n + 1)
    if len(day):
        idx = np.asarray(day, dtype=np.int64)
        j = np.asarray(column, dtype=np.int64)
        what = np.asarray(kind, dtype=np.int64)
        qty = np.asarray(quantity, dtype=np.float64)
        amount = qty * np.asarray(price, dtype=np.float64)
        cost = np.asarray(fees, dtype=np.float64)
        buy, sell, div = what == BUY, what == SELL, what == DIVIDEND
        np.add.at(delta, (idx[buy], j[buy]), qty[buy])
        np.add.at(delta, (idx[sell], j[sell]), -qty[sell])
        np.add.at(inflow, idx[buy], amount[buy] + cost[buy])
        np.add.at(outflow, idx[sell], amount[sell] - cost[sell])
        np.add.at(outflow, idx[div], amount[div] - cost[div])
    holdings = np.cumsum(delta[:n], axis=0)
    held = np.abs(holdings) > 1e-12
    priced = np.where(held, holdings * close, 0.0)
    value = priced.sum(axis=1)
    inflow, outflow = inflow[:n], outflow[:n]
    base = np.concatenate(([0.0], value[:-1])) + inflow
    with np.errstate(divide="ignore", invalid="ignore"):
        returns = np.where(base > 1e-9, (value + outflow) / base - 1.0, np.nan)
    return LedgerValues(value, inflow, outflow, returns, holdings)


def money_weighted(
    dates: NDArray[np.datetime64],
    inflow: F64,
    outflow: F64,
    final_value: float,
    *,
    opening_value: float = 0.0,
    opening_date: np.datetime64 | None = None,
) -> float:
    """Money-weighted return (XIRR, annual) of a stretch of a ledger's value history.

    Parameters
    ----------
    dates : ndarray of datetime64[D]
        The days of the stretch, increasing; the last is the valuation day.
    inflow, outflow : ndarray of float
        Per day, money put in (buys at cost) and taken out (sale proceeds and
        dividends), as :func:`ledger_value_history` gives them.
    final_value : float
        The holdings' value on the last day.
    opening_value, opening_date : float and datetime64, optional
        The value held before the stretch (the close of ``opening_date``), counted
        as money put in on that day; none by default.

    Returns
    -------
    float
        The annual rate of :func:`quantcore.returns.money_weighted_return` on those
        flows; NaN when no rate solves it (no money in, or one day only).

    Examples
    --------
    >>> days = np.array(["2024-01-02", "2025-01-01"], dtype="datetime64[D]")
    >>> round(money_weighted(days, np.array([100.0, 0.0]), np.zeros(2), 110.0), 6)
    0.1
    """
    flows = np.asarray(inflow, dtype=np.float64) - np.asarray(outflow, dtype=np.float64)
    days = np.asarray(dates, dtype="datetime64[D]")
    if opening_value and opening_date is not None:
        days = np.concatenate((np.array([opening_date], dtype="datetime64[D]"), days))
        flows = np.concatenate(([float(opening_value)], flows))
    if days.size < 2 or not (flows > 0).any():
        return float("nan")
    try:
        return float(money_weighted_return(days, flows, float(final_value)))
    except ValueError:  # no rate solves these flows
        return float("nan")


def periods_per_year(dates: NDArray[np.datetime64]) -> float:
    """Trading periods per year of a daily calendar.

    Parameters
    ----------
    dates : ndarray of datetime64[D]

    Returns
    -------
    float
        365 when the calendar has a Saturday or Sunday (crypto trades every day),
        else 252. Empty input gives 252.

    Examples
    --------
    >>> periods_per_year(np.array(["2024-01-05", "2024-01-08"], dtype="datetime64[D]"))
    252.0
    """
    days = np.asarray(dates, dtype="datetime64[D]").astype(np.int64)
    weekday = (days + 3) % 7  # 1970-01-01 was a Thursday; 5, 6 = Saturday, Sunday
    return 365.0 if bool((weekday >= 5).any()) else 252.0


def period_ends(
    dates: NDArray[np.datetime64], interval: Literal["1d", "1w", "1m"]
) -> NDArray[np.intp]:
    """Row indices of the last day of each interval of a sorted daily calendar.

    Parameters
    ----------
    dates : ndarray of datetime64[D]
        Sorted.
    interval : {"1d", "1w", "1m"}
        Every row; the last row of each week (weeks end on Sunday); of each month.

    Returns
    -------
    ndarray of intp
        Increasing indices; the last row is always included. Empty input gives empty.

    Examples
    --------
    >>> d = np.array(["2024-01-30", "2024-01-31", "2024-02-01"], dtype="datetime64[D]")
    >>> period_ends(d, "1m")
    array([1, 2])
    """
    dates = np.asarray(dates, dtype="datetime64[D]")
    if interval == "1d" or dates.size == 0:
        return np.arange(dates.size)
    if interval == "1w":  # Monday-based week numbers
        key = (dates.astype(np.int64) + 3) // 7
    else:
        key = dates.astype("datetime64[M]").astype(np.int64)
    last = np.flatnonzero(np.diff(key) != 0)
    return np.concatenate((last, [dates.size - 1])).astype(np.intp)


def interval_returns(cumulative: F64, ends: NDArray[np.intp]) -> F64:
    """Compounded returns between consecutive ``ends`` of a cumulative return series.

    Parameters
    ----------
    cumulative : ndarray of float
        Cumulative returns (0 at the start, :func:`quantcore.returns.cumulative_returns`).
    ends : ndarray of int
        Increasing row indices (:func:`period_ends`).

    Returns
    -------
    ndarray of float
        Per end, :math:`(1 + c_{e_n}) / (1 + c_{e_{n-1}}) - 1`, the first against
        the start (growth 1).

    Examples
    --------
    >>> interval_returns(np.array([0.1, 0.21, 0.331]), np.array([0, 2]))
    array([0.1 , 0.21])
    """
    growth = 1.0 + np.asarray(cumulative, dtype=np.float64)[ends]
    prev = np.concatenate(([1.0], growth[:-1]))
    with np.errstate(divide="ignore", invalid="ignore"):
        return growth / prev - 1.0


def position_weights(values: F64) -> tuple[float, F64]:
    """Total value and each position's weight in it.

    Parameters
    ----------
    values : ndarray of float
        Market values (NaN: no price, left out of the total).

    Returns
    -------
    (float, ndarray of float)
        The total (NaN-ignoring sum) and ``values / total``; every weight is NaN
        when the total is not positive.

    Examples
    --------
    >>> position_weights(np.array([30.0, 10.0, np.nan]))
    (40.0, array([0.75, 0.25,  nan]))
    """
    v = np.asarray(values, dtype=np.float64)
    total = float(np.nansum(v))
    if total <= 0:
        return total, np.full(v.shape, np.nan)
    return total, v / total


def herfindahl_index(weights: F64) -> float:
    """Concentration: the sum of squared weights (NaN weights left out).

    Parameters
    ----------
    weights : ndarray of float

    Returns
    -------
    float
        :math:`H = \\sum_i w_i^2`: 1 for one position, :math:`1/n` for *n* equal
        ones; NaN when no weight is finite.

    Examples
    --------
    >>> herfindahl_index(np.array([0.5, 0.5]))
    0.5
    """
    w = np.asarray(weights, dtype=np.float64)
    finite = np.isfinite(w)
    return float(np.sum(w[finite] ** 2)) if finite.any() else float("nan")


def group_weights(
    keys: Sequence[str], weights: F64, *, empty: str = "Unclassified"
) -> dict[str, float]:
    """Weights summed per group, largest first.

    Parameters
    ----------
    keys : sequence of str
        Per position, its group (an empty key is ``empty``).
    weights : ndarray of float
        Per position (NaN weights left out).
    empty : str
        The name of the group of empty keys.

    Returns
    -------
    dict
        Group -> summed weight, in decreasing weight (ties in first-seen order).

    Examples
    --------
    >>> group_weights(["Tech", "", "Tech"], np.array([0.2, 0.3, 0.5]))
    {'Tech': 0.7, 'Unclassified': 0.3}
    """
    out: dict[str, float] = {}
    for key, w in zip(keys, np.asarray(weights, dtype=np.float64).tolist(), strict=True):
        if np.isfinite(w):
            name = key or empty
            out[name] = out.get(name, 0.0) + w
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))
