"""Portfolio value histories, time-weighted daily returns and concentration.

A ledger (buys, sells, dividends; deposits, withdrawals, interest, fees) valued on a
calendar of closes and exchange rates: holdings, cash, value, external flows and the
daily time-weighted return; the calendar helpers the analytics need (periods per
year, the last row of each week or month, compounding between them); and the weights
of positions with their concentration (Herfindahl index, sums per group). Arrays in,
arrays out; the finance service calls these with its rows.

Deprecated: ``periods_per_year`` (now :func:`infer_periods_per_year`, as
``periods_per_year`` is every function's keyword) and ``money_weighted`` (now
:func:`ledger_money_weighted_return`) still work and warn with a
``DeprecationWarning``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from quantcore._deprecation import deprecated_aliases
from quantcore.returns import money_weighted_return

__all__ = [
    "BUY",
    "DEPOSIT",
    "DIVIDEND",
    "FEE",
    "INTEREST",
    "SELL",
    "WITHDRAWAL",
    "LedgerValues",
    "cash_amounts",
    "group_weights",
    "herfindahl_index",
    "infer_periods_per_year",
    "interval_returns",
    "ledger_money_weighted_return",
    "ledger_value_history",
    "period_ends",
    "position_weights",
]

#: Renamed: ``periods_per_year`` was also every function's keyword, ``money_weighted``
#: a second name for the money-weighted return. The old names warn (DeprecationWarning).
__getattr__ = deprecated_aliases(
    __name__,
    {
        "money_weighted": "quantcore.valuation.ledger_money_weighted_return",
        "periods_per_year": "quantcore.valuation.infer_periods_per_year",
    },
)

F64 = NDArray[np.float64]

#: Kinds of ledger rows (``kind`` argument of :func:`ledger_value_history`): security rows.
BUY, SELL, DIVIDEND = 0, 1, 2
#: Cash rows (no asset; ``price`` is the amount).
DEPOSIT, WITHDRAWAL, INTEREST, FEE = 3, 4, 5, 6
#: Rows whose cash moves at the start of the day (money put in, money spent); the
#: others (proceeds, income, withdrawals) move at its end.
_AT_OPEN = (DEPOSIT, BUY, FEE)


class LedgerValues(NamedTuple):
    """Daily value, external flows, returns, holdings and cash of a ledger on a calendar."""

    value: F64
    inflow: F64
    outflow: F64
    returns: F64
    holdings: F64  # (n_days, n_assets)
    cash: F64  # (n_days, n_currencies): end-of-day balance, in each currency


def cash_amounts(kind: ArrayLike, quantity: ArrayLike, price: ArrayLike, fees: ArrayLike) -> F64:
    """The cash each ledger row moves, in its own currency (received positive).

    Parameters
    ----------
    kind : ndarray of int
        Per row, :data:`BUY`, :data:`SELL`, :data:`DIVIDEND`, :data:`DEPOSIT`,
        :data:`WITHDRAWAL`, :data:`INTEREST` or :data:`FEE` (any other value moves none).
    quantity, price, fees : ndarray of float
        Per row; a cash row's ``price`` is its amount (its ``quantity`` is not read).

    Returns
    -------
    ndarray of float
        ``-(q p + f)`` for a buy; ``q p - f`` for a sale or dividend; ``p - f`` for a
        deposit or interest; ``-(p + f)`` for a withdrawal; ``-p`` for a fee; 0 else.
        The rule :func:`quantcore.cash.cash_flows` applies (through ``row_amounts``).

    Examples
    --------
    >>> cash_amounts(np.array([DEPOSIT, BUY, FEE]), np.array([1.0, 10.0, 1.0]),
    ...              np.array([1000.0, 90.0, 5.0]), np.array([0.0, 1.0, 0.0]))
    array([1000., -901.,   -5.])
    """
    what = np.asarray(kind, dtype=np.int64)
    q = np.asarray(quantity, dtype=np.float64)
    p = np.asarray(price, dtype=np.float64)
    f = np.asarray(fees, dtype=np.float64)
    with np.errstate(invalid="ignore"):  # a cash row's quantity may be NaN: never selected
        return np.select(
            [
                what == BUY,
                (what == SELL) | (what == DIVIDEND),
                (what == DEPOSIT) | (what == INTEREST),
                what == WITHDRAWAL,
                what == FEE,
            ],
            [-(q * p + f), q * p - f, p - f, -(p + f), -p],
            0.0,
        ).astype(np.float64)


def _in_base(amounts: F64, rates: F64) -> F64:
    """Per day, the sum over currencies of ``amounts x rates`` (a zero amount counts as
    zero even where its rate is unknown)."""
    with np.errstate(invalid="ignore"):
        total: F64 = np.where(amounts != 0.0, amounts * rates, 0.0).sum(axis=1)
    return total


def ledger_value_history(
    day: NDArray[np.int64],
    column: NDArray[np.int64],
    kind: NDArray[np.int64],
    quantity: F64,
    price: F64,
    fees: F64,
    close: F64,
    *,
    currency: NDArray[np.int64] | None = None,
    rates: F64 | None = None,
    asset_currency: NDArray[np.int64] | None = None,
) -> LedgerValues:
    """Securities and cash in the base currency, external flows and time-weighted daily returns.

    Parameters
    ----------
    day : ndarray of int
        Per ledger row, the calendar row it applies on (``0 .. n_days``; ``n_days``
        means after the calendar: ignored).
    column : ndarray of int
        Per security row, the asset's column in ``close`` (not read on cash rows).
    kind : ndarray of int
        Per row, :data:`BUY`, :data:`SELL`, :data:`DIVIDEND` (security rows) or
        :data:`DEPOSIT`, :data:`WITHDRAWAL`, :data:`INTEREST`, :data:`FEE` (cash rows);
        any other value is ignored.
    quantity, price, fees : ndarray of float
        Per row (a dividend's ``quantity x price`` is the amount received; a cash
        row's ``price`` is its amount).
    close : ndarray of float, shape (n_days, n_assets)
        Closes on the calendar, each in its asset's currency (carried forward over days
        an asset did not trade; NaN before its first close).
    currency : ndarray of int, optional
        Per row, the column of ``rates`` of the currency its cash moves in. Default: a
        security row's asset's (``asset_currency[column]``), column 0 for a cash row.
    rates : ndarray of float, shape (n_days, n_currencies), optional
        Per day, the price of one unit of each currency in the base currency (1.0 for
        the base itself; NaN: unknown). Default: one currency, the base (all 1.0).
    asset_currency : ndarray of int, optional
        Per asset, the column of ``rates`` its closes are in (default 0).

    Returns
    -------
    LedgerValues
        ``value``, ``inflow``, ``outflow`` and ``returns`` of length ``n_days``
        (amounts in the base currency); ``holdings`` of the shape of ``close``;
        ``cash`` (n_days, n_currencies), each currency's end-of-day balance in that
        currency (negative where spent before it was put in).

    Notes
    -----
    Holdings :math:`q_{t,i}` are cumulative buys minus sells up to day *t*. Each row
    moves cash (:func:`cash_amounts`) in its currency *c*: at the start of the day
    deposits, buys and fees; at its end sale proceeds, dividends, interest and
    withdrawals. :math:`C_{t,c}` is the balance at the end of day *t* and
    :math:`C^o_{t,c}` after the start-of-day rows. A negative balance is money
    spent that was never recorded as put in (a ledger of buys only); it counts as put
    in from outside when it arises. With the shortfalls :math:`S = \\max(0, -C)`,
    :math:`S^o = \\max(0, -C^o)` and the rates :math:`x_{t,c}`:

    * value :math:`V_t = \\sum_i q_{t,i} p_{t,i} x_{t,c(i)} + \\sum_c \\max(C_{t,c}, 0) x_{t,c}`
      (NaN when a held asset or a positive balance has no price or rate);
    * inflow :math:`B_t = \\sum_c (D_{t,c} + S^o_{t,c} - S_{t-1,c}) x_{t,c}`, deposits
      :math:`D` (their ``price``) and the shortfall that arose at the open, invested
      at the start of the day;
    * outflow :math:`W_t = \\sum_c (X_{t,c} + S^o_{t,c} - S_{t,c}) x_{t,c}`,
      withdrawals :math:`X` (their ``price``) and the shortfall that cash received
      repaid, taken out at the end of the day;
    * return :math:`r_t = (V_t + W_t) / (V_{t-1} + B_t) - 1`, NaN when
      :math:`V_{t-1} + B_t \\le 0` (no capital at work).

    The product of :math:`1 + r_t` is the time-weighted return: a deposit or a
    withdrawal is never a gain or a loss; interest and dividends are income, fees
    (a fee row, or the fees of a deposit or withdrawal) a cost; idle cash earns 0.
    Each day's gain :math:`V_t + W_t - V_{t-1} - B_t` is the change of the securities
    plus the portfolio's own cash moves, whatever was deposited. For a ledger without
    cash rows whose cash never ends a day above zero, :math:`B_t` is the day's buys at
    cost and :math:`W_t` its proceeds and dividends, the implicit-cash model (each buy
    money put in, each proceed money taken out). The chained returns equal
    :func:`quantcore.returns.time_weighted_return` on each day split in two
    sub-periods (values :math:`V_t + W_t` then :math:`V_t`, flows :math:`B_t` then
    :math:`-W_t`). Holdings below ``1e-12`` in magnitude count as none. A shortfall
    is kept in its currency: a foreign buy paid from outside is money put in at that
    day's rate, and the rate's later moves are the holding's, not a flow.

    Examples
    --------
    >>> close = np.array([[10.0], [11.0], [12.1]])
    >>> h = ledger_value_history(np.array([0]), np.array([0]), np.array([BUY]),
    ...                          np.array([2.0]), np.array([10.0]), np.array([0.0]), close)
    >>> h.value
    array([20. , 22. , 24.2])
    >>> np.round(h.returns, 6)
    array([0. , 0.1, 0.1])

    A deposit of 100, half of it invested: the cash earns nothing.

    >>> h = ledger_value_history(np.array([0, 0]), np.array([0, 0]),
    ...                          np.array([DEPOSIT, BUY]), np.array([1.0, 5.0]),
    ...                          np.array([100.0, 10.0]), np.zeros(2), close)
    >>> h.value
    array([100. , 105. , 110.5])
    >>> h.inflow
    array([100.,   0.,   0.])
    >>> np.round(h.returns, 6)
    array([0.      , 0.05    , 0.052381])
    """
    close = np.asarray(close, dtype=np.float64)
    n, k = close.shape
    fx = np.ones((n, 1)) if rates is None else np.asarray(rates, dtype=np.float64)
    fx = fx[:, None] if fx.ndim == 1 else fx
    m = fx.shape[1]
    of_asset = (
        np.zeros(k, np.int64) if asset_currency is None else np.asarray(asset_currency, np.int64)
    )
    delta = np.zeros((n + 1, k))
    opens, closes, put_in, taken = (np.zeros((n + 1, m)) for _ in range(4))
    if len(day):
        idx = np.asarray(day, dtype=np.int64)
        what = np.asarray(kind, dtype=np.int64)
        qty = np.asarray(quantity, dtype=np.float64)
        px = np.asarray(price, dtype=np.float64)
        security = (what == BUY) | (what == SELL) | (what == DIVIDEND)
        j = np.where(security, np.asarray(column, dtype=np.int64), k)  # k: no asset
        buy, sell = what == BUY, what == SELL
        np.add.at(delta, (idx[buy], j[buy]), qty[buy])
        np.add.at(delta, (idx[sell], j[sell]), -qty[sell])
        if currency is None:
            cur = np.append(of_asset, 0)[j]
        else:
            cur = np.asarray(currency, dtype=np.int64)
        amount = cash_amounts(what, qty, px, fees)
        at_open = np.isin(what, _AT_OPEN)
        np.add.at(opens, (idx[at_open], cur[at_open]), amount[at_open])
        np.add.at(closes, (idx[~at_open], cur[~at_open]), amount[~at_open])
        dep, wd = what == DEPOSIT, what == WITHDRAWAL
        np.add.at(put_in, (idx[dep], cur[dep]), px[dep])
        np.add.at(taken, (idx[wd], cur[wd]), px[wd])
    opens, closes, put_in, taken = opens[:n], closes[:n], put_in[:n], taken[:n]
    balance = np.cumsum(opens + closes, axis=0)  # end of day, per currency
    short = np.maximum(-balance, 0.0)
    short_open = np.maximum(-(balance - closes), 0.0)  # after the day's start-of-day rows
    short_before = np.concatenate((np.zeros((min(n, 1), m)), short[:-1]))
    inflow = _in_base(put_in + short_open - short_before, fx)
    outflow = _in_base(taken + short_open - short, fx)
    holdings = np.cumsum(delta[:n], axis=0)
    held = np.abs(holdings) > 1e-12
    with np.errstate(invalid="ignore"):
        priced = np.where(held, holdings * close * fx[:, of_asset], 0.0)
    value = priced.sum(axis=1) + _in_base(np.maximum(balance, 0.0), fx)
    base = np.concatenate(([0.0], value[:-1])) + inflow
    with np.errstate(divide="ignore", invalid="ignore"):
        returns = np.where(base > 1e-9, (value + outflow) / base - 1.0, np.nan)
    return LedgerValues(value, inflow, outflow, returns, holdings, balance)


def ledger_money_weighted_return(
    dates: NDArray[np.datetime64],
    inflow: F64,
    outflow: F64,
    final_value: float,
    *,
    opening_value: float = 0.0,
    opening_date: np.datetime64 | None = None,
) -> float:
    """:func:`quantcore.returns.money_weighted_return` of a stretch of a ledger's value history.

    The one money-weighted return is :func:`quantcore.returns.money_weighted_return`;
    this function only turns a ledger stretch into its flows (the opening value put
    in on its eve, each day's inflow in and outflow out) and gives NaN, not an error,
    when no rate solves them.

    Parameters
    ----------
    dates : ndarray of datetime64[D]
        The days of the stretch, increasing; the last is the valuation day.
    inflow, outflow : ndarray of float
        Per day, money put in and taken out from outside (deposits and withdrawals,
        and cash spent or received beyond what was put in), as
        :func:`ledger_value_history` gives them.
    final_value : float
        The portfolio's value (securities and cash) on the last day.
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
    >>> round(ledger_money_weighted_return(days, np.array([100.0, 0.0]), np.zeros(2), 110.0), 6)
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


def infer_periods_per_year(dates: NDArray[np.datetime64]) -> float:
    """Trading periods per year of a daily calendar (the ``periods_per_year`` option's value).

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
    >>> infer_periods_per_year(np.array(["2024-01-05", "2024-01-08"], dtype="datetime64[D]"))
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
