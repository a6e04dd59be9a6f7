"""Hypothesis histories: the numba lot matcher equals the plain-Python Decimal reference.

Histories mix buys, partial sells, dividends (with and without ex-dates) and
losses inside and outside the 30-day wash-sale window, over two symbols that may
be grouped as substantially identical, for every lot method. Results are
compared at the 1e-8 unit, which implies equality to the cent.
"""

from __future__ import annotations

import datetime as dt
import sys
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from quantcore.tax import match_lots, tax_summary
from quantcore.tax.lots import from_fixed, to_cents

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reference"))
from tax_reference import is_long_term, reference_match_lots

METHODS = ["fifo", "lifo", "hifo", "specific", "average"]
START = dt.date(2023, 12, 1)
QTY = st.integers(1, 5_000_000_000).map(lambda n: Decimal(n).scaleb(-8))  # up to 50 shares, 8 decimals
PRICE = st.integers(1, 50_000_000).map(lambda n: Decimal(n).scaleb(-6))  # up to $50, 6 decimals
FEE = st.sampled_from([Decimal(0), Decimal(0), Decimal("0.99"), Decimal("4.95"), Decimal("0.005")])


@st.composite
def histories(draw: st.DrawFn) -> tuple[list[dict], str]:
    method = draw(st.sampled_from(METHODS))
    n = draw(st.integers(1, 28))
    day = START
    held: dict[str, Decimal] = {"A": Decimal(0), "B": Decimal(0)}
    open_buys: dict[str, list[list]] = {"A": [], "B": []}  # [row, remaining] for specific
    rows: list[dict] = []
    for i in range(n):
        # gaps straddle the 30/31-day wash-sale boundary and the one-year boundary
        day += dt.timedelta(days=draw(st.sampled_from([0, 1, 3, 10, 29, 30, 31, 45, 200, 366])))
        sym = draw(st.sampled_from(["A", "B"]))
        kind = draw(st.sampled_from(["buy", "buy", "sell", "sell", "dividend"]))
        fees = draw(FEE)
        if kind == "sell" and held[sym] > 0:
            if method == "specific":
                choices = [b for b in open_buys[sym] if b[1] > 0]
                pick = draw(st.sampled_from(choices))
                qty = min(pick[1], draw(QTY))
                pick[1] -= qty
                lot = pick[0]
            else:
                qty = min(held[sym], draw(QTY))
                lot = None
            held[sym] -= qty
            rows.append({"symbol": sym, "date": day, "type": "sell", "quantity": qty, "price": draw(PRICE), "fees": fees, "lot": lot})
        elif kind == "dividend":
            ex = day - dt.timedelta(days=draw(st.sampled_from([0, 3, 20]))) if draw(st.booleans()) else None
            rows.append({"symbol": sym, "date": day, "type": "dividend", "quantity": max(held[sym], Decimal(1)), "price": Decimal("0.37"), "fees": Decimal(0), "ex_date": ex})
        else:
            qty = draw(QTY)
            held[sym] += qty
            open_buys[sym].append([i, qty])
            rows.append({"symbol": sym, "date": day, "type": "buy", "quantity": qty, "price": draw(PRICE), "fees": fees})
    return rows, method


def _frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "symbol": [r["symbol"] for r in rows],
            "date": [pd.Timestamp(r["date"]) for r in rows],
            "type": [r["type"] for r in rows],
            "quantity": pd.Series([r["quantity"] for r in rows], dtype=object),
            "price": pd.Series([r["price"] for r in rows], dtype=object),
            "fees": pd.Series([r["fees"] for r in rows], dtype=object),
            "lot_id": [f"L{i}" if r["type"] == "buy" else (f"L{r['lot']}" if r.get("lot") is not None else None) for i, r in enumerate(rows)],
            "ex_date": [pd.Timestamp(r["ex_date"]) if r.get("ex_date") else pd.NaT for r in rows],
        }
    )


