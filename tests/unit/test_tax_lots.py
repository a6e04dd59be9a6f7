"""Lot relief methods, fees, partial lots, validation errors and wash-sale edge cases.

Expected values are computed by hand in each test's docstring or comment.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

import quantcore.tax as tax
from quantcore.tax import match_lots
from quantcore.tax.lots import from_fixed


def _tx(rows: list[tuple], **extra: list) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=["symbol", "date", "type", "quantity", "price"])
    for k, v in extra.items():
        df[k] = v
    return df


def _pieces(ledger: tax.LotLedger) -> list[tuple[float, float, float]]:
    f = ledger.realized_frame()
    return list(zip(f["quantity"], f["basis"], f["proceeds"], strict=True))


THREE_BUYS = [
    ("A", "2024-01-02", "buy", 10, 10.0),
    ("A", "2024-01-03", "buy", 10, 30.0),
    ("A", "2024-01-04", "buy", 10, 20.0),
    ("A", "2025-03-03", "sell", 15, 25.0),
]


@pytest.mark.parametrize(
    ("method", "want"),
    [
        ("fifo", [(10, 100, 250), (5, 150, 125)]),
        ("lifo", [(10, 200, 250), (5, 150, 125)]),
        ("hifo", [(10, 300, 250), (5, 100, 125)]),
        ("average", [(10, 200, 250), (5, 100, 125)]),  # pooled $20/share, shares leave FIFO
    ],
)
def test_relief_methods(method: str, want: list[tuple]) -> None:
    assert _pieces(match_lots(_tx(THREE_BUYS), method=method)) == want


def test_specific_identification_names_the_lot() -> None:
    df = _tx(THREE_BUYS, lot_id=["a", "b", "c", "b"])
    df.loc[3, "quantity"] = 5
    ledger = match_lots(df, method="specific")
    assert _pieces(ledger) == [(5, 150, 125)]
    assert list(ledger.open_lots_frame()["lot"]) == ["a", "b", "c"]
    assert list(ledger.open_lots_frame()["quantity"]) == [10, 5, 10]


def test_average_open_lots_share_the_pooled_basis() -> None:
    ledger = match_lots(_tx(THREE_BUYS), method="average")
    # 15 shares left of a $600 pool for 30 shares: $20 each
    assert list(ledger.open_lots_frame()["basis"]) == [100.0, 200.0]


def test_fees_add_to_basis_and_reduce_proceeds_split_exactly() -> None:
    """Buy 15 @ 10 + $1 fee: basis 151. Sell 15 @ 25 - $2 fee = 373 over lots of 10 and 5:
    proceeds 373 x 10/15 = 248.666666666... -> 248.66666667 (half-up at 1e-8), remainder 124.33333333."""
    df = _tx([("A", "2024-01-02", "buy", 10, 10.0), ("A", "2024-01-02", "buy", 5, 10.0), ("A", "2024-06-03", "sell", 15, 25.0)])
    df["fees"] = [1.0, 0.5, 2.0]
    ledger = match_lots(df)
    r = ledger.realized
    assert [from_fixed(x) for x in r["proceeds"]] == [Decimal("248.66666667"), Decimal("124.33333333")]
    assert [from_fixed(x) for x in r["basis"]] == [Decimal("101.00000000"), Decimal("50.50000000")]


def test_partial_lot_sale_splits_exactly() -> None:
    """3 shares for $100 total; selling 1 takes 33.33333333, the lot keeps 66.66666667."""
    df = _tx([("A", "2024-01-02", "buy", 3, Decimal("33.33333333")), ("A", "2024-02-01", "sell", 1, 40.0)])
    df["fees"] = [Decimal("0.00000001"), 0]
    ledger = match_lots(df.astype({"price": object, "fees": object}))
    assert from_fixed(ledger.realized["basis"][0]) == Decimal("33.33333333")
    assert from_fixed(ledger.open_lots["basis"][0]) == Decimal("66.66666667")


def test_decimal_strings_are_read_exactly() -> None:
    df = _tx([("A", "2024-01-02", "buy", "0.12345678", "1234.56789012")])
    df = df.astype({"quantity": object, "price": object})
    # 0.12345678 x 1234.56789012 = 152.4157764056090136 exactly: half-up at 1e-8
    assert from_fixed(match_lots(df).open_lots["basis"][0]) == Decimal("152.41577641")


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("quantity", -1, "row 1 .*quantity must be > 0"),
        ("quantity", 0, r"row 1 .*quantity must be > 0"),
        ("price", -0.01, r"row 1 .*price must be >= 0"),
        ("fees", -1, r"row 1 .*fees must be >= 0"),
        ("price", np.nan, r"row 1 .*price must be a finite number"),
        ("type", "short", r"row 1 .*type must be"),
        ("symbol", "", r"row 1 .*symbol is empty"),
    ],
)
def test_bad_rows_name_the_row(column: str, value: object, message: str) -> None:
    df = _tx([("A", "2024-01-02", "buy", 10, 10.0), ("A", "2024-01-03", "buy", 10, 10.0)])
    df["fees"] = 0.0
    df[column] = df[column].astype(object)
    df.loc[1, column] = value
    with pytest.raises(ValueError, match=message):
        match_lots(df)


def test_oversell_and_lot_errors() -> None:
    df = _tx([("A", "2024-01-02", "buy", 10, 10.0), ("B", "2024-01-03", "buy", 5, 1.0), ("A", "2024-01-04", "sell", 10.5, 10.0)])
    with pytest.raises(ValueError, match=r"row 2 \(index 2\): sells more A than held"):
        match_lots(df)
    df.loc[2, "quantity"] = 10
    with pytest.raises(ValueError, match=r"row 2 .*unknown lot_id 'x' for A"):
        match_lots(df.assign(lot_id=["a", "b", "x"]), method="specific")
    with pytest.raises(ValueError, match=r"row 2 .*unknown lot_id 'b' for A"):  # b is a lot of B
        match_lots(df.assign(lot_id=["a", "b", "b"]), method="specific")
    with pytest.raises(ValueError, match=r"row 1 .*lot_id 'a' is used by an earlier buy"):
        match_lots(df.assign(symbol="A", lot_id=["a", "a", "a"]), method="specific")
    twice = pd.concat([df, df.iloc[[2]]], ignore_index=True).assign(lot_id=["a", "b", "a", "a"])
    with pytest.raises(ValueError, match=r"row 3 .*lot_id 'a' holds fewer shares than sold"):
        match_lots(twice, method="specific")
    with pytest.raises(ValueError, match="missing the column"):
        match_lots(df.drop(columns="price"))
    with pytest.raises(ValueError, match="method must be one of"):
        match_lots(df, method="random")
    with pytest.raises(ValueError, match=r"method for symbol 'B' must be one of .*got 'random'"):
        match_lots(df, method={"A": "lifo", "B": "random"})
    with pytest.raises(ValueError, match="method must be one of"):
        match_lots(df, method=["fifo"])


def _wash(rows: list[tuple], **kw: object) -> tax.LotLedger:
    return match_lots(_tx(rows), **kw)


def test_shares_of_the_same_purchase_never_replace_the_sold_ones() -> None:
    ledger = _wash([("A", "2025-01-02", "buy", 100, 10.0), ("A", "2025-01-12", "sell", 50, 8.0)])
    assert ledger.realized["disallowed"][0] == 0
    assert not ledger.open_lots["replacement"][0]


@pytest.mark.parametrize(("days_after", "washed"), [(0, True), (30, True), (31, False)])
def test_window_after_the_sale(days_after: int, washed: bool) -> None:
    buy_day = (pd.Timestamp("2025-02-10") + pd.Timedelta(days=days_after)).date().isoformat()
    ledger = _wash([("A", "2025-01-02", "buy", 100, 10.0), ("A", "2025-02-10", "sell", 100, 8.0), ("A", buy_day, "buy", 100, 9.0)])
    assert bool(ledger.realized["disallowed"][0] > 0) is washed


@pytest.mark.parametrize(("days_before", "washed"), [(30, True), (31, False)])
def test_window_before_the_sale_and_proportional_part(days_before: int, washed: bool) -> None:
    """Loss 100 x $2 = $200; 10 replacement shares bought before: 10/100 x 200 = $20 disallowed."""
    buy_day = (pd.Timestamp("2025-06-30") - pd.Timedelta(days=days_before)).date().isoformat()
    ledger = _wash([("A", "2025-01-02", "buy", 100, 10.0), ("A", buy_day, "buy", 10, 9.0), ("A", "2025-06-30", "sell", 100, 8.0)])
    assert from_fixed(ledger.realized["disallowed"][0]) == (Decimal(20) if washed else 0)
    assert ledger.open_lots_frame()["basis"][0] == (110.0 if washed else 90.0)


def test_replacement_lot_absorbs_at_most_its_own_quantity() -> None:
    """Loss $200 on 100 shares; 30 then 100 shares bought after: 30 absorb $60, the next 70
    absorb the remaining $140 and are split from the other 30 shares of that purchase."""
    ledger = _wash([
        ("A", "2025-01-02", "buy", 100, 10.0),
        ("A", "2025-01-12", "sell", 100, 8.0),
        ("A", "2025-01-20", "buy", 30, 8.0),
        ("A", "2025-01-25", "buy", 100, 8.0),
    ])
    assert from_fixed(ledger.realized["disallowed"][0]) == 200
    lots = ledger.open_lots_frame()
    assert list(lots["quantity"]) == [30, 70, 30]
    assert list(lots["basis"]) == [300.0, 700.0, 240.0]
    assert list(lots["replacement"]) == [True, True, False]


def test_wash_sale_chain_carries_forward() -> None:
    """Loss $200 -> new lot basis 1000 (800 + 200), held from 10 days before its purchase;
    its sale at $700 loses $300 -> the next lot's basis is 700 + 300 = 1000."""
    ledger = _wash([
        ("A", "2025-01-01", "buy", 100, 10.0),
        ("A", "2025-01-11", "sell", 100, 8.0),
        ("A", "2025-01-21", "buy", 100, 8.0),
        ("A", "2025-01-31", "sell", 100, 7.0),
        ("A", "2025-02-10", "buy", 100, 7.0),
    ])
    assert [float(from_fixed(x)) for x in ledger.realized["disallowed"]] == [200.0, 300.0]
    [lot] = ledger.open_lots_frame().itertuples()
    assert lot.basis == 1000.0
    assert lot.acquired == pd.Timestamp("2025-01-21")  # 30 days of prior holding tacked on


