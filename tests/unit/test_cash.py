"""quantcore.cash against a plain-Python twin of its table of rules, and its properties."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quantcore.cash import cash_balances, cash_flows, first_overdraft

KINDS = ("buy", "sell", "dividend", "deposit", "withdrawal", "interest", "fee")


def _twin_amount(kind: str, q: float, p: float, f: float) -> float:
    """The module docstring's table, one row at a time."""
    if kind == "buy":
        return -(q * p + f)
    if kind in ("sell", "dividend"):
        return q * p - f
    if kind in ("deposit", "interest"):
        return p - f
    if kind == "withdrawal":
        return -(p + f)
    return -p  # fee


rows = st.lists(
    st.tuples(
        st.sampled_from(KINDS),
        st.integers(0, 60),  # day offset
        st.floats(0.01, 1e4),
        st.floats(0.01, 1e4),
        st.floats(0, 10),
        st.sampled_from(("USD", "EUR", None)),
    ),
    max_size=30,
)


def _frame(data: list[tuple]) -> pd.DataFrame:
    start = dt.date(2024, 1, 1)
    return pd.DataFrame(
        {
            "type": [r[0] for r in data],
            "date": [start + dt.timedelta(days=r[1]) for r in data],
            "symbol": [
                None if r[0] in ("deposit", "withdrawal", "interest", "fee") else "X" for r in data
            ],
            "quantity": [r[2] for r in data],
            "price": [r[3] for r in data],
            "fees": [0.0 if r[0] == "fee" else r[4] for r in data],
            "currency": [r[5] for r in data],
        },
        columns=["type", "date", "symbol", "quantity", "price", "fees", "currency"],
    )


@settings(max_examples=200, deadline=None)
@given(rows)
def test_balances_match_the_twin(data: list[tuple]) -> None:
    frame = _frame(data)
    want: dict[str, float] = {}
    for kind, _, q, p, f, ccy in data:
        f = 0.0 if kind == "fee" else f
        want[ccy or "GBP"] = want.get(ccy or "GBP", 0.0) + _twin_amount(kind, q, p, f)
    got = cash_balances(frame, default_currency="GBP")
    assert sorted(got) == sorted(want)
    for code, amount in want.items():
        assert got[code] == pytest.approx(amount, rel=1e-12, abs=1e-6)


@settings(max_examples=200, deadline=None)
@given(rows)
def test_order_of_entry_does_not_matter(data: list[tuple]) -> None:
    frame = _frame(data)
    shuffled = frame.sample(frac=1.0, random_state=1)
    a, b = cash_balances(frame), cash_balances(shuffled)
    assert sorted(a) == sorted(b)
    for code in a:
        assert a[code] == pytest.approx(b[code], rel=1e-12, abs=1e-6)
    over_a, over_b = first_overdraft(frame), first_overdraft(shuffled)
    assert (over_a is None) == (over_b is None)
    if over_a is not None and over_b is not None:
        assert (over_a.date, over_a.currency) == (over_b.date, over_b.currency)


def test_only_deposits_and_withdrawals_are_external() -> None:
    flows = cash_flows(_frame([(k, 0, 1.0, 10.0, 0.0, None) for k in KINDS]))
    assert flows.loc[flows["external"], "amount"].tolist() == [10.0, -10.0]


def test_corporate_action_cash_is_held_times_per_share() -> None:
    t = pd.DataFrame(
        {
            "type": ["buy", "return_of_capital", "merger"],
            "date": ["2024-01-02", "2024-02-01", "2024-03-01"],
            "symbol": ["X", "X", "X"],
            "quantity": [10, None, None],
            "price": [100, 2.5, None],
            "fees": [0, 0, 0],
            "cash": [None, None, 30],
            "target_symbol": [None, None, "Y"],
            "ratio": [None, None, None],
            "currency": ["EUR", "EUR", "EUR"],
        }
    )
    assert cash_flows(t)["amount"].tolist() == [-1000.0, 25.0, 300.0]
    assert cash_balances(t) == {"EUR": -675.0}


def test_first_overdraft_is_the_first_day_ending_negative() -> None:
    t = _frame(
        [
            ("deposit", 0, 1, 100.0, 0, None),
            ("withdrawal", 3, 1, 150.0, 0, None),
            ("deposit", 5, 1, 60, 0, None),
        ]
    )
    low = first_overdraft(t)
    assert low is not None
    assert (low.date, low.currency, low.balance) == (pd.Timestamp("2024-01-04"), "USD", -50.0)
    assert first_overdraft(t.iloc[[0, 2]]) is None
    assert np.isclose(cash_balances(t)["USD"], 10.0)


def test_accounts_count_their_own_shares() -> None:
    t = pd.DataFrame(
        {
            "account": [1, 2, 1, 2],
            "type": ["buy", "buy", "return_of_capital", "deposit"],
            "date": ["2024-01-02", "2024-01-02", "2024-02-01", "2024-02-01"],
            "symbol": ["X", "X", "X", None],
            "quantity": [10, 3, None, None],
            "price": [100, 100, 2.0, 50],
        }
    )
    flows = cash_flows(t, by="account")
    sums = flows.groupby("account")["amount"].sum().to_dict()
    # the return of capital pays on account 1's 10 shares, not on the 13 held in all
    assert sums == {1: -1000.0 + 20.0, 2: -300.0 + 50.0}


def test_the_service_balances_equal_cash_balances_per_portfolio() -> None:
    """service.ledger.cash.balances (arrays, actions apart) == quantcore per portfolio."""
    from service.ledger.cash import balances, ledger_frame

    rng = np.random.default_rng(7)
    rows = []
    for i in range(300):
        pid = int(rng.integers(1, 4))
        day = dt.date(2024, 1, 1) + dt.timedelta(days=int(rng.integers(0, 90)))
        kind = str(rng.choice([*KINDS, "return_of_capital", "split"]))
        cash_row = kind in ("deposit", "withdrawal", "interest", "fee")
        symbol = None if cash_row else str(rng.choice(["X", "Y"]))
        code = str(rng.choice(["EUR", "USD"])) if cash_row else {"X": "USD", "Y": "EUR"}[symbol]
        q = (
            None
            if kind in ("return_of_capital", "split") or cash_row
            else float(rng.integers(1, 20))
        )
        ratio = 2.0 if kind == "split" else None
        price = None if kind == "split" else float(rng.integers(1, 100))
        rows.append(
            (
                pid,
                i,
                day,
                kind,
                symbol,
                code,
                q or 1.0,
                price,
                0.0 if kind == "fee" else 0.5,
                ratio,
                None,
                None,
            )
        )
    got = balances(rows, {1: "USD", 2: "EUR", 3: "USD"})
    frame = ledger_frame(rows)
    for pid in (1, 2, 3):
        want = cash_balances(frame[frame["portfolio"] == pid])
        assert sorted(got[pid]) == sorted(want)
        for code in want:
            assert got[pid][code] == pytest.approx(want[code], rel=1e-12, abs=1e-6)
