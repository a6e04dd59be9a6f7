"""Invariants of the backtest engine on hypothesis-generated prices, signals and costs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from quantcore.backtest import run

_spec = importlib.util.spec_from_file_location(
    "backtest_twin", Path(__file__).parents[1] / "backtest_twin.py"
)
assert _spec is not None and _spec.loader is not None
twin = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("backtest_twin", twin)
_spec.loader.exec_module(twin)

TRADE_FIELDS = ("column", "direction", "status", "entry_idx", "exit_idx", "size",
                "entry_price", "exit_price", "entry_fees", "exit_fees", "pnl")  # fmt: skip


@hs.composite
def markets(draw: hs.DrawFn) -> dict:
    seed = draw(hs.integers(0, 2**32 - 1))
    n = draw(hs.integers(1, 60))
    k = draw(hs.integers(1, 3))
    rng = np.random.default_rng(seed)
    close = 100.0 * np.exp(np.cumsum(rng.normal(0.0, 0.03, (n, k)), axis=0))
    open_ = close * np.exp(rng.normal(0.0, 0.01, (n, k)))
    lead = draw(hs.integers(0, min(n - 1, 5)))
    if lead and draw(hs.booleans()):
        close[:lead, 0] = np.nan
        open_[:lead, 0] = np.nan
    p = draw(hs.floats(0.05, 0.6))
    return {
        "close": close,
        "open": open_,
        "entries": rng.random((n, k)) < p,
        "exits": rng.random((n, k)) < p,
        "fees": draw(hs.sampled_from([0.0, 0.001, 0.01, 0.05])),
        "slippage": draw(hs.sampled_from([0.0, 0.0005, 0.02])),
        "max_size": draw(hs.sampled_from([1.0, 0.5, 0.3])),
        "direction": draw(hs.sampled_from(["long", "short", "both"])),
        "integer_shares": draw(hs.booleans()),
        "fill": draw(hs.sampled_from(["close", "next_open"])),
    }


def _run(m: dict, **over: object):
    args = {**m, **over}
    prices = (
        {"open": args["open"], "close": args["close"]}
        if args["fill"] == "next_open"
        else args["close"]
    )
    return run(
        prices, args["entries"], args["exits"], initial_capital=10_000.0, fees=args["fees"],
        slippage=args["slippage"], max_position_size=args["max_size"], fill=args["fill"],
        direction=args["direction"], integer_shares=args["integer_shares"],
    )  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(markets())
def test_kernel_equals_python_twin(m: dict) -> None:
    res = _run(m)
    entries, exits, fill = m["entries"], m["exits"], m["close"]
    if m["fill"] == "next_open":  # a signal at t fills at the open of t + 1
        entries = np.vstack([np.zeros_like(entries[:1]), entries[:-1]])
        exits = np.vstack([np.zeros_like(exits[:1]), exits[:-1]])
        fill = m["open"]
    equity, trades = twin.simulate(
        m["close"].tolist(), fill.tolist(), entries.tolist(), exits.tolist(),
        init_cash=10_000.0, fees=m["fees"], slippage=m["slippage"], max_size=m["max_size"],
        direction=m["direction"], integer_shares=m["integer_shares"],
    )  # fmt: skip
    np.testing.assert_allclose(np.asarray(res.equity), equity, rtol=1e-12, atol=1e-9)
    assert len(res.trades) == len(trades) == res.total_trades
    for name in TRADE_FIELDS:
        np.testing.assert_allclose(
            res.trades[name], [t[name] for t in trades], rtol=1e-12, atol=1e-9, err_msg=name
        )


@settings(max_examples=100, deadline=None)
@given(markets())
def test_costs_never_increase_returns(m: dict) -> None:
    # one asset, long, fractional units: every round trip scales equity by
    # 1 + w * (g - 1) with g, its gross factor, lowered by every cost. (With shared
    # cash or whole units, costs can shift which asset or how many units are bought.)
    m = {**m, "direction": "long", "integer_shares": False}
    m.update({key: m[key][:, :1] for key in ("close", "open", "entries", "exits")})
    free = _run(m, fees=0.0, slippage=0.0)
    costly = _run(m)
    assert costly.total_return <= free.total_return + 1e-12
    assert costly.total_trades == free.total_trades


@settings(max_examples=50, deadline=None)
@given(markets(), hs.booleans())
def test_no_trade_keeps_equity_constant(m: dict, exits_only: bool) -> None:
    none = np.zeros_like(m["entries"])
    res = _run(
        m, entries=none, exits=m["exits"] if exits_only and m["direction"] == "long" else none
    )
    np.testing.assert_array_equal(np.asarray(res.equity), 10_000.0)
    assert res.total_trades == 0 and len(res.trades) == 0
    assert res.total_return == 0.0 and res.max_drawdown == 0.0 and res.exposure == 0.0
    assert np.isnan(res.sharpe_ratio) and np.isnan(res.win_rate)


@pytest.mark.parametrize("direction", ["long", "short", "both"])
def test_entry_and_exit_on_the_same_bar_cancel(direction: str) -> None:
    close = np.array([10.0, 11.0, 12.0, 13.0])
    both = np.array([True, True, False, False])
    res = run(close, both, both, direction=direction)
    assert res.total_trades == 0
