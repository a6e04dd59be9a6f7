"""walk_forward(): the in-sample choice, the out-of-sample runs, stitching, causality."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from quantcore.backtest import run, strategies, sweep, walk_forward

GRID = {"short_window": [5, 10, 20], "long_window": [30, 50, 80]}
COSTS = {"fees": 0.001, "slippage": 0.0005}


@pytest.fixture(scope="module")
def close(sp500: pd.DataFrame) -> pd.Series:
    return sp500["Adj Close"].iloc[-1500:]


@pytest.fixture(scope="module")
def wf(close: pd.Series):
    return walk_forward(close, "moving_average", GRID, train=500, test=250, **COSTS)


def test_windows_tile_the_history(close: pd.Series, wf) -> None:
    w = wf.windows
    assert len(w) == 4  # tests on bars 500..749, 750..999, 1000..1249, 1250..1499
    assert list(w["test_start"]) == list(close.index[[500, 750, 1000, 1250]])
    assert list(w["test_end"]) == list(close.index[[749, 999, 1249, 1499]])
    assert list(w["train_start"]) == list(close.index[[0, 250, 500, 750]])
    assert wf.equity.index.equals(close.index[500:])


def test_choice_is_the_in_sample_best(close: pd.Series, wf) -> None:
    for i, row in wf.windows.iterrows():
        table = sweep(close.iloc[250 * i : 250 * i + 500], "moving_average", GRID, **COSTS)
        best = table.loc[table["sharpe_ratio"].idxmax()]
        assert (row["short_window"], row["long_window"]) == (
            best["short_window"], best["long_window"],
        )  # fmt: skip
        assert row["in_sample"] == best["sharpe_ratio"]


def test_out_of_sample_runs_and_stitching(close: pd.Series, wf) -> None:
    capital = 100_000.0
    for i, row in wf.windows.iterrows():
        # signals on the whole history: causal indicators give the same values as on a prefix
        e, x = strategies.moving_average(
            close, short_window=int(row["short_window"]), long_window=int(row["long_window"])
        )
        lo, hi = 500 + 250 * i, 750 + 250 * i
        res = run(close.iloc[lo:hi], e.iloc[lo:hi], x.iloc[lo:hi], initial_capital=capital, **COSTS)
        np.testing.assert_allclose(wf.equity.iloc[lo - 500 : hi - 500], res.equity, rtol=1e-12)
        assert row["out_of_sample"] == pytest.approx(res.sharpe_ratio, rel=1e-12, nan_ok=True)
        capital = float(res.equity.iloc[-1])
    total = np.prod(1.0 + wf.windows["test_return"]) - 1.0
    assert wf.metrics["total_return"] == pytest.approx(total, rel=1e-10)


def test_no_look_ahead(close: pd.Series, wf) -> None:
    # wrecking every price after the second test window changes nothing before it
    wrecked = close.copy()
    wrecked.iloc[1000:] = wrecked.iloc[1000:].to_numpy()[::-1] * 3.0
    other = walk_forward(wrecked, "moving_average", GRID, train=500, test=250, **COSTS)
    pd.testing.assert_frame_equal(other.windows.iloc[:2], wf.windows.iloc[:2])
    pd.testing.assert_series_equal(other.equity.iloc[:500], wf.equity.iloc[:500])


def test_step_and_short_last_window(close: pd.Series) -> None:
    out = walk_forward(close.iloc[:1000], "rsi", {"window": [7, 14]}, train=300, test=200, step=300)
    # windows start at 0, 300, 600: tests 300..499, 600..799, 900..999
    assert list(out.windows["test_start"]) == list(close.index[[300, 600, 900]])
    assert len(out.equity) == 200 + 200 + 100
    assert out.windows["window"].isin([7, 14]).all()


def test_arrays_and_metric_choice(close: pd.Series) -> None:
    out = walk_forward(close.to_numpy(), "moving_average", GRID, train=600, test=300,
                       metric="total_return")  # fmt: skip
    assert isinstance(out.equity, np.ndarray)
    assert list(out.windows["test_start"]) == [600, 900, 1200]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"train": 500, "test": 250, "step": 100}, "step must be >= test"),
        ({"train": 1500, "test": 250}, "leaves no bar to test"),
        ({"train": 500, "test": 0}, "test must be >= 1"),
        ({"train": 500, "test": 250, "metric": "final_equity"}, "metric must be one of"),
        ({"train": 500, "test": 250, "leverage_x": 2}, "unknown engine option"),
    ],
)
def test_bad_arguments(close: pd.Series, kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        walk_forward(close, "moving_average", GRID, **kwargs)


def test_one_asset_only(close: pd.Series) -> None:
    with pytest.raises(ValueError, match="one asset"):
        walk_forward(pd.concat([close, close], axis=1), "moving_average", GRID, train=500, test=250)


def _breakout(c: pd.Series, window: int) -> tuple[np.ndarray, np.ndarray]:
    """Buy above the previous ``window``-day high, sell below its low (causal)."""
    return (
        (c > c.rolling(window).max().shift(1)).to_numpy(),
        (c < c.rolling(window).min().shift(1)).to_numpy(),
    )


def test_user_function_strategy(close: pd.Series) -> None:
    grid = {"window": [10, 20, 50]}
    out = walk_forward(close, _breakout, grid, train=500, test=250, **COSTS)
    capital = 100_000.0
    for i, row in out.windows.iterrows():
        table = sweep(close.iloc[250 * i : 250 * i + 500], _breakout, grid, **COSTS)
        assert row["window"] == table.loc[table["sharpe_ratio"].idxmax(), "window"]
        e, x = _breakout(close, int(row["window"]))
        lo, hi = 500 + 250 * i, 750 + 250 * i
        res = run(close.iloc[lo:hi], e[lo:hi], x[lo:hi], initial_capital=capital, **COSTS)
        np.testing.assert_allclose(out.equity.iloc[lo - 500 : hi - 500], res.equity, rtol=1e-12)
        capital = float(res.equity.iloc[-1])
