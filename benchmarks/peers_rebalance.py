"""Target-weight rebalancing beside bt (ratios, never asserted).

* ``rebalance: monthly equal weight 500 assets x 2520 days``: seeded lognormal
  random-walk closes (no 500-asset history ships in a PyPI package), equal
  weights, rebalanced on the first bar of every month, fees 0.1 %. Peer: ``bt``
  with ``RunMonthly``, ``SelectAll``, ``WeighEqually``, ``Rebalance``,
  ``commissions=abs(q) * p * 0.001`` and fractional positions, the mapping the
  parity test (tests/parity/test_bt_parity.py) holds equal to 1e-9; the final
  equities of the two sides are compared once in ``setup``. Quick mode: 50
  assets x 500 days.
* ``walk_forward: MA 4950 comb, 2520 days``: every pair of moving-average windows
  5..104 (4,950 combinations) swept on each 504-day train window of 2,520 daily
  S&P 500 closes (arch.data), the best Sharpe ratio traded on the next 126 days:
  16 windows, fees 0.1 %. No peer runs a walk-forward; the time is reported.
  Quick mode: windows 5..24 (190 combinations) on 1,000 days.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from _harness import Case

from quantcore.backtest import rebalance, walk_forward

FEES = 0.001


def _setup(quick: bool) -> pd.DataFrame:
    n, k = (500, 50) if quick else (2520, 500)
    rng = np.random.default_rng(2026)
    steps = rng.normal(0.0003, 0.02, (n, k))
    index = pd.bdate_range("2010-01-04", periods=n)
    prices = pd.DataFrame(
        50.0 * np.exp(np.cumsum(steps, axis=0)),
        index=index,
        columns=[f"A{j:03d}" for j in range(k)],
    )
    ours = _ours(prices)
    theirs = _bt(prices)
    # bt's RunMonthly never runs on the last bar (we do when it starts a month)
    np.testing.assert_allclose(ours.equity.to_numpy()[:-1], theirs.to_numpy()[1:-1], rtol=1e-9)
    return prices


def _ours(prices: pd.DataFrame) -> Any:
    return rebalance(prices, np.full(prices.shape[1], 1.0 / prices.shape[1]), every="M", fees=FEES)


def _bt(prices: pd.DataFrame) -> Any:
    import bt

    strategy = bt.Strategy(
        "ew",
        [
            bt.algos.RunMonthly(),
            bt.algos.SelectAll(),
            bt.algos.WeighEqually(),
            bt.algos.Rebalance(),
        ],
    )
    test = bt.Backtest(
        strategy, prices, initial_capital=100_000.0, commissions=lambda q, p: abs(q) * p * FEES,
        integer_positions=False, progress_bar=False,
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bt.run(test)
    return test.strategy.values


def _wf_setup(quick: bool) -> dict[str, Any]:
    from arch.data import sp500

    bars = 1000 if quick else 2520
    windows = np.arange(5, 25 if quick else 105)
    return {"close": sp500.load()["Adj Close"].iloc[-bars:], "windows": windows}


def _wf_ours(d: dict[str, Any]) -> Any:
    w = d["windows"]
    grid = {"short_window": w, "long_window": w}
    return walk_forward(d["close"], "moving_average", grid, train=504, test=126, fees=FEES)


CASES: list[Case] = [
    Case(
        name="rebalance: monthly EW 500 assets x 2520 days",
        setup=_setup,
        ours=_ours,
        peer=_bt,
        peer_name="bt",
        goal=100.0,
        goal_text=">= 100x",
        notes="quick: 50 assets x 500 days",
    ),
    Case(
        name="walk_forward: MA 4950 comb, 2520 days, 16 windows",
        setup=_wf_setup,
        ours=_wf_ours,
        peer=None,
        peer_name="-",
        notes="quick: 190 combinations x 1000 days",
    ),
]
