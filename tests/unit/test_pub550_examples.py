"""Worked examples of IRS Publication 550 (Investment Income and Expenses), as unit tests.

Each test names the section and example it reproduces; the expected figures are
the publication's. Where the publication gives no dates, any dates satisfying
its conditions are used.
"""

from __future__ import annotations

from decimal import Decimal

import pandas as pd

from quantcore.tax import form_1099_div, form_8949, match_lots, net_capital_gains, tax_summary


def _tx(*rows: tuple) -> pd.DataFrame:
    cols = ["symbol", "date", "type", "quantity", "price", "ex_date"]
    return pd.DataFrame([(*r, None) if len(r) == 5 else r for r in rows], columns=cols)


def test_wash_sale_example_1_full_replacement() -> None:
    """Pub 550, Wash Sales, Example 1: 100 shares bought for $1,000, sold for $750, and
    100 shares bought within 30 days for $800: the $250 loss is disallowed and the new
    shares' basis is $1,050."""
    tx = _tx(
        ("X", "2025-01-06", "buy", 100, 10.00),
        ("X", "2025-03-03", "sell", 100, 7.50),
        ("X", "2025-03-20", "buy", 100, 8.00),
    )
    ledger = match_lots(tx)
    [row] = form_8949(ledger, 2025).part_i
    assert (row.proceeds, row.cost_basis, row.code, row.adjustment, row.gain_or_loss) == (
        Decimal("750.00"), Decimal("1000.00"), "W", Decimal("250.00"), Decimal("0.00"),
    )
    [lot] = ledger.open_lots_frame().itertuples()
    assert lot.basis == 1050.0
    # holding period of the new stock includes the 56 days the old stock was held
    assert lot.acquired == pd.Timestamp("2025-03-20") - pd.Timedelta(days=56)


def test_wash_sale_example_2_partial_replacement_before_sale() -> None:
    """Pub 550, Wash Sales, Example 2: 100 shares of M bought on September 24 for $5,000,
    50 shares bought December 21 for $2,750, the 100 shares sold December 28 for $4,000:
    $500 of the $1,000 loss is disallowed (50/100), the 50 shares' basis is $3,250, and
    the other $500 is deductible."""
    tx = _tx(
        ("M", "2024-09-24", "buy", 100, 50.00),
        ("M", "2024-12-21", "buy", 50, 55.00),
        ("M", "2024-12-28", "sell", 100, 40.00),
    )
    ledger = match_lots(tx)
    [row] = form_8949(ledger, 2024).part_i
    assert row.adjustment == Decimal("500.00") and row.code == "W"
    assert row.gain_or_loss == Decimal("-500.00")
    [lot] = ledger.open_lots_frame().itertuples()
    assert (lot.quantity, lot.basis) == (50.0, 3250.0)
    assert tax_summary(ledger, 2024).short_term_gain_loss == Decimal("-500.00")


def test_holding_period_example() -> None:
    """Pub 550, Holding Period: property bought February 5 and sold February 5 of the next
    year is held not more than one year (short-term); sold February 6, more than one year
    (long-term). The count starts the day after acquisition."""
    for sold, long_term in (("2025-02-05", False), ("2025-02-06", True)):
        tx = _tx(("P", "2024-02-05", "buy", 1, 100.0), ("P", sold, "sell", 1, 120.0))
        assert bool(match_lots(tx).realized["long_term"][0]) is long_term


def test_qualified_dividend_example_1_not_held_long_enough() -> None:
    """Pub 550, Qualified Dividends, Example 1: 5,000 shares bought July 9, ex-dividend
    July 16, 10 cents a share ($500), sold August 12: held 34 days of the 121-day period
    (July 10 through August 12), so no qualified dividends."""
    tx = _tx(
        ("XYZ", "2025-07-09", "buy", 5000, 20.0),
        ("XYZ", "2025-07-16", "dividend", 5000, 0.10, "2025-07-16"),
        ("XYZ", "2025-08-12", "sell", 5000, 20.0),
    )
    f = form_1099_div(tx, 2025)
    assert (f.box_1a_total_ordinary_dividends, f.box_1b_qualified_dividends) == (Decimal("500.00"), Decimal("0.00"))


def test_qualified_dividend_example_2_held_61_days() -> None:
    """Pub 550, Qualified Dividends, Example 2: bought July 15 (the day before the
    ex-dividend date), sold September 16: held 61 days of the 121-day period (July 16
    through September 14), so the $500 are all qualified."""
    tx = _tx(
        ("XYZ", "2025-07-15", "buy", 5000, 20.0),
        ("XYZ", "2025-07-16", "dividend", 5000, 0.10, "2025-07-16"),
        ("XYZ", "2025-09-16", "sell", 5000, 20.0),
    )
    s = tax_summary(tx, 2025)
    assert (s.qualified_dividends, s.ordinary_dividends, s.total_dividends) == (
        Decimal("500.00"), Decimal("0.00"), Decimal("500.00"),
    )
    # shares bought on the ex-dividend date itself are not entitled to the dividend
    late = _tx(
        ("XYZ", "2025-07-16", "buy", 5000, 20.0),
        ("XYZ", "2025-07-16", "dividend", 5000, 0.10, "2025-07-16"),
    )
    assert form_1099_div(late, 2025).box_1b_qualified_dividends == Decimal("0.00")


def test_capital_loss_limit_and_carryover_example() -> None:
    """Pub 550, Capital Losses, Capital loss carryover example: a $7,000 capital loss with
    no other capital transactions allows a $3,000 deduction and carries $4,000 over; a
    $2,000 loss would be deducted in full with no carryover."""
    r = net_capital_gains(Decimal("-7000"), Decimal("0"))
    assert (r.deduction, r.short_term_carryforward) == (Decimal("3000"), Decimal("4000"))
    r = net_capital_gains(Decimal("-2000"), Decimal("0"))
    assert (r.deduction, r.short_term_carryforward, r.long_term_carryforward) == (Decimal("2000"), 0, 0)
    tx = _tx(("S", "2024-01-02", "buy", 100, 100.0), ("S", "2024-03-01", "sell", 100, 30.0))
    s24, s25 = tax_summary(tx, 2024), tax_summary(tx, 2025)
    # the summary uses Schedule D's signs: the deduction, carryovers and carryforwards are losses
    assert (s24.capital_loss_deduction, s24.short_term_carryforward) == (Decimal("-3000.00"), Decimal("-4000.00"))
    assert (s25.short_term_carryover, s25.capital_loss_deduction, s25.short_term_carryforward) == (
        Decimal("-4000.00"), Decimal("-3000.00"), Decimal("-1000.00"),
    )
