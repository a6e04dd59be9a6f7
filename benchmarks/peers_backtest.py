"""Backtests and sweeps beside vectorbt and backtesting.py (ratios, never asserted).

* ``backtest: MA sweep 4950 comb x 2520 bars``: every pair of windows 5..104 on
  2,520 daily S&P 500 closes, fees 0.1 % and slippage 0.05 %, returning total
  return, Sharpe and max drawdown per combination. Peer: ``vbt.MA.run_combs`` +
  ``Portfolio.from_signals`` + the three metrics. Quick mode: windows 5..24 (190
  combinations) on 500 bars. quantcore runs its moving-average fast path here
  (long only, all in, fills at the close: one crossing scan per combination and
  O(log n) work per trade); the machine's load hits its two numba threads harder
  than vectorbt's one, so report CPU time per side too when the machine is busy.
* ``backtest: stop grid 100x100 sl x tp``: every pair of 100 ``sl_stop`` and 100
  ``tp_stop`` levels (10,000 combinations) on the last 2,520 daily S&P 500 OHLC bars
  (``arch.data.sp500``), MA 10/50 crossover signals, fees 0.1 %, total return per
  combination. Peer: ``Portfolio.from_signals`` with open/high/low and the two stop
  arrays broadcast to 10,000 columns. quantcore computes the signals once, finds
  every (entry signal, distinct level) pair's stop bar once in O(log n) and runs
  each combination in O(1) per trade on those shared lookups
  (``quantcore._kernels.backtest_sweep_stops``).
  Equality of every total return is tests/parity/test_vectorbt_parity.py. Quick
  mode: 20 x 20 levels on 500 bars.
* ``backtest: SmaCross GOOG``: one 10/20 crossover backtest on GOOG, next-open
  fills, long and short, whole shares, commission 0.2 %. Peer: backtesting.py.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from _harness import Case

from quantcore.backtest import run_strategy, sweep
from quantcore.backtest.strategies import moving_average

COSTS = {"fees": 0.001, "slippage": 0.0005}


def _sweep_setup(quick: bool) -> dict[str, Any]:
    from arch.data import sp500

    bars = 500 if quick else 2520
    close = sp500.load()["Adj Close"].iloc[-bars:]
    windows = np.arange(5, 25 if quick else 105)
    return {"close": close, "windows": windows}


def _sweep_ours(d: dict[str, Any]) -> pd.DataFrame:
    w = d["windows"]
    return sweep(d["close"], "moving_average", {"short_window": w, "long_window": w}, **COSTS)[
        ["total_return", "sharpe_ratio", "max_drawdown"]
    ]


def _sweep_vbt(d: dict[str, Any]) -> tuple[Any, Any, Any]:
    import vectorbt as vbt

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast, slow = vbt.MA.run_combs(
            d["close"], window=d["windows"], r=2, short_names=["fast", "slow"]
        )
        entries = fast.ma_crossed_above(slow)
        exits = fast.ma_crossed_below(slow)
        pf = vbt.Portfolio.from_signals(d["close"], entries, exits, size=np.inf, freq="1D", **COSTS)
        return pf.total_return(), pf.sharpe_ratio(), pf.max_drawdown()


def _grid_setup(quick: bool) -> dict[str, Any]:
    from arch.data import sp500

    bars = 500 if quick else 2520
    side = 20 if quick else 100
    ohlc = sp500.load()[["Open", "High", "Low", "Close"]].iloc[-bars:]
    sl = np.linspace(0.005, 0.10, side)
    tp = np.linspace(0.005, 0.20, side)
    entries, exits = moving_average(ohlc["Close"], short_window=10, long_window=50)
    return {"ohlc": ohlc, "sl": sl, "tp": tp, "entries": entries, "exits": exits}


def _grid_ours(d: dict[str, Any]) -> pd.Series:
    grid = {"short_window": 10, "long_window": 50, "sl_stop": d["sl"], "tp_stop": d["tp"]}
    return sweep(d["ohlc"], "moving_average", grid, fees=0.001)["total_return"]


def _grid_vbt(d: dict[str, Any]) -> Any:
    import vectorbt as vbt

    o = d["ohlc"]
    sl = np.repeat(d["sl"], d["tp"].size)[None, :]  # sl-major, like the sweep's rows
    tp = np.tile(d["tp"], d["sl"].size)[None, :]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pf = vbt.Portfolio.from_signals(
            o["Close"], d["entries"], d["exits"], open=o["Open"], high=o["High"], low=o["Low"],
            sl_stop=sl, tp_stop=tp, fees=0.001, size=np.inf, freq="1D",
        )  # fmt: skip
        return pf.total_return()


def _goog_setup(quick: bool) -> pd.DataFrame:
    from backtesting.test import GOOG

    return GOOG.copy()


def _goog_ours(goog: pd.DataFrame) -> Any:
    return run_strategy(
        goog, "moving_average", short_window=10, long_window=20, fees=0.002, initial_capital=10_000.0,
        fill="next_open", direction="both", integer_shares=True,
    )  # fmt: skip


def _goog_peer(goog: pd.DataFrame) -> Any:
    from backtesting import Backtest, Strategy
    from backtesting.lib import crossover
    from backtesting.test import SMA

    class SmaCross(Strategy):
        def init(self) -> None:
            self.sma1 = self.I(SMA, self.data.Close, 10)
            self.sma2 = self.I(SMA, self.data.Close, 20)

        def next(self) -> None:
            if crossover(self.sma1, self.sma2):
                self.position.close()
                self.buy()
            elif crossover(self.sma2, self.sma1):
                self.position.close()
                self.sell()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Backtest(goog, SmaCross, commission=0.002, finalize_trades=True).run()


CASES: list[Case] = [
    Case(
        name="backtest: MA sweep 4950 comb x 2520 bars",
        setup=_sweep_setup,
        ours=_sweep_ours,
        peer=_sweep_vbt,
        peer_name="vectorbt",
        goal=300.0,
        goal_text=">= 300x",
        notes="quick: 190 combinations x 500 bars",
    ),
    Case(
        name="backtest: stop grid 100x100 sl x tp, 2520 OHLC bars",
        setup=_grid_setup,
        ours=_grid_ours,
        peer=_grid_vbt,
        peer_name="vectorbt",
        goal=100.0,
        goal_text=">= 100x",
        notes="quick: 20 x 20 levels x 500 bars",
    ),
    Case(
        name="backtest: SmaCross GOOG (one run)",
        setup=_goog_setup,
        ours=_goog_ours,
        peer=_goog_peer,
        peer_name="backtesting.py",
        goal=100.0,
        goal_text=">= 100x",
    ),
]
