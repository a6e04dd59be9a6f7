"""Sweeps: every row equals run_strategy with its parameters; grids; progress; chunking."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from quantcore.backtest import SWEEP_METRICS, run_strategy, sweep

METRICS = [m for m in SWEEP_METRICS if m != "final_equity"]

GRIDS = [
    (
        "moving_average",
        {"short_window": [3, 10, 25], "long_window": [20, 50], "ma_type": ["sma", "ema"]},
    ),
    ("momentum", {"window": [5, 60], "threshold": [0.0, 0.03]}),
    ("mean_reversion", {"window": [10, 30], "num_std": [1.0, 2.5]}),
    ("rsi", {"window": [7, 14], "oversold": [25.0, 35.0], "overbought": [65.0]}),
    ("buy_hold", {}),
]
ENGINES = [
    {"fees": 0.001, "slippage": 0.0005},
    {"fees": 0.002, "fill": "next_open", "direction": "both", "integer_shares": True},
    {"direction": "short", "size": 0.5},
]


@pytest.fixture(scope="module")
def ohlc(sp500: pd.DataFrame) -> pd.DataFrame:
    return sp500[["Open", "High", "Low", "Close"]].iloc[-1200:]


@pytest.mark.parametrize(("strategy", "grid"), GRIDS)
@pytest.mark.parametrize("engine", ENGINES)
def test_row_equals_run_strategy(
    ohlc: pd.DataFrame, strategy: str, grid: dict, engine: dict
) -> None:
    table = sweep(ohlc, strategy, grid, **engine)
    assert len(table) >= 1
    for _, row in table.iterrows():
        params = {k: row[k] for k in grid}
        res = run_strategy(ohlc, strategy, **params, **engine)
        ours = [row[m] for m in METRICS]
        theirs = [getattr(res, m) for m in METRICS]
        np.testing.assert_allclose(
            ours, theirs, rtol=1e-12, atol=0, equal_nan=True, err_msg=str(params)
        )
        np.testing.assert_allclose(row["final_equity"], np.asarray(res.equity)[-1], rtol=1e-12)


def test_assets_are_swept_independently(close_panel: pd.DataFrame) -> None:
    panel = close_panel.iloc[-1500:].ffill()
    grid = {"short_window": [5, 10], "long_window": [30]}
    table = sweep(panel, "moving_average", grid, fees=0.001)
    assert len(table) == 2 * 3
    assert table["asset"].tolist() == ["SP500", "NASDAQ", "GOOG"] * 2
    assert table["short_window"].tolist() == [5, 5, 5, 10, 10, 10]
    for _, row in table.iterrows():
        res = run_strategy(panel[row["asset"]], "moving_average", short_window=row["short_window"],
                           long_window=30, fees=0.001)  # fmt: skip
        np.testing.assert_allclose(row["sharpe_ratio"], res.sharpe_ratio, rtol=1e-12)
        assert row["total_trades"] == res.total_trades


def test_order_constraint_skips_combinations() -> None:
    close = 100.0 + np.sin(np.arange(400) / 9.0) * 5.0
    table = sweep(
        close, "moving_average", {"short_window": range(5, 30, 5), "long_window": range(10, 40, 10)}
    )
    pairs = list(zip(table["short_window"], table["long_window"], strict=True))
    assert pairs == [(s, lw) for s in range(5, 30, 5) for lw in range(10, 40, 10) if s < lw]
    assert table["total_trades"].dtype == np.int64


def test_progress_and_chunks_do_not_change_results(capsys: pytest.CaptureFixture[str]) -> None:
    close = 100.0 * np.exp(np.cumsum(np.random.default_rng(7).normal(0, 0.01, 800)))
    grid = {"short_window": range(2, 40), "long_window": range(10, 80, 7)}
    plain = sweep(close, "moving_average", grid, fees=0.001)
    shown = sweep(close, "moving_average", grid, fees=0.001, progress=True, chunk_size=37)
    pd.testing.assert_frame_equal(plain, shown)
    assert f"{len(plain)}/{len(plain)}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("grid", "options", "match"),
    [
        ({"window": [1, 2]}, {}, "unknown parameter"),
        ({"short_window": []}, {}, "grid\\['short_window'\\] is empty"),
        ({"short_window": [5, -1]}, {}, "short_window"),
        (
            {"short_window": [50], "long_window": [10, 20]},
            {},
            "no combination with short_window < long_window",
        ),
        ({}, {"fees": -1}, "fees"),
        ({}, {"benchmark": 1}, "unknown engine option"),
        ({}, {"chunk_size": 0}, "chunk_size"),
    ],
)
def test_bad_grids_and_options(grid: dict, options: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        sweep(np.arange(1.0, 200.0), "moving_average", grid, **options)


def test_momentum_lookback_grid_is_a_deprecated_window() -> None:
    close = 100.0 + 10.0 * np.sin(np.arange(300) / 9.0)
    with pytest.warns(DeprecationWarning, match="'lookback'"):
        old = sweep(close, "momentum", {"lookback": [5, 10], "threshold": [0.0, 0.01]})
    new = sweep(close, "momentum", {"window": [5, 10], "threshold": [0.0, 0.01]})
    pd.testing.assert_frame_equal(old, new)
