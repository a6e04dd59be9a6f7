"""Sells that name a tax lot (``lot_id``): checked against the lots on the sale date.

A sell may name the buy whose lot it relieves (specific identification, Treas. Reg.
1.1012-1(c)); the tax ledger (:mod:`service.tax.ledger`) passes the name to
``quantcore.tax.match_lots``. A lot named here must be a buy of the same portfolio and
asset, bought on or before the sale, with enough of it left on that day.

"Left" is what ``match_lots`` relieves under ``specific`` on that portfolio and asset:
rows in ``(transaction_date, id)`` order, a named sell takes its lot, a sell without a
name takes the earliest lots first (Treas. Reg. 1.1012-1(c)(1)). Lot ids are facts of
the sale, so the check holds whatever the portfolio's current ``lot_method`` is: it can
switch to ``specific`` at any time. A new sell (named or not) is also refused when it
would leave a later sell that names a lot short. The same dated check covers a
backdated sell without a name: it must be covered by the shares held on its own date
and leave every later sell covered (the position, being today's holding, cannot
tell). Wash sales move basis and holding
periods, never shares between lots, so quantities are all the check needs.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from service import formatting as fmt
from service.db.models import Portfolio, Transaction
from service.errors import ValidationError

__all__ = ["LotRow", "Shortfall", "check_sell", "first_shortfall", "named_lot"]


@dataclass(frozen=True, slots=True)
class LotRow:
    """A buy or sell of one (portfolio, asset), as the check reads it (``id`` None: the new row)."""

    id: int | None
    kind: str
    quantity: Decimal
    date: dt.date
    lot_id: int | None = None


@dataclass(frozen=True, slots=True)
class Shortfall:
    """The first sell that cannot be relieved: the shares it could take (``held``)."""

    row: LotRow
    held: Decimal


def first_shortfall(rows: Sequence[LotRow]) -> Shortfall | None:
    """Relieve ``rows`` (in ledger order) and return the first sell short of shares.

    A named sell is short when its lot holds fewer shares than it sells (or is not
    bought yet); an unnamed one when all the lots together do.

    >>> d = dt.date(2025, 1, 2)
    >>> rows = [LotRow(1, "buy", Decimal(10), d), LotRow(2, "buy", Decimal(5), d),
    ...         LotRow(3, "sell", Decimal(8), d),                 # first in: 8 of lot 1
    ...         LotRow(None, "sell", Decimal(3), d, lot_id=1)]    # lot 1 has 2 left
    >>> short = first_shortfall(rows)
    >>> short.row.lot_id, short.held
    (1, Decimal('2'))
    """
    lots: dict[int, Decimal] = {}  # buy id -> shares left, in buy order
    for row in rows:
        if row.kind == "buy":
            lots[row.id if row.id is not None else -1] = row.quantity
            continue
        if row.lot_id is not None:
            left = lots.get(row.lot_id, Decimal(0))
            if left < row.quantity:
                return Shortfall(row, left)
            lots[row.lot_id] = left - row.quantity
            continue
        total = sum(lots.values(), Decimal(0))
        if total < row.quantity:
            return Shortfall(row, total)
        need = row.quantity
        for lot, left in lots.items():  # first in, first out
            take = min(left, need)
            lots[lot] = left - take
            need -= take
            if need == 0:
                break
    return None


async def named_lot(
    s: AsyncSession, user_id: int, portfolio_id: int, asset_id: int, lot_id: int, sold: dt.date
) -> Transaction:
    """The buy a sell names, checked: the user's, a buy, same portfolio and asset, not later.

    Raises:
        ValidationError: on ``lot_id``: ``not_found`` (no such transaction of the user),
            ``invalid`` (not a buy, another portfolio or asset, bought after the sale).
    """
    buy = (
        await s.execute(
            select(Transaction)
            .join(Portfolio, Portfolio.id == Transaction.portfolio_id)
            .where(Transaction.id == lot_id, Portfolio.user_id == user_id)
        )
    ).scalar_one_or_none()
    if buy is None:
        raise ValidationError("lot_id", "not_found", f"Transaction {lot_id} not found.")
    problem = None
    if buy.transaction_type != "buy":
        problem = f"is a {buy.transaction_type}, not a buy"
    elif buy.portfolio_id != portfolio_id:
        problem = f"is a buy in portfolio {buy.portfolio_id}, not in portfolio {portfolio_id}"
    elif buy.asset_id != asset_id:
        problem = "is a buy of another asset"
    elif buy.transaction_date > sold:
        problem = f"was bought on {buy.transaction_date}, after the sale on {sold}"
    if problem is not None:
        raise ValidationError(
            "lot_id", "invalid", f"lot_id {lot_id}: transaction {lot_id} {problem}."
        )
    return buy


async def check_sell(
    s: AsyncSession,
    portfolio_id: int,
    asset_id: int,
    new: LotRow,
) -> None:
    """Refuse the new sell ``new`` when it, or a later sell naming a lot, would fall short.

    Runs the full check when ``new`` names a lot, a sell of this portfolio and asset
    already does, or ``new`` is dated before another row (a backdated sell must be
    covered on its own date and leave every later sell covered); otherwise the
    caller's held-quantity check is the whole rule. Call it inside the write
    transaction that records the sell, after the portfolio lock.

    Raises:
        ValidationError: ``quantity`` ``insufficient_quantity``, with ``held`` (shares
            the sell could take: of its lot, or of all lots) and ``lot_id``, or with the
            ``transaction_id`` of the later sell it would leave short.
    """
    same = (Transaction.portfolio_id == portfolio_id, Transaction.asset_id == asset_id)
    if new.lot_id is None:
        # The usual case, an unnamed sell dated after every row: the position (all rows)
        # is what is held on its date, and the caller checked that. One indexed probe.
        probe = (
            select(Transaction.id)
            .where(
                *same, or_(Transaction.lot_id.is_not(None), Transaction.transaction_date > new.date)
            )
            .limit(1)
        )
        if (await s.execute(probe)).first() is None:
            return
    result = await s.execute(
        select(
            Transaction.id,
            Transaction.transaction_type,
            Transaction.quantity,
            Transaction.transaction_date,
            Transaction.lot_id,
        )
        .where(*same, Transaction.transaction_type.in_(("buy", "sell")))
        .order_by(Transaction.transaction_date, Transaction.id)
    )
    rows = [LotRow(*r) for r in result.tuples()]
    # the new row gets the largest id: after every row of its date
    at = next((i for i, r in enumerate(rows) if r.date > new.date), len(rows))
    short = first_shortfall([*rows[:at], new, *rows[at:]])
    if short is None:
        return
    if short.row is new:
        where = f"lot {new.lot_id}" if new.lot_id is not None else "the portfolio"
        extra = {"lot_id": new.lot_id} if new.lot_id is not None else {}
        raise ValidationError(
            "quantity", "insufficient_quantity",
            f"Cannot sell {fmt.quantity(new.quantity)}: {where} held {fmt.quantity(short.held)} on {new.date}.",
            held=fmt.quantity(short.held), **extra,
        )  # fmt: skip
    named = f" of lot {short.row.lot_id}" if short.row.lot_id is not None else ""
    raise ValidationError(
        "quantity", "insufficient_quantity",
        f"Selling {fmt.quantity(new.quantity)} on {new.date} would leave the sale{named} on "
        f"{short.row.date} (transaction {short.row.id}) short of shares.",
        transaction_id=short.row.id,
    )  # fmt: skip
