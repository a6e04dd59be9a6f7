"""The read model of a valued portfolio (its wire shape), shared by the portfolios and the
real-time feed: both serve what :mod:`service.ledger.book` derives."""

from __future__ import annotations

import datetime as dt

import msgspec

__all__ = ["CashBalanceRead", "PortfolioRead"]


class CashBalanceRead(msgspec.Struct, kw_only=True):
    """The cash held in one currency, and its value in the portfolio's base currency."""

    currency: str
    amount: str
    fx_rate: str | None  # base currency per unit; null when no rate is known
    value: str | None


class PortfolioRead(msgspec.Struct, kw_only=True):
    """A portfolio valued in ``base_currency``: ``total_value`` is its positions' value
    plus ``cash_balance`` (the cash of every currency, converted; negative when more
    was spent than put in)."""

    id: int
    name: str
    description: str
    benchmark_symbol: str
    is_active: bool
    base_currency: str
    cash_policy: str
    cash_balance: str
    cash_balances: list[CashBalanceRead]
    total_value: str
    daily_change: str
    daily_change_percent: str
    position_count: int
    created_at: dt.datetime
    updated_at: dt.datetime
