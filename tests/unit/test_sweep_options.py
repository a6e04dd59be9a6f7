"""Sweeps of engine options and of user functions: every row equals a single run.

Tolerances as in test_sweep_fast.py: 1e-12 relative; Sharpe and Sortino also accept
1e-13 absolute (a near-zero mean return summed in a different order).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from numba import njit

from quantcore._kernels.backtest_orders import DIRECTION_LONG, SIZE_PERCENT
from quantcore._kernels.backtest_sweep import (
    N_OPT,
    OPT_FEES,
    OPT_SIZE,
    OPT_SL,
    OPT_TIME,
    OPT_TP,
    OPT_TRAIL,
    sweep_signals_nb,
)
from quantcore._kernels.backtest_sweep_fast import extrema_table_nb
from quantcore._kernels.backtest_sweep_stops import (
    MAX_SUMMARIES,
    first_trail_hit_nb,
    stop_grid_nb,
    trail_table_nb,
)
from quantcore.backtest import SWEEP_METRICS, run, run_strategy, sweep

MEAN_BASED = ("sharpe_ratio", "sortino_ratio")
OTHERS = [m for m in SWEEP_METRICS if m not in MEAN_BASED and m != "final_equity"]


def assert_row_equals(row: pd.Series, res: object, msg: str = "") -> None:
    np.testing.assert_allclose(
        [row[m] for m in OTHERS], [getattr(res, m) for m in OTHERS], rtol=1e-12, atol=0,
        equal_nan=True, err_msg=msg,
    )  # fmt: skip
    np.testing.assert_allclose(
        [row[m] for m in MEAN_BASED], [getattr(res, m) for m in MEAN_BASED], rtol=1e-12,
        atol=1e-13, equal_nan=True, err_msg=msg,
    )  # fmt: skip


@pytest.fixture(scope="module")
def ohlc(goog: pd.DataFrame) -> pd.DataFrame:
    return goog[["Open", "High", "Low", "Close"]].iloc[-800:]


@pytest.mark.parametrize(
    "engine",
    [
        {"fees": 0.001},
        {"fees": 0.002, "slippage": 0.001, "direction": "both"},
        {"fees": 0.0, "size_type": "amount", "size": 40_000.0},
        {"fees": 0.001, "fill": "next_open"},
    ],
)
def test_option_grid_rows_equal_run_strategy(ohlc: pd.DataFrame, engine: dict) -> None:
    grid = {
        "short_window": [5, 10],
        "long_window": [30],
        "sl_stop": [None, 0.02, 0.05],
        "tp_stop": [None, 0.04],
        "trail_stop": [None, 0.03],
    }
    table = sweep(ohlc, "moving_average", grid, **engine)
    assert len(table) == 2 * 3 * 2 * 2
    assert table["total_return"].nunique() > 6  # the stops change the outcome
    for _, row in table.iterrows():
        kw = {
            "short_window": int(row.short_window), "long_window": 30, "sl_stop": row.sl_stop,
            "tp_stop": row.tp_stop, "trail_stop": row.trail_stop,
        }  # fmt: skip
        assert_row_equals(row, run_strategy(ohlc, "moving_average", **kw, **engine), str(kw))


def test_fees_size_and_time_stop_grid(ohlc: pd.DataFrame) -> None:
    grid = {"window": [10, 40], "fees": [0.0, 0.003], "size": [0.5, 1.0], "time_stop": [None, 7]}
    table = sweep(ohlc, "momentum", grid)
    assert len(table) == 16
    for _, row in table.iterrows():
        kw = {"window": int(row.window), "fees": row.fees, "size": row["size"],
              "time_stop": row.time_stop}  # fmt: skip
        assert_row_equals(row, run_strategy(ohlc, "momentum", **kw), str(kw))


@hs.composite
def _market(draw: hs.DrawFn) -> dict:
    seed = draw(hs.integers(0, 2**32 - 1))
    n = draw(hs.integers(3, 300))
    rng = np.random.default_rng(seed)
    close = 50.0 * np.exp(np.cumsum(rng.normal(0.0, draw(hs.sampled_from([0.005, 0.03])), n)))
    open_ = close * np.exp(rng.normal(0.0, 0.01, n))
    if draw(hs.booleans()):  # coarse ticks: stop levels tie with prices
        close, open_ = np.round(close, 0) + 1.0, np.round(open_, 0) + 1.0
    high = np.maximum(open_, close) * np.exp(np.abs(rng.normal(0.0, 0.01, n)))
    low = np.minimum(open_, close) * np.exp(-np.abs(rng.normal(0.0, 0.01, n)))
    p = draw(hs.floats(0.02, 0.5))
    m = draw(hs.integers(1, 12))
    stop = [np.nan, 0.005, 0.01, 0.03, 0.1]
    table = np.full((m, N_OPT), np.nan)
    table[:, OPT_SL] = rng.choice(stop, m)
    table[:, OPT_TP] = rng.choice(stop, m)
    table[:, OPT_TRAIL] = rng.choice([np.nan, 0.005, 0.02, 0.05], m)
    table[:, OPT_TIME] = rng.choice([np.nan, 1.0, 3.0, 20.0], m)
    table[:, OPT_FEES] = rng.choice([0.0, 0.001, 0.02], m)
    table[:, OPT_SIZE] = rng.choice([1.0, 2.0], m)
    return {
        "o": open_, "h": high, "lo": low, "x": close, "e": rng.random(n) < p,
        "xs": rng.random(n) < p, "table": table,
        "slippage": draw(hs.sampled_from([0.0, 0.001])),
    }  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(_market(), hs.sampled_from([MAX_SUMMARIES, 0]))
def test_stop_grid_fast_path_equals_the_per_bar_engine(m: dict, max_summaries: int) -> None:
    """With trade summaries (the default) and with every trade accounted directly."""
    t = m["table"]
    fast = stop_grid_nb(
        m["o"], m["h"], m["lo"], m["x"], 0, m["e"], m["xs"], *(np.ascontiguousarray(t[:, i]) for i in
        (OPT_SL, OPT_TP, OPT_TRAIL, OPT_TIME, OPT_FEES, OPT_SIZE)), 1e4, m["slippage"], 252.0,
        max_summaries,
    )  # fmt: skip
    col = [np.asfortranarray(a[:, None]) for a in (m["o"], m["h"], m["lo"], m["x"])]
    slow = sweep_signals_nb(
        *col, False, np.asfortranarray(m["e"][:, None]), np.asfortranarray(m["xs"][:, None]), t,
        1e4, m["slippage"], SIZE_PERCENT, 1.0, 0.0, DIRECTION_LONG, False, 252.0,
    )  # fmt: skip
    mean = [SWEEP_METRICS.index(k) for k in MEAN_BASED]
    other = [i for i in range(len(SWEEP_METRICS)) if i not in mean]
    np.testing.assert_allclose(fast[:, other], slow[:, other], rtol=1e-12, atol=0, equal_nan=True)
    np.testing.assert_allclose(fast[:, mean], slow[:, mean], rtol=1e-12, atol=1e-13, equal_nan=True)


@settings(max_examples=200, deadline=None)
@given(hs.integers(0, 2**32 - 1), hs.integers(2, 200), hs.booleans())
def test_trailing_hit_search_equals_a_bar_by_bar_scan(seed: int, n: int, ticks: bool) -> None:
    rng = np.random.default_rng(seed)
    close = 50.0 * np.exp(np.cumsum(rng.normal(0.0, 0.02, n)))
    high = close * np.exp(np.abs(rng.normal(0.0, 0.01, n)))
    low = close * np.exp(-np.abs(rng.normal(0.0, 0.01, n)))
    if ticks:  # levels tie with prices
        high, low, close = np.round(high), np.round(low), np.round(close)
        high, low = np.maximum(high, close), np.minimum(low, close)
    eh, el = extrema_table_nb(high), extrema_table_nb(low)
    tab = trail_table_nb(high, low, eh, el)
    for t in range(n):
        for trail in (0.001, 0.01, 0.02, 0.05, 1.0 / 3.0):
            expected, extreme = n, close[t]
            for u in range(t + 1, n):  # the engine: check, then raise the extreme
                if low[u] <= extreme * (1.0 - trail):
                    expected = u
                    break
                extreme = max(extreme, high[u])
            got = first_trail_hit_nb(high, low, eh, el, tab, t, close[t], trail)
            assert got == expected, (t, trail)


def _crossing(close: pd.Series, fast: int, slow: int) -> tuple[pd.Series, pd.Series]:
    """A user strategy written with pandas only."""
    f, s = close.rolling(fast).mean(), close.rolling(slow).mean()
    above = f > s
    below = f < s
    return above & ~above.shift(1, fill_value=True), below & ~below.shift(1, fill_value=True)


def test_user_function_rows_equal_run_on_its_signals(ohlc: pd.DataFrame) -> None:
    grid = {"fast": [5, 8], "slow": [20, 40], "sl_stop": [None, 0.03]}
    table = sweep(ohlc, _crossing, grid, fees=0.001)
    assert list(table.columns[:3]) == ["fast", "slow", "sl_stop"] and len(table) == 8
    for _, row in table.iterrows():
        e, x = _crossing(ohlc["Close"], row.fast, row.slow)
        res = run(ohlc, e, x, fees=0.001, sl_stop=row.sl_stop)
        assert_row_equals(row, res, f"{row.fast}/{row.slow}/{row.sl_stop}")


def _bands(close: pd.Series, width: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Three signal columns on one asset (three lookbacks)."""
    entries = {w: close < close.rolling(w).mean() * (1 - width) for w in (10, 20, 40)}
    exits = {w: close > close.rolling(w).mean() for w in (10, 20, 40)}
    return pd.DataFrame(entries), pd.DataFrame(exits)


