"""``quantcore.valuation`` equals plain-Python twins on generated inputs.

The service's value history (``service.analytics.history``) is a thin adapter over
:func:`quantcore.valuation.ledger_value_history`; ``tests/service/test_analytics_history.py``
checks it end to end. Here each function is checked on its own arrays.
"""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from quantcore import valuation as v


@st.composite
def ledgers(draw: st.DrawFn) -> tuple[np.ndarray, list[tuple[int, int, int, float, float, float]]]:
    n = draw(st.integers(1, 30))
    k = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    close = 20.0 * np.exp(np.cumsum(rng.normal(0, 0.03, (n, k)), axis=0))
    if draw(st.booleans()):
        close[: draw(st.integers(0, n - 1)), k - 1] = np.nan  # a late starter
    rows = []
    held = [0.0] * k
    for day in sorted(draw(st.lists(st.integers(0, n), max_size=15))):  # n: after the calendar
        j = draw(st.integers(0, k - 1))
        kind = draw(st.sampled_from([v.BUY, v.BUY, v.SELL, v.DIVIDEND]))
        qty = float(draw(st.integers(1, 50)))
        if kind == v.SELL:
            qty = min(qty, held[j])
            if qty <= 0:
                continue
        if day < n and kind == v.BUY and not np.isfinite(close[day, j]):
            continue  # nobody buys before the first close
        held[j] += qty if kind == v.BUY else -qty if kind == v.SELL else 0.0
        price = float(draw(st.floats(1.0, 40.0)))
        rows.append((day, j, kind, qty, price, float(draw(st.integers(0, 2)))))
    return close, rows


def twin(
    close: np.ndarray, rows: list[tuple[int, int, int, float, float, float]]
) -> tuple[list[float], list[float]]:
    """Buys at the open, proceeds and dividends at the close, with the ledger's cash: money
    spent beyond the cash held is put in from outside (an inflow), cash received repays it
    (an outflow), and what is received beyond it stays as cash, a part of the value
    (docs/service_analytics.md, "How the value history is computed"). While the cash never
    ends a day above zero this is the implicit-cash model: buys in, proceeds out."""
    n, k = close.shape
    held = [0.0] * k
    cash = short = 0.0
    prev, values, rets = 0.0, [], []
    for t in range(n):
        today = [r for r in rows if r[0] == t]
        for _, j, kind, qty, price, fees in today:
            if kind == v.BUY:
                held[j] += qty
                cash -= qty * price + fees
        short_open = max(0.0, -cash)
        for _, j, kind, qty, price, fees in today:
            if kind == v.SELL:
                held[j] -= qty
            if kind != v.BUY:
                cash += qty * price - fees
        inflow, outflow = short_open - short, short_open - max(0.0, -cash)
        short = max(0.0, -cash)
        value = sum(held[j] * close[t, j] for j in range(k) if abs(held[j]) > 1e-12)
        value += max(cash, 0.0)
        base = prev + inflow
        rets.append((value + outflow) / base - 1.0 if base > 1e-9 else math.nan)
        values.append(value)
        prev = value
    return values, rets


@settings(max_examples=100, deadline=None)
@given(ledgers())
def test_ledger_value_history_equals_twin(case: tuple[np.ndarray, list]) -> None:  # type: ignore[type-arg]
    close, rows = case
    cols = list(zip(*rows, strict=True)) if rows else [[]] * 6
    h = v.ledger_value_history(
        np.array(cols[0], np.int64), np.array(cols[1], np.int64), np.array(cols[2], np.int64),
        np.array(cols[3], float), np.array(cols[4], float), np.array(cols[5], float), close,
    )  # fmt: skip
    values, rets = twin(close, rows)
    np.testing.assert_allclose(h.value, values, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(h.returns, rets, rtol=1e-10, atol=1e-12)
    assert h.holdings.shape == close.shape


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(0, 800), max_size=60, unique=True),
    st.sampled_from(["1d", "1w", "1m"]),
)
def test_period_ends_and_interval_returns_equal_twins(offsets: list[int], interval: str) -> None:
    day0 = dt.date(2023, 1, 1)
    days = [day0 + dt.timedelta(days=o) for o in sorted(offsets)]
    dates = np.array(days, dtype="datetime64[D]")
    ends = v.period_ends(dates, interval)  # type: ignore[arg-type]

    def key(d: dt.date) -> object:
        if interval == "1d":
            return d
        if interval == "1w":
            return d.isocalendar()[:2]  # ISO weeks end on Sunday
        return (d.year, d.month)

    want = [i for i in range(len(days)) if i == len(days) - 1 or key(days[i]) != key(days[i + 1])]
    assert ends.tolist() == want

    cum = np.cumprod(1.0 + np.linspace(-0.01, 0.02, len(days))) - 1.0
    step = v.interval_returns(cum, ends)
    growth, twin_steps = 1.0, []
    for i in want:
        twin_steps.append((1.0 + cum[i]) / growth - 1.0)
        growth = 1.0 + cum[i]
    np.testing.assert_allclose(step, twin_steps, rtol=1e-12, atol=1e-15)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["Tech", "Energy", ""]),
            st.one_of(st.floats(0.0, 1e6), st.just(math.nan)),
        ),
        max_size=12,
    )
)
def test_weights_and_concentration_equal_twins(items: list[tuple[str, float]]) -> None:
    keys = [k for k, _ in items]
    values = np.array([x for _, x in items], dtype=float)
    total, weight = v.position_weights(values)
    finite = [x for _, x in items if not math.isnan(x)]
    assert total == math.fsum(finite) or math.isclose(total, math.fsum(finite), rel_tol=1e-12)
    if total <= 0:
        assert np.isnan(weight).all()
        return
    twin_w = [x / total for _, x in items]
    np.testing.assert_allclose(weight, twin_w, rtol=1e-12)
    h = v.herfindahl_index(weight)
    ok = [w for w in twin_w if not math.isnan(w)]
    assert math.isclose(h, sum(w * w for w in ok), rel_tol=1e-12, abs_tol=1e-15)
    groups: dict[str, float] = {}
    for k, w in zip(keys, twin_w, strict=True):
        if not math.isnan(w):
            groups[k or "Unclassified"] = groups.get(k or "Unclassified", 0.0) + w
    got = v.group_weights(keys, weight)
    assert set(got) == set(groups)
    for k, w in groups.items():
        assert math.isclose(got[k], w, rel_tol=1e-12, abs_tol=1e-15)
    assert list(got.values()) == sorted(got.values(), reverse=True)


def test_edge_cases() -> None:
    assert v.period_ends(np.array([], dtype="datetime64[D]"), "1w").tolist() == []
    assert math.isnan(v.herfindahl_index(np.array([np.nan])))
    assert v.infer_periods_per_year(np.array(["2024-01-06"], dtype="datetime64[D]")) == 365.0
    h = v.ledger_value_history(
        np.array([], np.int64), np.array([], np.int64), np.array([], np.int64),
        np.array([]), np.array([]), np.array([]), np.ones((3, 2)),
    )  # fmt: skip
    assert h.value.tolist() == [0.0, 0.0, 0.0] and np.isnan(h.returns).all()
