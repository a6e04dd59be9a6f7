"""rebalance(): schedules, thresholds, dated weights, integer shares and bad input,
against a plain-Python twin of the documented rules (the kernel's logic restated
one asset and one bar at a time)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from quantcore.backtest import BacktestResult, rebalance


def twin(close, targets, candidate, threshold, init, fees, slip, integer):
    """The Notes of :func:`rebalance`, literally: returns equity and positions per bar."""
    n, k = close.shape
    pos = [0.0] * k
    mark = [math.nan] * k
    cash = init
    started = False
    equity, positions = [], []
    for t in range(n):
        for j in range(k):
            if not math.isnan(close[t][j]):
                mark[j] = close[t][j]
        value = [pos[j] * mark[j] if pos[j] else 0.0 for j in range(k)]
        eq = cash + sum(value)
        if candidate[t] and eq > 0:
            drift = max(abs(value[j] / eq - targets[t][j]) for j in range(k))
            if not started or threshold is None or drift > threshold:
                started = True
                amount = [
                    targets[t][j] * eq - value[j] if not math.isnan(close[t][j]) else 0.0
                    for j in range(k)
                ]
                for j in range(k):
                    if amount[j] < 0 and pos[j] > 0:
                        fill = close[t][j] * (1 - slip)
                        units = pos[j] if targets[t][j] == 0 else -amount[j] / (fill * (1 - fees))
                        if integer and targets[t][j] != 0:
                            units = math.ceil(units)
                        units = min(units, pos[j])
                        cash += units * fill * (1 - fees)
                        pos[j] -= units
                for j in range(k):
                    if amount[j] > 0:
                        fill = close[t][j] * (1 + slip)
                        units = min(amount[j], cash) / (fill * (1 + fees))
                        if integer:
                            units = math.floor(units)
                        if units > 0:
                            cash -= units * fill * (1 + fees)
                            pos[j] += units
        equity.append(cash + sum(pos[j] * mark[j] if pos[j] else 0.0 for j in range(k)))
        positions.append(list(pos))
    return np.array(equity), np.array(positions)


@pytest.fixture(scope="module")
def prices() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    idx = pd.bdate_range("2021-01-01", periods=300)
    values = 50.0 * np.exp(np.cumsum(rng.normal(0.0003, 0.015, (300, 4)), axis=0))
    return pd.DataFrame(values, index=idx, columns=["A", "B", "C", "D"])


def _check(res: BacktestResult, prices: pd.DataFrame, targets, candidate, threshold=None,
           fees=0.0, slip=0.0, integer=False, init=100_000.0) -> None:  # fmt: skip
    eq, pos = twin(
        prices.to_numpy(), np.asarray(targets), candidate, threshold, init, fees, slip, integer
    )
    np.testing.assert_allclose(res.equity.to_numpy(), eq, rtol=1e-12)
    np.testing.assert_allclose(res.positions.to_numpy(), pos, rtol=1e-12, atol=1e-12)


def _first_of(prices: pd.DataFrame, alias: str) -> np.ndarray:
    codes = prices.index.to_period(alias).asi8
    return np.r_[True, codes[1:] != codes[:-1]]


def test_monthly_equal_weight_with_costs(prices: pd.DataFrame) -> None:
    res = rebalance(prices, [0.25] * 4, every="ME", fees=0.001, slippage=0.0005)
    targets = np.full(prices.shape, 0.25)
    _check(res, prices, targets, _first_of(prices, "M"), fees=0.001, slip=0.0005)
    # 14 rebalances of 4 assets (the first buys 4)
    assert res.total_trades == 4 * 14
    assert res.turnover.index.equals(prices.index)
    assert (res.costs > 0).sum() == 14


def test_weekly_quarterly_and_bar_count_schedules(prices: pd.DataFrame) -> None:
    w = {"A": 0.5, "C": 0.3}
    targets = np.tile([0.5, 0.0, 0.3, 0.0], (300, 1))
    for every, cand in [
        ("W-FRI", _first_of(prices, "W-FRI")),
        ("Q", _first_of(prices, "Q")),
        (21, np.arange(300) % 21 == 0),
    ]:
        _check(rebalance(prices, w, every=every), prices, targets, cand)


def test_buy_and_hold_without_schedule(prices: pd.DataFrame) -> None:
    res = rebalance(prices, {"B": 1.0}, initial_capital=1_000.0)
    assert res.total_trades == 1
    np.testing.assert_allclose(res.equity.to_numpy(), 1_000.0 * prices["B"] / prices["B"].iloc[0])


def test_threshold_checks_every_bar_or_the_schedule(prices: pd.DataFrame) -> None:
    targets = np.tile([0.4, 0.3, 0.2, 0.1], (300, 1))
    res = rebalance(prices, [0.4, 0.3, 0.2, 0.1], threshold=0.02, fees=0.001)
    _check(res, prices, targets, np.ones(300, dtype=bool), threshold=0.02, fees=0.001)
    every_bar = rebalance(prices, [0.4, 0.3, 0.2, 0.1], every=1, fees=0.001)
    assert 4 < res.total_trades < every_bar.total_trades
    monthly = rebalance(prices, [0.4, 0.3, 0.2, 0.1], every="M", threshold=0.02)
    _check(monthly, prices, targets, _first_of(prices, "M"), threshold=0.02)


def test_dated_weights_frame(prices: pd.DataFrame) -> None:
    # a row on a holiday applies on the next bar; NaN and absent columns weigh 0
    rows = pd.DataFrame(
        {"A": [0.5, np.nan, 0.2], "B": [0.5, 0.7, 0.2], "D": [0.0, 0.3, 0.6]},
        index=pd.to_datetime(["2021-01-01", "2021-03-06", "2021-07-15"]),
    )
    res = rebalance(prices, rows, fees=0.002)
    targets = np.zeros(prices.shape)
    bars = prices.index.searchsorted(rows.index)
    assert prices.index[bars[1]] == pd.Timestamp("2021-03-08")
    cand = np.zeros(300, dtype=bool)
    cand[bars] = True
    filled = rows.reindex(columns=prices.columns).fillna(0.0).to_numpy()
    for i, b in enumerate(bars):
        targets[b:] = filled[i]
    _check(res, prices, targets, cand, fees=0.002)
    assert res.positions["A"].iloc[bars[1]] == 0.0  # sold out when its weight went to 0


def test_integer_shares(prices: pd.DataFrame) -> None:
    res = rebalance(prices, [0.3, 0.3, 0.2, 0.2], every="M", integer_shares=True,
                    fees=0.001, initial_capital=10_000.0)  # fmt: skip
    _check(res, prices, np.tile([0.3, 0.3, 0.2, 0.2], (300, 1)), _first_of(prices, "M"),
           fees=0.001, integer=True, init=10_000.0)  # fmt: skip
    pos = res.positions.to_numpy()
    assert (pos == np.round(pos)).all()


def test_missing_prices_are_not_traded(prices: pd.DataFrame) -> None:
    p = prices.copy()
    p.iloc[:30, 2] = np.nan  # C lists late: its share stays in cash until a rebalance after
    res = rebalance(p, [0.25] * 4, every="M")
    _check(res, p, np.full(p.shape, 0.25), _first_of(p, "M"))
    assert res.positions["C"].iloc[:30].eq(0.0).all()
    assert res.positions["C"].iloc[-1] > 0


def test_arrays_in_arrays_out(prices: pd.DataFrame) -> None:
    res = rebalance(prices.to_numpy(), [0.5, 0.5, 0.0, 0.0], every=5)
    framed = rebalance(prices, [0.5, 0.5, 0.0, 0.0], every=5)
    assert isinstance(res.equity, np.ndarray) and isinstance(res.positions, np.ndarray)
    np.testing.assert_array_equal(res.equity, framed.equity.to_numpy())
    np.testing.assert_array_equal(res.turnover, framed.turnover.to_numpy())
    one = rebalance(prices["A"], {"A": 1.0}, every="M")
    assert isinstance(one.positions, pd.Series)


def test_turnover_and_costs(prices: pd.DataFrame) -> None:
    res = rebalance(prices, {"A": 1.0}, fees=0.01)
    # all in on the first bar: traded 100,000 / 1.01 at market, fee 1% of it
    assert res.costs.iloc[0] == pytest.approx(100_000.0 / 1.01 * 0.01, rel=1e-12)
    assert res.turnover.iloc[0] == pytest.approx(1 / 1.01, rel=1e-12)
    assert res.turnover.iloc[1:].eq(0.0).all()
    assert math.isnan(res.win_rate) and len(res.trades) == 0


@pytest.mark.parametrize(
    ("weights", "kwargs", "match"),
    [
        ({"A": 0.7, "B": 0.4}, {}, "sum to at most 1"),
        ({"A": -0.1}, {}, "must be >= 0"),
        ({"Z": 0.5}, {}, "not in prices"),
        ([0.5, 0.5], {}, "one entry per asset"),
        ([np.nan, 0.0, 0.0, 0.0], {}, "must be finite"),
        ({"A": "x"}, {}, "must be numbers"),
        ({"A": 1.0}, {"every": "fortnight"}, "not a pandas period alias"),
        ({"A": 1.0}, {"every": 0}, "every must be >= 1"),
        ({"A": 1.0}, {"every": 2.5}, "period alias such as 'M' or a bar count"),
        ({"A": 1.0}, {"threshold": -0.1}, "threshold must be finite and >= 0"),
        ({"A": 1.0}, {"fees": 1.0}, "fees is a fraction"),
        ({"A": 1.0}, {"slippage": -0.01}, "slippage must be finite"),
        ({"A": 1.0}, {"initial_capital": 0}, "initial_capital must be finite and > 0"),
        ({"A": 1.0}, {"integer_shares": 1}, "integer_shares must be True or False"),
    ],
)
def test_bad_input(prices: pd.DataFrame, weights, kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        rebalance(prices, weights, **kwargs)


def test_bad_prices_and_indexes(prices: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="finite and > 0"):
        rebalance(prices * -1.0, [0.25] * 4)
    with pytest.raises(ValueError, match="needs prices with a DatetimeIndex"):
        rebalance(prices.to_numpy(), [0.25] * 4, every="M")
    with pytest.raises(ValueError, match="need prices with an index"):
        rebalance(prices.to_numpy(), prices.iloc[:1])
    late = pd.DataFrame({"A": [1.0]}, index=[pd.Timestamp("2030-01-01")])
    with pytest.raises(ValueError, match="no row on or before the last bar"):
        rebalance(prices, late)


def test_benchmark_metrics_as_run(prices: pd.DataFrame) -> None:
    from quantcore.backtest import run

    bench = prices["D"].to_numpy()
    ours = rebalance(prices[["A"]], {"A": 1.0}, fees=0.001, benchmark=bench)
    entries = np.zeros(300, dtype=bool)
    entries[0] = True
    theirs = run(prices["A"], entries, np.zeros(300, dtype=bool), fees=0.001, benchmark=bench)
    np.testing.assert_allclose(ours.equity.to_numpy(), theirs.equity.to_numpy(), rtol=1e-12)
    for name in ("benchmark_return", "alpha", "beta"):
        assert getattr(ours, name) == pytest.approx(getattr(theirs, name), rel=1e-9)
    with pytest.raises(ValueError, match="benchmark must be one price series"):
        rebalance(prices, [0.25] * 4, benchmark=bench[:10])
