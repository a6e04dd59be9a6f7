"""The user's ledger as one ``quantcore.tax`` lot ledger.

Lots belong to a portfolio (an account): each portfolio's symbols are namespaced
``"<portfolio id>:<symbol>"`` so that a sale relieves only that portfolio's lots,
each with that portfolio's ``lot_method`` (a per-symbol method mapping), while a
``substantially_identical`` map back to the bare symbol lets the wash-sale rule
see purchases in every portfolio of the user, whatever their methods. All of it is
one :func:`quantcore.tax.match_lots` call.

Rows are applied in :func:`service.transactions.lots.ledger_key` order (date, then
dividends, buys, sells, then amounts), so the order of entry never changes a figure.

Lots are named by transaction id: a buy's ``lot_id`` is its own id, a sell's the id
of the buy it names (sells that name none relieve first in, first out under
``specific``). Harvesting proposals and reports therefore label lots with the ids a
sell can name.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Collection, Iterable, Mapping
from decimal import Decimal
from typing import cast

import pandas as pd
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from quantcore.tax import LotLedger, LotMethod, match_lots
from service.db.models import Asset, Portfolio, Transaction
from service.errors import ValidationError
from service.transactions.lots import ledger_key

__all__ = ["LedgerRow", "display", "ledger_rows", "load_ledger", "match_rows", "split_symbol"]


def split_symbol(name: str) -> tuple[int, str]:
    """``"12:AAPL"`` -> ``(12, "AAPL")``."""
    pid, _, symbol = name.partition(":")
    return int(pid), symbol


def display(ledger: LotLedger) -> LotLedger:
    """The ledger with bare symbols (for reports: ``"100 sh. AAPL"``)."""
    return dataclasses.replace(ledger, symbols=tuple(split_symbol(s)[1] for s in ledger.symbols))


#: A ledger row as :func:`ledger_rows` reads it:
#: ``(id, portfolio_id, symbol, date, type, quantity, price, fees, lot_id)``.
LedgerRow = tuple[int, int, str, dt.date, str, Decimal, Decimal, Decimal, "int | None"]


async def ledger_rows(
    session: AsyncSession, portfolio_ids: Collection[int], asset_ids: Collection[int] | None
) -> list[LedgerRow]:
    """The rows of ``portfolio_ids`` (of ``asset_ids``; ``None``: all assets), any order."""
    query = (
        select(
            Transaction.id,
            Transaction.portfolio_id,
            Asset.symbol,
            Transaction.transaction_date,
            Transaction.transaction_type,
            Transaction.quantity,
            Transaction.price,
            Transaction.fees,
            Transaction.lot_id,
        )
        .join(Asset, Asset.id == Transaction.asset_id)
        .where(Transaction.portfolio_id.in_(list(portfolio_ids)))
    )
    if asset_ids is not None:
        query = query.where(Transaction.asset_id.in_(list(asset_ids)))
    return list((await session.execute(query)).tuples())


def match_rows(rows: Iterable[LedgerRow], methods: Mapping[int, str]) -> LotLedger:
    """One :func:`quantcore.tax.match_lots` call over ``rows`` (any order, any portfolios of
    one user; ``methods``: each portfolio's lot method), symbols named ``"<pid>:<symbol>"``.

    Raises:
        ValidationError: ``lot_method`` ``invalid`` when ``quantcore`` cannot relieve the lots.
    """
    ordered = sorted(rows, key=lambda r: ledger_key(r[3], r[4], r[6], r[5], r[7], r[0]))
    records = []
    bare: dict[str, str] = {}
    by_symbol: dict[str, LotMethod] = {}
    for tid, pid, sym, day, kind, qty, price, fees, lot in ordered:
        name = f"{pid}:{sym}"
        if name not in bare:
            bare[name] = sym
            by_symbol[name] = cast(LotMethod, methods[pid])  # a Literal column
        lot_name = str(tid) if kind == "buy" else (str(lot) if lot is not None else None)
        records.append((name, day, kind, qty, price, fees, lot_name))
    table = pd.DataFrame.from_records(
        records, columns=["symbol", "date", "type", "quantity", "price", "fees", "lot_id"]
    )
    try:
        return match_lots(table, method=by_symbol, substantially_identical=bare)
    except ValueError as exc:
        raise ValidationError(
            "lot_method", "invalid", f"The ledger cannot be matched: {exc}"
        ) from None


async def load_ledger(
    session: AsyncSession,
    user_id: int,
    portfolio_id: int | None,
    *,
    asset_ids: Collection[int] | None = None,
) -> LotLedger | None:
    """The lot ledger of one of the user's portfolios, or of all of them (``None``: no portfolio).

    ``asset_ids`` limits it to those assets (exact: wash sales only join a symbol's
    own purchases).

    One portfolio's ledger is cut from the ledger of all of them (:meth:`LotLedger.only`),
    so its wash sales include those caused by purchases in the user's other portfolios.

    Raises:
        ValidationError: ``lot_method`` ``invalid`` when ``quantcore`` cannot relieve
            the lots (e.g. a sell dated before the shares it sells were bought).
    """
    query = select(Portfolio.id, Portfolio.lot_method).where(Portfolio.user_id == user_id)
    methods: dict[int, str] = dict((await session.execute(query)).tuples().all())
    if not methods or (portfolio_id is not None and portfolio_id not in methods):
        return None
    ledger = match_rows(await ledger_rows(session, list(methods), asset_ids), methods)
    if portfolio_id is None:
        return ledger
    return ledger.only({name for name in ledger.symbols if split_symbol(name)[0] == portfolio_id})
