"""``quantcore.accounts.combine_accounts`` against a plain-Python loop, and the two facts the
account overview relies on: a transfer between portfolios moves no return, and scaling
every portfolio alike changes none."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from quantcore.accounts import combine_accounts

_money = st.integers(0, 10**8).map(lambda cents: cents / 100)  # 0 to 1e6, in cents


@st.composite
def _books(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    days, books = draw(st.integers(1, 30)), draw(st.integers(1, 4))
    shape = (days, books)
    return (
        draw(arrays(np.float64, shape, elements=_money)),
        draw(arrays(np.float64, shape, elements=_money)),
        draw(arrays(np.float64, shape, elements=_money)),
    )


def _twin(value: np.ndarray, inflow: np.ndarray, outflow: np.ndarray) -> list[float]:
    """The account's daily return written out: (V_t + W_t) / (V_{t-1} + B_t) - 1."""
    out, prev = [], 0.0
    for t in range(value.shape[0]):
        total = sum(value[t])
        before = prev + sum(inflow[t])
        out.append((total + sum(outflow[t])) / before - 1.0 if before > 1e-9 else math.nan)
        prev = total
    return out


@settings(max_examples=200, deadline=None)
@given(_books())
def test_returns_equal_the_loop(book: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    value, inflow, outflow = book
    got = combine_accounts(value, inflow, outflow)
    np.testing.assert_allclose(got.value, value.sum(axis=1))
    np.testing.assert_allclose(got.returns, _twin(value, inflow, outflow), rtol=1e-12, atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(_books(), st.floats(0.01, 100.0), st.data())
def test_a_scale_moves_no_return_and_a_transfer_no_gain(
    book: tuple[np.ndarray, np.ndarray, np.ndarray], k: float, data: st.DataObject
) -> None:
    value, inflow, outflow = book
    base = combine_accounts(value, inflow, outflow)
    scaled = combine_accounts(value * k, inflow * k, outflow * k).returns
    np.testing.assert_allclose(scaled, base.returns, rtol=1e-9, atol=1e-9)
    # ``amount`` taken out of the first portfolio at a day's end and put into the last at
    # its start: the account's values and its gain that day are unchanged; the amount
    # counts once more in that day's capital (r = gain / (capital + amount))
    day = data.draw(st.integers(0, value.shape[0] - 1))
    amount = data.draw(st.floats(1.0, 1e6))
    out, into = outflow.copy(), inflow.copy()
    out[day, 0] += amount
    into[day, -1] += amount
    moved = combine_accounts(value, into, out)
    np.testing.assert_array_equal(moved.value, base.value)
    prev = base.value[day - 1] if day else 0.0
    capital = prev + base.inflow[day]
    gain = base.value[day] + base.outflow[day] - capital
    assert math.isclose(moved.returns[day], gain / (capital + amount), rel_tol=1e-9, abs_tol=1e-12)
    others = np.arange(value.shape[0]) != day
    np.testing.assert_array_equal(moved.returns[others], base.returns[others])
