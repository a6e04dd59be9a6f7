"""Parity with backtesting.py's SmaCross example on its GOOG data.

How our conventions map onto backtesting.py 0.6 (``Backtest(GOOG, SmaCross,
commission=0.002, finalize_trades=True)``, default cash 10,000):

* SmaCross calls ``position.close(); self.buy()`` when SMA(10) crosses above
  SMA(20) (``crossover``: ``a[-2] < b[-2] and a[-1] > b[-1]``) and the mirror
  image with ``sell()``: our ``moving_average`` entries/exits with
  ``direction="both"`` (entries go long, exits go short, reversing).
* Market orders fill at the next bar's open: ``fill="next_open"``.
* A full-equity order buys ``int(cash / (open * (1 + commission)))`` units after
  the reversal's close: our ``min(max_position_size * equity, cash)`` budget with
  ``max_position_size=1`` and ``integer_shares=True``, and ``fees=commission``
  charged on entry and exit value (backtesting.py charges ``size * price * c`` at
  open and at close and nets both out of the trade's PnL, as we do).
* ``finalize_trades=True`` closes the last trade at the last bar's open; we mark
  an open position to market instead and report it as open. Its PnL there is
  ``side * size * (open[-1] - entry) - entry_fees - size * open[-1] * c``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from quantcore._records import TRADE_CLOSED, TRADE_OPEN
from quantcore.backtest import run_strategy

COMMISSION = 0.002


def _smacross() -> type:
    """backtesting.py's README example, verbatim (it is not shipped in 0.6.6)."""
    from backtesting import Strategy
    from backtesting.lib import crossover
    from backtesting.test import SMA

    class SmaCross(Strategy):
        n1 = 10
        n2 = 20

        def init(self) -> None:
            close = self.data.Close
            self.sma1 = self.I(SMA, close, self.n1)
            self.sma2 = self.I(SMA, close, self.n2)

        def next(self) -> None:
            if crossover(self.sma1, self.sma2):
                self.position.close()
                self.buy()
            elif crossover(self.sma2, self.sma1):
                self.position.close()
                self.sell()

    return SmaCross


@pytest.fixture(scope="module")
def theirs(goog: pd.DataFrame) -> pd.DataFrame:
    from backtesting import Backtest

    bt = Backtest(goog, _smacross(), commission=COMMISSION, finalize_trades=True)
    stats = bt.run()
    return stats["_trades"]


def test_smacross_trades_and_pnl(goog: pd.DataFrame, theirs: pd.DataFrame) -> None:
    ours = run_strategy(
        goog, "moving_average", short_window=10, long_window=20, fees=COMMISSION,
        initial_capital=10_000.0, fill="next_open", direction="both", integer_shares=True,
    )  # fmt: skip
    tr = ours.trades
    assert len(tr) == len(theirs) > 50
    assert ours.total_trades == len(theirs)
    np.testing.assert_array_equal(tr["entry_idx"], theirs["EntryBar"].to_numpy())
    np.testing.assert_array_equal(tr["direction"] * tr["size"], theirs["Size"].to_numpy())
    np.testing.assert_allclose(tr["entry_price"], theirs["EntryPrice"].to_numpy(), rtol=1e-12)
    closed = tr["status"] == TRADE_CLOSED
    assert (tr["status"][:-1] == TRADE_CLOSED).all() and tr["status"][-1] == TRADE_OPEN
    np.testing.assert_array_equal(tr["exit_idx"][closed], theirs["ExitBar"].to_numpy()[:-1])
    np.testing.assert_allclose(tr["pnl"][closed], theirs["PnL"].to_numpy()[:-1], rtol=1e-9)
    # the last trade: closed by finalize_trades at the last open on their side
    last = tr[-1]
    last_open = goog["Open"].iloc[-1]
    assert theirs["ExitBar"].iloc[-1] == len(goog) - 1
    pnl = (
        last["direction"] * last["size"] * (last_open - last["entry_price"])
        - last["entry_fees"]
        - last["size"] * last_open * COMMISSION
    )
    np.testing.assert_allclose(pnl, theirs["PnL"].iloc[-1], rtol=1e-9)


def test_smacross_signals_match_crossover(goog: pd.DataFrame) -> None:
    """Our crossover signals equal backtesting.py's ``crossover`` on pandas SMAs."""
    from quantcore.backtest.strategies import moving_average

    e, x = moving_average(goog["Close"], short_window=10, long_window=20)
    fast = goog["Close"].rolling(10).mean().to_numpy()
    slow = goog["Close"].rolling(20).mean().to_numpy()
    up = np.zeros(len(goog), bool)
    down = np.zeros(len(goog), bool)
    up[1:] = (fast[:-1] < slow[:-1]) & (fast[1:] > slow[1:])
    down[1:] = (fast[:-1] > slow[:-1]) & (fast[1:] < slow[1:])
    np.testing.assert_array_equal(e.to_numpy(), up)
    np.testing.assert_array_equal(x.to_numpy(), down)
