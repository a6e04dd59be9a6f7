"""Engine semantics on hand-checked examples; metrics against empyrical and quantcore.risk.

Expected values are derived in the comments from the documented formulas
(``quantcore.backtest.run`` Notes), not copied from the output.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from quantcore._records import TRADE_CLOSED, TRADE_LONG, TRADE_OPEN, TRADE_SHORT
from quantcore.backtest import EXIT_REASONS, BacktestResult, run, run_strategy

CLOSE = np.array([10.0, 11.0, 12.0, 9.0, 10.0])
OPEN = np.array([9.5, 10.5, 11.5, 12.5, 9.5])
E = np.array([True, False, False, False, False])
X = np.array([False, False, True, False, False])


def test_fees_and_slippage_at_close() -> None:
    res = run(CLOSE, E, X, initial_capital=1000.0, fees=0.01, slippage=0.02)
    # buy at 10 * 1.02 = 10.2 with 1000 including 1% fees: 1000 / (10.2 * 1.01) units
    size = 1000.0 / (10.2 * 1.01)
    entry_fee = size * 10.2 * 0.01
    # sell at 12 * 0.98 = 11.76, paying 1% of that value
    value = size * 11.76
    final = value - value * 0.01
    tr = res.trades[0]
    assert len(res.trades) == 1 and tr["status"] == TRADE_CLOSED and tr["direction"] == TRADE_LONG
    np.testing.assert_allclose(
        [tr["size"], tr["entry_price"], tr["exit_price"], tr["entry_fees"], tr["exit_fees"]],
        [size, 10.2, 11.76, entry_fee, value * 0.01], rtol=1e-14,
    )  # fmt: skip
    np.testing.assert_allclose(tr["pnl"], final - 1000.0, rtol=1e-12)
    np.testing.assert_allclose(tr["ret"], (final - 1000.0) / (size * 10.2), rtol=1e-12)
    np.testing.assert_allclose(res.equity, [size * 10, size * 11, final, final, final], rtol=1e-14)
    np.testing.assert_allclose(res.total_return, final / 1000.0 - 1.0, rtol=1e-12)
    assert res.win_rate == 1.0 and res.total_trades == 1 and res.exposure == 2 / 5


def test_next_open_fills_at_the_following_open() -> None:
    res = run({"open": OPEN, "close": CLOSE}, E, X, initial_capital=1000.0, fill="next_open")
    tr = res.trades[0]
    assert (tr["entry_idx"], tr["exit_idx"]) == (1, 3)
    assert (tr["entry_price"], tr["exit_price"]) == (10.5, 12.5)
    np.testing.assert_allclose(res.total_return, 12.5 / 10.5 - 1.0, rtol=1e-14)
    # a signal on the last bar has no next open: ignored
    last = np.array([False, False, False, False, True])
    assert (
        run({"open": OPEN, "close": CLOSE}, last, ~last & False, fill="next_open").total_trades == 0
    )
    frame = pd.DataFrame({"Open": OPEN, "High": OPEN, "Low": OPEN, "Close": CLOSE})
    assert run(frame, E, X, fill="next_open").trades[0]["entry_price"] == 10.5


def test_redundant_signals_are_ignored_and_open_trades_marked() -> None:
    e = np.array([True, True, False, True, False])  # second entry while long: ignored
    x = np.array([False, False, True, False, False])
    res = run(CLOSE, e, x, initial_capital=1200.0)
    tr = res.trades
    assert len(tr) == 2 and res.total_trades == 2
    assert tr["entry_idx"].tolist() == [0, 3] and tr["exit_idx"].tolist() == [2, -1]
    assert tr["status"].tolist() == [TRADE_CLOSED, TRADE_OPEN]
    # closed: 120 units 10 -> 12; open: 1440 / 9 = 160 units marked at 10
    np.testing.assert_allclose(tr["pnl"], [240.0, 160.0], rtol=1e-14)
    assert tr["exit_price"][1] == 10.0 and tr["exit_fees"][1] == 0.0
    assert res.win_rate == 1.0  # over the one closed trade
    np.testing.assert_allclose(np.asarray(res.equity)[-1], 1600.0)
    # an exit while flat does nothing
    assert run(CLOSE, np.zeros(5, bool), X).total_trades == 0


def test_short_and_reversals() -> None:
    res = run(CLOSE, E, X, initial_capital=1000.0, direction="short")
    tr = res.trades[0]
    assert tr["direction"] == TRADE_SHORT
    np.testing.assert_allclose(tr["pnl"], 100.0 * (10.0 - 12.0), rtol=1e-14)
    # equity while short: 1000 + 100 * (10 - p)
    np.testing.assert_allclose(res.equity, [1000.0, 900.0, 800.0, 800.0, 800.0], rtol=1e-14)
    both = run(
        CLOSE,
        E,
        np.array([False, False, True, False, True]),
        initial_capital=1000.0,
        direction="both",
    )
    tr = both.trades
    assert tr["direction"].tolist() == [TRADE_LONG, TRADE_SHORT]
    assert tr["entry_idx"].tolist() == [0, 2] and tr["exit_idx"].tolist() == [2, -1]
    # long 100 units 10 -> 12 (+200), then short 1200 / 12 = 100 units from 12, marked at 10
    np.testing.assert_allclose(tr["pnl"], [200.0, 200.0], rtol=1e-14)
    np.testing.assert_allclose(np.asarray(both.equity)[-1], 1400.0)


def test_integer_shares_and_position_size() -> None:
    res = run(CLOSE, E, X, initial_capital=1000.0, fees=0.001, integer_shares=True)
    assert res.trades[0]["size"] == np.floor(1000.0 / (10.0 * 1.001)) == 99.0
    half = run(CLOSE, E, X, initial_capital=1000.0, size=0.5)
    assert half.trades[0]["size"] == 50.0
    np.testing.assert_allclose(half.total_return, 0.5 * 0.2, rtol=1e-14)


def test_assets_share_one_cash_pool() -> None:
    close = np.column_stack([CLOSE, [20.0, 20.0, 25.0, 25.0, 20.0]])
    e = np.array([[True, True]] + [[False, False]] * 4)
    x = np.array([[False, False]] * 4 + [[True, True]])
    res = run(close, e, x, initial_capital=1000.0, size=0.5)
    # asset 0 takes min(0.5 * 1000, 1000) = 500; asset 1 takes min(0.5 * 1000, 500) = 500
    assert res.trades["size"].tolist() == [50.0, 25.0]
    np.testing.assert_allclose(res.positions[1], [50.0, 25.0])
    full = run(close, e, x, initial_capital=1000.0)
    assert full.trades["size"].tolist() == [100.0]  # the first column spends all the cash


def test_signals_on_bars_without_price_are_ignored() -> None:
    close = np.array([np.nan, 10.0, np.nan, 12.0])
    res = run(close, [True, False, False, False], [False, False, False, True])
    assert res.total_trades == 0
    res = run(close, [False, True, False, False], [False, False, True, False])
    assert res.trades["status"].tolist() == [TRADE_OPEN]  # exit on the gap bar ignored
    np.testing.assert_allclose(res.equity, [1e5, 1e5, 1e5, 1.2e5])


def test_metrics_equal_empyrical(sp500: pd.DataFrame) -> None:
    import empyrical as ep

    close = sp500["Adj Close"].iloc[-2000:]
    res = run_strategy(
        close, "moving_average", short_window=20, long_window=60, fees=0.001, slippage=0.0005
    )
    r = res.equity.pct_change().fillna(res.equity.iloc[0] / 100_000.0 - 1.0)
    assert r.iloc[0] == 0.0  # flat on the first bar: empyrical's drawdown then matches ours
    np.testing.assert_allclose(res.sharpe_ratio, ep.sharpe_ratio(r), rtol=1e-10)
    np.testing.assert_allclose(res.sortino_ratio, ep.sortino_ratio(r), rtol=1e-10)
    np.testing.assert_allclose(res.max_drawdown, ep.max_drawdown(r), rtol=1e-10)
    np.testing.assert_allclose(res.annualized_return, ep.annual_return(r), rtol=1e-10)
    closed = res.trades[res.trades["status"] == TRADE_CLOSED]
    pnl = closed["pnl"]
    np.testing.assert_allclose(
        res.profit_factor, pnl[pnl > 0].sum() / -pnl[pnl < 0].sum(), rtol=1e-12
    )
    assert res.win_rate == np.mean(pnl > 0)


def test_benchmark_alpha_beta(sp500: pd.DataFrame) -> None:
    from quantcore import risk

    close = sp500["Adj Close"].iloc[-1000:]
    res = run_strategy(close, "buy_hold", benchmark=close)
    np.testing.assert_allclose(res.beta, 1.0, rtol=1e-9)
    np.testing.assert_allclose(
        res.benchmark_return, close.iloc[-1] / close.iloc[0] - 1.0, rtol=1e-12
    )
    other = sp500["Adj Close"].iloc[-1000:] * 0 + np.linspace(1.0, 2.0, 1000)
    res2 = run_strategy(close, "moving_average", short_window=5, long_window=30, benchmark=other)
    r = res2.equity.pct_change().to_numpy()[1:]
    b = other.pct_change().to_numpy()[1:]
    np.testing.assert_allclose(res2.beta, risk.beta(r, b), rtol=1e-12)
    np.testing.assert_allclose(res2.alpha, risk.alpha(r, b), rtol=1e-12)
    assert np.isnan(run(CLOSE, E, X).alpha)


def test_result_is_frozen_and_tabular(goog: pd.DataFrame) -> None:
    res = run_strategy(goog["Close"], "moving_average", short_window=10, long_window=30)
    assert isinstance(res, BacktestResult)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.total_return = 1.0  # type: ignore[misc]
    frame = res.trades_frame()
    assert len(frame) == res.total_trades
    assert frame["entry_time"].iloc[0] == goog.index[res.trades["entry_idx"][0]]
    assert pd.isna(frame["exit_time"].iloc[-1]) == (res.trades["status"][-1] == TRADE_OPEN)
    assert list(res.metrics())[:3] == ["total_return", "annualized_return", "sharpe_ratio"]
    assert isinstance(res.equity, pd.Series) and res.equity.index.equals(goog.index)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"fees": -0.1}, "fees"),
        ({"fees": 1.5}, "fees"),
        ({"slippage": float("nan")}, "slippage"),
        ({"initial_capital": 0}, "initial_capital"),
        ({"size": 1.5}, "size"),
        ({"fill": "open"}, "fill"),
        ({"direction": "sideways"}, "direction"),
        ({"integer_shares": "yes"}, "integer_shares"),
        ({"periods_per_year": -1}, "periods_per_year"),
        ({"fill": "next_open"}, "needs open prices"),
        ({"benchmark": np.ones(3)}, "benchmark"),
    ],
)
def test_bad_options_name_the_option(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        run(CLOSE, E, X, **kwargs)


def test_bad_data_names_the_argument() -> None:
    with pytest.raises(ValueError, match="entries must have 5 rows"):
        run(CLOSE, E[:3], X)
    with pytest.raises(ValueError, match="exits must be boolean"):
        run(CLOSE, E, X.astype(float) * 2)
    with pytest.raises(ValueError, match="prices"):
        run(-CLOSE, E, X)
    with pytest.raises(ValueError, match="prices"):
        run(np.array([]), [], [])


def test_public_surface() -> None:
    import quantcore.backtest as bt

    assert set(bt.__all__) == {
        "EXIT_REASONS", "METRIC_NAMES", "STRATEGIES", "SWEEP_METRICS", "BacktestResult", "run", "run_strategy", "strategies", "sweep",
        "combinatorial_purged_splits", "purged_kfold", "rebalance", "walk_forward", "WalkForwardResult",
    }  # fmt: skip
    assert all(hasattr(bt, name) for name in bt.__all__)


def test_exit_reasons_name_what_closed_each_trade() -> None:
    # closes 10 11 12 9 10 13 12 11 14 15; entries at bars 0, 4, 7 (long, fill at close)
    close = np.array([10.0, 11.0, 12.0, 9.0, 10.0, 13.0, 12.0, 11.0, 14.0, 15.0])
    e = np.zeros(10, dtype=bool)
    e[[0, 4, 7]] = True
    x = np.zeros(10, dtype=bool)
    x[2] = True
    # trade 1: the exit signal at bar 2 (12 / 10 is below the +25 % take profit);
    # trade 2: entered at 10, bar 5 closes at 13 >= 12.5: take profit;
    # trade 3: entered at 11, bar 8 at 14 >= 13.75: take profit, then bar 9 is flat
    res = run(close, e, x, tp_stop=0.25)
    assert [EXIT_REASONS[c] for c in res.trades["exit_reason"]] == [
        "signal", "take_profit", "take_profit",
    ]  # fmt: skip
    # a 5 % stop loss is never reached: trade 2 (from 10) is still open at the end
    # (the entry at bar 7 is ignored while holding)
    res = run(close, e, x, sl_stop=0.05)
    assert [EXIT_REASONS[c] for c in res.trades["exit_reason"]] == ["signal", "end"]
    # a 10 % trailing stop: trade 2's highest close is 13 (bar 5), bar 7 closes at
    # 11 <= 11.7: stopped (close-only data fill at the bar's price), no entry that bar
    res = run(close, e, x, trail_stop=0.1)
    assert [EXIT_REASONS[c] for c in res.trades["exit_reason"]] == ["signal", "trailing_stop"]
    assert res.trades["exit_idx"][1] == 7
    # a 2-bar time stop: due at bars 2 (before the signal at the close), 6 and 9
    res = run(close, e, x, time_stop=2)
    assert [EXIT_REASONS[c] for c in res.trades["exit_reason"]] == ["time_stop"] * 3
    assert list(res.trades_frame()["exit_reason"]) == ["time_stop"] * 3
