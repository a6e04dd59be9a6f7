"""The moving-average sweep's fast path: equal to run_strategy row by row, and its parts.

Tolerances: every metric agrees with :func:`run_strategy` to 1e-12 relative. Sharpe
and Sortino divide a mean return that can be ~0 (a strategy that ends where it
started): both sides sum ~2,500 rounded returns, the engine naively and the fast
path in double-double with price (not equity) ratios inside a position, so these
two also accept an absolute 1e-13 (the observed worst is ~1e-15).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quantcore._kernels.backtest_orders import (
    DIRECTION_BOTH,
    DIRECTION_LONG,
    DIRECTION_SHORT,
    SIZE_AMOUNT,
    SIZE_PERCENT,
)
from quantcore._kernels.backtest_signals import (
    STRATEGY_MOMENTUM,
    STRATEGY_MOVING_AVERAGE,
    signals_1d,
)
from quantcore._kernels.backtest_sweep import (
    N_OPT,
    OPT_FEES,
    OPT_SIZE,
    OPT_SL,
    OPT_TIME,
    fast_path_applies,
    ma_table_nb,
    run_sweep,
    sweep_general_nb,
    sweep_ma_fast,
)
from quantcore._kernels.backtest_sweep_fast import (
    extrema_nb,
    extrema_table_nb,
    price_tree_nb,
    return_prefix_nb,
    tree_query_nb,
)
from quantcore.backtest import SWEEP_METRICS, run_strategy, sweep

MEAN_BASED = ("sharpe_ratio", "sortino_ratio")
OTHERS = [m for m in SWEEP_METRICS if m not in MEAN_BASED and m != "final_equity"]
COSTS = {"fees": 0.001, "slippage": 0.0005}


def assert_rows_match(table: pd.DataFrame, prices: object, engine: dict) -> None:
    """Each sweep row equals run_strategy with its parameters (see the module docstring)."""
    assert len(table) >= 1
    for row in table.itertuples(index=False):
        params = {
            "short_window": int(row.short_window),
            "long_window": int(row.long_window),
            "ma_type": row.ma_type,
        }
        res = run_strategy(prices, "moving_average", **params, **engine)
        np.testing.assert_allclose(
            [getattr(row, m) for m in OTHERS],
            [getattr(res, m) for m in OTHERS],
            rtol=1e-12, atol=0, equal_nan=True, err_msg=str(params),
        )  # fmt: skip
        np.testing.assert_allclose(
            [getattr(row, m) for m in MEAN_BASED],
            [getattr(res, m) for m in MEAN_BASED],
            rtol=1e-12, atol=1e-13, equal_nan=True, err_msg=str(params),
        )  # fmt: skip
        np.testing.assert_allclose(row.final_equity, np.asarray(res.equity)[-1], rtol=1e-12)


def opts_table(m: int, fees: float, size: float = 1.0) -> np.ndarray:
    """``m`` rows of engine options without stops (the kernels' (m, N_OPT) table)."""
    table = np.full((m, N_OPT), np.nan)
    table[:, OPT_FEES] = fees
    table[:, OPT_SIZE] = size
    return table


def test_fast_path_applies_only_to_its_case() -> None:
    ma = STRATEGY_MOVING_AVERAGE
    one, three, part = opts_table(2, 0.0), opts_table(2, 0.0, 3.0), opts_table(2, 0.0, 0.99)
    stop = opts_table(2, 0.0)
    stop[1, OPT_SL] = 0.05
    timed = opts_table(2, 0.0)
    timed[0, OPT_TIME] = 5.0
    pct = SIZE_PERCENT
    assert fast_path_applies(ma, False, one, pct, 1.0, DIRECTION_LONG, False)
    assert fast_path_applies(ma, False, three, pct, 1.0, DIRECTION_LONG, False)
    assert not fast_path_applies(STRATEGY_MOMENTUM, False, one, pct, 1.0, DIRECTION_LONG, False)
    assert not fast_path_applies(ma, True, one, pct, 1.0, DIRECTION_LONG, False)
    assert not fast_path_applies(ma, False, part, pct, 1.0, DIRECTION_LONG, False)
    assert not fast_path_applies(ma, False, one, pct, 1.0, DIRECTION_SHORT, False)
    assert not fast_path_applies(ma, False, one, pct, 1.0, DIRECTION_BOTH, False)
    assert not fast_path_applies(ma, False, one, pct, 1.0, DIRECTION_LONG, True)
    assert not fast_path_applies(ma, False, stop, pct, 1.0, DIRECTION_LONG, False)
    assert not fast_path_applies(ma, False, timed, pct, 1.0, DIRECTION_LONG, False)
    assert not fast_path_applies(ma, False, one, SIZE_AMOUNT, 1.0, DIRECTION_LONG, False)
    assert not fast_path_applies(ma, False, one, pct, 2.0, DIRECTION_LONG, False)


@pytest.mark.parametrize(
    "engine",
    [COSTS, {}, {"fees": 0.01, "slippage": 0.002, "initial_capital": 1_000.0}],
    ids=["costs", "free", "costly"],
)
@pytest.mark.parametrize("asset", ["goog", "sp500"])
def test_fast_rows_equal_run_strategy_on_real_data(
    request: pytest.FixtureRequest, asset: str, engine: dict
) -> None:
    frame = request.getfixturevalue(asset)
    close = frame["Close"].iloc[-2520:]
    grid = {
        "short_window": [2, 5, 9, 20, 41],
        "long_window": [6, 10, 30, 77, 150],
        "ma_type": ["sma", "ema"],
    }
    assert_rows_match(sweep(close, "moving_average", grid, **engine), close, engine)


def test_whole_benchmark_grid_equals_the_general_kernel(sp500: pd.DataFrame) -> None:
    """The 4,950-combination benchmark grid, fast path against the bar-by-bar kernel."""
    close = np.asfortranarray(sp500[["Adj Close"]].to_numpy()[-2520:])
    w = np.arange(5, 105.0)
    params = np.array([(a, b, e) for e in (0.0, 1.0) for a in w for b in w if a < b])
    first = np.zeros(1, dtype=np.int64)
    table = opts_table(len(params), COSTS["fees"])
    fast = sweep_ma_fast(close, first, params, table, 1e5, COSTS["slippage"], 252.0)
    slow = sweep_general_nb(
        STRATEGY_MOVING_AVERAGE, close, close, close, close, False, first, params, table, 1e5,
        COSTS["slippage"], SIZE_PERCENT, 1.0, 0.0, DIRECTION_LONG, False, 252.0,
    )  # fmt: skip
    mean_cols = [SWEEP_METRICS.index(m) for m in MEAN_BASED]
    other = [i for i in range(len(SWEEP_METRICS)) if i not in mean_cols]
    np.testing.assert_allclose(fast[:, other], slow[:, other], rtol=1e-12, atol=0, equal_nan=True)
    np.testing.assert_allclose(fast[:, mean_cols], slow[:, mean_cols], rtol=1e-12, atol=1e-13)
    assert fast[:, SWEEP_METRICS.index("total_trades")].min() >= 1


@st.composite
def _cases(draw: st.DrawFn) -> tuple[pd.Series, dict, dict]:
    seed = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(2, 160))
    rng = np.random.default_rng(seed)
    steps = rng.normal(0.0, draw(st.sampled_from([0.002, 0.02, 0.08])), n)
    if draw(st.booleans()):  # flat stretches: equality bars between the averages
        steps[rng.random(n) < 0.4] = 0.0
    close = 50.0 * np.exp(np.cumsum(steps))
    if draw(st.booleans()):  # prices on a coarse tick: exact ties
        close = np.maximum(np.round(close, 0), 1.0)
    lead = draw(st.integers(0, min(20, n - 1)))
    close[:lead] = np.nan  # no price yet
    short = draw(st.lists(st.integers(1, 30), min_size=1, max_size=3, unique=True))
    long_ = draw(st.lists(st.integers(2, 200), min_size=1, max_size=3, unique=True))
    if min(short) >= max(long_):
        long_.append(min(short) + 1)
    grid = {"short_window": short, "long_window": long_, "ma_type": ["sma", "ema"]}
    engine = {
        "fees": draw(st.sampled_from([0.0, 0.0005, 0.003, 0.05])),
        "slippage": draw(st.sampled_from([0.0, 0.0002, 0.01])),
        "initial_capital": draw(st.sampled_from([100_000.0, 777.77])),
    }
    return pd.Series(close), grid, engine


