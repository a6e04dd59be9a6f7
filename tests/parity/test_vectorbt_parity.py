"""Parity with vectorbt's ``Portfolio.from_signals`` (fill at close, one asset, all-in).

Mapping: our ``fees``/``slippage`` are vectorbt's (fractions of traded value;
slippage moves the fill price against the trader); ``size_type="percent"`` with
``size=1`` (the default) is ``size=np.inf`` (spend all cash including fees);
``initial_capital`` is ``init_cash``. Stops: ``sl_stop``/``tp_stop`` are vectorbt's
(measured from the entry bar's close, its default ``stop_entry_price``), our
``trail_stop=f`` is ``sl_stop=f, sl_trail=True``; with an OHLC frame both check the
stop against the bar's low/high from the bar after the entry on, fill at the stop
level or at the open when the bar opens through it, loss before profit, with fees
and without slippage (vectorbt's default ``stop_exit_price`` StopLimit), and open
nothing on the bar a stop closed. Both ignore an entry while in a position, an exit while flat and a
bar with both signals, and leave the last position open (vectorbt status 0).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from quantcore._records import TRADE_CLOSED
from quantcore.backtest import EXIT_REASONS, run, sweep
from quantcore.backtest import strategies as st
from tests.conftest import require_oracle

vbt = require_oracle("vectorbt")

CASES = [
    ("moving_average", {"short_window": 10, "long_window": 30}, 0.001, 0.002),
    ("moving_average", {"short_window": 5, "long_window": 50, "ma_type": "ema"}, 0.0, 0.0),
    ("mean_reversion", {"window": 20, "num_std": 1.5}, 0.002, 0.001),
    ("rsi", {"window": 14, "oversold": 35.0, "overbought": 65.0}, 0.0005, 0.0),
    ("momentum", {"window": 60, "threshold": 0.02}, 0.001, 0.001),
]


@pytest.fixture(scope="module")
def close(sp500: pd.DataFrame) -> pd.Series:
    return sp500["Adj Close"].iloc[-2520:]


@pytest.mark.parametrize(("name", "params", "fees", "slippage"), CASES)
def test_equity_and_trades(
    close: pd.Series, name: str, params: dict, fees: float, slippage: float
) -> None:
    entries, exits = st.generate(name, close, params)
    ours = run(close, entries, exits, fees=fees, slippage=slippage, initial_capital=50_000.0)
    pf = vbt.Portfolio.from_signals(
        close, entries, exits, fees=fees, slippage=slippage, init_cash=50_000.0, size=np.inf
    )
    np.testing.assert_allclose(ours.equity.to_numpy(), pf.value().to_numpy(), rtol=1e-9)
    theirs = pf.trades.records
    tr = ours.trades
    assert len(tr) == len(theirs) > 3
    np.testing.assert_array_equal(tr["entry_idx"], theirs["entry_idx"].to_numpy())
    closed = tr["status"] == TRADE_CLOSED
    np.testing.assert_array_equal(closed, theirs["status"].to_numpy() == 1)
    np.testing.assert_array_equal(tr["exit_idx"][closed], theirs["exit_idx"].to_numpy()[closed])
    for ours_field, their_field in [
        ("size", "size"), ("entry_price", "entry_price"), ("entry_fees", "entry_fees"),
        ("exit_price", "exit_price"), ("exit_fees", "exit_fees"), ("pnl", "pnl"), ("ret", "return"),
    ]:  # fmt: skip
        np.testing.assert_allclose(
            tr[ours_field], theirs[their_field].to_numpy(), rtol=1e-9, err_msg=ours_field
        )
    assert ours.total_trades == len(theirs)
    np.testing.assert_allclose(ours.total_return, pf.total_return(), rtol=1e-9)


def test_sweep_matches_vectorbt_on_every_combination(close: pd.Series) -> None:
    grid = {"short_window": [5, 10, 20], "long_window": [15, 30, 60], "ma_type": ["sma", "ema"]}
    table = sweep(close, "moving_average", grid, fees=0.001, slippage=0.001)
    assert len(table) == 16  # 18 pairs minus (20, 15) in both MA types
    entries = {}
    exits = {}
    for i, row in table.iterrows():
        entries[i], exits[i] = st.moving_average(
            close, short_window=row.short_window, long_window=row.long_window, ma_type=row.ma_type
        )
    pf = vbt.Portfolio.from_signals(
        close, pd.DataFrame(entries), pd.DataFrame(exits), fees=0.001, slippage=0.001,
        init_cash=100_000.0, size=np.inf,
    )  # fmt: skip
    np.testing.assert_allclose(table["total_return"], pf.total_return().to_numpy(), rtol=1e-9)
    np.testing.assert_allclose(table["final_equity"], pf.value().iloc[-1].to_numpy(), rtol=1e-9)
    counts = pf.trades.records.groupby("col").size().reindex(range(len(table)), fill_value=0)
    np.testing.assert_array_equal(table["total_trades"], counts.to_numpy())
    # max drawdown of the equity curve, with the initial capital as the first peak
    value = pf.value().to_numpy()
    value = np.vstack([np.full((1, value.shape[1]), 100_000.0), value])
    mdd = (value / np.maximum.accumulate(value, axis=0) - 1.0).min(axis=0)
    np.testing.assert_allclose(table["max_drawdown"], mdd, rtol=1e-9)
    np.testing.assert_allclose(
        table["sharpe_ratio"], pf.sharpe_ratio(freq="1D", year_freq="252D").to_numpy(), rtol=1e-9
    )


STOP_CASES = [
    ("goog", {"sl_stop": 0.02}),
    ("goog", {"tp_stop": 0.04}),
    ("goog", {"sl_stop": 0.03, "tp_stop": 0.05}),
    ("goog", {"trail_stop": 0.03}),
    ("goog", {"trail_stop": 0.02, "tp_stop": 0.06}),
    ("eurusd", {"sl_stop": 0.002}),
    ("eurusd", {"sl_stop": 0.003, "tp_stop": 0.004}),
    ("eurusd", {"trail_stop": 0.002, "tp_stop": 0.005}),
]


@pytest.mark.parametrize(("data", "stops"), STOP_CASES)
def test_stops_on_ohlc_equal_vectorbt(
    request: pytest.FixtureRequest, data: str, stops: dict
) -> None:
    """GOOG daily and EURUSD hourly (``backtesting.test``), MA 10/30 signals, fees 0.1 %."""
    df = request.getfixturevalue(data)
    entries, exits = st.moving_average(df["Close"], short_window=10, long_window=30)
    ours = run(df, entries, exits, fees=0.001, slippage=0.0005, initial_capital=10_000.0, **stops)
    theirs_kw = {k: v for k, v in stops.items() if k != "trail_stop"}
    if "trail_stop" in stops:
        theirs_kw.update(sl_stop=stops["trail_stop"], sl_trail=True)
    pf = vbt.Portfolio.from_signals(
        df["Close"], entries, exits, open=df["Open"], high=df["High"], low=df["Low"],
        fees=0.001, slippage=0.0005, init_cash=10_000.0, size=np.inf, **theirs_kw,
    )  # fmt: skip
    np.testing.assert_allclose(ours.equity.to_numpy(), pf.value().to_numpy(), rtol=1e-9)
    theirs = pf.trades.records
    tr = ours.trades
    assert len(tr) == len(theirs)
    closed = tr["status"] == TRADE_CLOSED
    np.testing.assert_array_equal(tr["entry_idx"], theirs["entry_idx"].to_numpy())
    np.testing.assert_array_equal(tr["exit_idx"][closed], theirs["exit_idx"].to_numpy()[closed])
    for ours_field, their_field in [
        ("size", "size"), ("entry_price", "entry_price"), ("exit_price", "exit_price"),
        ("exit_fees", "exit_fees"), ("pnl", "pnl"),
    ]:  # fmt: skip
        np.testing.assert_allclose(
            tr[ours_field], theirs[their_field].to_numpy(), rtol=1e-9, err_msg=ours_field
        )
    # the stops did fire: some exits are neither a signal bar's close nor the last mark
    close = df["Close"].to_numpy()
    exit_idx = tr["exit_idx"][closed]
    assert (~exits.to_numpy()[exit_idx]).sum() >= 3
    assert (tr["exit_price"][closed] != close[exit_idx] * (1 - 0.0005)).sum() >= 3
    # exit reasons against vectorbt's fills (its trade records carry no stop type): a
    # signal exit fills at the close less slippage, a take profit at or above the
    # entry close * (1 + tp) (a loss-side level, fixed or trailing, is always below
    # it while the trade is open), anything else is the loss-side stop
    v_exit = theirs["exit_price"].to_numpy()[closed]
    v_idx = theirs["exit_idx"].to_numpy()[closed]
    anchor = close[theirs["entry_idx"].to_numpy()[closed]]
    signal = np.isclose(v_exit, close[v_idx] * (1 - 0.0005), rtol=1e-12, atol=0.0)
    tp = stops.get("tp_stop")
    profit = v_exit >= anchor * (1 + tp) * (1 - 1e-12) if tp else np.zeros(len(v_exit), bool)
    loss = "trailing_stop" if "trail_stop" in stops else "stop_loss"
    expected = np.where(signal, "signal", np.where(profit, "take_profit", loss))
    reasons = np.array([EXIT_REASONS[c] for c in tr["exit_reason"]])
    np.testing.assert_array_equal(reasons[closed], expected)
    assert (reasons[~closed] == "end").all()


def test_stop_grid_total_returns_equal_vectorbt(sp500: pd.DataFrame) -> None:
    """A 30 x 30 sl_stop x tp_stop grid (the benchmark's, smaller) on 2,520 OHLC bars."""
    ohlc = sp500[["Open", "High", "Low", "Close"]].iloc[-2520:]
    sl = np.linspace(0.005, 0.10, 30)
    tp = np.linspace(0.005, 0.20, 30)
    grid = {"short_window": 10, "long_window": 50, "sl_stop": sl, "tp_stop": tp}
    table = sweep(ohlc, "moving_average", grid, fees=0.001)
    entries, exits = st.moving_average(ohlc["Close"], short_window=10, long_window=50)
    pf = vbt.Portfolio.from_signals(
        ohlc["Close"], entries, exits, open=ohlc["Open"], high=ohlc["High"], low=ohlc["Low"],
        sl_stop=np.repeat(sl, 30)[None, :], tp_stop=np.tile(tp, 30)[None, :], fees=0.001,
        size=np.inf,
    )  # fmt: skip
    np.testing.assert_allclose(table["sl_stop"], np.repeat(sl, 30))
    np.testing.assert_allclose(table["total_return"], pf.total_return().to_numpy(), rtol=1e-9)
    counts = pf.trades.records.groupby("col").size().reindex(range(900), fill_value=0)
    np.testing.assert_array_equal(table["total_trades"], counts.to_numpy())
    assert table["total_return"].nunique() > 100  # the levels matter


def test_trailing_stop_grid_equals_vectorbt(sp500: pd.DataFrame) -> None:
    """A 12 x 12 trail_stop x tp_stop grid on the stop-grid fast path (vectorbt
    ``sl_stop`` with ``sl_trail=True``), fees and slippage, 2,520 OHLC bars."""
    ohlc = sp500[["Open", "High", "Low", "Close"]].iloc[-2520:]
    trail = np.linspace(0.005, 0.08, 12)
    tp = np.linspace(0.01, 0.20, 12)
    grid = {"short_window": 10, "long_window": 50, "trail_stop": trail, "tp_stop": tp}
    table = sweep(ohlc, "moving_average", grid, fees=0.001, slippage=0.0005)
    entries, exits = st.moving_average(ohlc["Close"], short_window=10, long_window=50)
    pf = vbt.Portfolio.from_signals(
        ohlc["Close"], entries, exits, open=ohlc["Open"], high=ohlc["High"], low=ohlc["Low"],
        sl_stop=np.tile(trail, 12)[None, :], sl_trail=True, tp_stop=np.repeat(tp, 12)[None, :],
        fees=0.001, slippage=0.0005, size=np.inf, init_cash=100_000.0,
    )  # fmt: skip
    np.testing.assert_allclose(
        table["trail_stop"], np.tile(trail, 12)
    )  # options in ENGINE_GRID order
    np.testing.assert_allclose(table["total_return"], pf.total_return().to_numpy(), rtol=1e-9)
    np.testing.assert_allclose(table["final_equity"], pf.value().iloc[-1].to_numpy(), rtol=1e-9)
    counts = pf.trades.records.groupby("col").size().reindex(range(144), fill_value=0)
    np.testing.assert_array_equal(table["total_trades"], counts.to_numpy())
    assert table["total_return"].nunique() > 50  # the levels matter