def test_signal_columns_as_independent_backtests_or_one_portfolio(ohlc: pd.DataFrame) -> None:
    close = ohlc["Close"]
    by_column = sweep(close, _bands, {"width": [0.01, 0.03]}, size=0.5)
    assert len(by_column) == 6 and list(by_column["asset"].cat.categories) == [0, 1, 2]
    for _, row in by_column.iterrows():
        e, x = _bands(close, row.width)
        col = int(row.asset)
        assert_row_equals(row, run(close, e.iloc[:, col], x.iloc[:, col], size=0.5))
    shared = sweep(close, _bands, {"width": [0.01, 0.03]}, group="portfolio", size=0.5)
    assert len(shared) == 2
    for _, row in shared.iterrows():
        e, x = _bands(close, row.width)
        wide = pd.DataFrame({c: close for c in e.columns})
        assert_row_equals(row, run(wide, e, x, size=0.5))


@pytest.mark.parametrize(
    ("grid", "options", "match"),
    [
        ({"sl_stop": [0.02, 1.5]}, {}, "sl_stop must be in"),
        ({"tp_stop": [-0.1]}, {}, "tp_stop"),
        ({"time_stop": [0]}, {}, "time_stop"),
        ({"size": [2.0]}, {}, "size"),
        ({"fees": []}, {}, "empty"),
        ({}, {"group": "rows"}, "group"),
        ({}, {"size_type": "shares"}, "size_type"),
        ({}, {"size_type": "units"}, "size is required"),
    ],
)
def test_bad_option_grids_raise(ohlc: pd.DataFrame, grid: dict, options: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        sweep(ohlc, "moving_average", {"short_window": 5, "long_window": 20, **grid}, **options)


def test_a_strategy_function_must_return_two_signals(ohlc: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match=r"\(entries, exits\)"):
        sweep(ohlc, lambda close, k: close > k, {"k": [1.0]})


@njit
def _jit_crossing(close: np.ndarray, fast: float, slow: float) -> tuple[np.ndarray, np.ndarray]:
    """A user strategy in numba: SMA crossover, windows arrive as floats."""
    n = close.shape[0]
    wf, ws = int(fast), int(slow)
    f = np.full(n, np.nan)
    s = np.full(n, np.nan)
    for t in range(ws - 1, n):
        f[t] = close[t - wf + 1 : t + 1].mean()
        s[t] = close[t - ws + 1 : t + 1].mean()
    e = np.zeros(n, dtype=np.bool_)
    x = np.zeros(n, dtype=np.bool_)
    for t in range(ws, n):
        e[t] = f[t - 1] < s[t - 1] and f[t] > s[t]
        x[t] = f[t - 1] > s[t - 1] and f[t] < s[t]
    return e, x


@pytest.mark.parametrize("engine", [{"fees": 0.001}, {"fees": 0.002, "fill": "next_open"}])
def test_jitted_function_runs_fused_and_equals_its_python_self(
    ohlc: pd.DataFrame, engine: dict
) -> None:
    grid = {"fast": [5, 8], "slow": [20, 40], "sl_stop": [None, 0.03], "trail_stop": [None, 0.05]}
    fused = sweep(ohlc, _jit_crossing, grid, **engine)
    plain = sweep(ohlc, lambda c, fast, slow: _jit_crossing.py_func(c.to_numpy(), fast, slow),
                  grid, **engine)  # fmt: skip
    assert len(fused) == 16 and fused["total_return"].nunique() > 8
    pd.testing.assert_frame_equal(fused, plain, rtol=1e-12, atol=1e-13)
    shared = sweep(ohlc, _jit_crossing, grid, group="portfolio", **engine)  # arrays, not fused
    np.testing.assert_allclose(shared["total_return"], fused["total_return"], rtol=1e-12)
