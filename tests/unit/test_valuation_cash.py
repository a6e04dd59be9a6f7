"""``quantcore.valuation.ledger_value_history`` with cash rows, external flows and currencies.

The model (docs/service_analytics.md, "How the value history is computed"): each row
moves cash in its currency (deposits, buys and fees at the start of the day; proceeds,
dividends, interest and withdrawals at its end); value is securities plus the positive
cash, in the base currency; a negative balance is money put in from outside when it
arises. Checked against a plain-Python twin that walks each day row by row, and
against the invariants the model promises: deposits alone earn nothing, deposits do
not change a day's money gain, and a ledger without cash rows keeps the implicit-cash
figures (each buy money put in, each proceed money taken out) while its cash stays at
or below zero.
"""

from __future__ import annotations

import math

import hypothesis.strategies as st
import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings

import quantcore as qc
from quantcore import valuation as v
from quantcore.cash import cash_balances

#: day, column, kind, quantity, price, fees, currency column
Row = tuple[int, int, int, float, float, float, int]
SECURITY = (v.BUY, v.SELL, v.DIVIDEND)
KIND_NAMES = {
    v.BUY: "buy", v.SELL: "sell", v.DIVIDEND: "dividend", v.DEPOSIT: "deposit",
    v.WITHDRAWAL: "withdrawal", v.INTEREST: "interest", v.FEE: "fee",
}  # fmt: skip


def twin(
    close: np.ndarray, rates: np.ndarray, asset_cur: list[int], rows: list[Row]
) -> tuple[list[float], list[float], list[float], list[float], list[list[float]]]:
    """Value, inflow, outflow, returns and end-of-day cash by loops over days and rows."""
    n, k = close.shape
    m = rates.shape[1]
    held, cash, short = [0.0] * k, [0.0] * m, [0.0] * m
    prev = 0.0
    values, ins, outs, rets, balances = [], [], [], [], []
    for t in range(n):
        today = [r for r in rows if r[0] == t]
        dep, wd = [0.0] * m, [0.0] * m
        for _, j, kind, q, p, f, c in today:  # the open: money put in and spent
            if kind == v.BUY:
                held[j] += q
                cash[c] -= q * p + f
            elif kind == v.DEPOSIT:
                cash[c] += p - f
                dep[c] += p
            elif kind == v.FEE:
                cash[c] -= p
        short_open = [max(0.0, -x) for x in cash]
        for _, j, kind, q, p, f, c in today:  # the close: money received and taken out
            if kind == v.SELL:
                held[j] -= q
                cash[c] += q * p - f
            elif kind == v.DIVIDEND:
                cash[c] += q * p - f
            elif kind == v.INTEREST:
                cash[c] += p - f
            elif kind == v.WITHDRAWAL:
                cash[c] -= p + f
                wd[c] += p
        short_end = [max(0.0, -x) for x in cash]
        inflow = outflow = 0.0
        for c in range(m):
            if dep[c] + short_open[c] - short[c] != 0.0:
                inflow += (dep[c] + short_open[c] - short[c]) * rates[t, c]
            if wd[c] + short_open[c] - short_end[c] != 0.0:
                outflow += (wd[c] + short_open[c] - short_end[c]) * rates[t, c]
        value = sum(
            held[j] * close[t, j] * rates[t, asset_cur[j]] for j in range(k) if abs(held[j]) > 1e-12
        )
        value += sum(cash[c] * rates[t, c] for c in range(m) if cash[c] > 0.0)
        base = prev + inflow
        rets.append((value + outflow) / base - 1.0 if base > 1e-9 else math.nan)
        values.append(value)
        ins.append(inflow)
        outs.append(outflow)
        balances.append(list(cash))
        prev, short = value, short_end
    return values, ins, outs, rets, balances


def legacy_twin(close: np.ndarray, rows: list[Row]) -> list[float]:
    """The implicit-cash returns before cash rows existed: buys in at the open, proceeds and
    dividends out at the close, value = holdings x closes."""
    n, k = close.shape
    held = [0.0] * k
    prev, rets = 0.0, []
    for t in range(n):
        inflow = outflow = 0.0
        for day, j, kind, q, p, f, _ in rows:
            if day != t:
                continue
            if kind == v.BUY:
                held[j] += q
                inflow += q * p + f
            elif kind == v.SELL:
                held[j] -= q
                outflow += q * p - f
            elif kind == v.DIVIDEND:
                outflow += q * p - f
        value = sum(held[j] * close[t, j] for j in range(k) if abs(held[j]) > 1e-12)
        base = prev + inflow
        rets.append((value + outflow) / base - 1.0 if base > 1e-9 else math.nan)
        prev = value
    return rets


