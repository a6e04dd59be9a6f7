"""quantcore.fx: values in a base currency, cross rates, gains under the IRS rule.

The IRS rule (basis at the acquisition date's rate, proceeds at the sale date's
rate) is IRS Publication 54, chapter 1, "Foreign Currency", with the basis and
amount realized of Publication 550, chapter 4.
"""

from __future__ import annotations

import math

import hypothesis.strategies as st
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings

import quantcore as qc
from quantcore import fx


def _realized_twin(q: float, c: float, xa: float, s: float, xs: float, fb: float, fs: float) -> tuple[float, ...]:
    basis = (q * c + fb) * xa
    proceeds = (q * s - fs) * xs
    return basis, proceeds, proceeds - basis


def test_eur_stock_bought_and_sold_at_different_rates() -> None:
    # 10 shares bought at 30 EUR plus 5 EUR commission when EURUSD was 1.10, sold at 32 EUR
    # less 5 EUR when EURUSD was 1.00: basis (300 + 5) x 1.10 = 335.50 USD, proceeds
    # (320 - 5) x 1.00 = 315.00 USD. The 10 EUR gain in euros is a 20.50 USD loss.
    r = fx.realized_in_base(10.0, 30.0, 1.10, 32.0, 1.00, buy_fees=5.0, sell_fees=5.0)
    assert r.basis == pytest.approx(335.50, abs=1e-12)
    assert r.proceeds == pytest.approx(315.00, abs=1e-12)
    assert r.gain == pytest.approx(-20.50, abs=1e-12)
    # converting the euro gain at either date's rate would be wrong both ways
    assert r.gain != pytest.approx(10.0 * 1.10) and r.gain != pytest.approx(10.0 * 1.00)


def test_realized_lots_as_a_frame_keep_the_index_and_match_the_twin() -> None:
    lots = pd.DataFrame(
        {
            "q": [10.0, 5.0, 2.5], "c": [30.0, 100.0, 4000.0], "xa": [1.10, 1.25, 0.0067],
            "s": [32.0, 90.0, 4400.0], "xs": [1.00, 1.31, 0.0071], "fb": [5.0, 0.0, 100.0], "fs": [5.0, 1.0, 0.0],
        },
        index=pd.Index(["SAP", "SHEL", "7203"], name="symbol"),
    )
    r = fx.realized_in_base(
        lots["q"], lots["c"], lots["xa"], lots["s"], lots["xs"], buy_fees=lots["fb"], sell_fees=lots["fs"]
    )
    assert isinstance(r.gain, pd.Series)
    assert list(r.gain.index) == ["SAP", "SHEL", "7203"]
    for symbol, row in lots.iterrows():
        twin = _realized_twin(*row.to_list())
        got = (r.basis.loc[str(symbol)], r.proceeds.loc[str(symbol)], r.gain.loc[str(symbol)])
        assert got == pytest.approx(twin, rel=1e-14)


@settings(max_examples=200, deadline=None)
@given(
    q=st.floats(0.001, 1e6), c=st.floats(0.01, 1e5), s=st.floats(0.01, 1e5), x=st.floats(0.001, 500.0),
)
def test_one_rate_throughout_is_the_foreign_gain_converted(q: float, c: float, s: float, x: float) -> None:
    # with no currency move, the base gain is the foreign gain times the rate
    r = fx.realized_in_base(q, c, x, s, x)
    assert math.isclose(r.gain, q * (s - c) * x, rel_tol=1e-9, abs_tol=1e-9 * q * (s + c) * x)


