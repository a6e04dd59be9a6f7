"""Portfolio valuation: mark positions to market and total them per portfolio.

Positions are given as flat columns (one entry per position, any number of
portfolios at once); ``group[i]`` says which portfolio position *i* belongs to.
Everything is one pass over the positions, so valuing 20 portfolios of 10
positions costs about as much as valuing one of 200.

A position without a price (``NaN``) has ``NaN`` marks and counts as zero in
the portfolio totals (it still counts in ``position_count``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from quantcore._kernels.portfolio import mark_nb, totals_nb
from quantcore._validation import as_float64_1d
from quantcore.tax import SCALE, match_lots

__all__ = [
    "PortfolioTotals",
    "PositionMarks",
    "corporate_action_flows",
    "ledger_holdings",
    "ledger_positions",
    "mark_positions",
    "portfolio_totals",
]

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]


class PositionMarks(NamedTuple):
    """Per-position marks (all arrays of the positions' length)."""

    value: F64
    gain: F64
    gain_percent: F64
    daily_change: F64


class PortfolioTotals(NamedTuple):
    """Per-portfolio totals (all arrays of length ``n_groups``)."""

    total_value: F64
    daily_change: F64
    daily_change_percent: F64
    position_count: I64


def _same_length(arrays: dict[str, np.ndarray]) -> None:
    lengths = {name: a.shape[0] for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"position columns must have the same length, got {lengths}")


def mark_positions(
    quantity: Any,
    cost_basis: Any,
    price: Any,
    change: Any,
    new_quantity: Any = None,
    new_cost: Any = None,
    rate: Any = None,
    previous_rate: Any = None,
) -> PositionMarks:
    """Mark positions to market, in a base currency when given exchange rates.

    Parameters
    ----------
    quantity : array_like
        Quantity held of each position.
    cost_basis : array_like
        Total cost of each position (quantity times average cost, fees included).
    price : array_like
        Last price of each position's asset; ``NaN`` when unknown.
    change : array_like
        Price change since the previous close; ``NaN`` when unknown.
    new_quantity, new_cost : array_like, optional
        Shares of each position bought since the previous close, and what they
        cost (fees included); zeros when omitted. They were not held at the close,
        so they add ``value - cost`` to the daily change, not ``quantity x change``.
        Negative shares (at no cost) are shares held at the close that a reverse
        split has since merged away.
    rate, previous_rate : array_like, optional
        Price of one unit of each position's currency in the base currency, now and
        at the previous close (ones when omitted: no conversion). Prices, changes and
        costs are in the position's currency; the marks come out in the base currency,
        the cost converted at ``rate`` (the gain is the price gain at today's rate).

    Returns
    -------
    PositionMarks
        ``value``, ``gain``, ``gain_percent`` and ``daily_change`` arrays.

    Raises
    ------
    ValueError
        If the columns are not one-dimensional or differ in length.

    Notes
    -----
    For position *i* with quantity :math:`q_i`, cost basis :math:`C_i`, price
    :math:`p_i` and change :math:`\\Delta_i`:

    .. math::

        V_i = q_i p_i, \\qquad G_i = V_i - C_i, \\qquad
        G^{\\%}_i = 100\\, G_i / C_i \\ (C_i > 0,\\ \\text{else NaN}), \\qquad
        D_i = (q_i - n_i) \\Delta_i + (n_i p_i - c_i)

    in the position's currency (rates 1). With rates :math:`x_i` now and
    :math:`x'_i` at the previous close, :math:`V_i = q_i p_i x_i`, :math:`G_i = V_i - C_i x_i`
    and the change of the shares held at the close is
    :math:`p_i x_i - (p_i - \\Delta_i) x'_i` per share (price and currency move together).

    with :math:`n_i \\le q_i` shares bought since the previous close at cost :math:`c_i`
    (a split since the close adds :math:`q_i (1 - 1/r)` shares at no cost: negative for
    a reverse split, so the change is :math:`q_i p_i - (q_i / r)\\,p^{\\text{close}}_i`).

    Examples
    --------
    >>> m = mark_positions([10.0, 2.0], [900.0, 0.0], [100.0, np.nan], [1.5, np.nan])
    >>> m.value
    array([1000.,   nan])
    >>> m.gain, m.gain_percent
    (array([100.,  nan]), array([11.11111111,         nan]))
    >>> m.daily_change
    array([15., nan])

    Bought today, 4 of 10 shares at 99 (fees 1): they add 4 x 100 - 397, not 4 x 1.5:

    >>> mark_positions([10.0], [1297.0], [100.0], [1.5], [4.0], [397.0]).daily_change
    array([12.])

    A euro stock in a dollar portfolio: 10 shares at 100 EUR, EURUSD 1.10 (1.08 at the
    previous close, when the price was 98):

    >>> m = mark_positions([10.0], [900.0], [100.0], [2.0], rate=[1.10], previous_rate=[1.08])
    >>> m.value, m.gain, np.round(m.daily_change, 6)
    (array([1100.]), array([110.]), array([41.6]))
    """
    q, _ = as_float64_1d(quantity, "quantity")
    c, _ = as_float64_1d(cost_basis, "cost_basis")
    p, _ = as_float64_1d(price, "price")
    d, _ = as_float64_1d(change, "change")
    nq = np.zeros_like(q) if new_quantity is None else as_float64_1d(new_quantity, "new_quantity")[0]
    nc = np.zeros_like(q) if new_cost is None else as_float64_1d(new_cost, "new_cost")[0]
    r = np.ones_like(q) if rate is None else as_float64_1d(rate, "rate")[0]
    r0 = r if previous_rate is None else as_float64_1d(previous_rate, "previous_rate")[0]
    _same_length(
        {"quantity": q, "cost_basis": c, "price": p, "change": d, "new_quantity": nq,
         "new_cost": nc, "rate": r, "previous_rate": r0}
    )  # fmt: skip
    return PositionMarks(*mark_nb(q, c, p, d, nq, nc, r, r0))


def portfolio_totals(
    group: Any,
    n_groups: int,
    marks: PositionMarks,
    cash_value: Any = None,
    cash_change: Any = None,
) -> PortfolioTotals:
    """Total position marks per portfolio, with each portfolio's cash.

    Parameters
    ----------
    group : array_like of int
        Portfolio index (``0 <= group[i] < n_groups``) of each position.
    n_groups : int
        Number of portfolios; portfolios without positions get zeros.
    marks : PositionMarks
        Output of :func:`mark_positions` for the same positions.
    cash_value, cash_change : array_like, optional
        Per portfolio, its cash (in the currency of the marks; may be negative) and
        the day's change of that cash's value (from exchange rates); zeros when omitted.
        Cash adds to the total value and the daily change, not to the position count.

    Returns
    -------
    PortfolioTotals
        ``total_value``, ``daily_change``, ``daily_change_percent`` and
        ``position_count``, one entry per portfolio.

    Raises
    ------
    ValueError
        If ``group`` is not integer, is out of range or does not match ``marks``.

    Notes
    -----
    With :math:`V_i` and :math:`D_i` from :func:`mark_positions` (NaN counted as 0):

    .. math::

        T_k = M_k + \\sum_{i:\\,g_i = k} V_i, \\qquad
        D_k = \\Delta M_k + \\sum_{i:\\,g_i = k} D_i, \\qquad
        D^{\\%}_k = 100\\, \\frac{D_k}{T_k - D_k} \\ (T_k - D_k > 0,\\ \\text{else } 0)

    with cash :math:`M_k` and its change :math:`\\Delta M_k`. :math:`T_k - D_k` is the
    portfolio's value at the previous close.

    Examples
    --------
    >>> m = mark_positions([10.0, 5.0, 1.0], [900.0, 450.0, 10.0],
    ...                    [100.0, 100.0, np.nan], [2.0, -1.0, np.nan])
    >>> t = portfolio_totals([0, 0, 2], 3, m)
    >>> t.total_value, t.daily_change, t.position_count
    (array([1500.,    0.,    0.]), array([15.,  0.,  0.]), array([2, 0, 1]))
    >>> round(float(t.daily_change_percent[0]), 6)  # 15 / 1485
    1.010101
    """
    g = np.asarray(group)
    if g.ndim != 1 or (g.size and not np.issubdtype(g.dtype, np.integer)):
        raise ValueError("group must be a one-dimensional integer array")
    n = int(n_groups)
    if n < 0:
        raise ValueError(f"n_groups must be >= 0, got {n_groups}")
    if g.size and (int(g.min()) < 0 or int(g.max()) >= n):
        raise ValueError(f"group values must lie in [0, n_groups={n})")
    if g.shape[0] != marks.value.shape[0]:
        raise ValueError(
            f"group has {g.shape[0]} entries but marks cover {marks.value.shape[0]} positions"
        )
    value = np.ascontiguousarray(marks.value, dtype=np.float64)
    daily = np.ascontiguousarray(marks.daily_change, dtype=np.float64)
    cash = np.zeros(n) if cash_value is None else as_float64_1d(cash_value, "cash_value")[0]
    moved = np.zeros(n) if cash_change is None else as_float64_1d(cash_change, "cash_change")[0]
    if cash.shape[0] != n or moved.shape[0] != n:
        raise ValueError(f"cash_value and cash_change must have n_groups={n} entries")
    return PortfolioTotals(
        *totals_nb(g.astype(np.int64, copy=False), n, value, daily, cash, moved)
    )


def ledger_positions(
    transactions: pd.DataFrame,
    *,
    method: str | Mapping[str, str] = "fifo",
    substantially_identical: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Positions derived from a transaction table: the sums of the open tax lots.

    The same engine as the tax figures (:func:`quantcore.tax.match_lots`, same
    table, method and wash-sale rule), so a position's cost basis is the basis of
    its open lots under the lot method, wash-sale adjustments included, and does not
    depend on the order of the rows (they are applied in date order).

    Returns
    -------
    DataFrame
        Indexed by symbol (sorted; only symbols still held): ``quantity``,
        ``cost_basis`` and ``average_cost`` (``cost_basis / quantity``) as floats.

    Examples
    --------
    Buy 10 @ 10, sell 5 @ 12, and a buy of 10 @ 20 entered last but dated between:

    >>> t = pd.DataFrame({"symbol": ["A"] * 3, "date": ["2025-01-02", "2025-06-02", "2025-03-03"],
    ...                   "type": ["buy", "sell", "buy"], "quantity": [10, 5, 10], "price": [10, 12, 20]})
    >>> ledger_positions(t).round(4).to_dict("index")  # FIFO: 5 @ 10 and 10 @ 20 are open
    {'A': {'quantity': 15.0, 'cost_basis': 250.0, 'average_cost': 16.6667}}
    >>> ledger_positions(t, method="average")["cost_basis"].tolist()
    [225.0]
    """
    ledger = match_lots(
        transactions,
        method=method,  # type: ignore[arg-type]  # checked by match_lots
        substantially_identical=substantially_identical,
    )
    sym, qty, basis = ledger.position_totals()
    quantity = qty / SCALE
    cost = basis / SCALE
    return pd.DataFrame(
        {"quantity": quantity, "cost_basis": cost, "average_cost": cost / quantity},
        index=pd.Index([ledger.symbols[i] for i in sym], name="symbol"),
    )


def _num(v: Any) -> float:
    """A cell as a float; missing cells (None, NaN, NA) are 0."""
    if v is None or v is pd.NA:
        return 0.0
    x = float(v)
    return 0.0 if x != x else x


def corporate_action_flows(transactions: pd.DataFrame) -> pd.DataFrame:
    """The share changes and cash that a ledger's corporate actions bring, row by row.

    A split or stock dividend changes the shares held by ``held x (ratio - 1)`` (less
    the fraction sold when ``cash`` in lieu is paid); a spin-off adds ``held x ratio``
    shares of ``target_symbol``; a merger removes the shares held and adds ``held x
    ratio`` of the target, paying ``held x cash`` (cash per share); a return of capital
    pays ``held x price``. "Held" is the quantity from the ledger's buys, sells and
    earlier actions, rows applied in date order (a stable sort), as in
    :func:`quantcore.tax.match_lots` (same table).

    This is the convention of a portfolio's value history: **ledger quantities times
    unadjusted closes**. On a 4-for-1 split's date the close falls to a quarter and the
    quantity held quadruples, so the value is continuous; nothing is back-adjusted.

    Returns
    -------
    DataFrame
        Columns ``symbol``, ``date``, ``quantity`` (signed change of shares held) and
        ``cash`` (received), one row per change, in date order.

    Examples
    --------
    >>> t = pd.DataFrame({"symbol": ["X", "X"], "date": ["2024-01-02", "2024-06-03"],
    ...                   "type": ["buy", "split"], "quantity": [10, None], "price": [100, None],
    ...                   "ratio": [None, 4]})
    >>> corporate_action_flows(t).to_dict("records")
    [{'symbol': 'X', 'date': Timestamp('2024-06-03 00:00:00'), 'quantity': 30.0, 'cash': 0.0}]
    """
    out: list[tuple[str, pd.Timestamp, float, float]] = []
    if len(transactions) == 0:
        return pd.DataFrame({"symbol": [], "date": pd.to_datetime([]), "quantity": [], "cash": []})
    dates = pd.to_datetime(transactions["date"])
    order = np.argsort(dates.to_numpy(dtype="datetime64[ns]"), kind="stable")
    cols = {c: transactions[c].to_numpy(dtype=object) for c in transactions.columns}
    held: dict[str, float] = {}
    none = np.full(len(transactions), None, dtype=object)
    for i in order:
        sym = str(cols["symbol"][i]).strip()
        kind = str(cols["type"][i]).strip().lower()
        day = pd.Timestamp(dates.iloc[i])
        h = held.get(sym, 0.0)
        ratio = _num(cols.get("ratio", none)[i])
        cash = _num(cols.get("cash", none)[i])
        if kind == "buy":
            held[sym] = h + _num(cols["quantity"][i])
        elif kind == "sell":
            held[sym] = h - _num(cols["quantity"][i])
        elif kind in ("split", "stock_dividend"):
            new = round(h * ratio, 8)
            if cash > 0:
                new = float(np.floor(new))
            held[sym] = new
            out.append((sym, day, new - h, cash))
        elif kind == "return_of_capital":
            out.append((sym, day, 0.0, round(h * _num(cols["price"][i]), 8)))
        elif kind in ("spin_off", "merger"):
            target = str(cols.get("target_symbol", none)[i]).strip()
            got = round(h * ratio, 8)
            if got:
                held[target] = held.get(target, 0.0) + got
                out.append((target, day, got, 0.0))
            if kind == "merger":
                held[sym] = 0.0
                out.append((sym, day, -h, round(h * cash, 8)))
    return pd.DataFrame(out, columns=["symbol", "date", "quantity", "cash"])


def ledger_holdings(transactions: pd.DataFrame, dates: Any) -> pd.DataFrame:
    """Shares held of every symbol at the end of each of ``dates``, corporate actions included.

    Buys add, sells remove, and splits, stock dividends, spin-offs and mergers change
    the quantity as :func:`corporate_action_flows` says. Times these quantities by the
    *unadjusted* closes of the same days for the value of the holdings.

    Examples
    --------
    >>> t = pd.DataFrame({"symbol": ["X", "X"], "date": ["2024-01-02", "2024-06-03"],
    ...                   "type": ["buy", "split"], "quantity": [10, None], "price": [100, None],
    ...                   "ratio": [None, 4]})
    >>> ledger_holdings(t, ["2024-06-01", "2024-06-03"])["X"].tolist()
    [10.0, 40.0]
    """
    idx = pd.DatetimeIndex(pd.to_datetime(dates))
    kind = transactions["type"].astype(str).str.strip().str.lower()
    trades = transactions[kind.isin(["buy", "sell"])]
    sign = np.where(kind[trades.index] == "sell", -1.0, 1.0)
    events = pd.DataFrame(
        {
            "symbol": trades["symbol"].astype(str).str.strip().to_numpy(),
            "date": pd.to_datetime(trades["date"]).to_numpy(),
            "quantity": sign * trades["quantity"].map(_num).to_numpy(dtype=float),
        }
    )
    flows = corporate_action_flows(transactions)[["symbol", "date", "quantity"]]
    events = pd.concat([events, flows], ignore_index=True) if len(flows) else events
    if events.empty:
        return pd.DataFrame(index=idx)
    pos = np.searchsorted(idx.to_numpy(), events["date"].to_numpy(dtype="datetime64[ns]"), side="left")
    symbols = sorted(events["symbol"].unique())
    col = {s: j for j, s in enumerate(symbols)}
    delta = np.zeros((len(idx) + 1, len(symbols)))
    np.add.at(delta, (pos, events["symbol"].map(col).to_numpy()), events["quantity"].to_numpy(dtype=float))
    return pd.DataFrame(np.cumsum(delta[:-1], axis=0), index=idx, columns=symbols)
