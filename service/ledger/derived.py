"""What the features derive from a user's :class:`~service.ledger.columns.LedgerColumns`.

Each function here is pure (columns in, arrays or small dicts out) and calls
``quantcore`` over whole columns; :mod:`service.ledger.read` caches their results per
ledger version. Corporate actions are the one part computed row by row, by
:func:`quantcore.portfolio.corporate_action_flows` and
:func:`quantcore.cash.corporate_action_cash`, and only over the portfolios that hold one.

* :func:`balances`: the cash of each portfolio per currency (what the book and the
  allocation show; :mod:`service.ledger.cash` documents the rule);
* :func:`history_input`: one portfolio's rows as the value history takes them
  (buys, sells, dividends and cash rows, with its corporate actions turned into the
  share changes and cash they bring);
* :func:`action_frame`: rows as the table ``quantcore``'s pandas functions read.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from quantcore import valuation
from quantcore.cash import corporate_action_cash
from quantcore.portfolio import corporate_action_flows
from service.ledger.columns import KIND_CODE, KINDS, LedgerColumns

__all__ = [
    "HistoryInput", "LedgerRow", "action_frame", "balances", "has_actions", "history_input",
    "own_cash",
]  # fmt: skip

F64 = NDArray[np.float64]
#: ``LedgerColumns.kind`` -> the kind codes of :mod:`quantcore.valuation` (-1: a corporate action).
_VALUATION = np.full(len(KINDS), -1, np.int64)
for _name, _code in (
    ("buy", valuation.BUY), ("sell", valuation.SELL), ("dividend", valuation.DIVIDEND),
    ("deposit", valuation.DEPOSIT), ("withdrawal", valuation.WITHDRAWAL),
    ("interest", valuation.INTEREST), ("fee", valuation.FEE),
):  # fmt: skip
    _VALUATION[KIND_CODE[_name]] = _code
_ACTION = _VALUATION < 0


def action_frame(cols: LedgerColumns, at: NDArray[np.intp]) -> pd.DataFrame:
    """Rows ``at`` as the table of :func:`quantcore.cash.cash_flows`: ``portfolio``, ``id``,
    ``date``, ``type``, ``symbol``, ``currency``, ``quantity``, ``price``, ``fees``,
    ``ratio``, ``cash``, ``target_symbol`` (amounts as float64)."""
    return pd.DataFrame(
        {
            "portfolio": np.array(cols.portfolios.ids, np.int64)[cols.portfolio[at]]
            if cols.portfolios.ids
            else np.zeros(len(at), np.int64),
            "id": cols.id[at],
            "date": cols.date[at],
            "type": cols.kind_names(at),
            "symbol": cols.symbol_names(cols.symbol[at]),
            "currency": np.array(cols.currencies, dtype=object)[cols.currency[at]]
            if cols.currencies
            else np.zeros(0, object),
            "quantity": cols.quantity.take(at).to_float(),
            "price": cols.price.take(at).to_float(),
            "fees": cols.fees.take(at).to_float(),
            "ratio": cols.ratio.take(at).to_float(),
            "cash": cols.cash.take(at).to_float(),
            "target_symbol": cols.symbol_names(cols.target[at]),
        }
    )


def own_cash(cols: LedgerColumns, at: NDArray[np.intp] | None = None) -> F64:
    """The cash each row (of ``at``) moves by itself (:func:`quantcore.valuation.cash_amounts`;
    0 for a corporate action, whose cash depends on the shares held)."""
    q, p, f = cols.quantity, cols.price, cols.fees
    if at is not None:
        q, p, f = q.take(at), p.take(at), f.take(at)
    kind = cols.kind if at is None else cols.kind[at]
    return valuation.cash_amounts(
        _VALUATION[kind], np.nan_to_num(q.to_float()), np.nan_to_num(p.to_float()),
        np.nan_to_num(f.to_float()),
    )  # fmt: skip


def has_actions(cols: LedgerColumns, at: NDArray[np.intp]) -> bool:
    """Whether any row of ``at`` is a corporate action."""
    return bool(_ACTION[cols.kind[at]].any())


def balances(cols: LedgerColumns) -> dict[int, dict[str, float]]:
    """Cash per currency of each of the user's portfolios (id -> currency -> amount,
    both sorted; a portfolio without rows maps to ``{}``).

    Each row's own amount (:func:`quantcore.valuation.cash_amounts`, one pass over the
    columns, summed per portfolio and currency), plus the cash corporate actions paid
    (:func:`quantcore.cash.corporate_action_cash`, over the portfolios holding one).
    """
    ids = cols.portfolios.ids
    out: dict[int, dict[str, float]] = {pid: {} for pid in ids}
    if not len(cols):
        return out
    amounts = own_cash(cols)
    n_cur = len(cols.currencies)
    key = cols.portfolio * n_cur + cols.currency
    present = np.zeros(len(ids) * n_cur, np.bool_)
    present[key] = True
    summed = np.bincount(key, amounts, minlength=len(ids) * n_cur)
    for k in np.flatnonzero(present).tolist():
        out[ids[k // n_cur]][cols.currencies[k % n_cur]] = float(summed[k])
    acting = np.unique(cols.portfolio[_ACTION[cols.kind]])
    if acting.size:
        at = np.flatnonzero(np.isin(cols.portfolio, acting))
        paid = corporate_action_cash(action_frame(cols, at), by="portfolio")
        for owner, code, amount in zip(
            paid["portfolio"].tolist(), paid["currency"].tolist(), paid["amount"].tolist(), strict=True
        ):
            held = out[int(owner)]
            held[str(code)] = held.get(str(code), 0.0) + float(amount)
    return {pid: dict(sorted(v.items())) for pid, v in out.items()}


@dataclass(frozen=True, slots=True)
class LedgerRow:
    """One ledger entry as the history needs it (amounts as floats).

    ``symbol`` is empty on a cash row. ``currency`` is the currency the row's cash moves
    in; empty means the asset's (a security row) or the base currency (a cash row).
    """

    symbol: str
    kind: str  # buy | sell | dividend | deposit | withdrawal | interest | fee
    quantity: float
    price: float
    fees: float
    date: dt.date
    currency: str = ""


@dataclass(frozen=True, slots=True)
class HistoryInput:
    """One portfolio's ledger as the value history reads it, one entry per row in date order.

    ``symbol`` indexes :attr:`names` (``-1``: a cash row); ``kind`` holds
    :mod:`quantcore.valuation` codes (buys, sells, dividends and cash rows only:
    corporate actions are already turned into share changes at price 0 and cash like
    a dividend's); ``currency`` indexes :attr:`codes`, what the row's cash moves in
    (``-1``: its asset's currency, or the base currency for a cash row).
    """

    names: tuple[str, ...]
    codes: tuple[str, ...]
    symbol: NDArray[np.int64]
    kind: NDArray[np.int64]
    quantity: F64
    price: F64
    fees: F64
    date: NDArray[np.datetime64]
    currency: NDArray[np.int64]
    #: symbol -> its currency, for every symbol the rows (or their actions) name
    currency_of: dict[str, str]
    #: rows a corporate action made (share changes, the cash it paid): not income
    from_action: NDArray[np.bool_]

    def __len__(self) -> int:
        return int(self.kind.shape[0])

    @property
    def first_date(self) -> dt.date | None:
        """The earliest row's date (``None`` without rows)."""
        return self.date.min().astype(dt.date) if len(self) else None

    @classmethod
    def from_rows(cls, rows: Sequence[LedgerRow]) -> HistoryInput:
        """From :class:`LedgerRow` entries (kinds by name)."""
        kind = {"buy": valuation.BUY, "sell": valuation.SELL, "dividend": valuation.DIVIDEND,
                "deposit": valuation.DEPOSIT, "withdrawal": valuation.WITHDRAWAL,
                "interest": valuation.INTEREST, "fee": valuation.FEE}  # fmt: skip
        names = tuple(sorted({r.symbol for r in rows if r.symbol}))
        codes = tuple(sorted({r.currency for r in rows if r.currency}))
        at, cur = {s: i for i, s in enumerate(names)}, {c: i for i, c in enumerate(codes)}
        return cls(
            names=names,
            codes=codes,
            symbol=np.array([at[r.symbol] if r.symbol else -1 for r in rows], np.int64),
            kind=np.array([kind.get(r.kind, -1) for r in rows], np.int64),
            quantity=np.array([r.quantity for r in rows], np.float64),
            price=np.array([r.price for r in rows], np.float64),
            fees=np.array([r.fees for r in rows], np.float64),
            date=np.array([r.date for r in rows], dtype="datetime64[D]"),
            currency=np.array([cur[r.currency] if r.currency else -1 for r in rows], np.int64),
            currency_of={r.symbol: r.currency for r in rows if r.symbol and r.currency},
            from_action=np.zeros(len(rows), np.bool_),
        )


def history_input(cols: LedgerColumns, portfolio_id: int) -> HistoryInput:
    """:class:`HistoryInput` of one of the user's portfolios (empty when it has no rows).

    Symbols and currencies keep the codes of ``cols``; a security row's currency is
    its asset's (``-1``), a cash row's its own.
    """
    at = cols.rows_of(portfolio_id)
    code = cols.kind[at]
    plain = ~_ACTION[code]
    keep = at[plain]
    currency_of = {
        cols.symbols[s]: cols.symbol_currency[s]
        for s in np.unique(np.concatenate([cols.symbol[at], cols.target[at]])).tolist()
        if s >= 0
    }
    parts: dict[str, list[np.ndarray]] = {
        "symbol": [cols.symbol[keep]],
        "kind": [_VALUATION[cols.kind[keep]]],
        "quantity": [cols.quantity.take(keep).to_float()],
        "price": [cols.price.take(keep).to_float()],
        "fees": [cols.fees.take(keep).to_float()],
        "date": [cols.date[keep]],
        "currency": [np.where(cols.symbol[keep] >= 0, -1, cols.currency[keep])],
        "from_action": [np.zeros(keep.size, np.bool_)],
    }
    if (~plain).any():
        security = at[cols.symbol[at] >= 0]
        flows = corporate_action_flows(
            action_frame(cols, security)[
                ["symbol", "date", "type", "quantity", "price", "fees", "ratio", "cash", "target_symbol"]
            ]
        )
        where = {s: i for i, s in enumerate(cols.symbols)}
        sym = np.array([where[s] for s in flows["symbol"].tolist()], np.int64)
        day = flows["date"].to_numpy(dtype="datetime64[D]")
        qty = flows["quantity"].to_numpy(np.float64)
        paid = flows["cash"].to_numpy(np.float64)
        for mask, kind, q, p in (
            (qty > 0, valuation.BUY, qty, np.zeros_like(qty)),
            (qty < 0, valuation.SELL, -qty, np.zeros_like(qty)),
            (paid > 0, valuation.DIVIDEND, np.ones_like(qty), paid),
        ):
            n = int(mask.sum())
            parts["symbol"].append(sym[mask])
            parts["kind"].append(np.full(n, kind, np.int64))
            parts["quantity"].append(q[mask])
            parts["price"].append(p[mask])
            parts["fees"].append(np.zeros(n))
            parts["date"].append(day[mask])
            parts["currency"].append(np.full(n, -1, np.int64))
            parts["from_action"].append(np.ones(n, np.bool_))
    joined = {k: np.concatenate(v) for k, v in parts.items()}
    order = np.argsort(joined["date"], kind="stable")
    return HistoryInput(
        names=cols.symbols,
        codes=cols.currencies,
        symbol=joined["symbol"][order].astype(np.int64),
        kind=joined["kind"][order].astype(np.int64),
        quantity=joined["quantity"][order].astype(np.float64),
        price=joined["price"][order].astype(np.float64),
        fees=joined["fees"][order].astype(np.float64),
        date=joined["date"][order].astype("datetime64[D]"),
        currency=joined["currency"][order].astype(np.int64),
        currency_of=currency_of,
        from_action=joined["from_action"][order].astype(np.bool_),
    )