def test_substantially_identical_mapping_groups_symbols() -> None:
    rows = [("SPY", "2025-01-02", "buy", 10, 500.0), ("SPY", "2025-03-03", "sell", 10, 450.0), ("IVV", "2025-03-10", "buy", 10, 455.0)]
    assert _wash(rows).realized["disallowed"][0] == 0
    ledger = _wash(rows, substantially_identical={"SPY": "sp500", "IVV": "sp500"})
    assert from_fixed(ledger.realized["disallowed"][0]) == 500
    assert ledger.open_lots_frame()["basis"][0] == 5050.0


def test_gains_are_never_washed_and_wash_can_be_disabled() -> None:
    gain = _wash([("A", "2025-01-02", "buy", 10, 10.0), ("A", "2025-01-05", "sell", 10, 12.0), ("A", "2025-01-06", "buy", 10, 12.0)])
    assert gain.realized["disallowed"][0] == 0
    off = _wash([("A", "2025-01-02", "buy", 10, 10.0), ("A", "2025-01-05", "sell", 10, 8.0), ("A", "2025-01-06", "buy", 10, 8.0)], wash_sales=False)
    assert off.realized["disallowed"][0] == 0 and off.open_lots_frame()["basis"][0] == 80.0
    assert len(tax.wash_sale_adjustments(off)) == 0


