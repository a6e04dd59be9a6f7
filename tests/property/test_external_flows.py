"""External flows: a deposit is never a gain, and two cited worked examples.

``quantcore.returns.time_weighted_return`` and ``money_weighted_return`` are the
one implementation of TWR and XIRR (tests/unit/test_returns.py holds their
plain-Python and brentq twins); these are the properties cash tracking relies on.
"""

from __future__ import annotations

import math

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings
from scipy.optimize import brentq

from quantcore import returns

SETTINGS = settings(max_examples=200, deadline=None)

flows_st = st.lists(st.floats(1.0, 1e6), min_size=1, max_size=60)


@SETTINGS
@given(deposits=flows_st)
def test_a_portfolio_that_only_receives_deposits_has_a_twr_of_zero(deposits: list[float]) -> None:
    flows = np.array(deposits)
    values = np.cumsum(flows)  # nothing but the money paid in
    assert returns.time_weighted_return(values, flows) == 0.0


@SETTINGS
@given(
    deposits=flows_st,
    withdraw=st.lists(st.floats(0.0, 0.9), min_size=60, max_size=60),
)
def test_deposits_and_withdrawals_without_market_moves_are_no_gain(
    deposits: list[float], withdraw: list[float]
) -> None:
    n = len(deposits)
    flows = np.empty(n)
    values = np.empty(n)
    held = 0.0
    for t in range(n):
        # pay in, or take out a part of what is there
        flows[t] = deposits[t] if t % 2 == 0 or held == 0.0 else -withdraw[t] * held
        held = held + flows[t]
        values[t] = held
    assert math.isclose(returns.time_weighted_return(values, flows), 0.0, abs_tol=1e-12)


@SETTINGS
@given(
    period=st.lists(st.floats(-0.2, 0.2), min_size=2, max_size=40),
    extra=st.floats(1.0, 1e6),
    when=st.integers(0, 39),
)
def test_a_deposit_does_not_change_the_twr(period: list[float], extra: float, when: int) -> None:
    # the same market path with and without one more deposit: the TWR is the market's
    r = np.array(period)
    when = when % len(r)

    def path(deposit: float) -> tuple[np.ndarray, np.ndarray]:
        flows = np.zeros(len(r))
        flows[0] = 1000.0
        flows[when] += deposit
        values = np.empty(len(r))
        prev = 0.0
        for t in range(len(r)):
            values[t] = (prev + flows[t]) * (1 + r[t])
            prev = values[t]
        return values, flows

    base = returns.time_weighted_return(*path(0.0))
    more = returns.time_weighted_return(*path(extra))
    market = float(np.prod(1 + r) - 1)
    assert math.isclose(base, market, rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(more, market, rel_tol=1e-9, abs_tol=1e-12)


def test_cfa_time_and_money_weighted_worked_example() -> None:
    # CFA Institute, CFA Program Level I, Quantitative Methods, "Rates and Returns":
    # buy one share at 100; a year later it is worth 120 and pays a 2 dividend, and a second
    # share is bought at 120; a year later both are sold at 130 after a 2 dividend each.
    # Year 1: 100 grows to 122 (share + dividend); the investor takes the dividend and pays
    # in 120 (net flow +118); year 2: 240 grows to 264. TWR: 22 % then 10 %, 15.84 % a year;
    # MWR: 100 (1+r)^2 + 118 (1+r) = 264, 13.86 % a year.
    values = np.array([122.0, 264.0])
    flows = np.array([100.0, 118.0])
    twr = returns.time_weighted_return(values, flows)
    assert twr == pytest.approx(1.22 * 1.10 - 1, rel=1e-14)
    assert math.sqrt(1 + twr) - 1 == pytest.approx(0.1584, abs=5e-5)
    dates = np.array(["2021-01-01", "2022-01-01", "2023-01-01"], dtype="datetime64[D]")  # 365 days each
    mwr = returns.money_weighted_return(dates, np.array([100.0, 118.0, 0.0]), 264.0)
    # the quadratic in x = 1 / (1 + r): 264 x^2 - 118 x - 100 = 0
    x = (118 + math.sqrt(118**2 + 4 * 264 * 100)) / (2 * 264)
    assert mwr == pytest.approx(1 / x - 1, rel=1e-12)
    assert mwr == pytest.approx(0.1386, abs=5e-5)


def test_spreadsheet_xirr_worked_example() -> None:
    # Microsoft, "XIRR function" (Excel documentation): -10,000 on 1-Jan-2008, then 2,750,
    # 4,250, 3,250 and 2,750 back on 1-Mar-2008, 30-Oct-2008, 15-Feb-2009 and 1-Apr-2009
    # give 0.373362535 (Actual/365). Here the investor's payments are deposits (positive)
    # and the last payment back is the final value.
    dates = np.array(["2008-01-01", "2008-03-01", "2008-10-30", "2009-02-15", "2009-04-01"], dtype="datetime64[D]")
    flows = np.array([10000.0, -2750.0, -4250.0, -3250.0, 0.0])
    got = returns.money_weighted_return(dates, flows, 2750.0)
    # Excel iterates to 0.000001 %: its printed result agrees to that tolerance
    assert got == pytest.approx(0.373362535, abs=1e-8)
    # and the spreadsheet's own equation, sum P_i / (1 + r)^((d_i - d_1) / 365) = 0, solved tightly
    days = (dates - dates[0]).astype(np.int64)
    payments = [-10000.0, 2750.0, 4250.0, 3250.0, 2750.0]
    npv = lambda r: sum(p / (1 + r) ** (d / 365) for p, d in zip(payments, days, strict=True))  # noqa: E731
    assert got == pytest.approx(brentq(npv, 0.0, 1.0, xtol=1e-15), rel=1e-11)
