"""Backtests and sweeps beside vectorbt and backtesting.py (ratios, never asserted).

* ``backtest: MA sweep 4950 comb x 2520 bars``: every pair of windows 5..104 on
  2,520 daily S&P 500 closes, fees 0.1 % and slippage 0.05 %, returning total
  return, Sharpe and max drawdown per combination. Peer: ``vbt.MA.run_combs`` +
  ``Portfolio.from_signals`` + the three metrics. Quick mode: windows 5..24 (190
  combinations) on 500 bars. quantcore runs its moving-average fast path here
  (long only, all in, fills at the close: one crossing scan per combination and
  O(log n) work per trade); the machine's load hits its two numba threads harder
  than vectorbt's one, so report CPU time per side too when the machine is busy.
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
        name="backtest: SmaCross GOOG (one run)",
        setup=_goog_setup,
        ours=_goog_ours,
        peer=_goog_peer,
        peer_name="backtesting.py",
        goal=100.0,
        goal_text=">= 100x",
    ),
]
