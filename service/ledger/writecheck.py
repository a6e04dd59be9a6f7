"""A typed write's checks, over the user's ledger columns with the change applied.

A write (:mod:`service.ledger.writes`) holds the user's ledger lock, so the ledger
it sees before changing anything is the one committed at the version before its
own: the columns kept for that version, usually in the derivation cache already
(:func:`service.ledger.read.before_write`). The written row is patched in
(:func:`service.ledger.columns.patched`), and only what the change can move is
checked, as columns:

* the shares of the written (portfolio, symbol) (:func:`check_shares`): one running
  sum of integer units in ledger order finds the first sell or dividend short, the
  row :func:`service.ledger.checks.first_shortfall` finds (which words it, and
  walks the ledger itself when a sell names its lot);
* the cash of a strict portfolio (:func:`check_cash`): each row's own amount
  (:func:`service.ledger.derived.own_cash`), plus what corporate actions paid, into
  :func:`quantcore.cash.overdraft_of_flows`;
* the lots of the touched symbols in every portfolio, linked ones included
  (:func:`match`): one :func:`quantcore.tax.match_lots` call over their rows, from
  whose open lots the positions are re-derived.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
from numpy.typing import NDArray

from quantcore.cash import corporate_action_cash, overdraft_of_flows
from quantcore.tax import LotLedger, match_lots
from quantcore.tax.lots import LedgerError
from service.ledger import cash, derived
from service.ledger.checks import LotRow, Shortfall, first_shortfall, refuse
from service.ledger.columns import KIND_CODE, KINDS, LedgerColumns, subset
from service.ledger.fixed import LO, SCALE
from service.ledger.lots import check_rows, columns_rows, lot_table

__all__ = ["cash_flows", "check_cash", "check_shares", "lot_rows", "match", "shortfall"]

_BUY, _SELL, _DIVIDEND = KIND_CODE["buy"], KIND_CODE["sell"], KIND_CODE["dividend"]
#: ``hi x 1e16 + lo`` fits an int64 when ``|hi|`` is at most this.
_NARROW_HI = 920


def lot_rows(cols: LedgerColumns, at: NDArray[np.intp]) -> list[LotRow]:
    """Rows ``at`` as :class:`~service.ledger.checks.LotRow` (exact ``Decimal`` amounts)."""
    lots = cols.lot[at].tolist()
    return [
        LotRow(tid, KINDS[k], q, day, None if lot < 0 else lot, p, f)
        for tid, k, q, day, lot, p, f in zip(
            cols.id[at].tolist(), cols.kind[at].tolist(), cols.quantity.take(at).to_decimal(),
            cols.date[at].tolist(), lots, cols.price.take(at).to_decimal(),
            cols.fees.take(at).to_decimal(), strict=True,
        )
    ]  # fmt: skip


def shortfall(cols: LedgerColumns, at: NDArray[np.intp]) -> Shortfall | None:
    """:func:`~service.ledger.checks.first_shortfall` of the rows ``at`` (one portfolio's
    rows of one symbol, ascending: ledger order).

    Buys, sells naming no lot and dividends, at most 9.2e10 shares: decided over integer
    units (a sell is short when the running shares after it are negative, a dividend
    when the shares before it are below its quantity). Otherwise the rows are walked.
    """
    kind = cols.kind[at]
    q = cols.quantity.take(at)
    plain = (
        bool(np.isin(kind, (_BUY, _SELL, _DIVIDEND)).all())
        and not bool((cols.lot[at] >= 0).any())
        and bool((np.abs(q.hi) <= _NARROW_HI).all())
    )
    if plain:
        units = q.hi * LO + q.lo
        if float(np.abs(units).astype(np.float64).sum()) < 2.0**62:  # the sums fit an int64
            signed = np.where(kind == _BUY, units, np.where(kind == _SELL, -units, 0))
            after = np.cumsum(signed)
            before = after - signed
            short = np.flatnonzero(
                ((kind == _SELL) & (after < 0)) | ((kind == _DIVIDEND) & (before < units))
            )
            if not short.size:
                return None
            i = int(short[0])
            (row,) = lot_rows(cols, at[i : i + 1])
            return Shortfall(row, Decimal(int(before[i])).scaleb(-SCALE))
    return first_shortfall(lot_rows(cols, at))


def check_shares(
    cols: LedgerColumns, portfolio_id: int, symbol: str, *, written: int | None, action: str
) -> None:
    """Refuse the change when the (portfolio, symbol) ledger of ``cols`` (the change
    applied) no longer relieves (:func:`service.ledger.checks.check_ledger`'s 400s;
    ``written``: the id of the row written, worded as such when it is the one short).

    Raises:
        ValidationError: ``quantity`` ``insufficient_quantity``.
    """
    pindex = cols.portfolios.index(portfolio_id)
    if pindex < 0 or symbol not in cols.symbols:
        return
    code = cols.symbols.index(symbol)
    at = np.flatnonzero((cols.portfolio == pindex) & (cols.symbol == code))
    short = shortfall(cols, at)
    if short is not None:
        refuse(
            short, written=written is not None and short.row.id == written, action=action,
            symbol=symbol,
        )


def cash_flows(
    cols: LedgerColumns, portfolio_id: int, base_currency: str
) -> tuple[NDArray[np.datetime64], NDArray[np.object_], NDArray[np.float64]]:
    """The cash each row of one portfolio of ``cols`` moves, as columns (date, currency,
    amount; any order): each row's own amount, plus what corporate actions paid (as
    :func:`quantcore.cash.cash_flows`)."""
    at = cols.rows_of(portfolio_id)
    dates = cols.date[at].astype("datetime64[ns]")
    codes = np.array([*cols.currencies, base_currency], dtype=object)
    currencies = codes[cols.currency[at]]
    amounts = derived.own_cash(cols, at)
    if at.size and derived.has_actions(cols, at):
        paid = corporate_action_cash(derived.action_frame(cols, at), default_currency=base_currency)
        dates = np.concatenate([dates, paid["date"].to_numpy("datetime64[ns]")])
        currencies = np.concatenate([currencies, paid["currency"].to_numpy(object)])
        amounts = np.concatenate([amounts, paid["amount"].to_numpy(np.float64)])
    return dates, currencies, amounts


def check_cash(
    cols: LedgerColumns, portfolio_id: int, base_currency: str, field: str, action: str
) -> None:
    """The strict cash policy over one portfolio's rows of ``cols`` (the change applied):
    :func:`service.ledger.cash.check_strict` without reading the rows again.

    Raises:
        ValidationError: ``field`` ``insufficient_cash``.
    """
    low = overdraft_of_flows(*cash_flows(cols, portfolio_id, base_currency))
    if low is not None:
        cash.refuse_overdraft(low, field, action)


def match(cols: LedgerColumns, rows: NDArray[np.bool_] | None = None) -> LotLedger | None:
    """``quantcore``'s lot match of the security rows of ``cols`` (``None``: none), built
    as columns (:func:`service.ledger.lots.lot_table`): the open lots only, which is all
    the positions need (``lots_only``: no realized piece is kept, the bulk of a large
    ledger's match). ``rows``: only those rows (a mask), the match of
    :func:`service.ledger.columns.subset` of them without copying the columns.

    Raises:
        LedgerCheckError: the ledger cannot be relieved; its rows are then matched once
            more row by row (:func:`service.ledger.lots.check_rows`), which words it.
    """
    security = cols.symbol >= 0 if rows is None else (cols.symbol >= 0) & rows
    if not bool(security.any()):
        return None
    table, bare, by_symbol = lot_table(cols, rows)
    try:
        return match_lots(table, method=by_symbol, substantially_identical=bare, lots_only=True)
    except (LedgerError, ValueError):
        if rows is not None:
            cols = subset(cols, np.flatnonzero(rows))
        ledger_rows, actions = columns_rows(cols)
        methods = dict(zip(cols.portfolios.ids, cols.portfolios.lot_method, strict=True))
        return check_rows(ledger_rows, methods, actions)