def test_leap_day_anniversary() -> None:
    """Bought 29 Feb 2024: 28 Feb 2025 is the anniversary (short-term), 1 Mar 2025 long-term."""
    for sold, lt in (("2025-02-28", False), ("2025-03-01", True)):
        ledger = _wash([("A", "2024-02-29", "buy", 1, 10.0), ("A", sold, "sell", 1, 11.0)])
        assert bool(ledger.realized["long_term"][0]) is lt


def test_public_surface() -> None:
    assert tax.__all__ == sorted(tax.__all__, key=lambda s: (not s.isupper(), s))
    for name in tax.__all__:
        assert hasattr(tax, name)
    assert {"match_lots", "tax_summary", "harvest_opportunities", "form_8949", "schedule_d", "form_1099_div", "TaxRates", "LotLedger"} <= set(tax.__all__)


@pytest.mark.parametrize("method", ["fifo", "lifo", "hifo", "average"])
def test_shares_sold_in_the_same_sale_never_replace_each_other(method: str) -> None:
    """Two purchases 5 days apart, both sold at a loss in one sale: nothing is left to
    replace the sold shares, so the whole $60 loss is allowed."""
    ledger = _wash([("A", "2025-01-02", "buy", 10, 10.0), ("A", "2025-01-07", "buy", 10, 12.0), ("A", "2025-01-12", "sell", 20, 8.0)], method=method)
    assert int(ledger.realized["disallowed"].sum()) == 0
    assert ledger.realized_frame()["gain"].sum() == -60.0


def test_frames_and_wash_sale_report() -> None:
    df = _tx([
        ("A", "2025-01-02", "buy", 10, 10.0),
        ("A", "2025-02-03", "sell", 10, 8.0),
        ("A", "2025-02-10", "buy", 10, 8.5),
        ("A", "2025-03-03", "dividend", 10, 0.2),
    ], ex_date=[None, None, None, "2025-02-28"])
    ledger = match_lots(df)
    [row] = tax.wash_sale_adjustments(ledger).itertuples()
    assert (row.symbol, row.disallowed, row.gain, row.wash_sale) == ("A", 20.0, 0.0, True)
    div = ledger.dividends_frame()
    assert list(div.columns) == ["symbol", "date", "ex_date", "amount", "qualified", "ordinary"]
    # bought 2025-02-10, ex-date 2025-02-28, still held: February 11 to April 29 (the window's
    # end) is 78 days > 60, so the dividend is qualified
    assert (div["ex_date"][0], div["amount"][0], div["qualified"][0]) == (pd.Timestamp("2025-02-28"), 2.0, 2.0)


def test_empty_table_gives_empty_ledger_and_zero_reports() -> None:
    empty = _tx([]).astype({"quantity": float, "price": float, "date": "datetime64[ns]"})
    ledger = match_lots(empty)
    assert (ledger.realized.size, ledger.open_lots.size, ledger.dividends.size) == (0, 0, 0)
    s = tax.tax_summary(ledger, 2025)
    assert s.net_capital_gain_loss == s.total_dividends == s.estimated_tax_liability == Decimal("0.00")
    assert tax.harvest_opportunities(ledger, {}, "2025-01-01") == []
