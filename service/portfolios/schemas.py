"""Wire shapes of ``/api/portfolios/``."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

import msgspec

from service import patterns
from service.assets.schemas import AssetRef
from service.transactions.schemas import DecimalInput

__all__ = [
    "Ordering",
    "PortfolioCreate",
    "PortfolioRead",
    "PortfolioUpdate",
    "PositionCreate",
    "PositionRead",
]

#: Printable, not blank (no NUL or other control characters).
Name = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=200,
        pattern=patterns.PRINTABLE_NOT_BLANK,
    ),
]
Description = Annotated[str, msgspec.Meta(max_length=10_000)]
Symbol = Annotated[str, msgspec.Meta(min_length=1, max_length=32)]
Ordering = Literal["name", "-name", "created_at", "-created_at", "total_value", "-total_value"]


class PortfolioCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    name: Name
    description: Description = ""
    benchmark_symbol: Symbol = "SPY"
    is_active: bool = True


class PortfolioUpdate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """PUT body: ``name`` is required; omitted optional fields keep their value."""

    name: Name
    description: Description | None = None
    benchmark_symbol: Symbol | None = None
    is_active: bool | None = None


class PortfolioRead(msgspec.Struct, kw_only=True):
    id: int
    name: str
    description: str
    benchmark_symbol: str
    is_active: bool
    total_value: str
    daily_change: str
    daily_change_percent: str
    position_count: int
    created_at: dt.datetime
    updated_at: dt.datetime


class PositionCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Records a ``buy`` in the ledger (fees 0 unless given)."""

    asset_symbol: Symbol
    quantity: DecimalInput
    purchase_price: DecimalInput
    purchase_date: dt.date
    fees: DecimalInput = "0"


class PositionRead(msgspec.Struct, kw_only=True):
    id: int
    asset: AssetRef
    quantity: str
    average_cost: str
    cost_basis: str
    current_value: str | None
    unrealized_gain_loss: str | None
    unrealized_gain_loss_percent: str | None
    last_updated: dt.datetime