def run(
    close: np.ndarray,
    rows: list[Row],
    rates: np.ndarray | None = None,
    asset_cur: list[int] | None = None,
) -> v.LedgerValues:
    cols: list[tuple[float, ...]] = list(zip(*rows, strict=True)) if rows else [()] * 7
    return v.ledger_value_history(
        np.array(cols[0], np.int64), np.array(cols[1], np.int64), np.array(cols[2], np.int64),
        np.array(cols[3], float), np.array(cols[4], float), np.array(cols[5], float), close,
        currency=np.array(cols[6], np.int64) if rates is not None else None,
        rates=rates,
        asset_currency=np.array(asset_cur, np.int64) if asset_cur is not None else None,
    )  # fmt: skip


@st.composite
def ledgers(
    draw: st.DrawFn, *, currencies: int = 2, cash_rows: bool = True
) -> tuple[np.ndarray, np.ndarray, list[int], list[Row]]:
    n = draw(st.integers(1, 30))
    k = draw(st.integers(1, 3))
    m = draw(st.integers(1, currencies))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    close = 20.0 * np.exp(np.cumsum(rng.normal(0, 0.03, (n, k)), axis=0))
    rates = np.exp(np.cumsum(rng.normal(0, 0.01, (n, m)), axis=0))
    rates[:, 0] = 1.0  # column 0 is the base currency
    asset_cur = [draw(st.integers(0, m - 1)) for _ in range(k)]
    kinds = [v.BUY, v.BUY, v.SELL, v.DIVIDEND]
    if cash_rows:
        kinds += [v.DEPOSIT, v.DEPOSIT, v.WITHDRAWAL, v.INTEREST, v.FEE]
    rows: list[Row] = []
    held = [0.0] * k
    for day in sorted(draw(st.lists(st.integers(0, n), max_size=18))):  # n: after the calendar
        kind = draw(st.sampled_from(kinds))
        j = draw(st.integers(0, k - 1))
        qty = float(draw(st.integers(1, 50)))
        price = float(draw(st.floats(1.0, 2000.0 if kind not in SECURITY else 40.0)))
        fees = 0.0 if kind == v.FEE else float(draw(st.integers(0, 2)))
        if kind == v.SELL:
            qty = min(qty, held[j])
            if qty <= 0:
                continue
        if kind in (v.SELL, v.DIVIDEND):  # the service refuses fees above the amount
            fees = min(fees, qty * price)
        elif kind in (v.DEPOSIT, v.INTEREST):
            fees = min(fees, price)
        held[j] += qty if kind == v.BUY else -qty if kind == v.SELL else 0.0
        cur = asset_cur[j] if kind in SECURITY else draw(st.integers(0, m - 1))
        rows.append((day, j if kind in SECURITY else -1, kind, qty, price, fees, cur))
    return close, rates, asset_cur, rows


