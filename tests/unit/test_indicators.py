"""Unit tests of quantcore.indicators: kinds, warm-up, edge cases, validation, kernels.

Expected values come from the formulas in the docstrings (computed here in plain
Python) or from TA-Lib; TA-Lib parity on real data is in tests/parity.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np
import pandas as pd
import pytest

import quantcore.indicators as qi
from quantcore._kernels import indicators_bars as hlc_kernels
from quantcore._kernels import indicators_base as base_kernels
from quantcore._kernels import indicators_ma as ma_kernels
from quantcore._kernels import indicators_range as range_kernels
from quantcore._parallel import PARALLEL_MIN_CELLS, run, serial_twin

Call = Callable[[Any, Any, Any, Any], Any]

#: (name, call on (high, low, close, volume), warm-up length with default windows)
INDICATORS: list[tuple[str, Call, int]] = [
    ("sma", lambda h, lo, c, v: qi.sma(c, 10), 9),
    ("ema", lambda h, lo, c, v: qi.ema(c, 10), 9),
    ("wma", lambda h, lo, c, v: qi.wma(c, 10), 9),
    ("rsi", lambda h, lo, c, v: qi.rsi(c), 14),
    ("macd", lambda h, lo, c, v: qi.macd(c), 26 + 9 - 2),
    ("bollinger_bands", lambda h, lo, c, v: qi.bollinger_bands(c), 19),
    ("roc", lambda h, lo, c, v: qi.roc(c, 10), 10),
    ("atr", lambda h, lo, c, v: qi.atr(h, lo, c), 14),
    ("stochastic", lambda h, lo, c, v: qi.stochastic(h, lo, c), 14 + 3 + 3 - 3),
    ("williams_r", lambda h, lo, c, v: qi.williams_r(h, lo, c), 13),
    ("cci", lambda h, lo, c, v: qi.cci(h, lo, c), 19),
    ("adx", lambda h, lo, c, v: qi.adx(h, lo, c), 2 * 14 - 1),
    ("obv", lambda h, lo, c, v: qi.obv(c, v), 0),
    ("vwap", lambda h, lo, c, v: qi.vwap(h, lo, c, v), 0),
]
IDS = [name for name, _, _ in INDICATORS]


def _outputs(result: Any) -> list[Any]:
    return list(result) if isinstance(result, tuple) else [result]


def _bars(rng: np.random.Generator, n: int, k: int | None = None) -> tuple[np.ndarray, ...]:
    shape = (n,) if k is None else (n, k)
    close = 100.0 * np.exp(np.cumsum(rng.normal(0.0, 0.01, size=shape), axis=0))
    spread = close * rng.uniform(0.001, 0.02, size=shape)
    volume = rng.integers(1_000, 10_000, size=shape).astype(np.float64)
    return close + spread, close - spread, close, volume


def test_public_surface() -> None:
    assert qi.__all__ == sorted(qi.__all__)
    assert set(qi.__all__) == {
        "BollingerBands",
        "MACDResult",
        "Stochastic",
        "adx",
        "atr",
        "bollinger_bands",
        "cci",
        "ema",
        "macd",
        "obv",
        "roc",
        "rsi",
        "sma",
        "stochastic",
        "vwap",
        "williams_r",
        "wma",
    }
    import quantcore

    assert quantcore.indicators is qi


@pytest.mark.parametrize(("name", "call", "lookback"), INDICATORS, ids=IDS)
def test_warm_up_length(rng: np.random.Generator, name: str, call: Call, lookback: int) -> None:
    for out in _outputs(call(*_bars(rng, 200))):
        assert np.isnan(out[:lookback]).all()
        assert not np.isnan(out[lookback:]).any()


@pytest.mark.parametrize(("name", "call", "lookback"), INDICATORS, ids=IDS)
def test_leading_nans_compute_from_first_valid_value(
    rng: np.random.Generator, name: str, call: Call, lookback: int
) -> None:
    bars = _bars(rng, 150)
    pad = np.full(37, np.nan)
    padded = [np.concatenate([pad, x]) for x in bars]
    for out, ref in zip(_outputs(call(*padded)), _outputs(call(*bars)), strict=True):
        assert np.isnan(out[:37]).all()
        np.testing.assert_array_equal(out[37:], ref)


@pytest.mark.parametrize(("name", "call", "lookback"), INDICATORS, ids=IDS)
def test_start_is_first_bar_where_every_input_is_valid(
    rng: np.random.Generator, name: str, call: Call, lookback: int
) -> None:
    h, lo, c, v = _bars(rng, 150)
    h[:5], lo[:7], c[:3], v[:9] = np.nan, np.nan, np.nan, np.nan
    used = {"sma", "ema", "wma", "rsi", "macd", "bollinger_bands", "roc"}
    start = 3 if name in used else (9 if name in ("obv", "vwap") else 7)
    for out in _outputs(call(h, lo, c, v)):
        assert np.isnan(out[: start + lookback]).all()
        assert not np.isnan(out[start + lookback :]).any()


@pytest.mark.parametrize(("name", "call", "lookback"), INDICATORS, ids=IDS)
def test_empty_short_and_all_nan(
    rng: np.random.Generator, name: str, call: Call, lookback: int
) -> None:
    empty = np.array([], dtype=np.float64)
    for out in _outputs(call(empty, empty, empty, empty)):
        assert isinstance(out, np.ndarray) and out.shape == (0,)
    if lookback:
        short = [x[:lookback] for x in _bars(rng, 100)]
        for out in _outputs(call(*short)):
            assert out.shape == (lookback,) and np.isnan(out).all()
    nan = np.full(50, np.nan)
    for out in _outputs(call(nan, nan, nan, nan)):
        assert np.isnan(out).all()


@pytest.mark.parametrize(("name", "call", "lookback"), INDICATORS, ids=IDS)
def test_kinds_and_labels_are_kept(
    rng: np.random.Generator, name: str, call: Call, lookback: int
) -> None:
    index = pd.date_range("2020-01-01", periods=80, freq="B", name="date")
    columns = pd.Index(["AAA", "BBB", "CCC"], name="asset")
    panel = _bars(rng, 80, 3)
    frames = [pd.DataFrame(x, index=index, columns=columns) for x in panel]
    series = [pd.Series(x[:, 1], index=index, name="BBB") for x in panel]

    from_arrays = _outputs(call(*panel))
    for out in _outputs(call(*frames)):
        assert isinstance(out, pd.DataFrame)
        pd.testing.assert_index_equal(out.index, index)
        pd.testing.assert_index_equal(out.columns, columns)
    for out, ref in zip(_outputs(call(*series)), from_arrays, strict=True):
        assert isinstance(out, pd.Series) and out.name == "BBB"
        pd.testing.assert_index_equal(out.index, index)
        np.testing.assert_array_equal(out.to_numpy(), ref[:, 1])
    for out, ref in zip(_outputs(call(*[x[:, 2] for x in panel])), from_arrays, strict=True):
        assert isinstance(out, np.ndarray) and out.shape == (80,)
        np.testing.assert_array_equal(out, ref[:, 2])


def test_panel_in_c_order_equals_fortran_order(rng: np.random.Generator) -> None:
    h, lo, c, _ = _bars(rng, 300, 4)
    for fn in (lambda *a: qi.adx(*a), lambda *a: qi.stochastic(*a)):
        fortran = _outputs(fn(*(np.asfortranarray(x) for x in (h, lo, c))))
        c_order = _outputs(fn(*(np.ascontiguousarray(x) for x in (h, lo, c))))
        for a, b in zip(fortran, c_order, strict=True):
            np.testing.assert_array_equal(a, b)


def test_large_panel_takes_the_parallel_path(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, _, c, _ = _bars(rng, 400, 200)
    assert c.size >= PARALLEL_MIN_CELLS
    threads: list[int] = []
    kernel = ma_kernels.rsi_nb

    def spy(*args: object) -> None:
        threads.append(numba.get_num_threads())
        kernel(*args)

    default = numba.get_num_threads()
    monkeypatch.setattr(ma_kernels, "rsi_nb", spy)
    out = qi.rsi(c, 14)
    qi.rsi(c[:, :3], 14)  # a small panel: the calling thread only
    assert threads == [default, 1]
    for j in (0, 117, 199):
        np.testing.assert_array_equal(out[:, j], qi.rsi(c[:, j], 14))


def test_named_tuples() -> None:
    x = np.linspace(1.0, 2.0, 60)
    m = qi.macd(x)
    assert isinstance(m, qi.MACDResult) and m._fields == ("macd", "signal", "histogram")
    b = qi.bollinger_bands(x)
    assert isinstance(b, qi.BollingerBands) and b._fields == ("upper", "middle", "lower")
    s = qi.stochastic(x + 1, x - 1, x)
    assert isinstance(s, qi.Stochastic) and s._fields == ("k", "d")
    np.testing.assert_array_equal(m.histogram, m.macd - m.signal)
    np.testing.assert_array_equal(b.middle, qi.sma(x, 20))


# --- constant input ----------------------------------------------------------------


def test_constant_input() -> None:
    """Each docstring's constant-input rule (TA-Lib's conventions for 0/0 cases)."""
    c = np.full(100, 42.0)
    v = np.full(100, 7.0)
    for fn in (qi.sma, qi.ema, qi.wma):
        out = fn(c, 10)
        np.testing.assert_allclose(out[9:], 42.0, rtol=1e-14)
    np.testing.assert_array_equal(qi.rsi(c)[14:], 0.0)  # |G + L| < 1e-8: TA-Lib reports 0
    for line in qi.macd(c):
        np.testing.assert_allclose(line[33:], 0.0, atol=1e-12)
    for band in qi.bollinger_bands(c):
        np.testing.assert_allclose(band[19:], 42.0, rtol=1e-14)
    np.testing.assert_array_equal(qi.roc(c, 5)[5:], 0.0)
    np.testing.assert_array_equal(qi.atr(c, c, c)[14:], 0.0)
    for line in qi.stochastic(c, c, c):
        np.testing.assert_array_equal(line[17:], 0.0)
    np.testing.assert_array_equal(qi.williams_r(c, c, c)[13:], 0.0)
    np.testing.assert_array_equal(qi.cci(c, c, c)[19:], 0.0)
    np.testing.assert_array_equal(qi.adx(c, c, c)[27:], 0.0)
    np.testing.assert_array_equal(qi.obv(c, v), 7.0)
    np.testing.assert_allclose(qi.vwap(c, c, c, v), 42.0, rtol=1e-14)


# --- formulas, computed in plain Python ---------------------------------------------


def test_wma_weights() -> None:
    x = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0])
    expected = [np.nan] * 2 + [(x[i - 2] + 2 * x[i - 1] + 3 * x[i]) / 6 for i in range(2, 7)]
    np.testing.assert_allclose(qi.wma(x, 3), expected, rtol=1e-14)


def test_roc_and_its_zero_division_rule() -> None:
    x = np.array([0.0, 2.0, 3.0, 6.0])
    np.testing.assert_allclose(qi.roc(x, 1), [np.nan, 0.0, 50.0, 100.0])  # x[t-1] == 0 gives 0


def test_vwap_twin_and_zero_volume(rng: np.random.Generator) -> None:
    h, lo, c, v = _bars(rng, 500)
    v[:3] = 0.0
    v[200] = 0.0
    typical = (h + lo + c) / 3.0
    with np.errstate(invalid="ignore"):
        expected = np.cumsum(typical * v) / np.cumsum(v)
    out = qi.vwap(h, lo, c, v)
    assert np.isnan(out[:3]).all()  # no volume traded yet
    np.testing.assert_allclose(out[3:], expected[3:], rtol=1e-12)


def test_obv_twin_and_nan_propagation(rng: np.random.Generator) -> None:
    _, _, c, v = _bars(rng, 300)
    c[50] = c[49]  # a flat bar adds nothing
    sign = np.sign(np.diff(c))
    expected = v[0] + np.concatenate([[0.0], np.cumsum(sign * v[1:])])
    np.testing.assert_allclose(qi.obv(c, v), expected, rtol=1e-12)
    c[100] = np.nan
    out = qi.obv(c, v)
    np.testing.assert_allclose(out[:100], expected[:100], rtol=1e-12)
    assert np.isnan(out[100:]).all()


def test_williams_r_and_stochastic_are_nan_while_the_window_holds_a_gap(
    rng: np.random.Generator,
) -> None:
    h, lo, c, _ = _bars(rng, 120)
    h[60] = np.nan
    r = qi.williams_r(h, lo, c, 5)
    assert np.isnan(r[60:65]).all() and not np.isnan(r[65:]).any()
    clean = qi.williams_r(h[61:], lo[61:], c[61:], 5)
    np.testing.assert_array_equal(r[65:], clean[4:])
    k, _ = qi.stochastic(h, lo, c, 5, 3, smooth_k=1)
    assert np.isnan(k[60:]).all()  # the %D running sum carries the NaN on


def test_interior_nan_propagates_through_running_sums() -> None:
    x = np.arange(1.0, 41.0)
    x[25] = np.nan
    for out in (qi.sma(x, 5), qi.ema(x, 5), qi.wma(x, 5), qi.rsi(x, 5), *qi.macd(x, 3, 6, 2)):
        assert not np.isnan(out[24]) and np.isnan(out[25:]).all()
    roc = qi.roc(x, 3)  # x[t] / x[t - 3]: only the two ratios that use x[25]
    np.testing.assert_array_equal(np.flatnonzero(np.isnan(roc[3:])) + 3, [25, 28])
    cci = qi.cci(x, x, x, 4)  # NaN while the window holds the gap, then back
    assert np.isnan(cci[25:29]).all() and not np.isnan(cci[29:]).any()


# --- validation ------------------------------------------------------------------


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "10", None])
def test_window_validation_names_the_parameter(bad: Any) -> None:
    x = np.arange(30.0)
    for fn, name in ((qi.sma, "window"), (qi.ema, "window"), (qi.roc, "window")):
        with pytest.raises(ValueError, match=name):
            fn(x, bad)
    with pytest.raises(ValueError, match="window"):
        qi.atr(x, x, x, window=bad)
    with pytest.raises(ValueError, match="d_window"):
        qi.stochastic(x, x, x, d_window=bad)
    with pytest.raises(ValueError, match="smooth_k"):
        qi.stochastic(x, x, x, smooth_k=bad)
    with pytest.raises(ValueError, match="signal"):
        qi.macd(x, signal=bad)


def test_option_validation() -> None:
    x = np.arange(60.0)
    with pytest.raises(ValueError, match="fast must be smaller than slow"):
        qi.macd(x, fast=26, slow=12)
    with pytest.raises(ValueError, match="fast must be smaller than slow"):
        qi.macd(x, fast=12, slow=12)
    for bad in (-1.0, float("nan"), float("inf"), "two"):
        with pytest.raises(ValueError, match="num_std"):
            qi.bollinger_bands(x, num_std=bad)
    np.testing.assert_array_equal(qi.bollinger_bands(x, 5, num_std=0.0).upper, qi.sma(x, 5))


def test_input_validation() -> None:
    x = np.arange(30.0)
    with pytest.raises(ValueError, match="low must have the same shape as close"):
        qi.atr(x, x[:-1], x)
    with pytest.raises(ValueError, match="volume must have the same shape as close"):
        qi.obv(x, np.ones((30, 2)))
    a = pd.Series(x, index=pd.RangeIndex(30))
    b = pd.Series(x, index=pd.RangeIndex(1, 31))
    with pytest.raises(ValueError, match="high must have the same index as close"):
        qi.williams_r(b, a, a)
    with pytest.raises(ValueError, match="close must be numeric"):
        qi.sma(["a", "b"], 2)
    with pytest.raises(ValueError, match="close must be a 1-D or 2-D array"):
        qi.ema(np.ones((2, 2, 2)), 2)


# --- kernels -----------------------------------------------------------------------


def test_one_series_kernels_equal_the_public_functions(rng: np.random.Generator) -> None:
    h, lo, c, v = _bars(rng, 300)
    pairs = [
        (ma_kernels.sma_1d_nb(c, 7), qi.sma(c, 7)),
        (ma_kernels.ema_1d_nb(c, 7), qi.ema(c, 7)),
        (ma_kernels.wma_1d_nb(c, 7), qi.wma(c, 7)),
        (ma_kernels.rsi_1d_nb(c, 7), qi.rsi(c, 7)),
        (ma_kernels.roc_1d_nb(c, 7), qi.roc(c, 7)),
        (hlc_kernels.atr_1d_nb(h, lo, c, 7), qi.atr(h, lo, c, 7)),
        (range_kernels.williams_r_1d_nb(h, lo, c, 7), qi.williams_r(h, lo, c, 7)),
        (range_kernels.cci_1d_nb(h, lo, c, 7), qi.cci(h, lo, c, 7)),
        (hlc_kernels.adx_1d_nb(h, lo, c, 7), qi.adx(h, lo, c, 7)),
        (hlc_kernels.obv_1d_nb(c, v), qi.obv(c, v)),
        (hlc_kernels.vwap_1d_nb(h, lo, c, v), qi.vwap(h, lo, c, v)),
    ]
    pairs += list(zip(ma_kernels.macd_1d_nb(c, 5, 9, 3), qi.macd(c, 5, 9, 3), strict=True))
    pairs += list(
        zip(ma_kernels.bollinger_1d_nb(c, 9, 1.5), qi.bollinger_bands(c, 9, 1.5), strict=True)
    )
    pairs += list(
        zip(
            range_kernels.stochastic_1d_nb(h, lo, c, 9, 2, 4),
            qi.stochastic(h, lo, c, 9, 4, smooth_k=2),
            strict=True,
        )
    )
    for kernel, public in pairs:
        np.testing.assert_array_equal(kernel, public)


def test_panel_kernels_check_their_outputs() -> None:
    x = np.asfortranarray(np.ones((10, 3)))
    with pytest.raises(ValueError, match="contiguous columns"):
        run(ma_kernels.sma_nb, x, 2, np.empty((10, 3), order="C"))
    with pytest.raises(ValueError, match="same shape"):
        run(ma_kernels.sma_nb, x, 2, np.empty((10, 2), order="F"))
    with pytest.raises(ValueError, match="same shape"):
        run(hlc_kernels.atr_nb, x, x[:5], x, 2, np.empty((10, 3), order="F"))


def test_one_specialization_per_panel_kernel(rng: np.random.Generator) -> None:
    """1-D, Fortran, C-ordered and read-only inputs all run the one compiled signature."""
    series = pd.Series(rng.normal(size=50)).cumsum()  # pandas hands out read-only arrays
    qi.ema(series, 5)
    qi.ema(series.to_numpy(), 5)
    qi.ema(np.ascontiguousarray(rng.normal(size=(50, 3))), 5)
    qi.ema(pd.DataFrame(rng.normal(size=(50, 3))), 5)
    signature = [(base_kernels.IN2, numba.types.int64, base_kernels.OUT2)]
    # small work runs the serial twin; a large panel the parallel kernel, same signature
    assert serial_twin(ma_kernels.ema_nb).signatures == signature
    qi.ema(pd.DataFrame(rng.normal(size=(PARALLEL_MIN_CELLS // 2, 2))), 5)
    assert ma_kernels.ema_nb.signatures == signature
