"""The ledger check every write passes, and sells that name a tax lot (``lot_id``).

**Ledger order.** A portfolio's rows of one asset are applied in :func:`ledger_key`
order: by date; within a day dividends (paid on the shares held at the previous
close), then corporate actions (their date is the ex-date: the day's trades are in
the new shares), then buys, then sells; ties by price, quantity, fees and finally id. Only
dates and amounts decide, so the order of entry never changes a figure. The tax
ledger (:mod:`service.ledger.lots`) and the derived positions use the same order.

**The check.** A write (create, edit, delete) is allowed only when the symbol's
whole ledger, with the change applied, still relieves: every sell is covered by
the shares held at its place in the ledger, every dividend by the shares held at
the previous close, and a sell naming a lot (specific identification, Treas. Reg.
1.1012-1(c)) finds enough of that lot left. A named lot must be a buy of the same
portfolio and asset, bought on or before the sale. "Left" is what
``quantcore.tax.match_lots`` relieves under ``specific``: a named sell takes its
lot, an unnamed one the earliest lots first (Treas. Reg. 1.1012-1(c)(1)). Lot ids
are facts of the sale, so the check holds whatever the portfolio's ``lot_method``.
A new buy is not checked: it only adds shares, and an unnamed sell that now takes
the new lot instead of a later one leaves every other lot at least as full, so no
sell, named or not, and no dividend can become short.
Wash sales move basis and holding periods, never shares between lots, so
quantities are all the check needs. A split or stock dividend multiplies every lot,
a merger empties them; shares a spin-off or merger delivers to another asset are
checked by ``quantcore`` (:func:`service.ledger.lots.check_rows`), which also checks
every corporate action finds shares held.
"""

from __future__ import annotations

import datetime as dt
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import NoReturn

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from service import formatting as fmt
from service.db.models import Portfolio, Transaction
from service.errors import ValidationError

__all__ = [
    "CASH_TYPES",
    "CORPORATE_ACTIONS", "LotRow", "Shortfall", "check_ledger", "first_shortfall", "ledger_key", "named_lot",
    "refuse"]

#: Within a day: dividends (on the previous close's shares), corporate actions, buys, then sells.
_DAY_RANK = {
    "dividend": 0,
    "split": 1,
    "stock_dividend": 1,
    "return_of_capital": 1,
    "spin_off": 1,
    "merger": 1,
    "buy": 2,
    "sell": 3,
}
#: Corporate actions: the ``transaction_type`` values besides buy, sell and dividend.
CORPORATE_ACTIONS = frozenset(("split", "stock_dividend", "return_of_capital", "spin_off", "merger"))
#: Rows without an asset: they move cash only.
CASH_TYPES = ("deposit", "withdrawal", "interest", "fee")


@dataclass(frozen=True, slots=True)
class LotRow:
    """A ledger row of one (portfolio, asset), as the check reads it (``id`` None: the new row)."""

    id: int | None
    kind: str
    quantity: Decimal
    date: dt.date
    lot_id: int | None = None
    price: Decimal = Decimal(0)
    fees: Decimal = Decimal(0)
    ratio: Decimal | None = None  # a split's or stock dividend's multiplier


def ledger_key(
    date: dt.date, kind: str, price: Decimal, quantity: Decimal, fees: Decimal, row_id: int | None
) -> tuple[dt.date, int, Decimal, Decimal, Decimal, float]:
    """The sort key of a ledger row: date, day rank, then amounts; the id breaks exact ties.

    >>> d = dt.date(2025, 1, 2)
    >>> ledger_key(d, "sell", Decimal(9), Decimal(1), Decimal(0), 1) > ledger_key(
    ...     d, "buy", Decimal(10), Decimal(1), Decimal(0), 2)
    True
    """
    return (
        date,
        _DAY_RANK.get(kind, 2),
        price,
        quantity,
        fees,
        float("inf") if row_id is None else row_id,
    )


def _key(r: LotRow) -> tuple[dt.date, int, Decimal, Decimal, Decimal, float]:
    return ledger_key(r.date, r.kind, r.price, r.quantity, r.fees, r.id)


@dataclass(frozen=True, slots=True)
class Shortfall:
    """The first sell that cannot be relieved: the shares it could take (``held``)."""

    row: LotRow
    held: Decimal


