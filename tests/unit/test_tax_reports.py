"""Reports (8949, Schedule D, 1099-DIV), exports, tax_summary and harvest_opportunities."""

from __future__ import annotations

import io
import json
from decimal import Decimal

import pandas as pd
import pytest

from quantcore.tax import (
    TaxRates,
    form_1099_div,
    form_8949,
    harvest_opportunities,
    match_lots,
    net_capital_gains,
    schedule_d,
    tax_summary,
)


def _tx(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["symbol", "date", "type", "quantity", "price"])


# Three sells whose proceeds are $1.005 each: every row rounds half-up to $1.01, so the
# total must be $3.03 (the sum of the rounded rows), not round($3.015) = $3.02.
HALF_CENTS = _tx([
    ("A", "2025-01-02", "buy", 3, 0.1),
    ("A", "2025-02-03", "sell", 1, 1.005),
    ("A", "2025-02-04", "sell", 1, 1.005),
    ("A", "2025-02-05", "sell", 1, 1.005),
])


def test_8949_totals_are_sums_of_rounded_rows() -> None:
    form = form_8949(HALF_CENTS, 2025)
    assert [r.proceeds for r in form.part_i] == [Decimal("1.01")] * 3
    assert form.part_i_totals["proceeds"] == Decimal("3.03")
    assert form.part_i_totals["gain_or_loss"] == Decimal("2.73")
    assert form.part_ii == ()


def test_8949_parts_codes_and_exports(tmp_path) -> None:
    tx = _tx([
        ("L", "2023-01-03", "buy", 10, 100.0),
        ("S", "2025-01-02", "buy", 10, 50.0),
        ("L", "2025-02-03", "sell", 10, 120.0),
        ("S", "2025-02-03", "sell", 10, 40.0),
        ("S", "2025-02-20", "buy", 4, 41.0),
    ])
    form = form_8949(tx, 2025)
    [st] = form.part_i
    [lt] = form.part_ii
    assert (lt.description, lt.gain_or_loss, lt.code) == ("10 sh. L", Decimal("200.00"), "")
    # 4 of 10 shares replaced: 4/10 x $100 = $40 disallowed
    assert (st.code, st.adjustment, st.gain_or_loss) == ("W", Decimal("40.00"), Decimal("-60.00"))
    csv_text = form.to_csv(tmp_path / "f8949.csv")
    back = pd.read_csv(io.StringIO(csv_text), dtype=str, keep_default_na=False)
    assert list(back["part"]) == ["I", "II"] and list(back["adjustment"]) == ["40.00", "0.00"]
    assert (tmp_path / "f8949.csv").read_text() == csv_text
    payload = json.loads(form.to_json())
    assert payload["part_i"]["rows"][0]["date_acquired"] == "2025-01-02"
    assert payload["part_ii"]["totals"]["proceeds"] == "1200.00"


def test_schedule_d_lines() -> None:
    tx = _tx([
        ("A", "2023-01-03", "buy", 100, 100.0),
        ("A", "2023-06-01", "sell", 100, 10.0),  # 2023: -9,000 short-term -> 3,000 deducted, 6,000 carried
        ("B", "2024-01-02", "buy", 10, 100.0),
        ("B", "2025-03-03", "sell", 10, 150.0),  # 2025: +500 long-term
    ])
    d = schedule_d(tx, 2024)
    assert (d.short_term_carryover, d.capital_loss_deduction, d.short_term_carryforward) == (
        Decimal("-6000.00"), Decimal("-3000.00"), Decimal("-3000.00"),
    )
    d = schedule_d(tx, 2025)
    assert d.long_term_gain_loss == Decimal("500.00") and d.short_term_carryover == Decimal("-3000.00")
    assert d.combined_net_gain_loss == d.net_short_term_gain_loss + d.net_long_term_gain_loss == Decimal("-2500.00")
    assert (d.capital_loss_deduction, d.short_term_carryforward, d.long_term_carryforward) == (
        Decimal("-2500.00"), Decimal("0.00"), Decimal("0.00"),
    )
    assert json.loads(d.to_json())["combined_net_gain_loss"] == "-2500.00"
    assert "combined_net_gain_loss,-2500.00" in d.to_csv()
    with pytest.warns(DeprecationWarning, match="combined_net_gain_loss"):
        assert d.net_capital_gain_loss == Decimal("-2500.00")


