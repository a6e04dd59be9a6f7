"""Wire shapes of ``/api/transactions/``."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated, Literal

import msgspec

__all__ = ["TransactionCreate", "TransactionRead", "TransactionType"]

TransactionType = Literal["buy", "sell", "dividend"]


class TransactionCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A ledger entry. For ``dividend``, ``quantity`` is the shares paid on and ``price`` the amount per share.

    ``lot_id`` (sells only): the id of the buy whose tax lot the sell relieves.
    """

    portfolio: int
    asset_symbol: Annotated[str, msgspec.Meta(min_length=1, max_length=32)]
    transaction_type: TransactionType
    quantity: Decimal
    price: Decimal
    transaction_date: dt.date
    fees: Decimal = Decimal(0)
    lot_id: int | None = None


class TransactionRead(msgspec.Struct, kw_only=True):
    id: int
    portfolio: int
    asset_symbol: str
    asset_name: str
    transaction_type: str
    quantity: str
    price: str
    fees: str
    total_amount: str
    transaction_date: dt.date
    lot_id: int | None  # the buy a sell relieves; null when none named
    created_at: dt.datetime
