"""Hypothesis properties of corporate actions in ``quantcore.tax.match_lots``.

IRS Publication 550 ("Stock Splits"): a split changes the number of shares, not the
total basis, and the new shares' holding period is the old shares'. So:

* a split never changes the total basis of the open lots nor their acquisition dates;
* a split then a sale equals, figure for figure, the same history entered in
  post-split shares (quantity x ratio, price / ratio) with no split;
* the order in which rows are entered never matters (the date-sorted ledger decides).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quantcore.tax import match_lots

METHODS = ["fifo", "lifo", "hifo", "average"]
START = dt.date(2022, 1, 3)
RATIOS = [Decimal(2), Decimal(4), Decimal(5), Decimal(10)]  # price / ratio exact in cents / 10


@st.composite
def trades(draw: st.DrawFn, n_max: int = 14) -> list[dict]:
    """Buys and sells of one symbol on distinct, increasing days (sells never exceed holdings)."""
    rows: list[dict] = []
    day = START
    held = 0
    for _ in range(draw(st.integers(1, n_max))):
        day += dt.timedelta(days=draw(st.sampled_from([1, 5, 20, 31, 90, 200, 370])))
        qty = draw(st.integers(1, 50))
        price = Decimal(draw(st.integers(100, 20_000))).scaleb(-2)
        if held and draw(st.booleans()):
            qty = min(qty, held)
            held -= qty
            rows.append({"symbol": "X", "date": day, "type": "sell", "quantity": Decimal(qty), "price": price})
        else:
            held += qty
            rows.append({"symbol": "X", "date": day, "type": "buy", "quantity": Decimal(qty), "price": price})
    return rows


def _frame(rows: list[dict]) -> pd.DataFrame:
    cols = ["symbol", "date", "type", "quantity", "price", "ratio", "target_symbol", "basis_allocation"]
    return pd.DataFrame([{c: r.get(c) for c in cols} for r in rows], columns=cols)


def _held(rows: list[dict]) -> Decimal:
    return sum((r["quantity"] if r["type"] == "buy" else -r["quantity"] for r in rows), Decimal(0))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trades(), st.sampled_from(METHODS), st.sampled_from([*RATIOS, Decimal(3), Decimal("0.5"), Decimal("0.25")]))
def test_split_keeps_total_basis_and_holding_period(rows: list[dict], method: str, ratio: Decimal) -> None:
    if _held(rows) == 0:
        rows = [*rows, {"symbol": "X", "date": rows[-1]["date"] + dt.timedelta(days=1), "type": "buy",
                        "quantity": Decimal(3), "price": Decimal(7)}]  # fmt: skip
    split_day = rows[-1]["date"] + dt.timedelta(days=1)
    before = match_lots(_frame(rows), method=method).open_lots
    after = match_lots(
        _frame([*rows, {"symbol": "X", "date": split_day, "type": "split", "ratio": ratio}]), method=method
    ).open_lots
    assert int(after["basis"].sum()) == int(before["basis"].sum())
    assert after["acquired"].tolist() == before["acquired"].tolist()
    assert after["basis"].tolist() == before["basis"].tolist()
    scaled = [int((Decimal(q) * ratio).quantize(Decimal(1))) for q in before["quantity"].tolist()]
    assert after["quantity"].tolist() == scaled


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trades(), trades(), st.sampled_from(METHODS), st.sampled_from(RATIOS))
def test_split_then_sale_equals_the_history_in_post_split_shares(
    pre: list[dict], post: list[dict], method: str, ratio: Decimal
) -> None:
    if _held(pre) == 0:
        pre = [*pre, {"symbol": "X", "date": pre[-1]["date"] + dt.timedelta(days=1), "type": "buy",
                      "quantity": Decimal(2), "price": Decimal(9)}]  # fmt: skip
    split_day = pre[-1]["date"] + dt.timedelta(days=1)
    shift = split_day + dt.timedelta(days=1) - START
    held = _held(pre) * ratio
    later: list[dict] = []
    for r in post:  # the later trades, in post-split shares, never selling more than held
        q = r["quantity"] if r["type"] == "buy" else min(r["quantity"], held)
        if q == 0:
            continue
        held += q if r["type"] == "buy" else -q
        later.append({**r, "date": r["date"] + shift, "quantity": q})
    with_split = [*pre, {"symbol": "X", "date": split_day, "type": "split", "ratio": ratio}, *later]
    adjusted = [{**r, "quantity": r["quantity"] * ratio, "price": r["price"] / ratio} for r in pre] + later
    a = match_lots(_frame(with_split), method=method)
    b = match_lots(_frame(adjusted), method=method)
    fields = ["acquired", "sold", "proceeds", "basis", "disallowed", "long_term"]
    ra, rb = a.realized, b.realized
    for f in fields:
        assert ra[f].tolist() == rb[f].tolist(), f
    # a sale before the split sold pre-split shares: ratio x as many in the adjusted history
    before = ra["sold"] < (np.datetime64(split_day, "D") - np.datetime64("1970-01-01", "D")).astype(np.int64)
    scaled = np.where(before, ra["quantity"] * int(ratio), ra["quantity"])
    assert scaled.tolist() == rb["quantity"].tolist()
    for f in ["acquired", "quantity", "basis", "adjustment"]:
        assert a.open_lots[f].tolist() == b.open_lots[f].tolist(), f


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trades(), st.sampled_from(METHODS), st.randoms(use_true_random=False))
def test_entry_order_never_matters(rows: list[dict], method: str, rnd) -> None:
    if _held(rows) == 0:
        rows = [*rows, {"symbol": "X", "date": rows[-1]["date"] + dt.timedelta(days=1), "type": "buy",
                        "quantity": Decimal(4), "price": Decimal(11)}]  # fmt: skip
    last = rows[-1]["date"]
    rows = [
        *rows,
        {"symbol": "X", "date": last + dt.timedelta(days=1), "type": "split", "ratio": Decimal(3)},
        {"symbol": "X", "date": last + dt.timedelta(days=2), "type": "spin_off", "ratio": Decimal("0.5"),
         "target_symbol": "Y", "basis_allocation": Decimal("0.25")},
        {"symbol": "X", "date": last + dt.timedelta(days=3), "type": "return_of_capital", "price": Decimal("0.5")},
        {"symbol": "Y", "date": last + dt.timedelta(days=40), "type": "sell", "quantity": Decimal("0.5"),
         "price": Decimal(3)},
    ]  # fmt: skip
    base = match_lots(_frame(rows), method=method)
    shuffled = rows[:]
    rnd.shuffle(shuffled)
    got = match_lots(_frame(shuffled), method=method)
    cols = ["symbol", "acquired", "sold", "quantity", "proceeds", "basis", "disallowed"]
    assert np.array_equal(base.realized[cols], got.realized[cols])
    assert np.array_equal(base.open_lots[["symbol", "acquired", "quantity", "basis"]],
                          got.open_lots[["symbol", "acquired", "quantity", "basis"]])  # fmt: skip