def test_1099_div_rows_and_boxes() -> None:
    tx = _tx([
        ("A", "2025-01-02", "buy", 10, 10.0),
        ("B", "2025-05-20", "buy", 3, 10.0),
        ("A", "2025-06-02", "dividend", 10, 0.125),
        ("B", "2025-06-02", "dividend", 3, 0.335),  # 1.005 -> 1.01
        ("B", "2025-06-20", "sell", 3, 10.0),  # held 31 days of the window: ordinary
        ("A", "2026-01-05", "dividend", 10, 0.5),  # other year
    ])
    f = form_1099_div(tx, 2025)
    assert f.rows == ({"symbol": "A", "box_1a": Decimal("1.25"), "box_1b": Decimal("1.25")},
                      {"symbol": "B", "box_1a": Decimal("1.01"), "box_1b": Decimal("0.00")})
    assert (f.box_1a_total_ordinary_dividends, f.box_1b_qualified_dividends) == (Decimal("2.26"), Decimal("1.25"))
    assert f.to_csv().splitlines()[-1] == "TOTAL,2.26,1.25"
    assert json.loads(f.to_json())["box_1a_total_ordinary_dividends"] == "2.26"


def test_tax_summary_rates_and_niit() -> None:
    """ST +1,000, LT +2,000, dividends 100 qualified + 50 ordinary:
    0.24 x 1,050 + 0.15 x 2,100 = 567; with NIIT + 0.038 x 3,150 = 119.70."""
    tx = _tx([
        ("L", "2023-01-03", "buy", 10, 100.0),
        ("Q", "2024-01-02", "buy", 100, 1.0),
        ("S", "2025-01-02", "buy", 10, 100.0),
        ("S", "2025-02-03", "sell", 10, 200.0),
        ("L", "2025-02-03", "sell", 10, 300.0),
        ("Q", "2025-06-02", "dividend", 100, 1.0),
        ("O", "2025-06-02", "dividend", 50, 1.0),  # no shares recorded: ordinary
    ])
    s = tax_summary(tx, 2025)
    assert (s.short_term_gain_loss, s.long_term_gain_loss, s.net_capital_gain_loss) == (
        Decimal("1000.00"), Decimal("2000.00"), Decimal("3000.00"),
    )
    assert (s.qualified_dividends, s.ordinary_dividends, s.total_dividends) == (
        Decimal("100.00"), Decimal("50.00"), Decimal("150.00"),
    )
    assert s.estimated_tax_liability == Decimal("567.00")
    assert tax_summary(tx, 2025, rates=TaxRates(niit=True)).estimated_tax_liability == Decimal("686.70")
    assert set(s.capital_gains()) == {"short_term_gain_loss", "long_term_gain_loss", "net_capital_gain_loss"}
    assert set(s.dividend_income()) == {"qualified_dividends", "ordinary_dividends", "total_dividends"}


@pytest.mark.parametrize(
    ("st", "lt", "want"),
    [
        # (deduction, st carryforward, lt carryforward): character is kept
        ("-5000", "1000", ("3000", "1000", "0")),
        ("1000", "-5000", ("3000", "0", "1000")),
        ("-2000", "-4000", ("3000", "0", "3000")),  # short-term losses are used first
        ("-500", "-500", ("1000", "0", "0")),
        ("2000", "-500", ("0", "0", "0")),
    ],
)
def test_loss_netting_keeps_character(st: str, lt: str, want: tuple[str, str, str]) -> None:
    r = net_capital_gains(Decimal(st), Decimal(lt))
    assert (r.deduction, r.short_term_carryforward, r.long_term_carryforward) == tuple(Decimal(x) for x in want)


