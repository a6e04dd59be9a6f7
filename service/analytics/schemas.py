"""Wire shapes of ``/api/analytics/``.

Returns, volatility, drawdowns, VaR and weights are fractions as decimal strings
with 6 fractional digits (``"0.012345"`` is 1.2345 %); ratios (Sharpe, beta,
correlation) have 4; money amounts have 2. A value that cannot be computed (too
few observations, zero variance) is ``null``.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

import msgspec

__all__ = [
    "AllocationItem",
    "AllocationRead",
    "IncomePeriod",
    "IncomeRead",
    "IncomeSymbol",
    "Interval",
    "MetricsRead",
    "OverviewRead",
    "PerformancePoint",
    "PerformanceRead",
    "RiskRead",
    "TechnicalRead",
]

Interval = Literal["1d", "1w", "1m"]


class MetricsRead(msgspec.Struct, kw_only=True):
    """Performance metrics of a portfolio over ``period`` (time-weighted daily returns),
    and beside them the money-weighted return (XIRR, annual) of the same stretch."""

    period: str
    start_date: dt.date | None
    end_date: dt.date | None
    observations: int
    benchmark: str
    total_return: str | None
    annualized_return: str | None
    volatility: str | None
    sharpe_ratio: str | None
    max_drawdown: str | None
    alpha: str | None
    beta: str | None
    benchmark_return: str | None
    money_weighted_return: str | None = None


class PerformancePoint(msgspec.Struct, kw_only=True):
    date: dt.date
    value: str | None
    daily_return: str | None
    cumulative_return: str | None
    benchmark_cumulative_return: str | None
    drawdown: str | None


class PerformanceRead(msgspec.Struct, kw_only=True):
    """The chart series: one point per ``interval`` (the last day of each)."""

    period: str
    interval: str
    benchmark: str
    series: list[PerformancePoint]


class AllocationItem(msgspec.Struct, kw_only=True):
    asset_symbol: str
    asset_name: str
    asset_type: str
    sector: str
    weight: str | None
    value: str | None


class AllocationRead(msgspec.Struct, kw_only=True):
    total_value: str
    allocations: list[AllocationItem]
    by_sector: dict[str, str]
    by_asset_type: dict[str, str]


class RiskRead(msgspec.Struct, kw_only=True):
    """One-day historical risk of the portfolio over the last ``lookback`` trading days."""

    method: str
    confidence_level: str
    horizon_days: int
    lookback: int
    observations: int
    portfolio_value: str
    var_95: str | None
    var_95_amount: str | None
    expected_shortfall: str | None
    expected_shortfall_amount: str | None
    volatility: str | None
    beta: str | None
    benchmark: str
    correlation_spy: str | None
    sector_concentration: dict[str, str]
    herfindahl_index: str | None


class TechnicalRead(msgspec.Struct, kw_only=True):
    """Indicator values aligned with ``dates`` (warm-up values are ``null``)."""

    asset_id: int
    symbol: str
    period: int
    dates: list[dt.date]
    close: list[str | None]
    indicators: dict[str, list[str | None]]


class IncomePeriod(msgspec.Struct, kw_only=True):
    """Income of one month (``"2024-03"``), quarter (``"2024-Q1"``) or year (``"2024"``)."""

    period: str
    dividends: str
    interest: str
    total: str


class IncomeSymbol(msgspec.Struct, kw_only=True):
    asset_symbol: str
    dividends: str


class IncomeRead(msgspec.Struct, kw_only=True):
    """Dividends and interest received (net of their fees) in the base currency."""

    period: str
    start_date: dt.date | None
    end_date: dt.date | None
    group_by: str
    currency: str
    periods: list[IncomePeriod]
    by_symbol: list[IncomeSymbol]
    dividends: str
    interest: str
    total: str


class OverviewRead(msgspec.Struct, kw_only=True):
    """The user's portfolios as one account, in ``currency``.

    ``total_value``, ``cash_balance`` and ``daily_change`` are the sums of each
    portfolio's own figures (its base currency converted at the latest rate, rounded
    to the cent); ``null`` when a portfolio's base currency has no rate into
    ``currency``. ``metrics``, ``allocation`` and ``performance`` have the shapes of
    the portfolio endpoints, over the combined account; ``period`` is the window used
    (as in ``metrics`` and ``performance``).
    """

    period: str
    currency: str
    total_value: str | None
    cash_balance: str | None
    daily_change: str | None
    daily_change_percent: str | None
    portfolio_count: int
    metrics: MetricsRead
    allocation: AllocationRead
    performance: PerformanceRead
