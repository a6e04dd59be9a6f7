"""quantcore.plot draws what it says: titles, labels, and line data equal to independent computations.

Figures are rendered headless (matplotlib's Agg via ``Figure.savefig``; no pyplot, no display).
Expected values are computed here with NumPy/pandas (or empyrical), not with quantcore.
"""

from __future__ import annotations

import io

import empyrical
import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from quantcore import plot
from quantcore.backtest import run_strategy, sweep
from quantcore.indicators import rsi, sma


@pytest.fixture(scope="module")
def spx(sp500: pd.DataFrame) -> pd.Series:
    return sp500["Adj Close"].pct_change(fill_method=None).iloc[1:].rename("SP500")


@pytest.fixture(scope="module")
def ndx(nasdaq: pd.DataFrame) -> pd.Series:
    return nasdaq["Adj Close"].pct_change(fill_method=None).iloc[1:].rename("NASDAQ")


def _png(fig: object) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=40)  # type: ignore[attr-defined]
    return buf.getvalue()


def test_equity_curve_draws_wealth_of_returns_and_benchmark(spx: pd.Series, ndx: pd.Series) -> None:
    fig = plot.equity_curve(spx, ndx, initial=100.0)
    (ax,) = fig.axes
    assert ax.get_title() == "Equity curve"
    assert ax.get_ylabel() == "wealth (start = 100)"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["SP500", "NASDAQ"]
    for line, r in zip(ax.lines[:2], (spx, ndx), strict=True):
        np.testing.assert_allclose(
            line.get_ydata(), 100.0 * np.cumprod(1.0 + r.to_numpy()), rtol=1e-12
        )
        assert (pd.DatetimeIndex(line.get_xdata()) == r.index).all()
    assert _png(fig).startswith(b"\x89PNG")


def test_equity_curve_aligns_pandas_and_checks_array_lengths(
    spx: pd.Series, ndx: pd.Series
) -> None:
    fig = plot.equity_curve(spx.iloc[100:], ndx.iloc[:-50])
    xs = [pd.DatetimeIndex(line.get_xdata()) for line in fig.axes[0].lines[:2]]
    assert xs[0].equals(xs[1]) and xs[0][0] == spx.index[100] and xs[0][-1] == ndx.index[-51]
    with pytest.raises(ValueError, match="benchmark has 3 rows"):
        plot.equity_curve(np.zeros(4), np.zeros(3))
    with pytest.raises(ValueError, match="returns is empty"):
        plot.equity_curve(np.array([]))
    assert fig.axes[0].get_yscale() == "linear"
    assert plot.equity_curve(spx, log_scale=True).axes[0].get_yscale() == "log"


def test_underwater_is_the_drawdown_from_the_running_peak(spx: pd.Series) -> None:
    fig = plot.underwater(spx)
    ax = fig.axes[0]
    wealth = np.cumprod(1.0 + spx.to_numpy())
    expected = wealth / np.maximum.accumulate(np.maximum(wealth, 1.0)) - 1.0
    np.testing.assert_allclose(ax.lines[0].get_ydata(), expected, rtol=1e-12, atol=1e-15)
    worst = ax.lines[1].get_ydata()[0]
    assert worst == pytest.approx(empyrical.max_drawdown(spx), rel=1e-12)
    assert ax.get_ylim()[0] <= expected.min() and ax.get_ylim()[1] == 0.0
    assert ax.get_title() == "Underwater (drawdown)" and ax.get_ylabel() == "drawdown"
    assert len(ax.collections) == 1  # the shaded area
    _png(fig)


@pytest.mark.parametrize("level", [0.95, 0.99])
def test_return_distribution_marks_var_and_es(spx: pd.Series, level: float) -> None:
    fig = plot.return_distribution(spx, level=level, bins=40)
    ax = fig.axes[0]
    var_x = ax.lines[0].get_xdata()[0]
    es_x = ax.lines[1].get_xdata()[0]
    r = spx.to_numpy()
    assert var_x == pytest.approx(np.percentile(r, 100 * (1 - level)), rel=1e-12)
    assert es_x == pytest.approx(
        empyrical.conditional_value_at_risk(r, cutoff=1 - level), rel=1e-12
    )
    assert es_x < var_x
    heights = np.array([p.get_height() for p in ax.patches])
    assert len(heights) == 40 and heights.sum() == len(r)
    assert ax.patches[0].get_x() == pytest.approx(r.min())
    assert ax.get_xlabel() == "return per period" and ax.get_ylabel() == "count"
    assert f"VaR {level:.0%}" in ax.get_legend().get_texts()[0].get_text()


def test_return_distribution_rejects_bad_options() -> None:
    with pytest.raises(ValueError, match="bins"):
        plot.return_distribution(np.zeros(10), bins=0)
    with pytest.raises(ValueError, match="level"):
        plot.return_distribution(np.linspace(-1, 1, 10), level=1.5)
    with pytest.raises(ValueError, match="at least 2"):
        plot.return_distribution(np.array([0.1, np.nan]))


def test_rolling_sharpe_and_volatility_match_windowed_numpy(spx: pd.Series) -> None:
    w = 63
    fig = plot.rolling_sharpe_volatility(spx, window=w)
    top, bottom = fig.axes
    windows = np.lib.stride_tricks.sliding_window_view(spx.to_numpy(), w)
    std = windows.std(axis=1, ddof=1)
    sharpe = windows.mean(axis=1) / std * np.sqrt(252)
    got_sr, got_vol = top.lines[0].get_ydata(), bottom.lines[0].get_ydata()
    assert np.isnan(got_sr[: w - 1]).all() and np.isnan(got_vol[: w - 1]).all()
    np.testing.assert_allclose(got_sr[w - 1 :], sharpe, rtol=1e-8)
    np.testing.assert_allclose(got_vol[w - 1 :], std * np.sqrt(252), rtol=1e-8)
    assert top.get_ylabel() == "Sharpe ratio" and bottom.get_ylabel() == "volatility"
    assert "63-period window" in top.get_title()
    with pytest.raises(ValueError, match="window"):
        plot.rolling_sharpe_volatility(spx, window=1)