def test_tax_summary_validation() -> None:
    with pytest.raises(ValueError, match="ordinary_rate must be in"):
        TaxRates(ordinary_rate=1.5)
    with pytest.raises(ValueError, match="year must be an integer"):
        tax_summary(HALF_CENTS, "2025")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="rates must be a TaxRates"):
        tax_summary(HALF_CENTS, 2025, rates={"ordinary_rate": 0.3})  # type: ignore[arg-type]


HARVEST = _tx([
    ("A", "2024-01-02", "buy", 10, 100.0),  # long-term by 2025-06-02
    ("C", "2025-01-02", "buy", 10, 10.0),  # at a gain
    ("A", "2025-03-03", "buy", 10, 90.0),  # short-term
    ("B", "2025-05-20", "buy", 10, 50.0),  # bought 13 days before as_of
])


def test_harvest_losses_benefit_and_recommendation() -> None:
    ledger = match_lots(HARVEST)
    ops = harvest_opportunities(ledger, {"A": 80, "B": 45, "C": 12}, "2025-06-02", rates=TaxRates("0.30", "0.15"))
    assert [o.symbol for o in ops] == ["A", "B"] and [o.id for o in ops] == [1, 2]
    a, b = ops
    # A: long-term loss 200, short-term loss 100 -> 0.15 x 200 + 0.30 x 100 = 60
    assert (a.potential_loss_amount, a.long_term_loss, a.short_term_loss, a.tax_benefit_estimate) == (
        Decimal("300.00"), Decimal("200.00"), Decimal("100.00"), Decimal("60.00"),
    )
    assert not a.wash_sale_risk and "2025-07-03" in a.recommendation
    assert a.position() == {"asset_symbol": "A", "quantity": Decimal("20"), "average_cost": Decimal("95.00"), "current_price": Decimal("80")}
    # B's only lot is the recent purchase itself: selling it all is not a wash sale
    assert not b.wash_sale_risk


def test_harvest_wash_sale_risk_and_thresholds() -> None:
    # a share bought 8 days ago at a gain is kept, so it would replace the sold ones
    tx = pd.concat([HARVEST, _tx([("A", "2025-05-25", "buy", 1, 75.0)])], ignore_index=True)
    [a] = harvest_opportunities(tx, pd.Series({"A": 80.0}), "2025-06-02")
    assert a.wash_sale_risk and a.earliest_safe_sale.isoformat() == "2025-06-25"
    # bought at a loss, it is among the lots to sell: no replacement left
    tx = pd.concat([HARVEST, _tx([("A", "2025-05-25", "buy", 1, 85.0)])], ignore_index=True)
    [a] = harvest_opportunities(tx, pd.Series({"A": 80.0}), "2025-06-02")
    assert not a.wash_sale_risk and a.potential_loss_amount == Decimal("305.00")
    pending = pd.concat([HARVEST, _tx([("A", "2025-06-20", "buy", 1, 70.0)])], ignore_index=True)
    [a] = harvest_opportunities(pending, {"A": 80.0}, "2025-06-02")
    assert a.wash_sale_risk and a.earliest_safe_sale.isoformat() == "2025-07-21"
    assert "Wash-sale risk" in a.recommendation and "2025-08-21" in a.recommendation
    assert harvest_opportunities(HARVEST, {"A": 80.0}, "2025-06-02", min_loss=301) == []
    assert harvest_opportunities(HARVEST, {"A": 80.0}, "2025-06-02", min_loss_pct=0.2) == []
    assert len(harvest_opportunities(HARVEST, {"A": 80.0}, "2025-06-02", min_loss_pct=0.1)) == 1
    with pytest.raises(ValueError, match="as_of must be a date"):
        harvest_opportunities(HARVEST, {"A": 80.0}, "not a date")
    with pytest.raises(ValueError, match=r"prices\['A'\] must be a finite number"):
        harvest_opportunities(HARVEST, {"A": -1}, "2025-06-02")