def _day(d: dt.date) -> int:
    return (d - dt.date(1970, 1, 1)).days


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.booleans(), st.booleans())
def test_kernel_equals_reference(case: tuple[list[dict], str], wash: bool, grouped: bool) -> None:
    rows, method = case
    groups = {"A": "AB", "B": "AB"} if grouped else None
    ref = reference_match_lots(rows, method=method, wash=wash, groups=groups)
    led = match_lots(_frame(rows), method=method, wash_sales=wash, substantially_identical=groups)

    got = [
        (
            led.symbols[r["symbol"]], int(r["lot"]), int(r["row"]), int(r["purchased"]), int(r["acquired"]),
            int(r["sold"]), from_fixed(r["quantity"]), from_fixed(r["proceeds"]), from_fixed(r["basis"]),
            from_fixed(r["disallowed"]), bool(r["long_term"]),
        )
        for r in led.realized
    ]
    want = [
        (
            p["symbol"], p["lot"], p["row"], _day(p["purchased"]), _day(p["acquired"]), _day(p["sold"]),
            p["quantity"], p["proceeds"], p["basis"], p["disallowed"], p["long_term"],
        )
        for p in ref.realized
    ]
    assert got == want
    event(f"wash sales: {sum(1 for p in ref.realized if p['disallowed'] > 0) > 0}")
    event(f"pending replacement: {any(x.used and x.purchased > x.acquired for x in ref.open_lots)}")
    event(f"qualified dividend: {any(d['qualified'] > 0 for d in ref.dividends)}")
    got_lots = [
        (led.symbols[o["symbol"]], int(o["lot"]), int(o["acquired"]), from_fixed(o["quantity"]), from_fixed(o["basis"]), bool(o["replacement"]))
        for o in led.open_lots
    ]
    want_lots = [(x.symbol, x.origin, _day(x.acquired), x.qty, x.basis, x.used) for x in ref.open_lots]
    assert got_lots == want_lots
    assert [from_fixed(x) for x in led.dividends["qualified"]] == [d["qualified"] for d in ref.dividends]
    assert [from_fixed(x) for x in led.dividends["amount"]] == [d["amount"] for d in ref.dividends]
    lots = match_lots(_frame(rows), method=method, wash_sales=wash, substantially_identical=groups, lots_only=True)
    assert lots.open_lots.tobytes() == led.open_lots.tobytes()  # the lots, bit for bit, without the pieces
    assert lots.realized.size == 0 and lots.dividends.size == 0


@settings(max_examples=60, deadline=None)
@given(histories())
def test_conservation_and_cents(case: tuple[list[dict], str]) -> None:
    """Basis is conserved (bought + disallowed = sold basis + open basis) and summary = rounded rows."""
    rows, method = case
    led = match_lots(_frame(rows), method=method)
    cost = sum(
        (Decimal(str(r["quantity"])) * r["price"]).quantize(Decimal("1e-8"), rounding="ROUND_HALF_UP") + r["fees"]
        for r in rows
        if r["type"] == "buy"
    )
    total = from_fixed(int(led.realized["basis"].sum()) + int(led.open_lots["basis"].sum()) - int(led.realized["disallowed"].sum()))
    assert total == cost
    for year in {r["date"].year for r in rows}:
        s = tax_summary(led, year)
        sold = led.realized[(led.realized["sold"] >= _day(dt.date(year, 1, 1))) & (led.realized["sold"] <= _day(dt.date(year, 12, 31)))]
        want = sum((to_cents(p) - to_cents(b) + to_cents(d) for p, b, d in sold[["proceeds", "basis", "disallowed"]].tolist()), Decimal("0.00"))
        assert s.net_capital_gain_loss == want


@settings(max_examples=100, deadline=None)
@given(st.dates(dt.date(1996, 1, 1), dt.date(2030, 12, 31)), st.integers(300, 430))
def test_long_term_matches_calendar_rule(acquired: dt.date, held: int) -> None:
    from quantcore._kernels.tax import is_long_term_nb

    sold = acquired + dt.timedelta(days=held)
    assert is_long_term_nb(_day(acquired), _day(sold)) == is_long_term(acquired, sold)


@pytest.mark.parametrize("method", METHODS)
def test_oversell_raises_in_both(method: str) -> None:
    rows = [
        {"symbol": "A", "date": START, "type": "buy", "quantity": Decimal(1), "price": Decimal(1), "fees": Decimal(0)},
        {"symbol": "A", "date": START, "type": "sell", "quantity": Decimal("1.00000001"), "price": Decimal(1), "fees": Decimal(0), "lot": 0},
    ]
    with pytest.raises(ValueError, match="row 1"):
        reference_match_lots(rows, method=method)
    with pytest.raises(ValueError, match="row 1") as full:
        match_lots(_frame(rows), method=method)
    with pytest.raises(ValueError, match="row 1") as lots_only:
        match_lots(_frame(rows), method=method, lots_only=True)
    assert str(lots_only.value) == str(full.value)