@settings(max_examples=150, deadline=None)
@given(ledgers())
def test_equals_the_twin(case: tuple[np.ndarray, np.ndarray, list[int], list[Row]]) -> None:
    close, rates, asset_cur, rows = case
    h = run(close, rows, rates, asset_cur)
    values, ins, outs, rets, balances = twin(close, rates, asset_cur, rows)
    np.testing.assert_allclose(h.value, values, rtol=1e-11, atol=1e-8)
    np.testing.assert_allclose(h.inflow, ins, rtol=1e-11, atol=1e-8)
    np.testing.assert_allclose(h.outflow, outs, rtol=1e-11, atol=1e-8)
    np.testing.assert_allclose(h.returns, rets, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(h.cash, np.array(balances).reshape(h.cash.shape), atol=1e-8)
    assert (h.inflow >= -1e-8).all()  # a withdrawal's fee beyond the cash nets its outflow


@settings(max_examples=100, deadline=None)
@given(ledgers())
def test_chained_returns_are_the_time_weighted_return(
    case: tuple[np.ndarray, np.ndarray, list[int], list[Row]],
) -> None:
    close, rates, asset_cur, rows = case
    h = run(close, rows, rates, asset_cur)
    r = h.returns[np.isfinite(h.returns)]
    assume(r.size > 0 and np.isfinite(h.value).all())
    live = np.flatnonzero(np.isfinite(h.returns))
    span = slice(int(live[0]), int(live[-1]) + 1)
    assume(np.isfinite(h.returns[span]).all())  # one stretch of capital at work
    values = np.ravel(np.column_stack([h.value + h.outflow, h.value])[span])
    flows = np.ravel(np.column_stack([h.inflow, -h.outflow])[span])
    if span.start > 0:  # what was held before the stretch is its opening value
        flows[0] += h.value[span.start - 1]
    twr = qc.returns.time_weighted_return(values, flows)
    assert math.isclose(float(np.prod(1.0 + r)) - 1.0, twr, rel_tol=1e-9, abs_tol=1e-10)


@settings(max_examples=100, deadline=None)
@given(ledgers(currencies=1))
def test_final_cash_is_quantcore_cash_balances(
    case: tuple[np.ndarray, np.ndarray, list[int], list[Row]],
) -> None:
    """One cash rule: the last day's balance is :func:`quantcore.cash.cash_balances`."""
    close, _, _, rows = case
    n = close.shape[0]
    h = run(close, rows)
    inside = [r for r in rows if r[0] < n]
    frame = pd.DataFrame(
        {
            "date": [pd.Timestamp("2024-01-01") + pd.Timedelta(days=r[0]) for r in inside],
            "type": [KIND_NAMES[r[2]] for r in inside],
            "symbol": [f"S{r[1]}" if r[2] in SECURITY else None for r in inside],
            "quantity": [r[3] for r in inside],
            "price": [r[4] for r in inside],
            "fees": [r[5] for r in inside],
        }
    )
    expected = cash_balances(frame).get("USD", 0.0)
    assert math.isclose(float(h.cash[-1, 0]), expected, rel_tol=1e-12, abs_tol=1e-8)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 19), st.floats(1.0, 1e6)), min_size=1, max_size=15))
def test_deposits_alone_earn_nothing(deposits: list[tuple[int, float]]) -> None:
    close = np.full((20, 1), 10.0)
    rows: list[Row] = [(d, -1, v.DEPOSIT, 1.0, a, 0.0, 0) for d, a in sorted(deposits)]
    h = run(close, rows)
    first = min(d for d, _ in deposits)
    assert np.isnan(h.returns[:first]).all()
    assert (h.returns[first:] == 0.0).all()
    paid = np.zeros(20)
    for d, a in deposits:
        paid[d] += a
    np.testing.assert_allclose(h.value, np.cumsum(paid), rtol=1e-12)
    np.testing.assert_allclose(h.inflow, paid, rtol=1e-12)
    assert (h.outflow == 0.0).all()


@settings(max_examples=100, deadline=None)
@given(ledgers(currencies=1, cash_rows=False), st.floats(1.0, 1e5), st.data())
def test_a_deposit_withdrawn_later_leaves_each_day_s_gain(
    case: tuple[np.ndarray, np.ndarray, list[int], list[Row]], amount: float, data: st.DataObject
) -> None:
    """Money put in on day a and taken out on day b >= a changes no day's gain in money,
    and no return outside [a, b]; where the ledger had spent at least that much more than
    it was given (a shortfall) on every day between, no return at all."""
    close, _, _, rows = case
    n = close.shape[0]
    a = data.draw(st.integers(0, n - 1))
    b = data.draw(st.integers(a, n - 1))
    before = run(close, rows)
    after = run(
        close,
        [
            *rows,
            (a, -1, v.DEPOSIT, 1.0, amount, 0.0, 0),
            (b, -1, v.WITHDRAWAL, 1.0, amount, 0.0, 0),
        ],
    )
    assume(np.isfinite(before.value).all())

    def gain(h: v.LedgerValues) -> np.ndarray:
        return h.value + h.outflow - np.concatenate(([0.0], h.value[:-1])) - h.inflow

    np.testing.assert_allclose(gain(after), gain(before), rtol=1e-9, atol=1e-6)
    outside = np.r_[0:a, b + 1 : n]
    np.testing.assert_allclose(
        after.returns[outside], before.returns[outside], rtol=1e-9, atol=1e-12
    )
    # buys only at the open: a day's opening balance is at most the previous day's end, so
    # ends at or below -amount from the eve of a to b keep every moment of the stay short
    if a > 0 and (before.cash[a - 1 : b + 1, 0] <= -amount).all():
        np.testing.assert_allclose(after.returns, before.returns, rtol=1e-9, atol=1e-12)


