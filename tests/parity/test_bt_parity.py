"""Parity of :func:`quantcore.backtest.rebalance` with ``bt`` (pmorissette/bt).

Mapping: ``every="M"`` is ``bt.algos.RunMonthly()`` (the first bar, then the first
bar of each month); a fixed mapping is ``WeighSpecified``, equal weights are
``WeighEqually``; ``fees=f`` is ``commissions=lambda q, p: abs(q) * p * f``;
``integer_shares`` is ``integer_positions``; slippage ``s`` is the
commission ``|q| p ((1 + s)(1 + f) - 1)`` on buys and ``|q| p (1 - (1 - s)(1 - f))``
on sells (the same cash for the same units). bt prepends a day holding the
initial capital (dropped here), and ``RunMonthly`` never runs on the last bar, so
the data end on the last bar of a month.
"""

from __future__ import annotations

import bt  # the dev extra's oracle: these tests never skip
import numpy as np
import pandas as pd
import pytest

from quantcore.backtest import rebalance


@pytest.fixture(scope="module")
def panel(close_panel: pd.DataFrame) -> pd.DataFrame:
    # S&P 500, NASDAQ (arch.data) and GOOG (backtesting.test), 2004-08-19 .. 2013-02-28
    return close_panel.dropna().loc[:"2013-02-28"]


def _bt_run(
    panel: pd.DataFrame, weigh: object, fees: float, slippage: float, integer: bool = False
) -> object:
    def commission(q: float, p: float) -> float:
        rate = (1 + slippage) * (1 + fees) - 1 if q > 0 else 1 - (1 - slippage) * (1 - fees)
        return abs(q) * p * rate

    strategy = bt.Strategy(
        "s", [bt.algos.RunMonthly(), bt.algos.SelectAll(), weigh, bt.algos.Rebalance()]
    )
    test = bt.Backtest(
        strategy, panel, initial_capital=100_000.0, commissions=commission,
        integer_positions=integer, progress_bar=False,
    )  # fmt: skip
    bt.run(test)
    return test.strategy


CASES = [
    ("equal", 0.0, 0.0),
    ("equal", 0.001, 0.0),
    ("equal", 0.0005, 0.0002),
    ("60/40", 0.0, 0.0),
    ("60/40", 0.002, 0.0),
    ("60/40", 0.001, 0.0005),
]


@pytest.mark.parametrize(("kind", "fees", "slippage"), CASES)
def test_monthly_rebalance_equals_bt(
    panel: pd.DataFrame, kind: str, fees: float, slippage: float
) -> None:
    if kind == "equal":
        weigh, weights = bt.algos.WeighEqually(), np.full(3, 1 / 3)
    else:
        weigh = bt.algos.WeighSpecified(SP500=0.6, NASDAQ=0.4)
        weights = {"SP500": 0.6, "NASDAQ": 0.4}
    theirs = _bt_run(panel, weigh, fees, slippage)
    ours = rebalance(panel, weights, every="M", fees=fees, slippage=slippage)
    their_equity = theirs.values.iloc[1:]
    assert their_equity.index.equals(ours.equity.index)
    np.testing.assert_allclose(ours.equity.to_numpy(), their_equity.to_numpy(), rtol=1e-9)
    their_pos = theirs.positions.iloc[1:].reindex(columns=panel.columns, fill_value=0.0)
    np.testing.assert_allclose(ours.positions.to_numpy(), their_pos.to_numpy(), rtol=1e-9)
    # bt books commissions (our fees and slippage) in its ``fees`` series
    np.testing.assert_allclose(
        ours.costs.to_numpy(), theirs.fees.iloc[1:].to_numpy(), rtol=1e-9, atol=1e-9
    )
    n_months = panel.index.to_period("M").nunique()
    assert ours.total_trades >= n_months
    assert ours.total_return == pytest.approx(their_equity.iloc[-1] / 100_000.0 - 1, rel=1e-9)


@pytest.mark.parametrize("fees", [0.0, 0.001])
def test_whole_shares_equal_bt(panel: pd.DataFrame, fees: float) -> None:
    # bt floors buys and sells whole units so that the cash raised covers the sale
    theirs = _bt_run(panel, bt.algos.WeighEqually(), fees, 0.0, integer=True)
    ours = rebalance(panel, np.full(3, 1 / 3), every="M", fees=fees, integer_shares=True)
    their_pos = theirs.positions.iloc[1:].reindex(columns=panel.columns, fill_value=0.0)
    np.testing.assert_array_equal(ours.positions.to_numpy(), their_pos.to_numpy())
    np.testing.assert_allclose(ours.equity.to_numpy(), theirs.values.iloc[1:].to_numpy(), rtol=1e-9)
