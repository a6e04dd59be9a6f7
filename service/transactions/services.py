"""Writing and reading the ledger.

A write locks the portfolio (``SELECT ... FOR UPDATE`` on PostgreSQL; the SQLite
write transaction is ``BEGIN IMMEDIATE``), checks the holding, appends the ledger row
and updates the derived position in the same transaction: two concurrent sells can
never both spend the same shares, and a crash leaves either both writes or neither.

A sell may name the buy whose tax lot it relieves (``lot_id``); see
:mod:`service.transactions.lots` for how that is checked, in the same transaction.

Positions use the average-cost method: a buy adds ``quantity * price + fees`` to the
cost basis; a sell removes ``quantity * cost_basis / held`` (fees reduce proceeds,
not the basis); dividends leave the position unchanged.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from sqlalchemy import Select, delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from service import formatting as fmt
from service.db import Database
from service.db.models import Asset, Portfolio, Position, Transaction, utcnow
from service.db.types import quantize
from service.errors import ApiError, NotFoundError, ValidationError
from service.pagination import PageParams
from service.transactions import lots
from service.transactions.schemas import TransactionRead

__all__ = [
    "LedgerEntry",
    "check_amount",
    "get_transaction",
    "list_transactions",
    "record",
    "transaction_read",
]

_MAX = Decimal("1e20")


def check_amount(value: Decimal, field: str, *, positive: bool) -> Decimal:
    """A finite decimal with at most 8 fractional digits, > 0 (or >= 0).

    Raises:
        ValidationError: naming ``field`` (codes ``invalid``, ``max_decimal_places``,
            ``min_value``, ``max_value``).
    """
    if not value.is_finite():
        raise ValidationError(field, "invalid", f"{field} must be a finite decimal number.")
    if value.as_tuple().exponent < -8 and value != quantize(value):  # type: ignore[operator]
        raise ValidationError(
            field, "max_decimal_places", f"{field} allows at most 8 fractional digits."
        )
    if value < 0 or (positive and value == 0):
        bound = "greater than 0" if positive else "at least 0"
        raise ValidationError(field, "min_value", f"{field} must be {bound}.")
    if value >= _MAX:
        raise ValidationError(field, "max_value", f"{field} must be less than {_MAX:.0e}.")
    return quantize(value)


class LedgerEntry:
    """A validated ledger entry about to be written."""

    __slots__ = ("date", "fees", "kind", "lot_id", "price", "quantity", "symbol")

    def __init__(
        self,
        symbol: str,
        kind: str,
        quantity: Decimal,
        price: Decimal,
        fees: Decimal,
        date: dt.date,
        *,
        price_field: str = "price",
        date_field: str = "transaction_date",
        lot_id: int | None = None,
    ) -> None:
        self.symbol = symbol.upper()
        self.kind = kind
        self.quantity = check_amount(quantity, "quantity", positive=True)
        self.price = check_amount(price, price_field, positive=kind != "dividend")
        self.fees = check_amount(fees, "fees", positive=False)
        if date > dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1):
            raise ValidationError(date_field, "max_value", f"{date_field} cannot be in the future.")
        self.date = date
        if lot_id is not None and kind != "sell":
            raise ValidationError(
                "lot_id", "invalid", "lot_id names the lot a sell relieves; only sells take one."
            )
        self.lot_id = lot_id


async def record(
    db: Database,
    user_id: int,
    portfolio_id: int,
    entry: LedgerEntry,
    *,
    missing_portfolio: type[ApiError] | None = None,
) -> tuple[Transaction, Asset, Position | None]:
    """Append ``entry`` to the ledger of one of the user's portfolios and update the position.

    Args:
        missing_portfolio: raise this (404) instead of a 400 on ``portfolio`` when the
            portfolio is not the user's (used when the id comes from the path).

    Raises:
        ValidationError: unknown portfolio or asset, ``quantity`` above the holding or
            above what a named lot holds on the sale date (``insufficient_quantity``),
            ``lot_id`` not a buy of this portfolio and asset on or before the sale
            (``not_found``, ``invalid``); nothing is written then.
    """
    async with db.write() as s:
        portfolio = (
            await s.execute(
                select(Portfolio)
                .where(Portfolio.id == portfolio_id, Portfolio.user_id == user_id)
                .with_for_update()
            )
        ).scalar_one_or_none()
        if portfolio is None:
            if missing_portfolio is not None:
                raise missing_portfolio(f"Portfolio {portfolio_id} not found.")
            raise ValidationError("portfolio", "not_found", f"Portfolio {portfolio_id} not found.")
        asset = (
            await s.execute(select(Asset).where(Asset.symbol == entry.symbol))
        ).scalar_one_or_none()
        if asset is None:
            raise ValidationError(
                "asset_symbol", "not_found", f"Unknown asset symbol {entry.symbol!r}."
            )
        if entry.lot_id is not None:
            await lots.named_lot(s, user_id, portfolio.id, asset.id, entry.lot_id, entry.date)
        position = (
            await s.execute(
                select(Position).where(
                    Position.portfolio_id == portfolio.id, Position.asset_id == asset.id
                )
            )
        ).scalar_one_or_none()
        now = utcnow()
        if entry.kind == "buy":
            cost = quantize(entry.quantity * entry.price + entry.fees)
            if position is None:
                position = Position(
                    portfolio_id=portfolio.id,
                    asset_id=asset.id,
                    quantity=entry.quantity,
                    cost_basis=cost,
                    updated_at=now,
                )
                s.add(position)
            else:
                position.quantity = position.quantity + entry.quantity
                position.cost_basis = position.cost_basis + cost
                position.updated_at = now
        elif entry.kind == "sell":
            held = position.quantity if position is not None else Decimal(0)
            if position is None or entry.quantity > held:
                raise ValidationError(
                    "quantity",
                    "insufficient_quantity",
                    f"Cannot sell {fmt.quantity(entry.quantity)} {entry.symbol}: "
                    f"{fmt.quantity(held)} held in portfolio {portfolio.id}.",
                    held=fmt.quantity(held),
                )
            new = lots.LotRow(None, "sell", entry.quantity, entry.date, entry.lot_id)
            await lots.check_sell(s, portfolio.id, asset.id, new)
            remaining = position.quantity - entry.quantity
            if remaining == 0:
                await s.execute(delete(Position).where(Position.id == position.id))
                position = None
            else:
                position.cost_basis = quantize(position.cost_basis * remaining / position.quantity)
                position.quantity = remaining
                position.updated_at = now
        txn = Transaction(
            portfolio_id=portfolio.id,
            asset_id=asset.id,
            transaction_type=entry.kind,
            quantity=entry.quantity,
            price=entry.price,
            fees=entry.fees,
            transaction_date=entry.date,
            lot_id=entry.lot_id,
            created_at=now,
        )
        s.add(txn)
        portfolio.updated_at = now
        await s.flush()
    return txn, asset, position


def transaction_read(txn: Transaction, asset: Asset) -> TransactionRead:
    gross = txn.quantity * txn.price
    total = gross + txn.fees if txn.transaction_type == "buy" else gross - txn.fees
    return TransactionRead(
        id=txn.id,
        portfolio=txn.portfolio_id,
        asset_symbol=asset.symbol,
        asset_name=asset.name,
        transaction_type=txn.transaction_type,
        quantity=fmt.quantity(txn.quantity),
        price=fmt.dec(txn.price),
        fees=fmt.dec(txn.fees),
        total_amount=fmt.dec(quantize(total)),
        transaction_date=txn.transaction_date,
        lot_id=txn.lot_id,
        created_at=txn.created_at,
    )


def _owned(user_id: int) -> Select[Any]:
    return (
        select(Transaction, Asset)
        .join(Portfolio, Portfolio.id == Transaction.portfolio_id)
        .join(Asset, Asset.id == Transaction.asset_id)
        .where(Portfolio.user_id == user_id)
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
    if date_from is not None and date_to is not None and date_from > date_to:
        raise ValidationError("date_from", "invalid", "date_from must not be after date_to.")
    query = _owned(user_id)
    if portfolio_id is not None:
        query = query.where(Transaction.portfolio_id == portfolio_id)
    if asset_symbol:
        query = query.where(Asset.symbol == asset_symbol.upper())
    if transaction_type:
        query = query.where(Transaction.transaction_type == transaction_type)
    if date_from is not None:
        query = query.where(Transaction.transaction_date >= date_from)
    if date_to is not None:
        query = query.where(Transaction.transaction_date <= date_to)
    count = (await session.execute(select(func.count()).select_from(query.subquery()))).scalar_one()
    rows = await session.execute(
        query.order_by(Transaction.transaction_date.desc(), Transaction.id.desc())
        .limit(page.limit)
        .offset(page.offset)
    )
    return [transaction_read(t, a) for t, a in rows.tuples()], int(count)


async def get_transaction(session: AsyncSession, user_id: int, txn_id: int) -> TransactionRead:
    row = (await session.execute(_owned(user_id).where(Transaction.id == txn_id))).tuples().first()
    if row is None:
        raise NotFoundError(f"Transaction {txn_id} not found.")
    return transaction_read(*row)
