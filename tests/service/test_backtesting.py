"""Backtesting over HTTP: strategies CRUD and validation, backtests, runs, quick backtests.

Results must equal ``quantcore.backtest.run_strategy`` on the same closes (the
simulated market's daily bars) with the same options.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

import quantcore as qc
from tests.service.conftest import Api, fixed_market

MA = {"short_window": 10, "long_window": 40}


def _strategy(api: Api, h: dict[str, str], **overrides: object) -> dict:
    body = {
        "name": "MA",
        "strategy_type": "moving_average",
        "parameters": MA,
        "initial_capital": "50000",
        "max_position_size": "0.5",
        "asset_symbols": ["aapl"],
        **overrides,
    }
    r = api.client.post("/api/backtesting/strategies/", json=body, headers=h)
    assert r.status_code == 201, r.text
    return r.json()


def _backtest(api: Api, h: dict[str, str], sid: int, **overrides: object) -> dict:
    body = {
        "strategy": sid,
        "name": "bt",
        "start_date": "2020-01-01",
        "end_date": "2024-12-31",
        "benchmark_symbol": "SPY",
        "transaction_costs": "0.001",
        "slippage": "0.0005",
        **overrides,
    }
    r = api.client.post("/api/backtesting/backtests/", json=body, headers=h)
    assert r.status_code == 201, r.text
    return r.json()


def _closes(symbols: list[str], start: str, end: str) -> pd.DataFrame:
    market = fixed_market()
    cols = {}
    for s in symbols:
        bars = market.history(s, dt.date.fromisoformat(start), dt.date.fromisoformat(end))
        cols[s] = pd.Series(
            bars["close"].to_numpy(), index=bars.index.tz_localize(None).normalize()
        )
    return pd.DataFrame(cols).sort_index().ffill()


def _expected(
    symbols, start, end, strategy, params, *, capital, fees, slippage, size, benchmark="SPY"
):
    prices = _closes(symbols, start, end)
    bench = _closes([benchmark], start, end)[benchmark].reindex(prices.index).ffill()
    return qc.backtest.run_strategy(
        prices if len(symbols) > 1 else prices.iloc[:, 0],
        strategy,
        **params,
        initial_capital=capital,
        fees=fees,
        slippage=slippage,
        size=size,
        benchmark=bench.to_numpy(),
    ), prices.index


def _check_metrics(result: dict, res: qc.backtest.BacktestResult) -> None:
    assert isinstance(result["total_trades"], int) and result["total_trades"] == res.total_trades
    for name, tol in (
        ("total_return", 1e-6),
        ("annualized_return", 1e-6),
        ("max_drawdown", 1e-6),
        ("win_rate", 1e-6),
        ("sharpe_ratio", 1e-4),
        ("benchmark_return", 1e-6),
        ("beta", 1e-4),
    ):
        value = getattr(res, name)
        if np.isnan(value):
            assert result[name] is None, name
        else:
            assert isinstance(result[name], str) and abs(float(result[name]) - value) <= tol, name
    assert result["final_value"] == f"{np.asarray(res.equity)[-1]:.2f}"


def test_strategy_crud(api: Api) -> None:
    _, h = api.user()
    s = _strategy(api, h, description="crossover")
    assert set(s) == {
        "id",
        "name",
        "strategy_type",
        "description",
        "parameters",
        "initial_capital",
        "max_position_size",
        "asset_symbols",
        "created_at",
        "updated_at",
    }
    assert (s["asset_symbols"], s["initial_capital"], s["max_position_size"]) == (
        ["AAPL"],
        "50000.00",
        "0.50",
    )
    assert s["parameters"] == {**MA, "ma_type": "sma"}
    got = api.client.get(f"/api/backtesting/strategies/{s['id']}/", headers=h).json()
    assert got == s
    _strategy(api, h, name="second", strategy_type="buy_hold", parameters={})
    page = api.client.get("/api/backtesting/strategies/?limit=1", headers=h).json()
    assert page["count"] == 2 and page["results"][0]["name"] == "second" and page["next"]
    r = api.client.put(
        f"/api/backtesting/strategies/{s['id']}/",
        json={"parameters": {"short_window": 5, "long_window": 20, "ma_type": "ema"}},
        headers=h,
    )
    assert r.status_code == 200 and r.json()["parameters"] == {
        "short_window": 5,
        "long_window": 20,
        "ma_type": "ema",
    }
    assert r.json()["name"] == "MA"
    _, other = api.user()
    assert (
        api.client.get(f"/api/backtesting/strategies/{s['id']}/", headers=other).status_code == 404
    )
    assert (
        api.client.put(
            f"/api/backtesting/strategies/{s['id']}/", json={"name": "x"}, headers=other
        ).status_code
        == 404
    )
    assert (
        api.client.delete(f"/api/backtesting/strategies/{s['id']}/", headers=other).status_code
        == 404
    )
    assert api.client.get("/api/backtesting/strategies/", headers=other).json()["count"] == 0
    assert (
        api.client.delete(f"/api/backtesting/strategies/{s['id']}/", headers=h).status_code == 204
    )
    assert api.client.get(f"/api/backtesting/strategies/{s['id']}/", headers=h).status_code == 404
    assert api.client.get("/api/backtesting/strategies/").status_code == 401
    types = {
        t["strategy_type"]: t
        for t in api.client.get("/api/backtesting/strategy-types/", headers=h).json()
    }
    assert set(types) == set(qc.backtest.STRATEGIES) | {"rebalance"}  # target weights
    assert types["moving_average"]["required"] == ["short_window", "long_window"]
    # the API keeps momentum's lookback, which the library calls window
    assert types["momentum"]["parameters"] == {"lookback": 20, "threshold": 0.0}
    assert types["momentum"]["required"] == ["lookback", "threshold"]


@pytest.mark.parametrize(
    "overrides,field,code",
    [
        ({"strategy_type": "martingale"}, "strategy_type", "invalid_choice"),
        ({"parameters": {"short_window": 10}}, "parameters.long_window", "required"),
        (
            {"parameters": {"short_window": 50, "long_window": 20}},
            "parameters.long_window",
            "min_value",
        ),
        (
            {"parameters": {"short_window": 0, "long_window": 20}},
            "parameters.short_window",
            "min_value",
        ),
        (
            {"parameters": {"short_window": "ten", "long_window": 20}},
            "parameters.short_window",
            "invalid",
        ),
        (
            {"parameters": {"short_window": 5, "long_window": 20_000}},
            "parameters.long_window",
            "max_value",
        ),
        ({"parameters": {**MA, "ma_type": "wma"}}, "parameters.ma_type", "invalid_choice"),
        ({"parameters": {**MA, "speed": 3}}, "parameters.speed", "unknown_field"),
        (
            {
                "strategy_type": "rsi",
                "parameters": {"window": 14, "oversold": 30, "overbought": 170},
            },
            "parameters.overbought",
            "max_value",
        ),
        (
            {"strategy_type": "mean_reversion", "parameters": {"window": 20, "num_std": -1}},
            "parameters.num_std",
            "min_value",
        ),
        ({"asset_symbols": ["AAPL", "NOPE"]}, "asset_symbols[1]", "not_found"),
        ({"asset_symbols": []}, "asset_symbols", "min_length"),
        ({"initial_capital": "0"}, "initial_capital", "min_value"),
        ({"max_position_size": "1.5"}, "max_position_size", "max_value"),
        ({"name": ""}, "name", "min_length"),
    ],
)
def test_strategy_validation(api: Api, overrides: dict, field: str, code: str) -> None:
    _, h = api.user()
    body = {
        "name": "S",
        "strategy_type": "moving_average",
        "parameters": MA,
        "asset_symbols": ["SPY"],
        **overrides,
    }
    r = api.client.post("/api/backtesting/strategies/", json=body, headers=h)
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "validation_error"
    assert r.json()["details"] == {"field": field, "code": code}, r.text


def test_backtest_run_equals_quantcore(api: Api) -> None:
    _, h = api.user()
    s = _strategy(api, h)
    b = _backtest(api, h, s["id"])
    assert (b["status"], b["result"], b["execution_time"], b["strategy"]) == (
        "pending",
        None,
        None,
        s["id"],
    )
    assert (b["transaction_costs"], b["slippage"]) == ("0.001", "0.0005")
    r = api.client.post(f"/api/backtesting/backtests/{b['id']}/run/", headers=h)
    assert r.status_code == 200, r.text
    run = r.json()
    assert set(run) == {"status", "result", "execution_time", "error"}
    assert run["status"] == "completed" and run["error"] is None
    assert isinstance(run["execution_time"], float) and 0 < run["execution_time"] < 60
    res, index = _expected(
        ["AAPL"],
        "2020-01-01",
        "2024-12-31",
        "moving_average",
        MA,
        capital=50000,
        fees=0.001,
        slippage=0.0005,
        size=0.5,
    )
    _check_metrics(run["result"], res)
    detail = api.client.get(f"/api/backtesting/backtests/{b['id']}/", headers=h).json()
    assert detail["status"] == "completed" and detail["result"] == run["result"]
    curve = detail["equity_curve"]
    assert [p["date"] for p in curve] == [d.date().isoformat() for d in index]
    assert [p["equity"] for p in curve] == [f"{x:.2f}" for x in np.asarray(res.equity)]
    trades = res.trades
    assert len(detail["trades"]) == trades.size > 0
    for t, e in zip(detail["trades"], trades, strict=True):
        assert t["entry_date"] == index[e["entry_idx"]].date().isoformat()
        assert t["pnl"] == f"{e['pnl']:.2f}" and t["symbol"] == "AAPL"
        assert t["status"] == ("closed" if e["exit_idx"] >= 0 else "open")
    rerun = api.client.post(f"/api/backtesting/backtests/{b['id']}/run/", headers=h).json()
    assert rerun["result"] == run["result"]


def test_backtest_ownership_and_errors(api: Api) -> None:
    _, h = api.user()
    _, other = api.user()
    mine = _strategy(api, h)
    r = api.client.post(
        "/api/backtesting/backtests/",
        headers=other,
        json={
            "strategy": mine["id"],
            "name": "steal",
            "start_date": "2020-01-01",
            "end_date": "2021-01-01",
        },
    )
    assert r.status_code == 404 and r.json()["error"] == "not_found"
    b = _backtest(api, h, mine["id"])
    assert (
        api.client.get(f"/api/backtesting/backtests/{b['id']}/", headers=other).status_code == 404
    )
    assert (
        api.client.post(f"/api/backtesting/backtests/{b['id']}/run/", headers=other).status_code
        == 404
    )
    assert api.client.post("/api/backtesting/backtests/999999/run/", headers=h).status_code == 404
    for overrides, field, code in [
        ({"end_date": "2019-01-01"}, "end_date", "invalid"),
        ({"transaction_costs": "-0.1"}, "transaction_costs", "min_value"),
        ({"slippage": "0.9"}, "slippage", "max_value"),
        ({"benchmark_symbol": "NOPE"}, "benchmark_symbol", "not_found"),
        ({"start_date": "2020-13-01"}, "start_date", "invalid"),
    ]:
        body = {
            "strategy": mine["id"],
            "name": "x",
            "start_date": "2020-01-01",
            "end_date": "2021-01-01",
            **overrides,
        }
        r = api.client.post("/api/backtesting/backtests/", json=body, headers=h)
        assert r.status_code == 400, (overrides, r.text)
        assert r.json()["details"] == {"field": field, "code": code}, r.text


def test_failed_run_and_filters(api: Api) -> None:
    _, h = api.user()
    s = _strategy(api, h)
    early = _backtest(
        api, h, s["id"], start_date="2001-01-01", end_date="2005-01-01"
    )  # before the data
    run = api.client.post(f"/api/backtesting/backtests/{early['id']}/run/", headers=h).json()
    assert run["status"] == "failed" and run["result"] is None
    assert "AAPL" in run["error"] and run["execution_time"] >= 0
    ok = _backtest(api, h, s["id"], start_date="2022-01-01", end_date="2023-01-01")
    api.client.post(f"/api/backtesting/backtests/{ok['id']}/run/", headers=h)
    pending = _backtest(api, h, s["id"])

    def ids(query: str) -> list[int]:
        r = api.client.get(f"/api/backtesting/backtests/?{query}", headers=h)
        assert r.status_code == 200, r.text
        return [x["id"] for x in r.json()["results"]]

    assert ids("") == [pending["id"], ok["id"], early["id"]]
    assert ids("status=failed") == [early["id"]]
    assert ids("status=completed") == [ok["id"]]
    assert ids(f"strategy={s['id']}&status=pending") == [pending["id"]]
    failed = api.client.get(f"/api/backtesting/backtests/{early['id']}/", headers=h).json()
    assert failed["status"] == "failed" and failed["error"] == run["error"]
    assert failed["equity_curve"] == [] and failed["trades"] == []
    r = api.client.get("/api/backtesting/backtests/?status=done", headers=h)
    assert r.status_code == 400 and r.json()["details"] == {
        "field": "status",
        "code": "invalid_choice",
    }


def test_quick_backtest_documented_body(api: Api) -> None:
    _, h = api.user()
    body = {
        "strategy_type": "moving_average",
        "asset_symbols": ["MSFT"],
        "start_date": "2016-01-01",
        "end_date": "2025-12-31",
        "initial_capital": 10000.5,
    }
    r = api.client.post("/api/backtesting/quick-backtest/", json=body, headers=h)
    assert r.status_code == 201, r.text
    q = r.json()
    assert (
        q["status"] == "completed"
        and isinstance(q["backtest_id"], int)
        and isinstance(q["strategy_id"], int)
    )
    defaults = qc.backtest.STRATEGIES["moving_average"].defaults
    res, _ = _expected(
        ["MSFT"],
        "2016-01-01",
        "2025-12-31",
        "moving_average",
        defaults,
        capital=10000.5,
        fees=0.0,
        slippage=0.0,
        size=1.0,
    )
    _check_metrics(q["result"], res)
    stored = api.client.get(f"/api/backtesting/backtests/{q['backtest_id']}/", headers=h).json()
    assert stored["status"] == "completed" and stored["result"] == q["result"]
    strategy = api.client.get(f"/api/backtesting/strategies/{q['strategy_id']}/", headers=h).json()
    assert strategy["parameters"] == defaults and strategy["initial_capital"] == "10000.50"
    bad = api.client.post(
        "/api/backtesting/quick-backtest/", json={**body, "strategy_type": "nope"}, headers=h
    )
    assert bad.status_code == 400 and bad.json()["details"] == {
        "field": "strategy_type",
        "code": "invalid_choice",
    }


def test_quick_backtest_several_assets(api: Api) -> None:
    _, h = api.user()
    params = {"window": 10, "oversold": 35, "overbought": 65}
    body = {
        "strategy_type": "rsi",
        "asset_symbols": ["XOM", "BTC-USD"],
        "start_date": "2023-01-01",
        "end_date": "2024-06-30",
        "initial_capital": "25000",
        "parameters": params,
        "max_position_size": "0.4",
        "transaction_costs": "0.002",
        "benchmark_symbol": "QQQ",
    }
    q = api.client.post("/api/backtesting/quick-backtest/", json=body, headers=h).json()
    assert q["status"] == "completed", q
    res, _ = _expected(
        ["XOM", "BTC-USD"],
        "2023-01-01",
        "2024-06-30",
        "rsi",
        params,
        capital=25000,
        fees=0.002,
        slippage=0.0,
        size=0.4,
        benchmark="QQQ",
    )
    _check_metrics(q["result"], res)
    trades = api.client.get(f"/api/backtesting/backtests/{q['backtest_id']}/", headers=h).json()[
        "trades"
    ]
    assert {t["symbol"] for t in trades} <= {"XOM", "BTC-USD"} and len(trades) == res.trades.size


async def _set_status(db, backtest_id: int, status: str, age: dt.timedelta) -> None:
    from sqlalchemy import update

    from service.db.models import Backtest, utcnow

    async with db.write() as s:
        await s.execute(
            update(Backtest)
            .where(Backtest.id == backtest_id)
            .values(status=status, updated_at=utcnow() - age)
        )


def test_running_backtest_conflicts_until_stale(api: Api) -> None:
    _, h = api.user()
    s = _strategy(api, h)
    b = _backtest(api, h, s["id"], start_date="2022-01-03", end_date="2022-12-30")
    api.call(_set_status, api.db, b["id"], "running", dt.timedelta(seconds=5))
    assert (
        api.client.get(f"/api/backtesting/backtests/{b['id']}/", headers=h).json()["status"]
        == "running"
    )
    r = api.client.post(f"/api/backtesting/backtests/{b['id']}/run/", headers=h)
    assert r.status_code == 409 and r.json()["error"] == "conflict"
    api.call(_set_status, api.db, b["id"], "running", dt.timedelta(minutes=11))  # lost by a restart
    r = api.client.post(f"/api/backtesting/backtests/{b['id']}/run/", headers=h)
    assert r.status_code == 200 and r.json()["status"] == "completed"


def test_backtest_workers_setting_sizes_the_pool(api: Api, api_factory) -> None:
    """``Settings.backtest_workers`` (``QC_BACKTEST_WORKERS``) reaches the pool at startup;
    ``0`` runs backtests in a thread of the server, with the same numbers."""
    from service.backtesting import worker

    try:
        threaded = api_factory(backtest_workers=0)
        assert threaded.settings.backtest_workers == 0 and worker.pool() is None
        _, h = threaded.user()
        body = {
            "strategy_type": "momentum",
            "asset_symbols": ["SPY"],
            "start_date": "2022-01-03",
            "end_date": "2023-12-29",
            "initial_capital": "10000",
            "parameters": {"lookback": 20, "threshold": 0.01},
        }
        q = threaded.client.post("/api/backtesting/quick-backtest/", json=body, headers=h).json()
        assert q["status"] == "completed", q
        res, _ = _expected(  # the wire's lookback is the library's window
            ["SPY"], "2022-01-03", "2023-12-29", "momentum", {"window": 20, "threshold": 0.01},
            capital=10000, fees=0.0, slippage=0.0, size=1.0,
        )  # fmt: skip
        _check_metrics(q["result"], res)
        with pytest.raises(ValueError, match="backtest_workers"):
            worker.configure(-1)
    finally:
        worker.configure(api.settings.backtest_workers)  # the pool is process-wide
    assert worker.pool() is not None
