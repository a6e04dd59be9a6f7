"""Exact fixed-point helpers of the tax kernel against Python integers and ``datetime``."""

from __future__ import annotations

import datetime as dt
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quantcore._kernels.tax import _civil_from_days, _cmp_ratio, _days_from_civil, muldiv_nb

I63 = 2**63 - 1


def _half_up(a: int, b: int, c: int) -> int:
    f = Fraction(abs(a) * b, c)
    q = f.numerator // f.denominator
    if f - q >= Fraction(1, 2):
        q += 1
    return -q if a < 0 else q


@settings(max_examples=100, deadline=None)
@given(
    st.integers(-I63, I63),
    st.integers(0, I63),
    st.one_of(st.integers(1, 10**8), st.integers(1, 2**50), st.integers(1, I63)),
)
def test_muldiv_is_exact_half_up(a: int, b: int, c: int) -> None:
    want = _half_up(a, b, c)
    if abs(want) >= 2**63:  # does not fit int64: must refuse, never wrap
        with pytest.raises(OverflowError):
            muldiv_nb(a, b, c)
        return
    if abs(want) >= 9.19e18:  # the documented range ends at 9.2e18 units: exact or refused
        try:
            assert muldiv_nb(a, b, c) == want
        except OverflowError:
            pass
        return
    assert muldiv_nb(a, b, c) == want


@pytest.mark.parametrize(
    ("a", "b", "c", "want"),
    [
        (5, 1, 10, 1),  # 0.5 rounds up
        (-5, 1, 10, -1),  # and away from zero, like ROUND_HALF_UP
        (4, 1, 10, 0),
        (10**10 * 3, 10**10 * 7, 10**8, 21 * 10**12),  # 300 shares x $700: the 128-bit path
        (2**62, 3, 2**61 + 1, _half_up(2**62, 3, 2**61 + 1)),  # long division path
    ],
)
def test_muldiv_cases(a: int, b: int, c: int, want: int) -> None:
    assert muldiv_nb(a, b, c) == want


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**62), st.integers(1, 2**62), st.integers(0, 2**62), st.integers(1, 2**62))
def test_ratio_comparison_is_exact(b1: int, q1: int, b2: int, q2: int) -> None:
    diff = Fraction(b1, q1) - Fraction(b2, q2)
    assert _cmp_ratio(b1, q1, b2, q2) == (diff > 0) - (diff < 0)


@settings(max_examples=100, deadline=None)
@given(st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31)))
def test_civil_day_numbers_match_datetime(d: dt.date) -> None:
    z = (d - dt.date(1970, 1, 1)).days
    assert _civil_from_days(z) == (d.year, d.month, d.day)
    assert _days_from_civil(d.year, d.month, d.day) == z
    assert np.int64(z) == (np.datetime64(d.isoformat(), "D") - np.datetime64("1970-01-01", "D")).astype(np.int64)
