"""Harvesting on a given day: only the lots held that day, valued that day; inputs out of
their domain name themselves; the summary and Schedule D with the form's signs."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pandas as pd
import pytest

from quantcore.tax import (
    SCALE,
    TaxRates,
    harvest_opportunities,
    match_lots,
    schedule_d,
    tax_summary,
)
from quantcore.tax.harvesting import MAX_AS_OF, HarvestInputError, harvest_inputs


def _tx(*rows: tuple) -> pd.DataFrame:
    cols = ["symbol", "date", "type", "quantity", "price", "ratio"]
    return pd.DataFrame([(*r, None) if len(r) == 5 else r for r in rows], columns=cols)


SPLIT_LATER = _tx(
    ("X", "2024-06-03", "buy", 10, 100.0),
    ("X", "2025-03-03", "buy", 10, 90.0),
    ("X", "2025-04-01", "split", None, None, 2),
    ("X", "2025-05-01", "sell", 5, 30.0),
)


def test_only_lots_held_on_as_of() -> None:
    led = match_lots(SPLIT_LATER)
    # 2025-02-01: one lot of 10 shares (the March buy and the April split are later)
    [o] = harvest_opportunities(led, {"X": 50.0}, "2025-02-01")
    assert (o.quantity, o.loss_quantity, o.potential_loss_amount) == (Decimal("10"), Decimal("10"), Decimal("500.00"))
    assert o.lots == ("row 0",) and o.long_term_loss == 0
    # 2025-03-20: both lots, before the split
    [o] = harvest_opportunities(led, {"X": 50.0}, "2025-03-20")
    assert (o.quantity, o.potential_loss_amount) == (Decimal("20"), Decimal("900.00"))
    # after the split and the sale: 35 shares, the first lot partly sold
    [o] = harvest_opportunities(led, {"X": 25.0}, "2025-06-02")
    assert o.quantity == Decimal("35") and o.lots == ("row 0", "row 1")
    assert o.potential_loss_amount == Decimal("15") * 25 + Decimal("20") * 20  # basis 750 - 375, 900 - 500


def test_before_the_first_purchase_nothing() -> None:
    led = match_lots(SPLIT_LATER)
    assert harvest_opportunities(led, {"X": 1.0}, "1900-01-01") == []
    assert harvest_opportunities(led, {"X": 1.0}, "2024-06-02") == []


def test_as_of_view_of_the_ledger() -> None:
    led = match_lots(SPLIT_LATER)
    assert led.as_of("2030-01-01") is led
    held = led.as_of(dt.date(2025, 3, 31))
    assert held.open_lots["quantity"].tolist() == [10 * SCALE, 10 * SCALE] and held.realized.size == 0
    assert held.buys.shape == led.buys.shape  # purchases recorded later still count as wash-sale risk
    only = led.only({"X"}).as_of("2025-03-31")
    assert only.open_lots.size == 2
    assert match_lots(SPLIT_LATER).only(set()).as_of("2025-03-31").open_lots.size == 0


@pytest.mark.parametrize(
    ("kwargs", "field", "code"),
    [
        ({"min_loss": 1e20}, "min_loss", "max_value"),
        ({"min_loss": "1e309"}, "min_loss", "max_value"),
        ({"min_loss": "100000000000"}, "min_loss", "max_value"),
        ({"min_loss": "9" * 40}, "min_loss", "max_value"),
        ({"min_loss": "92000000000"}, "min_loss", "max_value"),
        ({"min_loss": "NaN"}, "min_loss", "invalid"),
        ({"min_loss": "-1"}, "min_loss", "min_value"),
        ({"min_loss": "x"}, "min_loss", "invalid"),
        ({"min_loss_pct": "1e309"}, "min_loss_pct", "max_value"),
        ({"min_loss_pct": "-0.1"}, "min_loss_pct", "min_value"),
        ({"as_of": "9999-12-31"}, "as_of", "max_value"),
        ({"as_of": dt.date(9999, 12, 31)}, "as_of", "max_value"),
        ({"as_of": "not a date"}, "as_of", "invalid"),
    ],
)
def test_inputs_out_of_domain_name_the_field(kwargs: dict, field: str, code: str) -> None:
    args = {"as_of": "2025-06-02", "min_loss": 0, "min_loss_pct": 0} | kwargs
    with pytest.raises(HarvestInputError) as err:
        harvest_inputs(args["as_of"], args["min_loss"], args["min_loss_pct"])
    assert (err.value.field, err.value.code) == (field, code)
    with pytest.raises(ValueError, match=field):
        harvest_opportunities(match_lots(SPLIT_LATER), {"X": 50.0}, args["as_of"],
                              min_loss=args["min_loss"], min_loss_pct=args["min_loss_pct"])


def test_largest_inputs_accepted() -> None:
    led = match_lots(SPLIT_LATER)
    assert harvest_opportunities(led, {"X": 50.0}, MAX_AS_OF, min_loss="91999999999.99") == []
    [o] = harvest_opportunities(led, {"X": 0.0}, MAX_AS_OF, min_loss_pct=1)  # the whole basis lost
    assert o.earliest_safe_repurchase <= dt.date.max


def test_summary_and_schedule_d_signs() -> None:
    """A 10,000 short-term loss in 2024 and a 2,000 gain in 2025: the summary keeps the
    year's realized figures, both use Schedule D's signs, and line 16 has its own name."""
    tx = _tx(
        ("L", "2024-01-02", "buy", 100, 200.0),
        ("L", "2024-06-03", "sell", 100, 100.0),  # -10,000 short-term
        ("G", "2025-01-02", "buy", 100, 100.0),
        ("G", "2025-03-03", "sell", 100, 120.0),  # +2,000 short-term
    )
    s, d = tax_summary(tx, 2025), schedule_d(tx, 2025)
    assert (s.short_term_gain_loss, s.long_term_gain_loss, s.net_capital_gain_loss) == (
        Decimal("2000.00"), Decimal("0.00"), Decimal("2000.00"),
    )
    assert (s.short_term_carryover, s.capital_loss_deduction, s.short_term_carryforward) == (
        Decimal("-7000.00"), Decimal("-3000.00"), Decimal("-2000.00"),
    )
    assert (d.combined_net_gain_loss, d.short_term_carryover, d.capital_loss_deduction) == (
        Decimal("-5000.00"), Decimal("-7000.00"), Decimal("-3000.00"),
    )
    assert d.short_term_gain_loss == s.short_term_gain_loss and d.short_term_carryforward == s.short_term_carryforward
    assert "net_capital_gain_loss" not in d.to_dict()
    s24 = tax_summary(tx, 2024, rates=TaxRates())
    assert (s24.net_capital_gain_loss, s24.capital_loss_deduction, s24.short_term_carryforward) == (
        Decimal("-10000.00"), Decimal("-3000.00"), Decimal("-7000.00"),
    )
    assert s24.short_term_carryover == Decimal("0.00") and str(s24.long_term_carryover) == "0.00"
