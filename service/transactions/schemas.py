"""Wire shapes of ``/api/transactions/``."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

import msgspec

from service.ledger.checks import CASH_TYPES
from service.ledger.inputs import Currency, DecimalInput

__all__ = ["CASH_TYPES", "Currency", "DecimalInput", "TransactionCreate", "TransactionRead", "TransactionType"]

TransactionType = Literal[
    "buy", "sell", "dividend", "split", "stock_dividend", "return_of_capital", "spin_off", "merger",
    "deposit", "withdrawal", "interest", "fee",
]

_Symbol = Annotated[str, msgspec.Meta(min_length=1, max_length=32)]


class TransactionCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A ledger entry. For ``dividend``, ``quantity`` is the shares paid on and ``price`` the amount per share.

    ``lot_id`` (sells only): the id of the buy whose tax lot the sell relieves.

    Cash rows (``deposit``, ``withdrawal``: money put in or taken out; ``interest``;
    ``fee``) omit ``asset_symbol`` and ``quantity``: ``price`` is the amount, in
    ``currency`` (default: the portfolio's base currency). ``fees`` of a deposit,
    withdrawal or interest are charged on top (a ``fee`` row takes none). A security
    row's cash moves in its asset's currency; it takes no ``currency``.

    Corporate actions act on every share of ``asset_symbol`` held in the portfolio on
    ``transaction_date`` (the ex-date; take no ``quantity``, ``fees`` or ``lot_id``):

    - ``split`` / ``stock_dividend``: ``split_ratio`` shares after per share before
      (``"4"``: 4-for-1, ``"0.1"``: 1-for-10, ``"1.05"``: a 5 % stock dividend); optional
      ``cash_in_lieu``, the cash paid for the fractional share left (a sale of it).
    - ``return_of_capital``: ``price``, the distribution per share (reduces basis; the
      part beyond zero basis is a capital gain).
    - ``spin_off``: ``target_symbol`` (the new company), ``ratio`` new shares per old
      share, ``basis_allocation`` the fraction of the old basis moved to the new shares
      (the issuer's Form 8937).
    - ``merger``: ``target_symbol`` (the acquirer), ``ratio`` its shares per old share and/or
      ``cash_per_share``; with both, ``price`` is the value of one new share (it splits the
      basis between the cash, a sale, and the new shares).
    """

    portfolio: int
    asset_symbol: _Symbol | None = None
    transaction_type: TransactionType
    quantity: DecimalInput | None = None
    price: DecimalInput | None = None
    transaction_date: dt.date
    fees: DecimalInput = "0"
    lot_id: int | None = None
    split_ratio: DecimalInput | None = None
    cash_in_lieu: DecimalInput | None = None
    ratio: DecimalInput | None = None
    target_symbol: _Symbol | None = None
    basis_allocation: DecimalInput | None = None
    cash_per_share: DecimalInput | None = None
    currency: Currency | None = None


class TransactionRead(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A ledger row; a corporate action's fields appear on corporate actions only.

    A cash row has no asset (``asset_symbol`` and ``asset_name`` null), quantity 1 and
    its amount as ``price``. ``currency`` is the currency its cash moves in.
    """

    id: int
    portfolio: int
    asset_symbol: str | None
    asset_name: str | None
    transaction_type: str
    currency: str
    quantity: str
    price: str
    fees: str
    total_amount: str
    transaction_date: dt.date
    lot_id: int | None  # the buy a sell relieves; null when none named
    created_at: dt.datetime
    # corporate actions' fields (null on other types)
    split_ratio: str | None = None
    cash_in_lieu: str | None = None
    ratio: str | None = None
    target_symbol: str | None = None
    basis_allocation: str | None = None
    cash_per_share: str | None = None
