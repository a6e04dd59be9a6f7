"""Strategy signals: definitions checked against TA-Lib and quantcore.indicators on real closes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from quantcore import indicators
from quantcore.backtest import STRATEGIES
from quantcore.backtest import strategies as st
from tests.conftest import require_oracle

talib = require_oracle("talib")


@pytest.fixture(scope="module")
def close(sp500: pd.DataFrame) -> pd.Series:
    return sp500["Adj Close"].iloc[-2520:]


def _cross(fast: np.ndarray, slow: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    up = np.zeros(fast.shape, bool)
    down = np.zeros(fast.shape, bool)
    up[1:] = (fast[:-1] < slow[:-1]) & (fast[1:] > slow[1:])
    down[1:] = (fast[:-1] > slow[:-1]) & (fast[1:] < slow[1:])
    return up, down


@pytest.mark.parametrize(("short", "long"), [(5, 20), (10, 50), (20, 100)])
@pytest.mark.parametrize("ma_type", ["sma", "ema"])
def test_moving_average_equals_talib_cross(
    close: pd.Series, short: int, long: int, ma_type: str
) -> None:
    x = close.to_numpy()
    fn = talib.SMA if ma_type == "sma" else talib.EMA
    up, down = _cross(fn(x, short), fn(x, long))
    e, ex = st.moving_average(close, short_window=short, long_window=long, ma_type=ma_type)
    assert up.sum() > 10
    np.testing.assert_array_equal(e.to_numpy(), up)
    np.testing.assert_array_equal(ex.to_numpy(), down)
    qfn = indicators.sma if ma_type == "sma" else indicators.ema
    up_q, down_q = _cross(np.asarray(qfn(x, short)), np.asarray(qfn(x, long)))
    np.testing.assert_array_equal(e.to_numpy(), up_q)
    np.testing.assert_array_equal(ex.to_numpy(), down_q)


@pytest.mark.parametrize(("window", "oversold", "overbought"), [(14, 30.0, 70.0), (5, 20.0, 80.0)])
def test_rsi_equals_talib(
    close: pd.Series, window: int, oversold: float, overbought: float
) -> None:
    r = talib.RSI(close.to_numpy(), window)
    e, ex = st.rsi(close, window=window, oversold=oversold, overbought=overbought)
    assert e.sum() > 5 and ex.sum() > 5
    np.testing.assert_array_equal(e.to_numpy(), r < oversold)
    np.testing.assert_array_equal(ex.to_numpy(), r > overbought)


@pytest.mark.parametrize(("window", "num_std"), [(20, 2.0), (10, 1.0)])
def test_mean_reversion_equals_talib_bbands(close: pd.Series, window: int, num_std: float) -> None:
    _upper, middle, lower = talib.BBANDS(close.to_numpy(), window, num_std, num_std, 0)
    e, ex = st.mean_reversion(close, window=window, num_std=num_std)
    assert e.sum() > 10
    np.testing.assert_array_equal(e.to_numpy(), close.to_numpy() < lower)
    np.testing.assert_array_equal(ex.to_numpy(), close.to_numpy() >= middle)


def test_momentum_definition(close: pd.Series) -> None:
    m = close / close.shift(60) - 1.0
    e, ex = st.momentum(close, window=60, threshold=0.05)
    np.testing.assert_array_equal(e.to_numpy(), (m > 0.05).to_numpy())
    np.testing.assert_array_equal(ex.to_numpy(), (m < -0.05).to_numpy())


def test_kinds_and_leading_nans(close_panel: pd.DataFrame) -> None:
    panel = close_panel.iloc[-3000:].ffill()  # calendars differ: fill holidays
    e, _ = st.moving_average(panel, short_window=10, long_window=30)
    assert (
        isinstance(e, pd.DataFrame)
        and e.columns.equals(panel.columns)
        and e.index.equals(panel.index)
    )
    goog = panel["GOOG"]
    e1, _ = st.moving_average(goog.dropna(), short_window=10, long_window=30)
    np.testing.assert_array_equal(e["GOOG"].loc[e1.index], e1)
    assert not e["GOOG"].loc[goog.isna()].any()
    bh, never = st.buy_hold(panel)
    assert bh.sum().tolist() == [1, 1, 1] and not never.any().any()
    assert bh["GOOG"].idxmax() == goog.first_valid_index()
    arr_e, _ = st.rsi(goog.dropna().to_numpy())
    assert isinstance(arr_e, np.ndarray) and arr_e.dtype == np.bool_


@pytest.mark.parametrize(
    ("name", "params", "match"),
    [
        (
            "moving_average",
            {"short_window": 50, "long_window": 20},
            "short_window must be < long_window",
        ),
        ("moving_average", {"short_window": 0}, "short_window"),
        ("moving_average", {"long_window": 2.5}, "long_window"),
        ("moving_average", {"ma_type": "wma"}, "ma_type"),
        ("momentum", {"window": -1}, "window"),
        ("momentum", {"threshold": -0.1}, "threshold"),
        ("mean_reversion", {"num_std": 0}, "num_std"),
        ("mean_reversion", {"window": "x"}, "window"),
        ("rsi", {"oversold": 80, "overbought": 70}, "oversold must be < overbought"),
        ("rsi", {"overbought": 170}, "overbought"),
    ],
)
def test_invalid_parameters_name_the_parameter(name: str, params: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        getattr(st, name)(np.arange(1.0, 100.0), **params)


def test_run_strategy_names_unknown_parameters() -> None:
    from quantcore.backtest import run_strategy

    with pytest.raises(ValueError, match=r"unknown parameter\(s\) window .*'moving_average'"):
        run_strategy(np.arange(1.0, 100.0), "moving_average", window=3)
    with pytest.raises(ValueError, match="unknown parameter"):
        run_strategy(np.arange(1.0, 100.0), "buy_hold", lookback=3)


def test_interior_nan_is_refused_by_strategies() -> None:
    x = np.arange(1.0, 30.0)
    x[10] = np.nan
    with pytest.raises(ValueError, match="NaN at row 10, column 0"):
        st.momentum(x, window=3)


def test_momentum_lookback_is_a_deprecated_window() -> None:
    close = np.array([1.0, 2.0, 1.5, 1.0, 1.4])
    with pytest.warns(DeprecationWarning, match=r"momentum\(window=\.\.\.\)"):
        old = st.momentum(close, lookback=1)
    new = st.momentum(close, window=1)
    assert all(np.array_equal(a, b) for a, b in zip(old, new, strict=True))


def test_registry_lookback_is_a_deprecated_window() -> None:
    from quantcore.backtest import run_strategy

    close = np.array([1.0, 2.0, 1.5, 1.0, 1.4, 1.6, 1.2])
    spec = STRATEGIES["momentum"]
    assert list(spec.defaults) == ["window", "threshold"]
    with pytest.warns(DeprecationWarning, match="'lookback' is deprecated.*'window'"):
        old = st.generate("momentum", close, {"lookback": 1})
    new = st.generate("momentum", close, {"window": 1})
    assert all(np.array_equal(a, b) for a, b in zip(old, new, strict=True))
    with pytest.warns(DeprecationWarning, match="'lookback'"):
        res_old = run_strategy(close, "momentum", lookback=1, fees=0.001)
    res_new = run_strategy(close, "momentum", window=1, fees=0.001)
    np.testing.assert_array_equal(res_old.equity, res_new.equity)
    with pytest.raises(ValueError, match="not both"):
        spec.resolve({"lookback": 1, "window": 2})
    grid = {"lookback": [1, 2]}
    with pytest.warns(DeprecationWarning):
        assert spec.resolve(grid) == {"window": [1, 2]}
    assert grid == {"lookback": [1, 2]}  # the caller's mapping is left alone
    # without resolve, the old name is refused and the message names the new one
    with pytest.raises(ValueError, match="'lookback' is now 'window'"):
        spec.check_names({"lookback": 1})


@pytest.mark.parametrize("window", [1, 5, 50])
@pytest.mark.parametrize("ema", [False, True])
def test_ma_recursion_is_the_indicator_bit_for_bit(
    close: pd.Series, window: int, ema: bool
) -> None:
    from quantcore._kernels.backtest_signals import ma_update_nb

    x = close.to_numpy()
    expected = (indicators.ema if ema else indicators.sma)(x, window)
    got = np.empty_like(x)
    acc = 0.0
    alpha = 2.0 / (window + 1.0)
    for t in range(x.shape[0]):
        acc, got[t] = ma_update_nb(x, t, t, window, 1.0 / window, alpha, ema, acc)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("window", [2, 14, 30])
def test_rsi_signals_are_the_indicator_bit_for_bit(close: pd.Series, window: int) -> None:
    r = indicators.rsi(close.to_numpy(), window)
    e, x = st.rsi(close, window=window, oversold=40.0, overbought=60.0)
    np.testing.assert_array_equal(e.to_numpy(), r < 40.0)
    np.testing.assert_array_equal(x.to_numpy(), r > 60.0)


@pytest.mark.parametrize(("window", "num_std"), [(2, 0.5), (20, 2.0), (50, 1.0)])
def test_mean_reversion_signals_are_the_bands_bit_for_bit(
    close: pd.Series, window: int, num_std: float
) -> None:
    bands = indicators.bollinger_bands(close.to_numpy(), window, num_std)
    e, x = st.mean_reversion(close, window=window, num_std=num_std)
    np.testing.assert_array_equal(e.to_numpy(), close.to_numpy() < bands.lower)
    np.testing.assert_array_equal(x.to_numpy(), close.to_numpy() >= bands.middle)


def test_registry_and_unknown_strategy() -> None:
    assert sorted(STRATEGIES) == ["buy_hold", "mean_reversion", "momentum", "moving_average", "rsi"]
    with pytest.raises(ValueError, match="strategy must be one of"):
        st.get_strategy("macd")
