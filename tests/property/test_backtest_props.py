"""Invariants of the backtest engine on hypothesis-generated prices, signals and costs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from quantcore.backtest import EXIT_REASONS, run

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
    high = np.maximum(open_, close) * np.exp(np.abs(rng.normal(0.0, 0.02, (n, k))))
    low = np.minimum(open_, close) * np.exp(-np.abs(rng.normal(0.0, 0.02, (n, k))))
    lead = draw(hs.integers(0, min(n - 1, 5)))
    if lead and draw(hs.booleans()):
        for a in (close, open_, high, low):
            a[:lead, 0] = np.nan
    p = draw(hs.floats(0.05, 0.6))
    size_type = draw(hs.sampled_from(["percent", "amount", "units", "target_percent"]))
    leverage = draw(hs.sampled_from([1.0, 1.0, 2.0]))
    size = {
        "percent": draw(hs.sampled_from([1.0, 0.5, 0.3])) * leverage,
        "amount": draw(hs.sampled_from([2_000.0, 9_000.0, 25_000.0])),
        "units": draw(hs.sampled_from([3.0, 40.0, 500.0])),
        "target_percent": draw(hs.sampled_from([1.0, 0.4])) * leverage,
    }[size_type]
    stop = hs.one_of(hs.none(), hs.sampled_from([0.01, 0.03, 0.08]))
    return {
        "close": close,
        "open": open_,
        "high": high,
        "low": low,
        "entries": rng.random((n, k)) < p,
        "exits": rng.random((n, k)) < p,
        "fees": draw(hs.sampled_from([0.0, 0.001, 0.01, 0.05])),
        "slippage": draw(hs.sampled_from([0.0, 0.0005, 0.02])),
        "size_type": size_type,
        "size": size,
        "leverage": leverage,
        "borrow_rate": draw(hs.sampled_from([0.0, 0.0, 0.5])),
        "direction": draw(hs.sampled_from(["long", "short", "both"])),
        "integer_shares": draw(hs.booleans()),
        "fill": draw(hs.sampled_from(["close", "next_open"])),
        "sl_stop": draw(stop),
        "tp_stop": draw(stop),
        "trail_stop": draw(stop),
        "time_stop": draw(hs.one_of(hs.none(), hs.integers(1, 6))),
        "ohlc": draw(hs.booleans()),
    }


def _run(m: dict, **over: object):
    args = {**m, **over}
    prices: object = args["close"]
    if args["ohlc"]:
        prices = {name: args[name] for name in ("open", "high", "low", "close")}
    elif args["fill"] == "next_open":
        prices = {"open": args["open"], "close": args["close"]}
    return run(
        prices, args["entries"], args["exits"], initial_capital=10_000.0, fees=args["fees"],
        slippage=args["slippage"], size_type=args["size_type"], size=args["size"],
        leverage=args["leverage"], borrow_rate=args["borrow_rate"], fill=args["fill"],
        direction=args["direction"], integer_shares=args["integer_shares"],
        sl_stop=args["sl_stop"], tp_stop=args["tp_stop"], trail_stop=args["trail_stop"],
        time_stop=args["time_stop"],
    )  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(markets())
def test_kernel_equals_python_twin(m: dict) -> None:
    res = _run(m)
    entries, exits, fill = m["entries"], m["exits"], m["close"]
    use_open = m["fill"] == "next_open"
    if use_open:  # a signal at t fills at the open of t + 1
        entries = np.vstack([np.zeros_like(entries[:1]), entries[:-1]])
        exits = np.vstack([np.zeros_like(exits[:1]), exits[:-1]])
        fill = m["open"]
    c = m["close"]
    if m["ohlc"]:
        ohlc = (m["open"], m["high"], m["low"])
    elif use_open:  # opens without highs and lows: the bar spans its open and close
        ohlc = (m["open"], np.fmax(m["open"], c), np.fmin(m["open"], c))
    else:
        ohlc = (c, c, c)
    equity, trades = twin.simulate(
        c.tolist(), fill.tolist(), entries.tolist(), exits.tolist(),
        init_cash=10_000.0, fees=m["fees"], slippage=m["slippage"], direction=m["direction"],
        integer_shares=m["integer_shares"], size_type=m["size_type"], size=m["size"],
        leverage=m["leverage"], borrow_per_bar=m["borrow_rate"] / 252.0, use_open=use_open,
        ohlc=tuple(a.tolist() for a in ohlc), sl=m["sl_stop"], tp=m["tp_stop"],
        trail=m["trail_stop"], time_stop=m["time_stop"],
    )  # fmt: skip
    np.testing.assert_allclose(np.asarray(res.equity), equity, rtol=1e-12, atol=1e-9)
    assert len(res.trades) == len(trades) == res.total_trades
    for name in TRADE_FIELDS:
        np.testing.assert_allclose(
            res.trades[name], [t[name] for t in trades], rtol=1e-12, atol=1e-9, err_msg=name
        )
    assert [EXIT_REASONS[c] for c in res.trades["exit_reason"]] == [
        t["exit_reason"] for t in trades
    ]


@settings(max_examples=100, deadline=None)
@given(markets())
def test_costs_never_increase_returns(m: dict) -> None:
    # one asset, long, fractional units: every round trip scales equity by
    # 1 + w * (g - 1) with g, its gross factor, lowered by every cost. (With shared
    # cash or whole units, costs can shift which asset or how many units are bought.)
    m = {**m, "direction": "long", "integer_shares": False, "size_type": "percent",
         "size": min(m["size"], 1.0) if m["size_type"] == "percent" else 1.0, "leverage": 1.0,
         "sl_stop": None, "tp_stop": None, "trail_stop": None, "time_stop": None}  # fmt: skip
    m.update({key: m[key][:, :1] for key in ("close", "open", "high", "low", "entries", "exits")})
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