@settings(max_examples=60, deadline=None)
@given(_cases())
def test_fast_rows_equal_run_strategy_on_random_cases(case: tuple[pd.Series, dict, dict]) -> None:
    close, grid, engine = case
    assert_rows_match(sweep(close, "moving_average", grid, **engine), close, engine)


@pytest.mark.parametrize(
    "options",
    [
        {"max_size": 0.5, "direction": DIRECTION_LONG, "integer": False, "use_open": False},
        {"max_size": 1.0, "direction": DIRECTION_BOTH, "integer": False, "use_open": False},
        {"max_size": 1.0, "direction": DIRECTION_LONG, "integer": True, "use_open": False},
        {"max_size": 1.0, "direction": DIRECTION_LONG, "integer": False, "use_open": True},
    ],
)
def test_other_options_fall_back_to_the_general_kernel(goog: pd.DataFrame, options: dict) -> None:
    close = np.asfortranarray(goog[["Close"]].to_numpy())
    open_ = np.asfortranarray(goog[["Open"]].to_numpy())
    params = np.array([[5.0, 20.0, 0.0], [10.0, 30.0, 1.0]])
    first = np.zeros(1, dtype=np.int64)
    args = (
        STRATEGY_MOVING_AVERAGE, open_, close, close, close, options["use_open"], first, params,
        opts_table(2, 0.002, options["max_size"]), 1e4, 0.001, SIZE_PERCENT, 1.0, 0.0,
        options["direction"], options["integer"], 252.0,
    )  # fmt: skip
    np.testing.assert_array_equal(run_sweep(*args), sweep_general_nb(*args))


