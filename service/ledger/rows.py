"""The row shapes of the lot ledger (:mod:`service.ledger.lots`), apart so that the
US-dollar conversion (:mod:`service.ledger.usd`) and the lots can both name them."""

from __future__ import annotations

import dataclasses
import datetime as dt
from decimal import Decimal

__all__ = ["Action", "LedgerCheckError", "LedgerRow"]


@dataclasses.dataclass(frozen=True, slots=True)
class Action:
    """The fields of a corporate action (see :func:`quantcore.tax.match_lots`): ``ratio``
    (a split's multiplier, or new shares per old share), ``target`` (symbol of a
    spin-off's or merger's new shares), ``basis_allocation`` and ``cash`` (in lieu of a
    fraction, a total; or a merger's cash per old share)."""

    ratio: Decimal | None = None
    target: str | None = None
    basis_allocation: Decimal | None = None
    cash: Decimal | None = None


class LedgerCheckError(Exception):
    """``quantcore`` cannot relieve the ledger: the transaction (``txn_id``) it stops at,
    the column it names (``None``: the row as a whole) and what is wrong (``code``)."""

    def __init__(self, message: str, txn_id: int, column: str | None, code: str) -> None:
        super().__init__(message)
        self.txn_id = txn_id
        self.column = column
        self.code = code


#: A ledger row as :func:`service.ledger.lots.ledger_rows` reads it:
#: ``(id, portfolio_id, symbol, date, type, quantity, price, fees, lot_id)``.
LedgerRow = tuple[int, int, str, dt.date, str, Decimal, Decimal, Decimal, "int | None"]
