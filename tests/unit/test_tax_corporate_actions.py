"""Corporate actions in ``quantcore.tax.match_lots``: splits, stock dividends, returns of
capital, spin-offs and mergers.

The rules are those of IRS Publication 550 (Investment Income and Expenses):
"Stock Splits" and "Stock Dividends" (the basis of the old shares is spread over
old and new shares, whose holding period includes the old shares'), "Nondividend
Distributions" (a return of capital reduces basis; the part beyond zero basis is a
capital gain, long- or short-term by the holding period), cash received for a
fractional share is a sale of it, and the issuer's Form 8937 (Report of
Organizational Actions Affecting Basis of Securities) gives a spin-off's ratio and
the fraction of basis allocated to the new shares.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from quantcore._kernels import tax as k
from quantcore.tax import form_8949, match_lots
from quantcore.tax.lots import _encode, kernel_args


def _t(*rows: dict) -> pd.DataFrame:
    return pd.DataFrame(list(rows))


def _buy(sym: str, date: str, q: float, p: float) -> dict:
    return {"symbol": sym, "date": date, "type": "buy", "quantity": q, "price": p}


def _sell(sym: str, date: str, q: float, p: float) -> dict:
    return {"symbol": sym, "date": date, "type": "sell", "quantity": q, "price": p}


def test_split_keeps_basis_and_holding_period_one_long_term_8949_row() -> None:
    # 100 sh. bought at $40 before a 4-for-1 split, 400 sold after it at $15
    t = _t(_buy("X", "2020-01-02", 100, 40), {"symbol": "X", "date": "2021-06-01", "type": "split", "ratio": 4},
           _sell("X", "2022-03-01", 400, 15))
    form = form_8949(t, 2022)
    assert form.part_i == ()
    (row,) = form.part_ii
    assert row.description == "400 sh. X"
    assert row.date_acquired == dt.date(2020, 1, 2)
    assert (row.proceeds, row.cost_basis, row.gain_or_loss) == (Decimal("6000.00"), Decimal("4000.00"), Decimal("2000.00"))


def test_split_scales_every_open_lot() -> None:
    t = _t(_buy("X", "2024-01-02", 10, 100), _buy("X", "2024-02-01", 5, 120),
           {"symbol": "X", "date": "2024-03-01", "type": "split", "ratio": 2})
    lots = match_lots(t).open_lots_frame()
    assert lots["quantity"].tolist() == [20.0, 10.0]
    assert lots["basis"].tolist() == [1000.0, 600.0]
    assert lots["acquired"].dt.strftime("%Y-%m-%d").tolist() == ["2024-01-02", "2024-02-01"]


def test_reverse_split_keeps_the_fraction_without_cash() -> None:
    t = _t(_buy("X", "2020-01-02", 105, 10), {"symbol": "X", "date": "2021-01-04", "type": "split", "ratio": 0.1})
    led = match_lots(t)
    assert led.realized.size == 0
    assert led.open_lots_frame()[["quantity", "basis"]].to_dict("records") == [{"quantity": 10.5, "basis": 1050.0}]


def test_reverse_split_cash_in_lieu_sells_the_fraction() -> None:
    # 105 sh. at $10 -> 10.5 sh. after a 1-for-10; $7.50 paid for the half share (basis 1050 x 0.5/10.5 = 50)
    t = _t(_buy("X", "2020-01-02", 105, 10),
           {"symbol": "X", "date": "2021-01-04", "type": "split", "ratio": 0.1, "cash": 7.5})
    led = match_lots(t)
    r = led.realized_frame()
    assert r[["quantity", "proceeds", "basis", "gain"]].to_dict("records") == [
        {"quantity": 0.5, "proceeds": 7.5, "basis": 50.0, "gain": -42.5}
    ]
    assert bool(r["long_term"].iloc[0])
    assert led.open_lots_frame()[["quantity", "basis"]].to_dict("records") == [{"quantity": 10.0, "basis": 1000.0}]


def test_stock_dividend_is_a_split_of_the_basis() -> None:
    # a 5 % stock dividend: 100 sh. become 105, basis $1,000 unchanged ($9.5238 a share)
    t = _t(_buy("X", "2024-01-02", 100, 10), {"symbol": "X", "date": "2024-06-03", "type": "stock_dividend", "ratio": 1.05})
    assert match_lots(t).open_lots_frame()[["quantity", "basis"]].to_dict("records") == [{"quantity": 105.0, "basis": 1000.0}]


def test_return_of_capital_reduces_basis_then_is_a_gain() -> None:
    t = _t(_buy("X", "2020-01-02", 10, 10), _buy("X", "2024-05-01", 10, 30),
           {"symbol": "X", "date": "2024-06-03", "type": "return_of_capital", "price": 12})
    led = match_lots(t)
    # lot 1: basis 100 - 120 -> 0 and a $20 long-term gain; lot 2: 300 - 120 = 180
    assert led.open_lots_frame()["basis"].tolist() == [0.0, 180.0]
    r = led.realized_frame()
    assert r[["quantity", "proceeds", "basis", "gain", "long_term"]].to_dict("records") == [
        {"quantity": 0.0, "proceeds": 20.0, "basis": 0.0, "gain": 20.0, "long_term": True}
    ]
    (row,) = form_8949(led, 2024).part_ii
    assert row.description == "X nondividend distribution in excess of basis"
    assert row.gain_or_loss == Decimal("20.00")


def test_spin_off_allocates_basis_and_keeps_dates() -> None:
    # Form 8937 style: 1 new Y per 2 X, 20 % of the basis to Y
    t = _t(_buy("X", "2020-01-02", 100, 50), _buy("X", "2024-01-04", 100, 60),
           {"symbol": "X", "date": "2024-03-01", "type": "spin_off", "target_symbol": "Y", "ratio": 0.5,
            "basis_allocation": 0.2})
    lots = match_lots(t).open_lots_frame()
    got = lots[["symbol", "quantity", "basis"]].to_dict("records")
    assert got == [
        {"symbol": "X", "quantity": 100.0, "basis": 4000.0},
        {"symbol": "X", "quantity": 100.0, "basis": 4800.0},
        {"symbol": "Y", "quantity": 50.0, "basis": 1000.0},
        {"symbol": "Y", "quantity": 50.0, "basis": 1200.0},
    ]
    assert lots["acquired"].dt.strftime("%Y-%m-%d").tolist() == ["2020-01-02", "2024-01-04"] * 2
    assert not lots["replacement"].any()


def test_spin_off_shares_sold_long_term_from_the_old_date() -> None:
    t = _t(_buy("X", "2020-01-02", 100, 50),
           {"symbol": "X", "date": "2024-03-01", "type": "spin_off", "target_symbol": "Y", "ratio": 0.5,
            "basis_allocation": 0.2},
           _sell("Y", "2024-03-05", 50, 30))
    (row,) = form_8949(t, 2024).part_ii
    assert (row.description, row.date_acquired, row.cost_basis, row.gain_or_loss) == (
        "50 sh. Y", dt.date(2020, 1, 2), Decimal("1000.00"), Decimal("500.00"))


def test_merger_stock_and_cash() -> None:
    # 0.5 Y ($80) + $10 cash per X: the cash is 10/50 of the consideration, a sale of 20 % of the lot
    t = _t(_buy("X", "2020-01-02", 100, 50),
           {"symbol": "X", "date": "2024-03-01", "type": "merger", "target_symbol": "Y", "ratio": 0.5,
            "cash": 10, "price": 80})
    led = match_lots(t)
    r = led.realized_frame()
    assert r[["symbol", "quantity", "proceeds", "basis", "gain", "long_term"]].to_dict("records") == [
        {"symbol": "X", "quantity": 20.0, "proceeds": 1000.0, "basis": 1000.0, "gain": 0.0, "long_term": True}
    ]
    lots = led.open_lots_frame()
    assert lots[["symbol", "quantity", "basis"]].to_dict("records") == [{"symbol": "Y", "quantity": 50.0, "basis": 4000.0}]
    assert lots["acquired"].iloc[0] == pd.Timestamp("2020-01-02")


def test_all_cash_merger_is_a_sale() -> None:
    t = _t(_buy("X", "2024-01-02", 100, 50),
           {"symbol": "X", "date": "2024-03-01", "type": "merger", "target_symbol": "Y", "cash": 70})
    led = match_lots(t)
    assert led.open_lots.size == 0
    (row,) = form_8949(led, 2024).part_i
    assert (row.proceeds, row.cost_basis, row.gain_or_loss) == (Decimal("7000.00"), Decimal("5000.00"), Decimal("2000.00"))


def test_wash_sale_replacement_counted_in_post_split_shares() -> None:
    # 100 sold at a loss, a 4-for-1 split, then 400 new shares bought: all of the loss is washed
    # (the split needs shares held: 101 bought, 1 kept through it)
    t = _t(_buy("X", "2024-01-02", 101, 40), _sell("X", "2024-06-03", 100, 30),
           {"symbol": "X", "date": "2024-06-10", "type": "split", "ratio": 4}, _buy("X", "2024-06-20", 400, 7.5))
    led = match_lots(t)
    assert led.realized_frame()["disallowed"].tolist() == [1000.0]
    lots = led.open_lots_frame()
    assert lots[["quantity", "basis", "adjustment"]].to_dict("records") == [
        {"quantity": 4.0, "basis": 40.0, "adjustment": 0.0},
        {"quantity": 400.0, "basis": 4000.0, "adjustment": 1000.0},
    ]


def test_spin_off_target_is_not_substantially_identical() -> None:
    # a loss on X, then Y bought within 30 days: Y (a spin-off of X) does not wash it
    t = _t(_buy("X", "2020-01-02", 100, 50),
           {"symbol": "X", "date": "2024-03-01", "type": "spin_off", "target_symbol": "Y", "ratio": 1,
            "basis_allocation": 0.5},
           _sell("X", "2024-04-01", 100, 10), _buy("Y", "2024-04-10", 100, 5))
    assert match_lots(t).realized_frame()["disallowed"].tolist() == [0.0]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"type": "split"}, "ratio must be > 0"),
        ({"type": "split", "ratio": -2}, "ratio must be > 0"),
        ({"type": "return_of_capital"}, "price"),
        ({"type": "spin_off", "ratio": 1, "basis_allocation": 0.1}, "target_symbol is required"),
        ({"type": "spin_off", "ratio": 1, "basis_allocation": 1.5, "target_symbol": "Y"}, "basis_allocation must be between"),
        ({"type": "spin_off", "ratio": 1, "basis_allocation": 0.5, "target_symbol": "X"}, "must differ"),
        ({"type": "merger", "target_symbol": "Y"}, "ratio must be >= 0"),
        ({"type": "merger", "target_symbol": "Y", "ratio": 1, "cash": 5}, "price"),
        ({"type": "split", "ratio": 2, "fees": 1}, "fees must be 0"),
        ({"type": "split", "ratio": 2, "cash": 5}, "no fractional share"),
    ],
)
def test_bad_corporate_actions_raise_naming_the_column(row: dict, message: str) -> None:
    t = _t(_buy("X", "2024-01-02", 10, 10), {"symbol": "X", "date": "2024-03-01", "quantity": None, "price": None} | row)
    with pytest.raises(ValueError, match=message):
        match_lots(t)


def test_ratio_leaving_a_lot_without_shares_raises() -> None:
    t = _t(_buy("X", "2024-01-02", 0.00000004, 10), {"symbol": "X", "date": "2024-03-01", "type": "split", "ratio": 0.1})
    with pytest.raises(ValueError, match="ratio leaves a lot with no shares"):
        match_lots(t)


def test_corporate_action_on_shares_not_held_raises() -> None:
    t = _t(_buy("X", "2024-05-02", 10, 10), {"symbol": "X", "date": "2024-03-01", "type": "split", "ratio": 2})
    with pytest.raises(ValueError, match="no X shares are held on that date"):
        match_lots(t)


def test_parallel_equals_sequential_with_linked_groups() -> None:
    rows = [_buy("A", "2020-01-02", 10, 10), _buy("B", "2020-01-02", 10, 10), _buy("C", "2020-01-03", 7, 3),
            {"symbol": "A", "date": "2021-01-04", "type": "spin_off", "target_symbol": "Z", "ratio": 0.5,
             "basis_allocation": 0.25},
            {"symbol": "B", "date": "2021-01-05", "type": "merger", "target_symbol": "C", "ratio": 2},
            _sell("C", "2021-02-01", 20, 4), _sell("Z", "2021-02-01", 5, 9)]
    enc = _encode(_t(*rows), "fifo", None)
    assert enc.links.tolist() == [0, 1, 1, 0]  # A+Z, B+C: two processing groups
    assert enc.groups.tolist() == [0, 1, 2, 3]  # four wash-sale groups
    args = kernel_args(enc, True)
    par, seq = k.match_lots_nb(*args), k.match_lots_seq_nb(*args)
    for a, b in zip(par, seq, strict=True):
        assert np.array_equal(a, b)
