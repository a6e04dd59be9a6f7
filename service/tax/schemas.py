"""Wire shapes of ``/api/tax/``: amounts are decimal strings (dollars, 2 digits; rates as fractions)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated, Literal

import msgspec

__all__ = [
    "CapitalGains",
    "DividendIncomeRead",
    "HarvestAnalyze",
    "HarvestOpportunityRead",
    "HarvestPosition",
    "HarvestRead",
    "LotMethod",
    "PortfolioTaxSettings",
    "PortfolioTaxSettingsUpdate",
    "ReportCreate",
    "ReportFormat",
    "ReportRead",
    "ReportType",
    "TaxCalculate",
    "TaxCalculationRead",
    "TaxSettingsRead",
    "TaxSettingsUpdate",
    "TaxSummaryRead",
]

LotMethod = Literal["fifo", "lifo", "hifo", "specific", "average"]
ReportType = Literal["all", "schedule_d", "form_1099_div"]
ReportFormat = Literal["csv", "json"]
Year = Annotated[int, msgspec.Meta(ge=1970, le=9999)]


class TaxSettingsRead(msgspec.Struct, kw_only=True):
    """Per-user rates (fractions) for the estimate; qualified dividends use the long-term rate,
    ordinary dividends the short-term (ordinary income) rate."""

    short_term_rate: str
    long_term_rate: str
    niit: bool
    loss_limit: str


class TaxSettingsUpdate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    short_term_rate: Decimal | None = None
    long_term_rate: Decimal | None = None
    niit: bool | None = None
    loss_limit: Decimal | None = None


class PortfolioTaxSettings(msgspec.Struct, kw_only=True):
    portfolio_id: int
    lot_method: LotMethod


class PortfolioTaxSettingsUpdate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    lot_method: LotMethod


class CapitalGains(msgspec.Struct, kw_only=True):
    short_term_gain_loss: str
    long_term_gain_loss: str
    net_capital_gain_loss: str


class DividendIncomeRead(msgspec.Struct, kw_only=True):
    qualified_dividends: str
    ordinary_dividends: str
    total_dividends: str


class TaxSummaryRead(msgspec.Struct, kw_only=True):
    tax_year: int
    portfolio_id: int | None
    capital_gains: CapitalGains
    dividend_income: DividendIncomeRead
    estimated_tax_liability: str
    short_term_carryover: str
    long_term_carryover: str
    capital_loss_deduction: str
    short_term_carryforward: str
    long_term_carryforward: str
    rates: TaxSettingsRead


class TaxCalculate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    year: Year
    portfolio_id: int | None = None
    reprocess: bool = False


class TaxCalculationRead(msgspec.Struct, kw_only=True):
    """A stored calculation; ``reprocessed`` is false when a stored result was returned."""

    id: int
    tax_year: int
    portfolio_id: int | None
    reprocessed: bool
    calculated_at: dt.datetime
    summary: TaxSummaryRead


class HarvestPosition(msgspec.Struct, kw_only=True):
    asset_symbol: str
    quantity: str
    average_cost: str
    current_price: str


class HarvestOpportunityRead(msgspec.Struct, kw_only=True):
    id: int
    portfolio_id: int
    position: HarvestPosition
    lots: list[str]
    loss_quantity: str
    potential_loss_amount: str
    short_term_loss: str
    long_term_loss: str
    tax_benefit_estimate: str
    wash_sale_risk: bool
    earliest_safe_sale: dt.date
    earliest_safe_repurchase: dt.date
    recommendation: str


class HarvestAnalyze(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Thresholds: ``min_loss`` in dollars, ``min_loss_pct`` a fraction of the lots' basis."""

    portfolio_id: int | None = None
    min_loss: Decimal = Decimal(0)
    min_loss_pct: Decimal = Decimal(0)
    as_of: dt.date | None = None


class HarvestRead(msgspec.Struct, kw_only=True):
    as_of: dt.date
    min_loss: str
    min_loss_pct: str
    opportunities: list[HarvestOpportunityRead]


class ReportCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    year: Year
    report_type: ReportType = "all"
    portfolio_id: int | None = None


class ReportRead(msgspec.Struct, kw_only=True):
    id: int
    tax_year: int
    report_type: str
    portfolio_id: int | None
    size_bytes: int
    created_at: dt.datetime
    download: dict[str, str]
