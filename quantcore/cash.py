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

from typing import NamedTuple

import numpy as np
import pandas as pd

from quantcore.portfolio import corporate_action_flows

__all__ = [
    "CASH_TYPES",
    "EXTERNAL_TYPES",
    "Overdraft",
    "cash_balances",
    "cash_flows",
    "first_overdraft",
]

#: Rows that move cash only (no asset).
CASH_TYPES = ("deposit", "withdrawal", "interest", "fee")
#: Rows that are money put in or taken out from outside the portfolio.
EXTERNAL_TYPES = ("deposit", "withdrawal")
_ACTIONS = ("split", "stock_dividend", "return_of_capital", "spin_off", "merger")


def _numbers(frame: pd.DataFrame, column: str) -> np.ndarray:
    if column not in frame:
        return np.zeros(len(frame))
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(
        dtype=np.float64, na_value=np.nan
    )
    return np.nan_to_num(values, nan=0.0)


def cash_flows(transactions: pd.DataFrame, *, default_currency: str = "USD") -> pd.DataFrame:
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

    Returns
    -------
    DataFrame
        Columns ``date``, ``currency``, ``amount`` (received positive, paid negative)
        and ``external`` (deposits and withdrawals), one row per ledger row that moves
        cash (and per corporate action that pays cash), sorted by date (stable).

    Examples
    --------
    >>> t = pd.DataFrame({"date": ["2024-01-02", "2024-01-03", "2024-02-01"],
    ...                   "type": ["deposit", "buy", "interest"], "symbol": [None, "X", None],
    ...                   "quantity": [None, 10, None], "price": [1000, 90, 2.5],
    ...                   "fees": [0, 1, 0]})
    >>> cash_flows(t)["amount"].tolist()
    [1000.0, -901.0, 2.5]
    """
    n = len(transactions)
    if n == 0:
        return pd.DataFrame(
            {
                "date": pd.to_datetime([]),
                "currency": [],
                "amount": [],
                "external": np.zeros(0, bool),
            }
        )
    kind = transactions["type"].astype(str).str.strip().str.lower().to_numpy()
    q = _numbers(transactions, "quantity")
    p = _numbers(transactions, "price")
    f = _numbers(transactions, "fees")
    amount = np.select(
        [
            kind == "buy",
            (kind == "sell") | (kind == "dividend"),
            (kind == "deposit") | (kind == "interest"),
            kind == "withdrawal",
            kind == "fee",
        ],
        [-(q * p + f), q * p - f, p - f, -(p + f), -p],
        0.0,
    )
    if "currency" in transactions:
        currency = transactions["currency"].where(
            transactions["currency"].notna(), default_currency
        )
        currency = currency.astype(str).str.strip().str.upper().replace("", default_currency)
    else:
        currency = pd.Series(default_currency, index=transactions.index)
    dates = pd.to_datetime(transactions["date"]).to_numpy(dtype="datetime64[ns]")
    moves = np.isin(kind, ("buy", "sell", "dividend", *CASH_TYPES))
    frame = pd.DataFrame(
        {
            "date": dates[moves],
            "currency": currency.to_numpy(dtype=object)[moves],
            "amount": amount[moves],
            "external": np.isin(kind[moves], EXTERNAL_TYPES),
        }
    )
    if np.isin(kind, _ACTIONS).any():
        frame = pd.concat([frame, _action_cash(transactions, kind, currency)], ignore_index=True)
    order = np.argsort(frame["date"].to_numpy(dtype="datetime64[ns]"), kind="stable")
    return frame.iloc[order].reset_index(drop=True)


def _action_cash(transactions: pd.DataFrame, kind: np.ndarray, currency: pd.Series) -> pd.DataFrame:
    """Cash that corporate actions pay, in the currency of the symbol they act on."""
    securities = ~np.isin(kind, CASH_TYPES)
    rows = transactions[securities]
    paid = corporate_action_flows(rows)
    paid = paid[paid["cash"] != 0]
    of_symbol = dict(zip(rows["symbol"].astype(str).str.strip(), currency[securities], strict=True))
    return pd.DataFrame(
        {
            "date": pd.to_datetime(paid["date"]).to_numpy(dtype="datetime64[ns]"),
            "currency": [of_symbol.get(s, "USD") for s in paid["symbol"]],
            "amount": paid["cash"].to_numpy(dtype=np.float64),
            "external": np.zeros(len(paid), bool),
        }
    )


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
    worst: Overdraft | None = None
    for code, group in flows.groupby("currency", sort=True):
        daily = group.groupby("date", sort=True)["amount"].sum()
        running = daily.cumsum().to_numpy()
        low = np.flatnonzero(running < -tolerance)
        if low.size:
            day = pd.Timestamp(daily.index[low[0]])
            if worst is None or day < worst.date:
                worst = Overdraft(day, str(code), float(running[low[0]]))
    return worst
