"""Hypothesis: ``match_lots`` with corporate actions equals the plain-Python ``Decimal``
reference (``tests/reference/tax_reference.py``, written from IRS Publication 550's rules),
at the 1e-8 unit: splits and stock dividends with and without cash in lieu, returns of
capital, spin-offs and mergers (with and without cash), amid buys, sells and wash sales,
for every lot method."""

from __future__ import annotations

import datetime as dt
import sys
from decimal import ROUND_DOWN, Decimal
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from quantcore.tax import match_lots
from quantcore.tax.lots import from_fixed

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reference"))
from tax_reference import reference_match_lots

METHODS = ["fifo", "lifo", "hifo", "average"]
E8 = Decimal("1e-8")
START = dt.date(2023, 1, 2)
QTY = st.integers(1, 3_000_000_000).map(lambda n: Decimal(n).scaleb(-8))
PRICE = st.integers(1, 50_000_000).map(lambda n: Decimal(n).scaleb(-6))


@st.composite
def histories(draw: st.DrawFn) -> list[dict]:
    rows: list[dict] = []
    day = START
    held = {"A": Decimal(0), "B": Decimal(0)}
    for _ in range(draw(st.integers(2, 22))):
        day += dt.timedelta(days=draw(st.sampled_from([0, 1, 5, 20, 29, 31, 200, 366])))
        sym = draw(st.sampled_from(["A", "A", "B"]))
        kind = draw(st.sampled_from(["buy", "buy", "sell", "sell", "split", "roc", "spin", "merger"]))
        base = {"symbol": sym, "date": day, "fees": Decimal(0), "quantity": None, "price": None}
        if kind == "sell" and held[sym] >= E8:
            q = min(held[sym], draw(QTY)).quantize(E8, rounding=ROUND_DOWN)
            held[sym] -= q
            rows.append({**base, "type": "sell", "quantity": q, "price": draw(PRICE)})
        elif kind == "split" and held[sym] > Decimal("0.01"):
            ratio = draw(st.sampled_from([Decimal(2), Decimal(3), Decimal("1.05"), Decimal("0.5"), Decimal("0.1")]))
            new = sum((x for x in [held[sym] * ratio]), Decimal(0))
            cash = Decimal("3.21") if draw(st.booleans()) and new != int(new) and new > 1 else None
            rows.append({**base, "type": draw(st.sampled_from(["split", "stock_dividend"])), "ratio": ratio, "cash": cash})
            held[sym] = Decimal(int(new)) if cash else new  # approximate: the kernel rounds per lot
        elif kind == "roc" and held[sym] > 0:
            rows.append({**base, "type": "return_of_capital", "price": draw(PRICE)})
        elif kind in ("spin", "merger") and sym == "A" and held["A"] > Decimal("0.01"):
            ratio = draw(st.sampled_from([Decimal("0.5"), Decimal(1), Decimal(2)]))
            if kind == "spin":
                share = draw(st.sampled_from([Decimal("0.1"), Decimal("0.25"), Decimal("0.5")]))
                rows.append({**base, "type": "spin_off", "target_symbol": "B", "ratio": ratio, "basis_allocation": share})
                held["B"] += held["A"] * ratio
            else:
                cash = draw(st.sampled_from([None, Decimal(5)]))
                stock = draw(st.booleans()) or cash is None
                rows.append({**base, "type": "merger", "target_symbol": "B", "ratio": ratio if stock else None,
                             "cash": cash, "price": draw(PRICE) if stock and cash else None})  # fmt: skip
                held["B"] += held["A"] * ratio if stock else 0
                held["A"] = Decimal(0)
        else:
            q = draw(QTY)
            held[sym] += q
            rows.append({**base, "type": "buy", "quantity": q, "price": draw(PRICE)})
    return rows


def _frame(rows: list[dict]) -> pd.DataFrame:
    cols = ["symbol", "date", "type", "quantity", "price", "fees", "ratio", "cash", "target_symbol", "basis_allocation"]
    return pd.DataFrame({c: pd.Series([r.get(c) for r in rows], dtype=object) for c in cols})


def _day(d: dt.date) -> int:
    return (d - dt.date(1970, 1, 1)).days


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(histories(), st.sampled_from(METHODS), st.booleans())
def test_kernel_equals_reference_with_corporate_actions(rows: list[dict], method: str, wash: bool) -> None:
    ref_rows = [{**r, "ratio": r.get("ratio"), "cash": r.get("cash")} for r in rows]
    try:
        ref = reference_match_lots(ref_rows, method=method, wash=wash)
    except ValueError as exc:  # the kernel refuses the same ledgers (e.g. a sale after rounding)
        event(f"refused: {str(exc).split(': ')[1]}")
        try:
            match_lots(_frame(rows), method=method, wash_sales=wash)
        except ValueError as full:
            with pytest.raises(ValueError) as lots_only:  # the same refusal without the pieces
                match_lots(_frame(rows), method=method, wash_sales=wash, lots_only=True)
            assert str(lots_only.value) == str(full)
            return
        raise AssertionError(f"the reference refused, the kernel did not: {exc}") from None
    led = match_lots(_frame(rows), method=method, wash_sales=wash)
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
    got_lots = [
        (led.symbols[o["symbol"]], int(o["lot"]), int(o["acquired"]), from_fixed(o["quantity"]),
         from_fixed(o["basis"]), bool(o["replacement"]))
        for o in led.open_lots
    ]  # fmt: skip
    want_lots = [(x.symbol, x.origin, _day(x.acquired), x.qty, x.basis, x.used) for x in ref.open_lots]
    assert got_lots == want_lots
    lots = match_lots(_frame(rows), method=method, wash_sales=wash, lots_only=True)
    assert lots.open_lots.tobytes() == led.open_lots.tobytes()  # the lots, bit for bit, without the pieces
    assert lots.realized.size == 0
    kinds = {r["type"] for r in rows}
    event(f"actions: {sorted(kinds - {'buy', 'sell'})}")
    event(f"wash sale: {any(p['disallowed'] > 0 for p in ref.realized)}")
