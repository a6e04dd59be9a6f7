"""Pages of a user's ledger rows as entered (the transactions list), newest first."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import Select, and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from service.db.models import Asset, Portfolio, Transaction
from service.errors import ValidationError

__all__ = [
    "PageRow", "check_date_range", "owned_transaction", "transaction_page", "transaction_rows_after",
]

_TARGET = aliased(Asset)
#: ``(transaction, its asset or None, the target's symbol or None)``.
PageRow = tuple[Transaction, Asset | None, str | None]


def _owned(user_id: int) -> Select[Any]:
    return (
        select(Transaction, Asset, _TARGET.symbol)
        .join(Portfolio, Portfolio.id == Transaction.portfolio_id)
        .outerjoin(Asset, Asset.id == Transaction.asset_id)
        .outerjoin(_TARGET, _TARGET.id == Transaction.target_asset_id)
        .where(Portfolio.user_id == user_id)
    )


def check_date_range(date_from: dt.date | None, date_to: dt.date | None) -> None:
    """Raises ValidationError (``date_from``) when ``date_from`` is after ``date_to``."""
    if date_from is not None and date_to is not None and date_from > date_to:
        raise ValidationError("date_from", "invalid", "date_from must not be after date_to.")


def _filters(
    user_id: int,
    portfolio_id: int | None,
    asset_symbol: str | None,
    transaction_type: str | None,
    date_from: dt.date | None,
    date_to: dt.date | None,
) -> list[Any]:
    """The conditions of the list's filters (the user's rows first)."""
    check_date_range(date_from, date_to)
    conditions: list[Any] = [Portfolio.user_id == user_id]
    if portfolio_id is not None:
        conditions.append(Transaction.portfolio_id == portfolio_id)
    if asset_symbol:
        conditions.append(Asset.symbol == asset_symbol.upper())
    if transaction_type:
        conditions.append(Transaction.transaction_type == transaction_type)
    if date_from is not None:
        conditions.append(Transaction.transaction_date >= date_from)
    if date_to is not None:
        conditions.append(Transaction.transaction_date <= date_to)
    return conditions


#: The list's order: newest first, then by id.
_ORDER = (Transaction.transaction_date.desc(), Transaction.id.desc())


async def transaction_page(
    session: AsyncSession,
    user_id: int,
    limit: int,
    offset: int,
    *,
    portfolio_id: int | None = None,
    asset_symbol: str | None = None,
    transaction_type: str | None = None,
    date_from: dt.date | None = None,
    date_to: dt.date | None = None,
) -> tuple[list[PageRow], int]:
    """One page of the user's rows (filtered; newest first, then by id) and the count of all.

    Raises:
        ValidationError: ``date_from`` ``invalid`` when it is after ``date_to``.
    """
    conditions = _filters(user_id, portfolio_id, asset_symbol, transaction_type, date_from, date_to)
    # the count joins an asset only to filter by it: the outer joins of the page's
    # columns leave the number of rows as it is and cost a lookup per row
    counted = (
        select(func.count())
        .select_from(Transaction)
        .join(Portfolio, Portfolio.id == Transaction.portfolio_id)
    )
    if asset_symbol:
        counted = counted.join(Asset, Asset.id == Transaction.asset_id)
    count = (await session.execute(counted.where(*conditions))).scalar_one()
    rows = await session.execute(
        _owned(user_id).where(*conditions).order_by(*_ORDER).limit(limit).offset(offset)
    )
    return list(rows.tuples()), int(count)


async def transaction_rows_after(
    session: AsyncSession,
    user_id: int,
    limit: int,
    after: tuple[dt.date, int] | None,
    *,
    portfolio_id: int | None = None,
    asset_symbol: str | None = None,
    transaction_type: str | None = None,
    date_from: dt.date | None = None,
    date_to: dt.date | None = None,
) -> list[PageRow]:
    """The next ``limit`` rows of the list (its filters and order) after the row
    ``after`` (its ``(transaction_date, id)``; ``None``: from the first). No offset to
    scan and no count: what a streamed export reads a ledger of any size by.

    Raises:
        ValidationError: ``date_from`` ``invalid`` when it is after ``date_to``.
    """
    conditions = _filters(user_id, portfolio_id, asset_symbol, transaction_type, date_from, date_to)
    if after is not None:
        day, last = after
        conditions += [
            Transaction.transaction_date <= day,  # a range the (portfolio, date) index serves
            or_(
                Transaction.transaction_date < day,
                and_(Transaction.transaction_date == day, Transaction.id < last),
            ),
        ]
    rows = await session.execute(_owned(user_id).where(*conditions).order_by(*_ORDER).limit(limit))
    return list(rows.tuples())


async def owned_transaction(session: AsyncSession, user_id: int, txn_id: int) -> PageRow | None:
    """The user's transaction ``txn_id`` as a :data:`PageRow` (``None``: not the user's)."""
    row = (await session.execute(_owned(user_id).where(Transaction.id == txn_id))).tuples().first()
    return None if row is None else (row[0], row[1], row[2])