@settings(max_examples=150, deadline=None)
@given(ledgers(currencies=1, cash_rows=False))
def test_without_cash_rows_the_implicit_cash_returns_are_kept(
    case: tuple[np.ndarray, np.ndarray, list[int], list[Row]],
) -> None:
    """While a ledger of buys, sells and dividends never ends a day with cash above zero,
    its returns are the implicit-cash model's exactly; once proceeds exceed what was
    spent, the excess stays as cash (a part of the value earning nothing)."""
    close, _, _, rows = case
    h = run(close, rows)
    if (h.cash <= 0.0).all():
        np.testing.assert_allclose(h.returns, legacy_twin(close, rows), rtol=1e-10, atol=1e-12)
    else:
        assert (h.value >= np.maximum(h.cash[:, 0], 0.0) - 1e-9).all()


def test_legacy_figures_change_only_for_proceeds_beyond_what_was_put_in() -> None:
    # 10 bought at 10, 10 sold at 15 on day 1: 50 more than was spent stays as cash
    close = np.array([[10.0], [15.0], [16.0]])
    rows: list[Row] = [(0, 0, v.BUY, 10.0, 10.0, 0.0, 0), (1, 0, v.SELL, 10.0, 15.0, 0.0, 0)]
    h = run(close, rows)
    assert h.value.tolist() == [100.0, 50.0, 50.0]
    assert h.inflow.tolist() == [100.0, 0.0, 0.0]
    assert h.outflow.tolist() == [0.0, 100.0, 0.0]  # what was put in goes back out
    assert h.returns.tolist() == [0.0, 0.5, 0.0]  # the legacy model: [0, 0.5, NaN]
    assert math.isnan(legacy_twin(close, rows)[2])


def test_interest_is_a_gain_fees_a_loss_withdrawals_neither() -> None:
    close = np.ones((4, 1))
    rows: list[Row] = [
        (0, -1, v.DEPOSIT, 1.0, 1000.0, 0.0, 0),
        (1, -1, v.INTEREST, 1.0, 10.0, 0.0, 0),
        (2, -1, v.FEE, 1.0, 5.05, 0.0, 0),
        (3, -1, v.WITHDRAWAL, 1.0, 500.0, 0.0, 0),
    ]
    h = run(close, rows)
    np.testing.assert_allclose(h.value, [1000.0, 1010.0, 1004.95, 504.95])
    np.testing.assert_allclose(h.returns, [0.0, 0.01, -0.005, 0.0], atol=1e-15)
    assert h.outflow.tolist() == [0.0, 0.0, 0.0, 500.0]


def test_fees_of_a_deposit_and_a_withdrawal_are_costs() -> None:
    close = np.ones((2, 1))
    rows: list[Row] = [
        (0, -1, v.DEPOSIT, 1.0, 1000.0, 10.0, 0),
        (1, -1, v.WITHDRAWAL, 1.0, 490.0, 4.95, 0),
    ]
    h = run(close, rows)
    np.testing.assert_allclose(h.value, [990.0, 495.05])
    np.testing.assert_allclose(h.returns, [-0.01, -0.005])


def test_a_withdrawal_beyond_the_cash_is_no_loss() -> None:
    # 1,000 of cash, 1,500 taken out: 500 came from outside and went straight back out
    close = np.ones((2, 1))
    rows: list[Row] = [
        (0, -1, v.DEPOSIT, 1.0, 1000.0, 0.0, 0),
        (1, -1, v.WITHDRAWAL, 1.0, 1500.0, 0.0, 0),
    ]
    h = run(close, rows)
    assert h.value.tolist() == [1000.0, 0.0]
    assert h.outflow.tolist() == [0.0, 1000.0] and h.returns.tolist() == [0.0, 0.0]


