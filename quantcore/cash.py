"""Cash of a ledger: what each row pays or receives, per currency, and the balances.

A ledger row moves cash in its currency (a security row in its asset's currency):

=============================  ==========================================
``buy``                        ``-(quantity x price + fees)``
``sell``, ``dividend``         ``quantity x price - fees``
``deposit``, ``interest``      ``price - fees`` (``price`` is the amount)
``withdrawal``                 ``-(price + fees)``
``fee``                        ``-price``
corporate actions              the cash they pay: cash in lieu of a fraction, a
                               return of capital (held x per share), a merger's
                               cash (held x per share), as
                               :func:`quantcore.portfolio.corporate_action_flows`
=============================  ==========================================

Deposits and withdrawals are *external* flows (money put in or taken out); every
other amount is the portfolio's own income, cost or exchange of cash for shares,
so a deposit is never a gain and interest always is.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from quantcore.portfolio import corporate_action_flows
from quantcore.valuation import (
    BUY,
    DEPOSIT,
    DIVIDEND,
    FEE,
    INTEREST,
    SELL,
    WITHDRAWAL,
    cash_amounts,
)

__all__ = [
    "ACTION_TYPES",
    "CASH_TYPES",
    "EXTERNAL_TYPES",
    "Overdraft",
    "cash_balances",
    "cash_flows",
    "corporate_action_cash",
    "first_overdraft",
    "overdraft_of_flows",
    "row_amounts",
]

#: Rows that move cash only (no asset).
CASH_TYPES = ("deposit", "withdrawal", "interest", "fee")
#: Rows that are money put in or taken out from outside the portfolio.
EXTERNAL_TYPES = ("deposit", "withdrawal")
#: Corporate actions: the cash they pay depends on the shares held.
ACTION_TYPES = ("split", "stock_dividend", "return_of_capital", "spin_off", "merger")
_ACTIONS = ACTION_TYPES
#: Row types as :func:`quantcore.valuation.cash_amounts` codes them (the one table of rules).
_CODES = {
    "buy": BUY, "sell": SELL, "dividend": DIVIDEND, "deposit": DEPOSIT,
    "withdrawal": WITHDRAWAL, "interest": INTEREST, "fee": FEE,
}  # fmt: skip


def _numbers(frame: pd.DataFrame, column: str) -> np.ndarray:
    if column not in frame:
        return np.zeros(len(frame))
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(
        dtype=np.float64, na_value=np.nan
    )
    out: np.ndarray = np.nan_to_num(values, nan=0.0)
    return out


def row_amounts(kind: Any, quantity: Any, price: Any, fees: Any) -> np.ndarray:
    """The cash each row moves by itself, by the table above (0 for corporate actions,
    whose cash depends on the shares held: :func:`cash_flows`): the row types' names
    for :func:`quantcore.valuation.cash_amounts`, which the value history uses too.

    Parameters
    ----------
    kind : array_like of str
        Lower-case row types.
    quantity, price, fees : array_like of float
        Per row (NaN counts as 0).

    Examples
    --------
    >>> row_amounts(["buy", "deposit", "fee", "split"], [10, 1, 1, 0], [90, 500, 2, 0], [1, 0, 0, 0])
    array([-901.,  500.,   -2.,    0.])
    """
    codes = np.fromiter((_CODES.get(k, -1) for k in kind), np.int64)
    q, p, f = (np.nan_to_num(np.asarray(x, dtype=np.float64)) for x in (quantity, price, fees))
    return cash_amounts(codes, q, p, f)


def cash_flows(
    transactions: pd.DataFrame, *, default_currency: str = "USD", by: str | None = None
) -> pd.DataFrame:
    """The cash each row of ``transactions`` moves, in date order.

    Parameters
    ----------
    transactions : DataFrame
        Columns ``date``, ``type`` and ``price``; ``quantity`` and ``fees`` (missing
        cells are 0); ``symbol`` (empty on cash rows); ``currency`` (missing cells:
        ``default_currency``); and, for corporate actions, ``ratio``, ``cash`` and
        ``target_symbol`` as :func:`quantcore.portfolio.corporate_action_flows` reads them.
    default_currency : str
        The currency of rows that name none.
    by : str, optional
        A column that splits the table into separate accounts (a portfolio id): the
        shares that corporate actions pay on are counted per account, and the column
        is kept in the result.

    Returns
    -------
    DataFrame
        Columns ``date``, ``currency``, ``amount`` (received positive, paid negative)
        and ``external`` (deposits and withdrawals), plus ``by``: one row per ledger
        row that moves cash (and per corporate action that pays cash), sorted by date
        (stable).

    Examples
    --------
    >>> t = pd.DataFrame({"date": ["2024-01-02", "2024-01-03", "2024-02-01"],
    ...                   "type": ["deposit", "buy", "interest"], "symbol": [None, "X", None],
    ...                   "quantity": [None, 10, None], "price": [1000, 90, 2.5],
    ...                   "fees": [0, 1, 0]})
    >>> cash_flows(t)["amount"].tolist()
    [1000.0, -901.0, 2.5]
    """
    columns = ["date", "currency", "amount", "external", *([by] if by else [])]
    if len(transactions) == 0:
        return pd.DataFrame({c: [] for c in columns}).astype({"external": bool})
    kind = transactions["type"].astype(str).str.strip().str.lower().to_numpy()
    q = _numbers(transactions, "quantity")
    p = _numbers(transactions, "price")
    f = _numbers(transactions, "fees")
    amount = row_amounts(kind, q, p, f)
    currency: np.ndarray
    if "currency" in transactions:
        given = transactions["currency"]
        codes = given.where(given.notna(), default_currency).astype(str).str.strip().str.upper()
        currency = codes.replace("", default_currency).to_numpy(dtype=object)
    else:
        currency = np.full(len(transactions), default_currency, dtype=object)
    dates = pd.to_datetime(transactions["date"]).to_numpy(dtype="datetime64[ns]")
    moves = np.isin(kind, ("buy", "sell", "dividend", *CASH_TYPES))
    parts = {
        "date": dates[moves],
        "currency": currency[moves],
        "amount": amount[moves],
        "external": np.isin(kind[moves], EXTERNAL_TYPES),
    }
    if by is not None:
        parts[by] = transactions[by].to_numpy()[moves]
    frame = pd.DataFrame(parts)
    actions = np.isin(kind, _ACTIONS)
    if actions.any():
        frame = pd.concat(
            [frame, *_action_cash(transactions, kind, currency, by)], ignore_index=True
        )
    order = np.argsort(frame["date"].to_numpy(dtype="datetime64[ns]"), kind="stable")
    return frame.iloc[order].reset_index(drop=True)[columns]


def _action_cash(
    transactions: pd.DataFrame, kind: np.ndarray, currency: np.ndarray, by: str | None
) -> list[pd.DataFrame]:
    """Cash that corporate actions pay, per account, in the currency of the symbol they act on."""
    securities = ~np.isin(kind, CASH_TYPES)
    if by is None:
        accounts = [(None, np.flatnonzero(securities))]
    else:
        keys = transactions[by].to_numpy()
        with_actions = set(keys[np.isin(kind, _ACTIONS)].tolist())
        accounts = [(k, np.flatnonzero(securities & (keys == k))) for k in with_actions]
    out = []
    for key, at in accounts:
        rows = transactions.iloc[at]
        paid = corporate_action_flows(rows)
        paid = paid[paid["cash"] != 0]
        of_symbol = dict(zip(rows["symbol"].astype(str).str.strip(), currency[at], strict=True))
        part = {
            "date": pd.to_datetime(paid["date"]).to_numpy(dtype="datetime64[ns]"),
            "currency": [of_symbol.get(s, "USD") for s in paid["symbol"]],
            "amount": paid["cash"].to_numpy(dtype=np.float64),
            "external": np.zeros(len(paid), bool),
        }
        if by is not None:
            part[by] = [key] * len(paid)
        out.append(pd.DataFrame(part))
    return out


def corporate_action_cash(
    transactions: pd.DataFrame, *, default_currency: str = "USD", by: str | None = None
) -> pd.DataFrame:
    """Only the cash that corporate actions pay (the rows :func:`cash_flows` adds to the
    rows' own amounts): columns ``date``, ``currency``, ``amount``, ``external`` (False)
    and ``by``.

    Examples
    --------
    >>> t = pd.DataFrame({"date": ["2024-01-02", "2024-02-01"], "type": ["buy", "return_of_capital"],
    ...                   "symbol": ["X", "X"], "quantity": [10, None], "price": [100, 2.5]})
    >>> corporate_action_cash(t)["amount"].tolist()
    [25.0]
    """
    flows = cash_flows(transactions.iloc[:0], by=by)
    if len(transactions) == 0:
        return flows
    kind = transactions["type"].astype(str).str.strip().str.lower().to_numpy()
    if not np.isin(kind, _ACTIONS).any():
        return flows
    given = (
        transactions["currency"]
        if "currency" in transactions
        else pd.Series(None, index=transactions.index)
    )
    codes = given.where(given.notna(), default_currency).astype(str).str.strip().str.upper()
    currency = codes.replace("", default_currency).to_numpy(dtype=object)
    parts = _action_cash(transactions, kind, currency, by)
    return pd.concat(parts, ignore_index=True)[list(flows.columns)] if parts else flows


def cash_balances(transactions: pd.DataFrame, *, default_currency: str = "USD") -> dict[str, float]:
    """The cash balance of ``transactions`` per currency (sorted by code; a currency
    appears once any row moved cash in it).

    Examples
    --------
    >>> t = pd.DataFrame({"date": ["2024-01-02", "2024-01-03"], "type": ["deposit", "buy"],
    ...                   "symbol": [None, "X"], "quantity": [None, 10], "price": [500, 90],
    ...                   "currency": ["EUR", "USD"]})
    >>> cash_balances(t)
    {'EUR': 500.0, 'USD': -900.0}
    """
    flows = cash_flows(transactions, default_currency=default_currency)
    sums = flows.groupby("currency", sort=True)["amount"].sum()
    return {str(k): float(v) for k, v in sums.items()}


class Overdraft(NamedTuple):
    """The first day a currency's cash ends below zero, and its balance then."""

    date: pd.Timestamp
    currency: str
    balance: float


def first_overdraft(
    transactions: pd.DataFrame, *, default_currency: str = "USD", tolerance: float = 0.005
) -> Overdraft | None:
    """The first day, in date order, on which some currency's cash ends below ``-tolerance``.

    A day counts once all its rows are applied, so a deposit and a buy of the same day
    cover each other whichever was entered first. ``tolerance`` (half a cent by
    default) absorbs float rounding of amounts given to the cent.

    Examples
    --------
    >>> t = pd.DataFrame({"date": ["2024-01-02", "2024-01-03", "2024-01-03"],
    ...                   "type": ["deposit", "buy", "deposit"], "symbol": [None, "X", None],
    ...                   "quantity": [None, 10, None], "price": [500, 90, 400]})
    >>> first_overdraft(t) is None
    True
    >>> first_overdraft(t.iloc[:2]).balance
    -400.0
    """
    flows = cash_flows(transactions, default_currency=default_currency)
    return overdraft_of_flows(
        flows["date"].to_numpy(dtype="datetime64[ns]"),
        flows["currency"].to_numpy(dtype=object),
        flows["amount"].to_numpy(dtype=np.float64),
        tolerance=tolerance,
    )


def overdraft_of_flows(
    dates: np.ndarray, currencies: np.ndarray, amounts: np.ndarray, *, tolerance: float = 0.005
) -> Overdraft | None:
    """:func:`first_overdraft` of cash flows given as columns (any order): each flow's date,
    currency and amount, as :func:`cash_flows` returns them.

    Examples
    --------
    >>> d = np.array(["2024-01-03", "2024-01-02", "2024-01-03"], dtype="datetime64[D]")
    >>> overdraft_of_flows(d, np.array(["USD"] * 3, dtype=object), np.array([-900.0, 500.0, 300.0]))
    Overdraft(date=Timestamp('2024-01-03 00:00:00'), currency='USD', balance=-100.0)
    """
    worst: Overdraft | None = None
    if len(amounts) == 0:
        return worst
    codes, code_of = np.unique(np.asarray(currencies, dtype=str), return_inverse=True)
    days = np.asarray(dates).astype("datetime64[ns]")
    for k, code in enumerate(codes.tolist()):
        mine = code_of.reshape(-1) == k
        day, at = np.unique(days[mine], return_inverse=True)
        running = np.cumsum(
            np.bincount(at.reshape(-1), np.asarray(amounts, np.float64)[mine], day.size)
        )
        low = np.flatnonzero(running < -tolerance)
        if low.size:
            when = pd.Timestamp(day[low[0]])
            if worst is None or when < worst.date:
                worst = Overdraft(when, str(code), float(running[low[0]]))
    return worst
