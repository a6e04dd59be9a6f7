"""US tax lots, wash sales, dividends, tax-loss harvesting and tax reports, exact to the cent.

::

    from quantcore import tax
    ledger = tax.match_lots(transactions, method="fifo")      # lots, realized, wash sales
    tax.tax_summary(ledger, 2025, rates=tax.TaxRates(niit=True))
    tax.form_8949(ledger, 2025).to_csv("8949.csv")
    tax.harvest_opportunities(ledger, {"XYZ": 41.2}, "2025-12-01")   # lots held that day

Corporate actions (``split``, ``stock_dividend``, ``return_of_capital``, ``spin_off``,
``merger``) are rows of the same table (columns ``ratio``, ``target_symbol``,
``basis_allocation``, ``cash``; see :func:`match_lots`).
"""

from __future__ import annotations

from quantcore.tax.dividends import DividendIncome, dividend_income
from quantcore.tax.harvesting import (
    HarvestInputError,
    HarvestOpportunity,
    harvest_inputs,
    harvest_opportunities,
)
from quantcore.tax.lots import (
    CORPORATE_ACTIONS,
    SCALE,
    LedgerError,
    LotLedger,
    LotMethod,
    match_lots,
)
from quantcore.tax.rates import (
    NIIT_RATE,
    CapitalLossNetting,
    TaxRates,
    TaxSummary,
    net_capital_gains,
    tax_summary,
)
from quantcore.tax.reports import (
    Form1099Div,
    Form8949,
    Form8949Row,
    ScheduleD,
    form_1099_div,
    form_8949,
    schedule_d,
)
from quantcore.tax.wash_sales import WASH_SALE_WINDOW_DAYS, wash_sale_adjustments

__all__ = [
    "CORPORATE_ACTIONS",
    "NIIT_RATE",
    "SCALE",
    "WASH_SALE_WINDOW_DAYS",
    "CapitalLossNetting",
    "DividendIncome",
    "Form1099Div",
    "Form8949",
    "Form8949Row",
    "HarvestInputError",
    "HarvestOpportunity",
    "LedgerError",
    "LotLedger",
    "LotMethod",
    "ScheduleD",
    "TaxRates",
    "TaxSummary",
    "dividend_income",
    "form_1099_div",
    "form_8949",
    "harvest_inputs",
    "harvest_opportunities",
    "match_lots",
    "net_capital_gains",
    "schedule_d",
    "tax_summary",
    "wash_sale_adjustments",
]