def test_a_deposit_that_repays_a_shortfall_is_not_capital() -> None:
    # 10 shares bought with no deposit, then the 100 they cost deposited: nothing new at work
    close = np.array([[10.0], [10.0], [11.0]])
    rows: list[Row] = [(0, 0, v.BUY, 10.0, 10.0, 0.0, 0), (2, -1, v.DEPOSIT, 1.0, 100.0, 0.0, 0)]
    h = run(close, rows)
    assert h.value.tolist() == [100.0, 100.0, 110.0]
    assert h.inflow.tolist() == [100.0, 0.0, 0.0] and h.outflow.tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_allclose(h.returns, [0.0, 0.0, 0.1])


def test_a_foreign_holding_in_base_currency() -> None:
    """A EUR stock in a USD portfolio is worth close x EURUSD; bought without a deposit,
    its cost is money put in at that day's rate, so the return is the dollar return."""
    close = np.array([[100.0], [100.0], [102.0]])  # in EUR
    eurusd = np.array([1.10, 1.21, 1.21])
    rates = np.column_stack([np.ones(3), eurusd])
    rows: list[Row] = [(0, 0, v.BUY, 10.0, 100.0, 0.0, 1)]
    h = run(close, rows, rates, [1])
    np.testing.assert_allclose(h.value, close[:, 0] * 10 * eurusd)
    np.testing.assert_allclose(h.inflow, [1100.0, 0.0, 0.0])
    np.testing.assert_allclose(h.returns, [0.0, 0.1, 0.02])
    assert h.cash[:, 1].tolist() == [-1000.0] * 3 and h.cash[:, 0].tolist() == [0.0] * 3
    # paid from euros deposited first: the cash left over moves with the rate too
    deposit: Row = (0, -1, v.DEPOSIT, 1.0, 1500.0, 0.0, 1)
    h = run(close, [deposit, *rows], rates, [1])
    np.testing.assert_allclose(h.value, (close[:, 0] * 10 + 500.0) * eurusd)
    np.testing.assert_allclose(h.inflow, [1650.0, 0.0, 0.0])
    np.testing.assert_allclose(h.returns[1:], [0.1, 20 * 1.21 / (1500 * 1.21)])


def test_unknown_rates_and_closes() -> None:
    rates = np.array([[1.0, np.nan], [1.0, np.nan], [1.0, 1.2]])
    close = np.array([[np.nan], [5.0], [5.0]])
    # a currency with no rate yet: a zero balance costs nothing, a positive one is unknown
    rows: list[Row] = [
        (0, -1, v.DEPOSIT, 1.0, 100.0, 0.0, 0),
        (1, -1, v.DEPOSIT, 1.0, 50.0, 0.0, 1),
    ]
    h = run(close, rows, rates, [0])
    assert h.value[0] == 100.0 and math.isnan(h.value[1]) and h.value[2] == 160.0
    assert h.returns[0] == 0.0 and np.isnan(h.returns[1:]).all()


def test_rows_after_the_calendar_and_empty_input() -> None:
    close = np.ones((2, 1))
    h = run(close, [(2, -1, v.DEPOSIT, 1.0, 100.0, 0.0, 0)])
    assert h.value.tolist() == [0.0, 0.0] and np.isnan(h.returns).all()
    assert h.cash.tolist() == [[0.0], [0.0]]
    h = run(np.ones((0, 1)), [])
    assert h.value.size == 0 and h.cash.shape == (0, 1)
    assert run(np.ones((0, 1)), [], np.ones((0, 2)), [0]).cash.shape == (0, 2)


@pytest.mark.parametrize("kind", list(KIND_NAMES))
def test_cash_amounts_is_the_cash_flows_rule(kind: int) -> None:
    q, p, f = 3.0, 25.0, 1.5
    frame = pd.DataFrame(
        {"date": ["2024-01-02"], "type": [KIND_NAMES[kind]], "symbol": ["X" if kind in SECURITY else None],
         "quantity": [q], "price": [p], "fees": [0.0 if kind == v.FEE else f]}
    )  # fmt: skip
    expected = qc_cash_amount(frame)
    got = v.cash_amounts(
        np.array([kind]), np.array([q]), np.array([p]), np.array([0.0 if kind == v.FEE else f])
    )
    assert got.tolist() == [expected]


def qc_cash_amount(frame: pd.DataFrame) -> float:
    from quantcore.cash import cash_flows

    return float(cash_flows(frame)["amount"].iloc[0])