def first_shortfall(rows: Sequence[LotRow]) -> Shortfall | None:
    """Relieve ``rows`` (in ledger order) and return the first sell short of shares.

    A named sell is short when its lot holds fewer shares than it sells (or is not
    bought yet); an unnamed one when all the lots together do; a dividend when it is
    paid on more shares than all the lots hold.

    >>> d = dt.date(2025, 1, 2)
    >>> rows = [LotRow(1, "buy", Decimal(10), d), LotRow(2, "buy", Decimal(5), d),
    ...         LotRow(3, "sell", Decimal(8), d),                 # first in: 8 of lot 1
    ...         LotRow(None, "sell", Decimal(3), d, lot_id=1)]    # lot 1 has 2 left
    >>> short = first_shortfall(rows)
    >>> short.row.lot_id, short.held
    (1, Decimal('2'))
    """
    # buy id -> shares left, in buy order; emptied lots leave, so a sell looks at few
    lots: OrderedDict[int, Decimal] = OrderedDict()
    total = Decimal(0)  # shares left in all lots
    for row in rows:
        if row.kind == "buy":
            lots[row.id if row.id is not None else -1] = row.quantity
            total += row.quantity
            continue
        if row.kind == "dividend":
            if total < row.quantity:
                return Shortfall(row, total)
            continue
        if row.kind in ("split", "stock_dividend") and row.ratio is not None:
            for lot in lots:
                lots[lot] *= row.ratio
            total *= row.ratio
            continue
        if row.kind == "merger":
            lots.clear()
            total = Decimal(0)
            continue
        if row.kind in CORPORATE_ACTIONS:
            continue
        if row.lot_id is not None:
            left = lots.get(row.lot_id, Decimal(0))
            if left < row.quantity:
                return Shortfall(row, left)
            if left == row.quantity:
                lots.pop(row.lot_id, None)
            else:
                lots[row.lot_id] = left - row.quantity
            total -= row.quantity
            continue
        if total < row.quantity:
            return Shortfall(row, total)
        total -= row.quantity
        need = row.quantity
        while need > 0:  # first in, first out
            lot, left = next(iter(lots.items()))
            take = min(left, need)
            need -= take
            if take == left:
                del lots[lot]
            else:
                lots[lot] = left - take
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


def check_ledger(
    rows: Iterable[LotRow],
    *,
    add: LotRow | None = None,
    drop: int | None = None,
    action: str = "This change",
    symbol: str | None = None,
) -> None:
    """Refuse a write that would leave a (portfolio, asset) ledger unrelievable.

    ``rows`` are that ledger's rows as read in the write transaction (after the
    portfolio lock, before writing), in any order; ``add`` is the row written (``id``
    None for a new row; an edited row keeps its id), ``drop`` the id of a row removed
    (an edit drops the old version and adds the new); ``symbol`` the asset's, for the
    message.

    Raises:
        ValidationError: ``quantity`` ``insufficient_quantity``: with ``held`` (shares
            the written row could take: of its lot, or of all lots) and ``lot_id``, or
            with the ``transaction_id`` of another row the change would leave short.
    """
    kept = [r for r in rows if r.id != drop]
    if add is not None:
        kept.append(add)
    short = first_shortfall(sorted(kept, key=_key))
    if short is not None:
        refuse(short, written=add is not None and short.row is add, action=action, symbol=symbol)


def refuse(short: Shortfall, *, written: bool, action: str, symbol: str | None = None) -> NoReturn:
    """The 400 of a shortfall: worded for the row written (``written``), else naming the
    row the change leaves short (:func:`check_ledger`); the message names the symbol
    (when given), the date and, for a sale of a named lot, its ``lot_id``."""
    row = short.row
    of = f" {symbol}" if symbol else ""
    if written:
        held = fmt.quantity(short.held)
        if row.kind == "dividend":
            raise ValidationError(
                "quantity", "insufficient_quantity",
                f"A dividend on {fmt.quantity(row.quantity)}{of} shares needs them held at the "
                f"close before {row.date}: {held} held.",
                held=held,
            )  # fmt: skip
        where = f"its lot (lot_id {row.lot_id})" if row.lot_id is not None else "the portfolio"
        extra = {"lot_id": row.lot_id} if row.lot_id is not None else {}
        raise ValidationError(
            "quantity", "insufficient_quantity",
            f"Cannot sell {fmt.quantity(row.quantity)}{of} on {row.date}: {where} held {held}.",
            held=held, **extra,
        )  # fmt: skip
    named = f", of lot_id {row.lot_id}" if row.lot_id is not None else ""
    raise ValidationError(
        "quantity", "insufficient_quantity",
        f"{action} would leave the {row.kind}{' of' if symbol else ''}{of} on {row.date} "
        f"(transaction {row.id}{named}) short of shares.",
        transaction_id=row.id,
    )  # fmt: skip