def test_value_in_base_panel_with_a_rate_series_along_time() -> None:
    idx = pd.date_range("2025-01-01", periods=3, freq="D")
    prices = pd.DataFrame({"SAP": [120.0, 121.0, 119.0], "SIE": [200.0, 198.0, 205.0]}, index=idx)
    quantities = np.array([3.0, 2.0])
    eurusd = pd.Series([1.08, 1.10, 1.05], index=idx)
    values = fx.value_in_base(quantities, prices, eurusd)
    assert isinstance(values, pd.DataFrame)
    assert list(values.columns) == ["SAP", "SIE"] and values.index.equals(idx)
    expected = prices.to_numpy() * quantities * eurusd.to_numpy()[:, None]
    np.testing.assert_allclose(values.to_numpy(), expected, rtol=1e-15)
    # the portfolio's value is the row sum; a missing rate is a missing value, not zero
    eurusd.iloc[1] = np.nan
    values = fx.value_in_base(quantities, prices, eurusd)
    assert values.iloc[1].isna().all() and values.iloc[[0, 2]].notna().all().all()


def test_mixed_currency_book_and_to_base() -> None:
    quantities = np.array([10.0, 4.0, 100.0])  # a USD, a EUR and a JPY listing
    prices = np.array([150.0, 120.0, 3000.0])
    rates = np.array([1.0, 1.08, 1 / 150])
    assert fx.value_in_base(quantities, prices, rates).sum() == pytest.approx(1500 + 518.4 + 2000, rel=1e-14)
    assert fx.to_base(100.0, 1.08) == pytest.approx(108.0)
    cash = pd.Series([1000.0, -50.0], index=["EUR", "GBP"])
    assert fx.to_base(cash, np.array([1.08, 1.27])).to_dict() == pytest.approx({"EUR": 1080.0, "GBP": -63.5})


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: fx.to_base(100.0, 0.0), "rates must be positive"),
        (lambda: fx.to_base(100.0, -1.08), "rates must be positive"),
        (lambda: fx.to_base(100.0, math.inf), "rates must be finite"),
        (lambda: fx.to_base("a lot", 1.0), "amounts must be numeric"),
        (lambda: fx.value_in_base(np.ones(2), np.ones(3), 1.0), "do not broadcast"),
        (lambda: fx.value_in_base(np.ones((2, 2, 2)), 1.0, 1.0), "1-D or 2-D"),
        (lambda: fx.realized_in_base(1.0, 1.0, 1.0, 1.0, 0.0), "sale_rates must be positive"),
        (lambda: fx.realized_in_base(1.0, 1.0, -2.0, 1.0, 1.0), "acquisition_rates must be positive"),
    ],
)
def test_bad_input_is_a_clear_value_error(call: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()  # type: ignore[operator]


def test_cross_rates_direct_inverse_and_through_a_third_currency() -> None:
    idx = pd.date_range("2025-01-01", periods=2, freq="D")
    pairs = {"EURUSD": pd.Series([1.08, 1.10], index=idx), "GBPUSD": 1.25, "usdjpy": 150.0}
    assert fx.cross_rate(pairs, "USD", "USD") == 1.0
    assert fx.cross_rate(pairs, "GBP", "USD") == 1.25
    assert fx.cross_rate(pairs, "JPY", "USD") == pytest.approx(1 / 150)
    eurgbp = fx.cross_rate(pairs, "EUR", "GBP")
    assert isinstance(eurgbp, pd.Series)
    np.testing.assert_allclose(eurgbp.to_numpy(), [1.08 / 1.25, 1.10 / 1.25], rtol=1e-15)
    assert fx.cross_rate(pairs, "GBP", "JPY") == pytest.approx(187.5)
    # converting there and back is the identity
    np.testing.assert_allclose((fx.cross_rate(pairs, "EUR", "JPY") * fx.cross_rate(pairs, "JPY", "EUR")), 1.0)


@pytest.mark.parametrize(
    ("pairs", "a", "b", "match"),
    [
        ({"EURUSD": 1.08}, "EUR", "CHF", "no FX pair converts EUR to CHF"),
        ({"EURUSD": 1.08}, "eur", "USD", "three capital letters"),
        ({"EURUSD": 1.08}, "EUR", "US", "three capital letters"),
        ({"EUR/USD": 1.08}, "EUR", "USD", "two ISO 4217 codes"),
    ],
)
def test_cross_rate_errors(pairs: dict[str, float], a: str, b: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        fx.cross_rate(pairs, a, b)


def test_reexported_at_the_top_level() -> None:
    assert qc.fx is fx
