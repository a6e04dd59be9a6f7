"""Wire shapes of ``/api/transactions/``."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

import msgspec

__all__ = ["DecimalInput", "TransactionCreate", "TransactionRead", "TransactionType"]

#: A decimal as a JSON string of ASCII digits (optional sign, point, exponent), or a JSON
#: number. Python's ``Decimal`` would also read ``"1_000"``, full-width digits and
#: padding spaces; those are 400s naming the field.
DecimalInput = (
    Annotated[
        str, msgspec.Meta(pattern=r"\A[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
    ]
    | int
    | float
)

TransactionType = Literal["buy", "sell", "dividend"]


class TransactionCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A ledger entry. For ``dividend``, ``quantity`` is the shares paid on and ``price`` the amount per share.

    ``lot_id`` (sells only): the id of the buy whose tax lot the sell relieves.
    """

    portfolio: int
    asset_symbol: Annotated[str, msgspec.Meta(min_length=1, max_length=32)]
    transaction_type: TransactionType
    quantity: DecimalInput
    price: DecimalInput
    transaction_date: dt.date
    fees: DecimalInput = "0"
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
