"""Hypothesis properties of quantcore.indicators.

Invariants (bounds, constants, panel == column by column) on generated bars,
and equality with TA-Lib on generated series, where hypothesis finds the corner
cases (flat stretches, tiny windows, leading NaNs) real data rarely shows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import talib
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from quantcore import indicators as qi

SETTINGS = settings(max_examples=60, deadline=None)

prices = arrays(
    np.float64,
    st.integers(0, 120),
    elements=st.floats(1.0, 1_000.0, allow_nan=False, allow_infinity=False),
)
windows = st.integers(1, 30)


@st.composite
def bars(
    draw: st.DrawFn, *, max_n: int = 120, columns: int | None = None
) -> tuple[np.ndarray, ...]:
    """(high, low, close, volume) with high >= close >= low, optional flat runs and leading NaNs."""
    n = draw(st.integers(0, max_n))
    shape = (n,) if columns is None else (n, columns)
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    steps = rng.normal(0.0, draw(st.sampled_from([0.0, 0.001, 0.02])), size=shape)
    if n and draw(st.booleans()):  # flat stretches: zero ranges, zero changes
        steps[rng.random(shape) < 0.3] = 0.0
    close = 50.0 * np.exp(np.cumsum(steps, axis=0))
    spread = close * rng.uniform(0.0, 0.03, size=shape) * (rng.random(shape) < 0.9)
    high, low = close + spread * rng.random(shape), close - spread * rng.random(shape)
    volume = rng.integers(0, 1_000, size=shape).astype(np.float64)
    lead = draw(st.integers(0, max(n // 3, 0)))
    for x in (high, low, close, volume):
        x[:lead] = np.nan
    return high, low, close, volume


def _outputs(result: Any) -> list[np.ndarray]:
    items = result if isinstance(result, tuple) else (result,)
    return [np.asarray(x) for x in items]


def _assert_same(ours: Any, theirs: Any) -> None:
    for a, b in zip(_outputs(ours), _outputs(theirs), strict=True):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        valid = ~np.isnan(b)
        np.testing.assert_allclose(a[valid], b[valid], rtol=1e-9, atol=1e-9)


@SETTINGS
@given(value=st.floats(-1e6, 1e6, allow_nan=False), n=st.integers(0, 80), window=windows)
def test_moving_averages_of_a_constant_are_the_constant(value: float, n: int, window: int) -> None:
    x = np.full(n, value)
    for fn in (qi.sma, qi.ema, qi.wma):
        out = fn(x, window)
        assert np.isnan(out[: window - 1]).all()
        np.testing.assert_allclose(out[window - 1 :], value, rtol=1e-12, atol=1e-9)
    for band in qi.bollinger_bands(x, window, 2.0):
        np.testing.assert_allclose(band[window - 1 :], value, rtol=1e-12, atol=1e-9)


@SETTINGS
@given(data=bars(), window=windows)
def test_oscillators_stay_in_their_ranges(data: tuple[np.ndarray, ...], window: int) -> None:
    high, low, close, _ = data
    eps = 1e-9
    for out in (qi.rsi(close, window), *qi.stochastic(high, low, close, window, 3)):
        valid = out[~np.isnan(out)]
        assert ((valid >= -eps) & (valid <= 100 + eps)).all()
    r = qi.williams_r(high, low, close, window)
    valid = r[~np.isnan(r)]
    assert ((valid >= -100 - eps) & (valid <= eps)).all()
    a = qi.adx(high, low, close, window)
    valid = a[~np.isnan(a)]
    assert ((valid >= -eps) & (valid <= 100 + eps)).all()
    atr = qi.atr(high, low, close, window)
    assert (atr[~np.isnan(atr)] >= 0).all()


@SETTINGS
@given(x=prices, window=windows, num_std=st.floats(0.0, 4.0))
def test_bands_are_ordered_around_the_sma(x: np.ndarray, window: int, num_std: float) -> None:
    upper, middle, lower = qi.bollinger_bands(x, window, num_std)
    np.testing.assert_array_equal(middle, qi.sma(x, window))
    valid = ~np.isnan(middle)
    assert (upper[valid] >= middle[valid]).all() and (middle[valid] >= lower[valid]).all()


@SETTINGS
@given(x=prices, window=windows)
def test_ema_is_a_running_convex_combination(x: np.ndarray, window: int) -> None:
    out = qi.ema(x, window)
    for t in np.flatnonzero(~np.isnan(out)):
        seen = x[: t + 1]
        assert seen.min() - 1e-9 <= out[t] <= seen.max() + 1e-9


@SETTINGS
@given(data=bars(max_n=60, columns=4), window=st.integers(1, 12))
def test_panel_equals_column_by_column(data: tuple[np.ndarray, ...], window: int) -> None:
    h, lo, c, v = data
    calls = [
        lambda h, lo, c, v: qi.sma(c, window),
        lambda h, lo, c, v: qi.ema(c, window),
        lambda h, lo, c, v: qi.wma(c, window),
        lambda h, lo, c, v: qi.rsi(c, window),
        lambda h, lo, c, v: qi.roc(c, window),
        lambda h, lo, c, v: qi.macd(c, window, window + 3, 2),
        lambda h, lo, c, v: qi.bollinger_bands(c, window, 1.5),
        lambda h, lo, c, v: qi.atr(h, lo, c, window),
        lambda h, lo, c, v: qi.stochastic(h, lo, c, window, 2, smooth_k=2),
        lambda h, lo, c, v: qi.williams_r(h, lo, c, window),
        lambda h, lo, c, v: qi.cci(h, lo, c, window),
        lambda h, lo, c, v: qi.adx(h, lo, c, window),
        lambda h, lo, c, v: qi.obv(c, v),
        lambda h, lo, c, v: qi.vwap(h, lo, c, v),
    ]
    for call in calls:
        panel = _outputs(call(h, lo, c, v))
        for j in range(c.shape[1]):
            column = _outputs(call(h[:, j], lo[:, j], c[:, j], v[:, j]))
            for p, col in zip(panel, column, strict=True):
                np.testing.assert_array_equal(p[:, j], col)


@SETTINGS
@given(data=bars(), window=st.integers(2, 20))
def test_equals_talib_on_generated_bars(data: tuple[np.ndarray, ...], window: int) -> None:
    h, lo, c, v = data
    if np.isnan(c).all():  # the talib wrapper raises on all-NaN input; we return NaN
        assert np.isnan(qi.sma(c, window)).all()
        return
    _assert_same(qi.sma(c, window), talib.SMA(c, window))
    _assert_same(qi.ema(c, window), talib.EMA(c, window))
    _assert_same(qi.wma(c, window), talib.WMA(c, window))
    _assert_same(qi.rsi(c, window), talib.RSI(c, window))
    _assert_same(qi.roc(c, window), talib.ROC(c, window))
    _assert_same(qi.macd(c, window, window + 5, 3), talib.MACD(c, window, window + 5, 3))
    _assert_bands_match_talib(c, window, 2.0)
    _assert_same(qi.atr(h, lo, c, window), talib.ATR(h, lo, c, window))
    _assert_same(
        qi.stochastic(h, lo, c, window, 3, smooth_k=2), talib.STOCH(h, lo, c, window, 2, 0, 3, 0)
    )
    _assert_same(qi.williams_r(h, lo, c, window), talib.WILLR(h, lo, c, window))
    _assert_same(qi.cci(h, lo, c, window), talib.CCI(h, lo, c, window))
    _assert_same(qi.adx(h, lo, c, window), talib.ADX(h, lo, c, window))
    _assert_same(qi.obv(c, v), talib.OBV(c, v))


def _assert_bands_match_talib(c: np.ndarray, window: int, num_std: float) -> None:
    """TA-Lib's BBANDS except where ``mean(x**2) - SMA**2`` cancels to rounding noise.

    There (variance below 1e-7 of ``mean(x**2)``) TA-Lib returns the noise and we
    recompute the variance from deviations (documented): both widths must then
    stay within what such a variance allows.
    """
    ours = qi.bollinger_bands(c, window, num_std)
    theirs = talib.BBANDS(c, window, num_std, num_std, 0)
    start = int(np.argmax(~np.isnan(c)))
    var = np.full(len(c), np.nan)
    mean2 = np.full(len(c), np.nan)
    if len(c) - start >= window:
        windows_ = np.lib.stride_tricks.sliding_window_view(c[start:], window)
        var[start + window - 1 :] = windows_.var(axis=1)
        mean2[start + window - 1 :] = (windows_**2).mean(axis=1)
    noisy = var < 1e-7 * mean2
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        keep = ~np.isnan(b) & ~noisy
        np.testing.assert_allclose(a[keep], b[keep], rtol=1e-9, atol=1e-9)
    bound = num_std * np.sqrt(np.maximum(2e-7 * mean2[noisy], 1e-8)) + 1e-9
    assert (np.abs(ours.upper - ours.middle)[noisy] <= bound).all()
    assert (np.abs(theirs[0] - theirs[1])[noisy] <= bound).all()


@SETTINGS
@given(data=bars())
def test_vwap_equals_its_numpy_twin(data: tuple[np.ndarray, ...]) -> None:
    h, lo, c, v = data
    start = int(np.argmax(~np.isnan(c))) if (~np.isnan(c)).any() else len(c)
    typical = (h[start:] + lo[start:] + c[start:]) / 3.0
    with np.errstate(invalid="ignore", divide="ignore"):
        twin = np.cumsum(typical * v[start:]) / np.cumsum(v[start:])
    twin[~np.isfinite(twin)] = np.nan  # no volume traded yet
    out = qi.vwap(h, lo, c, v)
    assert np.isnan(out[:start]).all()
    _assert_same(out[start:], twin)
