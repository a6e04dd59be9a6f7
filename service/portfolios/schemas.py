"""Wire shapes of ``/api/portfolios/``."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

import msgspec

from service import patterns
from service.assets.schemas import AssetRef
from service.ledger.inputs import Currency, DecimalInput
from service.ledger.reads import CashBalanceRead, PortfolioRead

__all__ = [
    "CashBalanceRead",
    "CashPolicy",
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
#: ``track``: cash may go negative (shown as such); ``strict``: a write that would make
#: it negative on any day is refused.
CashPolicy = Literal["track", "strict"]
Ordering = Literal["name", "-name", "created_at", "-created_at", "total_value", "-total_value"]


class PortfolioCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A new portfolio. ``base_currency`` is what its values are shown in (ISO 4217)."""

    name: Name
    description: Description = ""
    benchmark_symbol: Symbol = "SPY"
    is_active: bool = True
    base_currency: Currency = "USD"
    cash_policy: CashPolicy = "track"


class PortfolioUpdate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """PUT body: ``name`` is required; omitted optional fields keep their value."""

    name: Name
    description: Description | None = None
    benchmark_symbol: Symbol | None = None
    is_active: bool | None = None
    base_currency: Currency | None = None
    cash_policy: CashPolicy | None = None


class PositionCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Records a ``buy`` in the ledger (fees 0 unless given)."""

    asset_symbol: Symbol
    quantity: DecimalInput
    purchase_price: DecimalInput
    purchase_date: dt.date
    fees: DecimalInput = "0"


class PositionRead(msgspec.Struct, kw_only=True):
    """A holding. ``average_cost`` and ``cost_basis`` are in the asset's ``currency``, as
    recorded; ``current_value`` and the gains are in the portfolio's base currency at
    ``fx_rate`` (base currency per unit of ``currency``; the cost converted at the same
    rate, so the gain is the price gain; the tax report has the gain with basis at the
    purchase dates' rates)."""

    id: int
    asset: AssetRef
    quantity: str
    average_cost: str
    cost_basis: str
    currency: str
    fx_rate: str | None
    current_value: str | None
    unrealized_gain_loss: str | None
    unrealized_gain_loss_percent: str | None
    last_updated: dt.datetime
