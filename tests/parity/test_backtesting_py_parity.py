"""Parity with backtesting.py's SmaCross example on its GOOG data.

How our conventions map onto backtesting.py 0.6 (``Backtest(GOOG, SmaCross,
commission=0.002, finalize_trades=True)``, default cash 10,000):

* SmaCross calls ``position.close(); self.buy()`` when SMA(10) crosses above
  SMA(20) (``crossover``: ``a[-2] < b[-2] and a[-1] > b[-1]``) and the mirror
  image with ``sell()``: our ``moving_average`` entries/exits with
  ``direction="both"`` (entries go long, exits go short, reversing).
* Market orders fill at the next bar's open: ``fill="next_open"``.
* A full-equity order buys ``int(cash / (open * (1 + commission)))`` units after
  the reversal's close: our ``min(size * equity, cash)`` budget with the default
  ``size_type="percent"``, ``size=1`` and ``integer_shares=True``, and ``fees=commission``
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


def _sltp(sl: float, tp: float) -> type:
    """Long-only SmaCross with a bracket: ``buy(sl=close (1 - sl), tp=close (1 + tp))``."""
    from backtesting import Strategy
    from backtesting.lib import crossover
    from backtesting.test import SMA

    class SmaCrossBracket(Strategy):
        def init(self) -> None:
            self.fast = self.I(SMA, self.data.Close, 10)
            self.slow = self.I(SMA, self.data.Close, 20)

        def next(self) -> None:
            close = self.data.Close[-1]
            if crossover(self.fast, self.slow) and not self.position:
                self.buy(sl=close * (1 - sl), tp=close * (1 + tp))
            elif crossover(self.slow, self.fast):
                self.position.close()

    return SmaCrossBracket


@pytest.mark.parametrize(("sl", "tp"), [(0.03, 0.06), (0.05, 0.15), (0.02, 0.03)])
def test_stop_loss_and_take_profit_equal_backtesting_py(
    goog: pd.DataFrame, sl: float, tp: float
) -> None:
    """Where the semantics match: ``trade_on_close=True`` fills the entry at the signal
    bar's close, so the bracket's levels are fractions of our order price and its
    contingent orders are first checked on the next bar, as ours; a stop-market SL and
    a limit TP fill at the level or at a gapping open, as ours."""
    import warnings

    from backtesting import Backtest

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stats = Backtest(
            goog, _sltp(sl, tp), commission=COMMISSION, trade_on_close=True, finalize_trades=True
        ).run()
    theirs = stats._trades
    ours = run_strategy(
        goog, "moving_average", short_window=10, long_window=20, fees=COMMISSION,
        integer_shares=True, initial_capital=10_000.0, sl_stop=sl, tp_stop=tp,
    )  # fmt: skip
    tr = ours.trades
    closed = tr["status"] == TRADE_CLOSED
    assert len(tr) == len(theirs) > 20
    n = int(closed.sum())
    for a, b in [("EntryBar", "entry_idx"), ("ExitBar", "exit_idx"), ("Size", "size")]:
        np.testing.assert_array_equal(theirs[a].to_numpy()[:n], tr[b][closed], err_msg=a)
    for a, b in [("EntryPrice", "entry_price"), ("ExitPrice", "exit_price"), ("PnL", "pnl")]:
        np.testing.assert_allclose(theirs[a].to_numpy()[:n], tr[b][closed], rtol=1e-9, err_msg=a)
    # the bracket fired: exits at a level, not at a signal bar's close
    close = goog["Close"].to_numpy()
    assert (tr["exit_price"][closed] != close[tr["exit_idx"][closed]]).sum() >= 3
    if n == len(tr):
        np.testing.assert_allclose(ours.equity.iloc[-1], stats["Equity Final [$]"], rtol=1e-9)