def test_an_asset_with_a_gap_falls_back_inside_the_fast_sweep(rng: np.random.Generator) -> None:
    x = 100.0 * np.exp(np.cumsum(rng.normal(0.0, 0.02, (300, 2)), axis=0))
    x[150, 1] = np.nan  # sweep() refuses gaps; the kernel must still be right
    close = np.asfortranarray(x)
    params = np.array([[3.0, 10.0, 0.0], [5.0, 40.0, 1.0], [2.0, 7.0, 0.0]])
    first = np.zeros(2, dtype=np.int64)
    table = opts_table(3, 0.001)
    fast = sweep_ma_fast(close, first, params, table, 1e5, 0.0, 252.0)
    slow = sweep_general_nb(
        STRATEGY_MOVING_AVERAGE, close, close, close, close, False, first, params, table, 1e5,
        0.0, SIZE_PERCENT, 1.0, 0.0, DIRECTION_LONG, False, 252.0,
    )  # fmt: skip
    np.testing.assert_array_equal(fast[1::2], slow[1::2])  # the gapped asset: same kernel
    np.testing.assert_allclose(fast[0::2], slow[0::2], rtol=1e-12, atol=1e-13)


def test_ma_table_gives_the_signal_kernels_crossings(rng: np.random.Generator) -> None:
    x = 100.0 * np.exp(np.cumsum(rng.normal(0.0, 0.01, 400)))
    x[:7] = np.nan
    first = 7
    windows = [1, 2, 5, 13, 60, 500]
    for ema in (0, 1):
        keys = np.array([2 * w + ema for w in windows], dtype=np.int64)
        table = ma_table_nb(x, first, keys)
        assert np.isnan(table[:, :first]).all()
        for a, wa in enumerate(windows):
            for b, wb in enumerate(windows):
                if wa >= wb:
                    continue
                f, s = table[a], table[b]
                with np.errstate(invalid="ignore"):
                    ent = np.r_[False, (f[:-1] < s[:-1]) & (f[1:] > s[1:])]
                    ext = np.r_[False, (f[:-1] > s[:-1]) & (f[1:] < s[1:])]
                want_e, want_x = signals_1d(STRATEGY_MOVING_AVERAGE, x, first, wa, wb, ema)
                np.testing.assert_array_equal(ent, want_e, err_msg=f"{wa}/{wb}/{ema}")
                np.testing.assert_array_equal(ext, want_x, err_msg=f"{wa}/{wb}/{ema}")


def _inner_drawdown(x: np.ndarray) -> float:
    peak = -np.inf
    worst = 1.0
    for v in x:
        peak = max(peak, v)
        worst = min(worst, v / peak)
    return worst


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.integers(0, 5))
def test_range_structures_equal_brute_force(seed: int, n: int, lead: int) -> None:
    rng = np.random.default_rng(seed)
    x = np.round(rng.uniform(1.0, 9.0, n + lead), 1)  # ties on purpose
    x[:lead] = np.nan
    idx, mr = price_tree_nb(x, lead)
    ext = extrema_table_nb(x)
    for lo in range(lead, n + lead):
        for hi in range(lo, n + lead):
            seg = x[lo : hi + 1]
            i_max, i_min, m, t, s = tree_query_nb(x, idx, mr, lo, hi)
            assert x[i_max] == seg.max() and x[i_min] == seg.min()
            assert m == _inner_drawdown(seg)
            assert lo <= s <= t <= hi and x[t] / x[s] == m
            assert x[s] == x[lo : t + 1].max()
            j_max, j_min = extrema_nb(x, ext, lo, hi)
            assert lo <= j_max <= hi and lo <= j_min <= hi
            assert x[j_max] == seg.max() and x[j_min] == seg.min()


def test_return_prefix_sums_are_exactly_rounded(rng: np.random.Generator) -> None:
    x = 100.0 * np.exp(np.cumsum(rng.normal(0.0, 0.03, 3000)))
    x[:3] = np.nan
    pre = return_prefix_nb(x, 3)
    r = x[4:] / x[3:-1] - 1.0
    d = np.minimum(r, 0.0)
    for row, terms in enumerate((r, r * r, d * d)):
        for a, b in [(3, 2999), (3, 4), (100, 2500), (2998, 2999), (1500, 1501)]:
            got = (pre[2 * row, b] - pre[2 * row, a]) + (pre[2 * row + 1, b] - pre[2 * row + 1, a])
            want = math.fsum(terms[a - 3 : b - 3])
            assert abs(got - want) <= 4 * np.spacing(max(abs(want), 1e-300)) + 1e-30
