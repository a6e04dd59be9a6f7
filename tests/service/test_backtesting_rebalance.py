"""The ``rebalance`` strategy type over HTTP: target weights per asset in ``parameters``.

Results must equal ``quantcore.backtest.rebalance`` on the same closes (the
simulated market's daily bars, carried forward) with the same options.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

import quantcore as qc
from tests.service.conftest import Api, fixed_market


def _closes(symbols: list[str], start: str, end: str) -> pd.DataFrame:
    market = fixed_market()
    cols = {}
    for s in symbols:
        bars = market.history(s, dt.date.fromisoformat(start), dt.date.fromisoformat(end))
        cols[s] = pd.Series(
            bars["close"].to_numpy(), index=bars.index.tz_localize(None).normalize()
        )
    return pd.DataFrame(cols).sort_index().ffill()


def _expected(symbols, weights, start, end, **options) -> qc.backtest.BacktestResult:
    prices = _closes(symbols, start, end)
    bench = _closes(["SPY"], start, end)["SPY"].reindex(prices.index).ffill()
    return qc.backtest.rebalance(prices, weights, benchmark=bench.to_numpy(), **options)


def _same(result: dict, res: qc.backtest.BacktestResult) -> None:
    assert result["total_trades"] == res.total_trades
    for name in ("total_return", "max_drawdown", "benchmark_return", "sharpe_ratio", "beta"):
        assert abs(float(result[name]) - getattr(res, name)) <= 1e-4, name
    assert result["win_rate"] is None and result["profit_factor"] is None
    assert result["final_value"] == f"{np.asarray(res.equity)[-1]:.2f}"


def test_listed_with_defaults(api: Api) -> None:
    _, h = api.user()
    types = api.client.get("/api/backtesting/strategy-types/", headers=h).json()
    row = next(t for t in types if t["strategy_type"] == "rebalance")
    assert row == {
        "strategy_type": "rebalance",
        "parameters": {"weights": None, "every": "M", "threshold": None},
        "required": [],
    }


def test_quick_rebalance_equals_quantcore(api: Api) -> None:
    _, h = api.user()
    body = {
        "strategy_type": "rebalance",
        "asset_symbols": ["spy", "QQQ", "XOM"],
        "start_date": "2021-01-01",
        "end_date": "2024-06-30",
        "initial_capital": "250000",
        "parameters": {"weights": {"SPY": 0.5, "qqq": 0.3, "XOM": 0.2}, "every": "Q"},
        "transaction_costs": "0.001",
        "slippage": "0.0005",
    }
    r = api.client.post("/api/backtesting/quick-backtest/", json=body, headers=h)
    assert r.status_code == 201, r.text
    q = r.json()
    assert q["status"] == "completed", q
    res = _expected(
        ["SPY", "QQQ", "XOM"], {"SPY": 0.5, "QQQ": 0.3, "XOM": 0.2}, "2021-01-01", "2024-06-30",
        every="Q", fees=0.001, slippage=0.0005, initial_capital=250_000.0,
    )  # fmt: skip
    _same(q["result"], res)
    detail = api.client.get(f"/api/backtesting/backtests/{q['backtest_id']}/", headers=h).json()
    assert detail["trades"] == []
    curve = [float(p["equity"]) for p in detail["equity_curve"]]
    np.testing.assert_allclose(curve, np.asarray(res.equity), atol=0.006)


def test_stored_strategy_equal_weights_and_threshold(api: Api) -> None:
    _, h = api.user()
    body = {
        "name": "EW drift",
        "strategy_type": "rebalance",
        "parameters": {"every": None, "threshold": 0.05},
        "initial_capital": "100000",
        "asset_symbols": ["AAPL", "MSFT"],
    }
    r = api.client.post("/api/backtesting/strategies/", json=body, headers=h)
    assert r.status_code == 201, r.text
    s = r.json()
    assert s["parameters"] == {"weights": None, "every": None, "threshold": 0.05}
    b = api.client.post(
        "/api/backtesting/backtests/",
        json={
            "strategy": s["id"],
            "name": "b",
            "start_date": "2020-01-01",
            "end_date": "2023-12-31",
            "transaction_costs": "0.002",
        },
        headers=h,
    ).json()
    run = api.client.post(f"/api/backtesting/backtests/{b['id']}/run/", headers=h).json()
    assert run["status"] == "completed", run
    res = _expected(["AAPL", "MSFT"], {"AAPL": 0.5, "MSFT": 0.5}, "2020-01-01", "2023-12-31",
                    threshold=0.05, fees=0.002)  # fmt: skip
    _same(run["result"], res)
    # changing the assets re-checks the weights against them
    r = api.client.put(
        f"/api/backtesting/strategies/{s['id']}/",
        json={"parameters": {"weights": {"AAPL": 1.0}}, "asset_symbols": ["MSFT"]},
        headers=h,
    )
    assert r.status_code == 400
    assert r.json()["details"] == {"field": "parameters.weights.AAPL", "code": "invalid_choice"}


@pytest.mark.parametrize(
    ("parameters", "field", "code"),
    [
        ({"weights": {"NOPE": 0.5}}, "parameters.weights.NOPE", "invalid_choice"),
        ({"weights": {"SPY": -0.1}}, "parameters.weights.SPY", "min_value"),
        ({"weights": {"SPY": "a lot"}}, "parameters.weights.SPY", "invalid"),
        ({"weights": {"SPY": 0.7, "QQQ": 0.4}}, "parameters.weights", "max_value"),
        ({"weights": {}}, "parameters.weights", "min_length"),
        ({"weights": [0.5, 0.5]}, "parameters.weights", "invalid"),
        ({"every": "fortnight"}, "parameters.every", "invalid_choice"),
        ({"every": 0}, "parameters.every", "min_value"),
        ({"every": 2.5}, "parameters.every", "invalid"),
        ({"threshold": 1.5}, "parameters.threshold", "max_value"),
        ({"threshold": -0.01}, "parameters.threshold", "min_value"),
        ({"window": 3}, "parameters.window", "unknown_field"),
    ],
)
def test_validation(api: Api, parameters: dict, field: str, code: str) -> None:
    _, h = api.user()
    body = {
        "name": "R",
        "strategy_type": "rebalance",
        "parameters": parameters,
        "asset_symbols": ["SPY", "QQQ"],
    }
    r = api.client.post("/api/backtesting/strategies/", json=body, headers=h)
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "validation_error"
    assert r.json()["details"] == {"field": field, "code": code}, r.text
    quick = {**body, "start_date": "2022-01-01", "end_date": "2022-12-31"}
    del quick["name"]
    r = api.client.post("/api/backtesting/quick-backtest/", json=quick, headers=h)
    assert r.status_code == 400 and r.json()["details"] == {"field": field, "code": code}
