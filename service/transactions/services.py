"""Reading the ledger's rows for ``/api/transactions/``; writes are :mod:`service.ledger.writes`.

The rows come from :mod:`service.ledger.pages` (the ledger module is the only reader of
transactions); this module shapes them for the wire.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from service import formatting as fmt
from service.db.models import Asset, Transaction
from service.errors import NotFoundError
from service.ledger import pages
from service.ledger.checks import CORPORATE_ACTIONS
from service.ledger.writes import LedgerEntry, check_amount, record, remove, update
from service.pagination import PageParams
from service.transactions.schemas import TransactionRead

__all__ = [
    "LedgerEntry",
    "check_amount",
    "get_transaction",
    "list_transactions",
    "record",
    "remove",
    "transaction_read",
    "update",
]

_SPLITS = ("split", "stock_dividend")
_LINKED = ("spin_off", "merger")




def _plain(d: Decimal | None) -> str | None:
    """A ratio as typed: no trailing zeros, no exponent (``"4"``, ``"0.1"``)."""
    return None if d is None else fmt.plain(d)


def _action_fields(txn: Transaction, target_symbol: str | None) -> dict[str, Any]:
    """A corporate action's request fields, as strings (empty for other types)."""
    kind = txn.transaction_type
    out: dict[str, Any] = {}
    if kind in _SPLITS:
        out["split_ratio"] = _plain(txn.ratio)
        out["cash_in_lieu"] = fmt.dec(txn.cash) if txn.cash is not None else None
    elif kind in _LINKED:
        out["target_symbol"] = target_symbol
        out["ratio"] = _plain(txn.ratio)
        if kind == "spin_off":
            out["basis_allocation"] = _plain(txn.basis_allocation)
        else:
            out["cash_per_share"] = fmt.dec(txn.cash) if txn.cash is not None else None
    return out


def transaction_read(
    txn: Transaction, asset: Asset | None, target_symbol: str | None = None
) -> TransactionRead:
    """The wire shape; ``total_amount`` is money: the cash paid (buy, withdrawal: gross +
    fees; fee: its amount) or received (sell, dividend, deposit, interest: gross - fees,
    never negative), rounded to cents; 0.00 for a corporate action (its cash is in the
    tax figures). ``asset`` is ``None`` for a cash row."""
    gross = txn.quantity * txn.price
    paid = txn.transaction_type in ("buy", "withdrawal")
    total = gross + txn.fees if paid else gross - txn.fees
    if txn.transaction_type in CORPORATE_ACTIONS:
        total = Decimal(0)
    return TransactionRead(
        id=txn.id,
        portfolio=txn.portfolio_id,
        asset_symbol=asset.symbol if asset is not None else None,
        asset_name=asset.name if asset is not None else None,
        transaction_type=txn.transaction_type,
        currency=txn.currency or (asset.currency if asset is not None else "USD"),
        quantity=fmt.quantity(txn.quantity),
        price=fmt.dec(txn.price),
        fees=fmt.dec(txn.fees),
        total_amount=fmt.money(total) or "0.00",
        transaction_date=txn.transaction_date,
        lot_id=txn.lot_id,
        created_at=txn.created_at,
        **_action_fields(txn, target_symbol),
    )


async def list_transactions(
    session: AsyncSession,
    user_id: int,
    page: PageParams,
    *,
    portfolio_id: int | None,
    asset_symbol: str | None,
    transaction_type: str | None,
    date_from: dt.date | None,
    date_to: dt.date | None,
) -> tuple[list[TransactionRead], int]:
    """The user's ledger, newest first, filtered and paginated."""
    rows, count = await pages.transaction_page(
        session, user_id, page.limit, page.offset, portfolio_id=portfolio_id,
        asset_symbol=asset_symbol, transaction_type=transaction_type,
        date_from=date_from, date_to=date_to,
    )  # fmt: skip
    return [transaction_read(t, a, ts) for t, a, ts in rows], count


async def transactions_after(
    session: AsyncSession,
    user_id: int,
    limit: int,
    after: TransactionRead | None,
    *,
    portfolio_id: int | None,
    asset_symbol: str | None,
    transaction_type: str | None,
    date_from: dt.date | None,
    date_to: dt.date | None,
) -> list[TransactionRead]:
    """The next ``limit`` rows of :func:`list_transactions`' list after the row ``after``
    (``None``: from the first), read from where that row is, not by an offset."""
    rows = await pages.transaction_rows_after(
        session, user_id, limit, None if after is None else (after.transaction_date, after.id),
        portfolio_id=portfolio_id, asset_symbol=asset_symbol,
        transaction_type=transaction_type, date_from=date_from, date_to=date_to,
    )  # fmt: skip
    return [transaction_read(t, a, ts) for t, a, ts in rows]


async def get_transaction(session: AsyncSession, user_id: int, txn_id: int) -> TransactionRead:
    """One of the user's transactions; another user's (or none) is a 404."""
    row = await pages.owned_transaction(session, user_id, txn_id)
    if row is None:
        raise NotFoundError(f"Transaction {txn_id} not found.")
    return transaction_read(*row)
