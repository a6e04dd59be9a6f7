"""Stops and sizing in a strategy's ``parameters`` over HTTP: results equal the library's."""

from __future__ import annotations

import pytest

from quantcore.backtest import EXIT_REASONS
from tests.service.conftest import Api
from tests.service.test_backtesting import _check_metrics, _expected

URL = "/api/backtesting/quick-backtest/"


def _body(parameters: dict) -> dict:
    return {
        "strategy_type": "moving_average",
        "asset_symbols": ["MSFT"],
        "start_date": "2018-01-01",
        "end_date": "2024-12-31",
        "initial_capital": "20000",
        "max_position_size": "0.8",
        "transaction_costs": "0.001",
        "parameters": parameters,
    }


def test_quick_backtest_with_stops_and_sizing_equals_run_strategy(api: Api) -> None:
    _, h = api.user()
    cases = [
        {"sl_stop": 0.03, "tp_stop": 0.08},
        {"trail_stop": 0.05, "time_stop": 30},
        {"size_type": "amount", "size": 5000},
        {"size_type": "target_percent", "size": 1.5, "leverage": 2},
    ]
    totals = set()
    for extra in cases:
        params = {"short_window": 10, "long_window": 40, **extra}
        r = api.client.post(URL, json=_body(params), headers=h)
        assert r.status_code == 201, r.text
        q = r.json()
        assert q["status"] == "completed", q
        engine = dict(extra)
        size = engine.pop("size", 0.8)  # else the strategy's max_position_size
        res, _ = _expected(
            ["MSFT"], "2018-01-01", "2024-12-31", "moving_average", MA_PARAMS | engine,
            capital=20000, fees=0.001, slippage=0.0, size=size,
        )  # fmt: skip
        _check_metrics(q["result"], res)
        totals.add(round(res.total_return, 9))
        strategy = api.client.get(
            f"/api/backtesting/strategies/{q['strategy_id']}/", headers=h
        ).json()
        assert strategy["parameters"] == {"ma_type": "sma", **params}  # defaults filled in
    assert len(totals) == len(cases)  # each option changes the run


MA_PARAMS = {"short_window": 10, "long_window": 40}


@pytest.mark.parametrize(
    ("extra", "field", "code"),
    [
        ({"sl_stop": 1.5}, "parameters.sl_stop", "max_value"),
        ({"sl_stop": -0.1}, "parameters.sl_stop", "min_value"),
        ({"tp_stop": "high"}, "parameters.tp_stop", "invalid"),
        ({"time_stop": 2.5}, "parameters.time_stop", "invalid"),
        ({"size_type": "shares"}, "parameters.size_type", "invalid_choice"),
        ({"size_type": "units"}, "parameters.size", "required"),
        ({"size": 3, "leverage": 2}, "parameters.size", "max_value"),
        ({"leverage": 0}, "parameters.leverage", "min_value"),
        ({"stop": 0.1}, "parameters.stop", "unknown_field"),
    ],
)
def test_bad_engine_parameters_are_400_naming_the_field(
    api: Api, extra: dict, field: str, code: str
) -> None:
    _, h = api.user()
    r = api.client.post(URL, json=_body({**MA_PARAMS, **extra}), headers=h)
    assert r.status_code == 400, r.text
    assert r.json()["details"] == {"field": field, "code": code}


def test_trades_are_paginated(api: Api) -> None:
    _, h = api.user()
    body = _body({**MA_PARAMS, "sl_stop": 0.02})
    q = api.client.post(URL, json=body, headers=h).json()
    assert q["status"] == "completed", q
    detail = api.client.get(f"/api/backtesting/backtests/{q['backtest_id']}/", headers=h).json()
    assert len(detail["equity_curve"]) > 1000 and len(detail["trades"]) > 4
    # each trade says what closed it, as the library's records do
    res, _ = _expected(
        ["MSFT"], "2018-01-01", "2024-12-31", "moving_average", {**MA_PARAMS, "sl_stop": 0.02},
        capital=20000, fees=0.001, slippage=0.0, size=0.8,
    )  # fmt: skip
    reasons = [t["exit_reason"] for t in detail["trades"]]
    assert reasons == [EXIT_REASONS[c] for c in res.trades["exit_reason"]]
    assert {"signal", "stop_loss"} <= set(reasons)
    url = f"/api/backtesting/backtests/{q['backtest_id']}/trades/"
    first = api.client.get(url, params={"limit": 3}, headers=h).json()
    assert first["count"] == len(detail["trades"]) and first["previous"] is None
    assert first["results"] == detail["trades"][:3] and first["next"] is not None
    rest = api.client.get(url, params={"limit": 3, "offset": 3}, headers=h).json()
    assert rest["results"] == detail["trades"][3:6]
    assert api.client.get(url, params={"limit": 0}, headers=h).status_code == 400
    missing = api.client.get("/api/backtesting/backtests/999999/trades/", headers=h)
    assert missing.status_code == 404
    _, other = api.user()
    assert api.client.get(url, headers=other).status_code == 404


def test_trade_exit_reason_is_in_the_openapi_document(api: Api) -> None:
    schema = api.client.get("/schema/openapi.json").json()
    trade = schema["components"]["schemas"]["TradeRead"]["properties"]["exit_reason"]
    text = str(trade)
    for name in EXIT_REASONS:
        assert f"'{name}'" in text
    assert "closed the trade" in text
