"""``service.analytics.history.value_history`` equals a plain-Python twin on generated ledgers,
and its chained returns equal ``quantcore.returns.time_weighted_return`` (flows split at the
open and the close of each day)."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import quantcore as qc
from service.analytics.history import LedgerRow, value_history
from service.analytics.prices import ClosePanel

SYMBOLS = ("A", "B", "C")
DAY0 = dt.date(2024, 1, 1)


@st.composite
def cases(draw: st.DrawFn) -> tuple[ClosePanel, list[LedgerRow]]:
    n = draw(st.integers(2, 40))
    offsets = sorted(draw(st.sets(st.integers(0, 3 * n), min_size=n, max_size=n)))
    dates = np.array([DAY0 + dt.timedelta(days=o) for o in offsets], dtype="datetime64[D]")
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    close = 50.0 * np.exp(np.cumsum(rng.normal(0, 0.02, (n, len(SYMBOLS))), axis=0))
    late = draw(st.integers(0, n - 1))  # C starts trading later (NaN before)
    close[:late, 2] = np.nan
    drafts = []
    for _ in range(draw(st.integers(0, 12))):
        sym = draw(st.sampled_from(SYMBOLS))
        i = draw(st.integers(0, n - 1))
        if sym == "C":
            i = max(i, late)
        lo = offsets[i - 1] + 1 if i else 0
        day = DAY0 + dt.timedelta(days=draw(st.integers(lo, offsets[i])))
        kind = draw(st.sampled_from(["buy", "buy", "sell", "dividend"]))
        qty = float(draw(st.integers(1, 100)))
        px = float(close[i, SYMBOLS.index(sym)]) * draw(st.floats(0.9, 1.1))
        drafts.append(
            (day, sym, kind, qty, px if kind != "dividend" else 0.5, float(draw(st.integers(0, 3))))
        )
    drafts.sort(key=lambda d: d[0])
    held = dict.fromkeys(SYMBOLS, 0.0)
    rows = []
    for day, sym, kind, qty, px, fee in drafts:  # the ledger never sells more than held
        if kind == "sell":
            qty = min(qty, held[sym])
            if qty <= 0:
                continue
        held[sym] += qty if kind == "buy" else -qty if kind == "sell" else 0.0
        rows.append(LedgerRow(sym, kind, qty, px, fee, day))
    return ClosePanel(dates, close, SYMBOLS), rows


def twin(panel: ClosePanel, rows: list[LedgerRow]) -> tuple[list[float], list[float]]:
    """Buys at the open, proceeds and dividends at the close, with the ledger's cash: money
    spent beyond the cash held is put in from outside (an inflow), cash received repays it
    (an outflow), and what is received beyond it stays as cash, a part of the value
    (docs/service_analytics.md, "How the value history is computed"). While the cash never
    ends a day above zero this is the implicit-cash model: buys in, proceeds out."""
    held = dict.fromkeys(SYMBOLS, 0.0)
    pending = list(rows)
    cash = short = 0.0
    prev, values, rets = 0.0, [], []
    for t, day in enumerate(panel.dates.astype(dt.date)):
        today = []
        while pending and pending[0].date <= day:
            today.append(pending.pop(0))
        for r in today:
            if r.kind == "buy":
                held[r.symbol] += r.quantity
                cash -= r.quantity * r.price + r.fees
        short_open = max(0.0, -cash)
        for r in today:
            if r.kind == "sell":
                held[r.symbol] -= r.quantity
            if r.kind != "buy":  # a sale or a dividend: the cash received, net of fees
                cash += r.quantity * r.price - r.fees
        inflow, outflow = short_open - short, short_open - max(0.0, -cash)
        short = max(0.0, -cash)
        value = sum(
            q * panel.close[t, j] for j, (s, q) in enumerate(held.items()) if abs(q) > 1e-12
        )
        value += max(cash, 0.0)
        base = prev + inflow
        rets.append((value + outflow) / base - 1.0 if base > 1e-9 else math.nan)
        values.append(value)
        prev = value
    return values, rets


@settings(max_examples=80, deadline=None)
@given(cases())
def test_value_history_equals_twin(case: tuple[ClosePanel, list[LedgerRow]]) -> None:
    panel, rows = case
    h = value_history(rows, panel)
    values, rets = twin(panel, rows)
    np.testing.assert_allclose(h.value, values, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(h.returns, rets, rtol=1e-10, atol=1e-12)
    r = h.returns[np.isfinite(h.returns)]
    if r.size:
        split_values = np.ravel(np.column_stack([h.value + h.outflow, h.value]))
        split_flows = np.ravel(np.column_stack([h.inflow, -h.outflow]))
        twr = qc.returns.time_weighted_return(split_values, split_flows)
        assert math.isclose(float(np.prod(1.0 + r)) - 1.0, twr, rel_tol=1e-9, abs_tol=1e-12)


def test_transactions_after_the_calendar_are_ignored() -> None:
    panel = ClosePanel(
        np.array(["2024-01-02", "2024-01-03"], dtype="datetime64[D]"),
        np.array([[10.0], [11.0]]),
        ("A",),
    )
    rows = [
        LedgerRow("A", "buy", 2, 10, 0, dt.date(2024, 1, 2)),
        LedgerRow("A", "buy", 5, 11, 0, dt.date(2024, 2, 1)),
    ]
    h = value_history(rows, panel)
    assert h.value.tolist() == [20.0, 22.0]
    assert np.isclose(h.returns[1], 0.1) and h.holdings[:, 0].tolist() == [2.0, 2.0]