def test_sweep_heatmap_shape_and_cells_equal_the_grid(goog: pd.DataFrame) -> None:
    shorts, longs = range(5, 30, 2), range(10, 60, 5)
    table = sweep(goog, "moving_average", {"short_window": shorts, "long_window": longs})
    fig = plot.sweep_heatmap(table, "short_window", "long_window")
    ax, cbar = fig.axes
    data = ax.images[0].get_array()
    assert data.shape == (len(longs), len(shorts))
    cells = {(int(r.long_window), int(r.short_window)): r.sharpe_ratio for r in table.itertuples()}
    for i, lw in enumerate(longs):
        for j, sw in enumerate(shorts):
            if (lw, sw) in cells:
                assert data[i, j] == pytest.approx(cells[(lw, sw)], rel=1e-12, nan_ok=True)
            else:  # skipped: short_window >= long_window
                assert sw >= lw and np.ma.is_masked(data[i, j])
    assert ax.get_xlabel() == "short_window" and ax.get_ylabel() == "long_window"
    assert ax.get_title() == "sharpe_ratio by long_window and short_window"
    assert cbar.get_ylabel() == "sharpe_ratio"
    left, right, bottom, top = ax.images[0].get_extent()
    assert (left, right) == (4.0, 30.0) and (bottom, top) == (7.5, 57.5)
    _png(fig)


def test_sweep_heatmap_rejects_unknown_columns() -> None:
    t = pd.DataFrame({"a": [1], "b": [2], "sharpe_ratio": [0.5]})
    with pytest.raises(ValueError, match="x='c'"):
        plot.sweep_heatmap(t, "c", "b")
    with pytest.raises(ValueError, match="value='total'"):
        plot.sweep_heatmap(t, "a", "b", "total")
    with pytest.raises(ValueError, match="agg"):
        plot.sweep_heatmap(t, "a", "b", agg="sum")


def test_price_with_indicators_overlays_and_panel(goog: pd.DataFrame) -> None:
    close = goog["Close"]
    fig = plot.price_with_indicators(
        goog, {"SMA 20": sma(close, 20), "SMA 50": sma(close, 50)},
        panel={"RSI 14": rsi(close, 14)}, panel_levels=(30, 70),
    )  # fmt: skip
    top, low = fig.axes
    assert [line.get_label() for line in top.lines] == ["Close", "SMA 20", "SMA 50"]
    np.testing.assert_array_equal(top.lines[0].get_ydata(), close.to_numpy())
    sma20 = top.lines[1].get_ydata()
    np.testing.assert_allclose(sma20[19:], close.rolling(20).mean().to_numpy()[19:], rtol=1e-10)
    assert low.lines[0].get_label() == "RSI 14"
    assert sorted(line.get_ydata()[0] for line in low.lines[1:]) == [30, 70]
    with pytest.raises(ValueError, match=r"overlays\['x'\] has shape \(3,\)"):
        plot.price_with_indicators(close, {"x": np.zeros(3)})


def test_trades_on_price_marks_fills(goog: pd.DataFrame) -> None:
    res = run_strategy(goog, "moving_average", short_window=10, long_window=30)
    fig = plot.trades_on_price(goog, res)
    ax = fig.axes[0]
    trades = res.trades
    closed = trades[trades["exit_idx"] >= 0]
    entries, exits = ax.lines[1], ax.lines[2]
    assert (pd.DatetimeIndex(entries.get_xdata()) == goog.index[trades["entry_idx"]]).all()
    np.testing.assert_array_equal(entries.get_ydata(), trades["entry_price"])
    assert (pd.DatetimeIndex(exits.get_xdata()) == goog.index[closed["exit_idx"]]).all()
    np.testing.assert_array_equal(exits.get_ydata(), closed["exit_price"])
    assert len(ax.lines) == 3  # long only: no short-entry markers
    assert ax.get_title() == f"Trades ({res.total_trades} trades)"
    with pytest.raises(ValueError, match="trade_dt"):
        plot.trades_on_price(goog, np.zeros(3))
    with pytest.raises(ValueError, match="beyond the 10 prices"):
        plot.trades_on_price(goog["Close"].iloc[:10], res)


def test_trades_on_price_circles_short_entries(goog: pd.DataFrame) -> None:
    res = run_strategy(goog, "moving_average", short_window=10, long_window=30, direction="both")
    fig = plot.trades_on_price(goog["Close"], res.trades)
    shorts = res.trades[res.trades["direction"] == -1]
    assert len(shorts) > 0
    np.testing.assert_array_equal(fig.axes[0].lines[3].get_ydata(), shorts["entry_price"])


def test_sweep_heatmap_uneven_or_text_parameters_get_one_tick_per_value() -> None:
    t = pd.DataFrame(
        {
            "window": [5, 10, 20, 50, 5, 10, 20, 50],
            "ma_type": ["sma"] * 4 + ["ema"] * 4,
            "sharpe_ratio": np.arange(8.0),
        }
    )
    ax = plot.sweep_heatmap(t, "window", "ma_type").axes[0]
    data = ax.images[0].get_array()
    assert data.shape == (2, 4)
    assert [x.get_text() for x in ax.get_xticklabels()] == ["5", "10", "20", "50"]
    assert [y.get_text() for y in ax.get_yticklabels()] == ["ema", "sma"]
    np.testing.assert_array_equal(data, [[4, 5, 6, 7], [0, 1, 2, 3]])
