"""Analytics over HTTP: every number equals ``quantcore`` on a plain-Python twin of the value history.

The twin below rebuilds the portfolio's daily value, flows and time-weighted returns
with loops over the simulated market's bars (the method of
``service.analytics.history``); the endpoints must agree with ``quantcore`` run on it.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

import quantcore as qc
from tests.service.conftest import Api, fixed_market

TODAY = dt.date(2026, 11, 20)  # the fixed market clock of the service tests
_PLAN = [  # symbol, type, quantity, price markup over the day's close, fees, date
    ("AAPL", "buy", "40", 1.002, "1.00", dt.date(2025, 1, 10)),
    ("MSFT", "buy", "12.5", 0.998, "0.50", dt.date(2025, 3, 3)),
    ("SPY", "buy", "5", 1.0, "0", dt.date(2025, 6, 14)),  # a Saturday: applies on Monday
    ("AAPL", "sell", "15", 1.01, "1.00", dt.date(2025, 8, 1)),
    ("MSFT", "dividend", "12.5", 0.004, "0", dt.date(2025, 9, 15)),
    ("XOM", "buy", "30", 1.0, "0", dt.date(2026, 2, 2)),
    ("SPY", "sell", "5", 0.995, "0", dt.date(2026, 5, 5)),
]


def _close_on_or_after(symbol: str, day: dt.date) -> float:
    bars = fixed_market().history(symbol, day, day + dt.timedelta(days=7))
    return float(bars["close"].iloc[0])


LEDGER = [
    (sym, kind, q, f"{_close_on_or_after(sym, day) * k:.2f}", fee, day)
    for sym, kind, q, k, fee, day in _PLAN
]


def _portfolio(api: Api, h: dict[str, str], ledger=LEDGER, **extra: object) -> int:
    r = api.client.post("/api/portfolios/", json={"name": "A", **extra}, headers=h)
    assert r.status_code == 201, r.text
    pid = r.json()["id"]
    for sym, kind, q, px, fee, day in ledger:
        body = {
            "portfolio": pid,
            "asset_symbol": sym,
            "transaction_type": kind,
            "quantity": q,
            "price": px,
            "fees": fee,
            "transaction_date": day.isoformat(),
        }
        r = api.client.post("/api/transactions/", json=body, headers=h)
        assert r.status_code == 201, r.text
    return pid


def _closes(symbol: str, start: dt.date) -> dict[dt.date, float]:
    bars = fixed_market().history(symbol, start, TODAY)
    return {ts.date(): float(c) for ts, c in zip(bars.index, bars["close"], strict=True)}


def twin(ledger=LEDGER, benchmark: str = "SPY"):
    """Dates, values and time-weighted daily returns by loops (inflows at the open, outflows at the close)."""
    start = min(row[5] for row in ledger)
    symbols = sorted({row[0] for row in ledger})
    closes = {s: _closes(s, start) for s in symbols}
    dates = sorted(set().union(*[set(c) for c in closes.values()]))
    held = dict.fromkeys(symbols, 0.0)
    last = dict.fromkeys(symbols, math.nan)
    pending = sorted(ledger, key=lambda r: r[5])
    values, rets = [], []
    prev = 0.0
    for day in dates:
        inflow = outflow = 0.0
        while pending and pending[0][5] <= day:
            sym, kind, q, px, fee, _ = pending.pop(0)
            q, px, fee = float(q), float(px), float(fee)
            if kind == "buy":
                held[sym] += q
                inflow += q * px + fee
            elif kind == "sell":
                held[sym] -= q
                outflow += q * px - fee
            else:
                outflow += q * px
        for s in symbols:
            last[s] = closes[s].get(day, last[s])
        value = sum(held[s] * last[s] for s in symbols if abs(held[s]) > 1e-12)
        base = prev + inflow
        rets.append((value + outflow) / base - 1.0 if base > 1e-9 else math.nan)
        values.append(value)
        prev = value
    bench = _closes(benchmark, start - dt.timedelta(days=10))
    bench_prev = b_last = [v for d, v in sorted(bench.items()) if d < dates[0]][-1]
    b_close = []
    for day in dates:
        b_last = bench.get(day, b_last)
        b_close.append(b_last)
    b = np.array(b_close)
    b_ret = b / np.concatenate(([bench_prev], b[:-1])) - 1.0
    return np.array(dates), np.array(values), np.array(rets), b_ret


def _window(dates, months: int):
    start = (pd.Timestamp(TODAY) - pd.DateOffset(months=months)).date()
    return np.array([d > start for d in dates])


def close(text: str | None, expected: float, tol: float = 1.5e-6) -> bool:
    return text is not None and abs(float(text) - expected) <= tol


@pytest.mark.parametrize("period,months", [("1m", 1), ("3m", 3), ("6m", 6), ("1y", 12), ("2y", 24)])
def test_metrics_equal_quantcore_on_the_twin(api: Api, period: str, months: int) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    r = api.client.get(f"/api/analytics/portfolio/{pid}/metrics/?period={period}", headers=h)
    assert r.status_code == 200, r.text
    m = r.json()
    dates, _, rets, b_ret = twin()
    keep = _window(dates, months) & np.isfinite(rets)
    x, b = rets[keep], b_ret[keep]
    assert m["period"] == period and m["benchmark"] == "SPY"
    assert m["observations"] == int(keep.sum())
    assert (
        m["start_date"] == dates[keep][0].isoformat()
        and m["end_date"] == dates[keep][-1].isoformat()
    )
    for field in (
        "total_return",
        "annualized_return",
        "volatility",
        "sharpe_ratio",
        "max_drawdown",
        "alpha",
        "beta",
        "benchmark_return",
    ):
        assert isinstance(m[field], str), field
    assert close(m["total_return"], qc.returns.total_return(x))
    assert close(m["annualized_return"], qc.returns.annualized_return(x))
    assert close(m["volatility"], qc.risk.volatility(x))
    assert close(m["sharpe_ratio"], qc.metrics.sharpe_ratio(x), 1.5e-4)
    assert close(m["max_drawdown"], qc.drawdown.max_drawdown(x))
    assert close(m["alpha"], qc.risk.alpha(x, b))
    assert close(m["beta"], qc.risk.beta(x, b), 1.5e-4)
    assert close(m["benchmark_return"], qc.returns.total_return(b))


def test_returns_are_time_weighted(api: Api) -> None:
    """Over the whole life, the chained return equals quantcore's TWR with flows split at the open/close."""
    _, h = api.user()
    pid = _portfolio(api, h)
    m = api.client.get(f"/api/analytics/portfolio/{pid}/metrics/?period=2y", headers=h).json()
    dates, values, _, _ = twin()
    inflow = np.zeros(len(dates))
    outflow = np.zeros(len(dates))
    for _sym, kind, q, px, fee, day in LEDGER:
        i = int(np.searchsorted(dates, day))
        amount = float(q) * float(px)
        if kind == "buy":
            inflow[i] += amount + float(fee)
        else:
            outflow[i] += amount - float(fee)
    split_values = np.ravel(np.column_stack([values + outflow, values]))
    split_flows = np.ravel(np.column_stack([inflow, -outflow]))
    twr = qc.returns.time_weighted_return(split_values, split_flows)
    assert close(m["total_return"], twr)
    # a deposit is not a gain: the total return is far from value / invested - 1
    assert abs(float(m["total_return"]) - (values[-1] / inflow.sum() - 1.0)) > 1e-4
    # beside it, the money-weighted return: XIRR of the same flows and the final value
    mwr = qc.returns.money_weighted_return(
        np.array(dates, dtype="datetime64[D]"), inflow - outflow, values[-1]
    )
    assert close(m["money_weighted_return"], mwr)
    assert m["money_weighted_return"] != m["annualized_return"]


def test_money_weighted_return_counts_the_value_held_before_the_window(api: Api) -> None:
    """A window that starts after the first purchase opens with the value then held."""
    _, h = api.user()
    pid = _portfolio(api, h)
    m = api.client.get(f"/api/analytics/portfolio/{pid}/metrics/?period=3m", headers=h).json()
    dates, values, rets, _ = twin()
    keep = _window(dates, 3) & np.isfinite(rets)
    first, last = int(np.flatnonzero(keep)[0]), int(np.flatnonzero(keep)[-1])
    assert first > 0  # else the test could not tell
    inflow = np.zeros(len(dates))
    outflow = np.zeros(len(dates))
    for _sym, kind, q, px, fee, day in LEDGER:
        i = int(np.searchsorted(dates, day))
        amount = float(q) * float(px)
        if kind == "buy":
            inflow[i] += amount + float(fee)
        else:
            outflow[i] += amount - float(fee)
    days = np.array(dates[first - 1 : last + 1], dtype="datetime64[D]")
    flows = np.concatenate(([values[first - 1]], (inflow - outflow)[first : last + 1]))
    expected = qc.returns.money_weighted_return(days, flows, values[last])
    assert close(m["money_weighted_return"], expected)


def test_metrics_benchmark_and_errors(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h, benchmark_symbol="QQQ")
    m = api.client.get(f"/api/analytics/portfolio/{pid}/metrics/", headers=h).json()
    assert (m["period"], m["benchmark"]) == ("1y", "QQQ")
    dates, _, rets, b_ret = twin(benchmark="QQQ")
    keep = _window(dates, 12) & np.isfinite(rets)
    assert close(m["beta"], qc.risk.beta(rets[keep], b_ret[keep]), 1.5e-4)
    m2 = api.client.get(f"/api/analytics/portfolio/{pid}/metrics/?benchmark=tlt", headers=h).json()
    assert m2["benchmark"] == "TLT" and m2["beta"] != m["beta"]
    for query, field, code in [
        ("period=10y", "period", "invalid_choice"),
        ("benchmark=NOPE", "benchmark", "not_found"),
    ]:
        r = api.client.get(f"/api/analytics/portfolio/{pid}/metrics/?{query}", headers=h)
        assert r.status_code == 400, r.text
        assert r.json()["error"] == "validation_error"
        assert r.json()["details"] == {"field": field, "code": code}
    _, other = api.user()
    for path in ("metrics", "performance", "allocation", "risk"):
        assert (
            api.client.get(f"/api/analytics/portfolio/{pid}/{path}/", headers=other).status_code
            == 404
        )
        r = api.client.get(f"/api/analytics/portfolio/{pid}/{path}/")
        assert r.status_code == 401 and "WWW-Authenticate" in r.headers


def test_empty_portfolio_gives_nulls(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h, ledger=[])
    m = api.client.get(f"/api/analytics/portfolio/{pid}/metrics/", headers=h).json()
    assert m["observations"] == 0 and m["total_return"] is None
    assert (
        api.client.get(f"/api/analytics/portfolio/{pid}/performance/", headers=h).json()["series"]
        == []
    )
    a = api.client.get(f"/api/analytics/portfolio/{pid}/allocation/", headers=h).json()
    assert a == {"total_value": "0.00", "allocations": [], "by_sector": {}, "by_asset_type": {}}
    risk = api.client.get(f"/api/analytics/portfolio/{pid}/risk/", headers=h).json()
    assert risk["var_95"] is None and risk["observations"] == 0


def test_performance_series(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    r = api.client.get(f"/api/analytics/portfolio/{pid}/performance/?period=6m", headers=h)
    assert r.status_code == 200, r.text
    p = r.json()
    dates, values, rets, b_ret = twin()
    keep = _window(dates, 6)
    x = np.nan_to_num(rets[keep])
    b = np.nan_to_num(b_ret[keep])
    series = p["series"]
    assert (p["period"], p["interval"], p["benchmark"]) == ("6m", "1d", "SPY")
    assert [s["date"] for s in series] == [d.isoformat() for d in dates[keep]]
    cum = qc.returns.cumulative_returns(x)
    dd = qc.drawdown.drawdown_series(x)
    bcum = qc.returns.cumulative_returns(b)
    for i, s in enumerate(series):
        assert s["value"] == f"{values[keep][i]:.2f}"
        assert close(s["daily_return"], x[i]) and close(s["cumulative_return"], cum[i])
        assert close(s["drawdown"], dd[i]) and close(s["benchmark_cumulative_return"], bcum[i])
    m = api.client.get(f"/api/analytics/portfolio/{pid}/metrics/?period=6m", headers=h).json()
    assert close(series[-1]["cumulative_return"], float(m["total_return"]), 2e-6)
    weekly = api.client.get(
        f"/api/analytics/portfolio/{pid}/performance/?period=6m&interval=1w", headers=h
    ).json()["series"]
    by_date = {s["date"]: s for s in series}
    assert 24 <= len(weekly) <= 28 and weekly[-1]["date"] == series[-1]["date"]
    growth = 1.0
    for w in weekly:  # interval returns chain to the cumulative return
        growth *= 1.0 + float(w["daily_return"])
        assert w["cumulative_return"] == by_date[w["date"]]["cumulative_return"]
    assert abs(growth - 1.0 - float(series[-1]["cumulative_return"])) < 2e-5
    r = api.client.get(f"/api/analytics/portfolio/{pid}/performance/?interval=1y", headers=h)
    assert r.status_code == 400 and r.json()["details"] == {
        "field": "interval",
        "code": "invalid_choice",
    }


def test_allocation_weights(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(
        api,
        h,
        ledger=[
            *LEDGER,
            ("BTC-USD", "buy", "0.5", "30000", "0", dt.date(2026, 3, 1)),
            ("TLT", "buy", "20", "90", "0", dt.date(2026, 3, 2)),
        ],
    )
    a = api.client.get(f"/api/analytics/portfolio/{pid}/allocation/", headers=h).json()
    held = {"AAPL": 25.0, "MSFT": 12.5, "XOM": 30.0, "BTC-USD": 0.5, "TLT": 20.0}
    market = fixed_market()
    values = {s: q * market.quote(s).price for s, q in held.items()}
    total = sum(values.values())
    assert a["total_value"] == f"{total:.2f}"
    assert {x["asset_symbol"] for x in a["allocations"]} == set(held)
    for x in a["allocations"]:
        assert set(x) == {"asset_symbol", "asset_name", "asset_type", "sector", "weight", "value"}
        assert x["value"] == f"{values[x['asset_symbol']]:.2f}"
        assert close(x["weight"], values[x["asset_symbol"]] / total)
    info = {s: market.asset(s) for s in held}
    for key, attr in (("by_sector", "sector"), ("by_asset_type", "asset_type")):
        expected: dict[str, float] = {}
        for s, v in values.items():
            expected[getattr(info[s], attr)] = expected.get(getattr(info[s], attr), 0.0) + v / total
        assert set(a[key]) == set(expected)
        assert all(close(a[key][k], v) for k, v in expected.items())
    assert abs(sum(float(v) for v in a["by_asset_type"].values()) - 1.0) < 1e-5
    assert {"crypto", "bond", "stock", "etf"} >= set(a["by_asset_type"])


def test_risk_equals_quantcore(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    r = api.client.get(f"/api/analytics/portfolio/{pid}/risk/?lookback=120", headers=h)
    assert r.status_code == 200, r.text
    k = r.json()
    _dates, _, rets, b_ret = twin()
    ok = np.flatnonzero(np.isfinite(rets))[-120:]
    x, b = rets[ok], b_ret[ok]
    assert (
        k["method"],
        k["confidence_level"],
        k["horizon_days"],
        k["lookback"],
        k["observations"],
    ) == ("historical", "0.95", 1, 120, 120)
    var = qc.risk.value_at_risk(x, level=0.95)
    es = qc.risk.expected_shortfall(x, level=0.95)
    assert var > 0 and es >= var
    assert close(k["var_95"], var) and close(k["expected_shortfall"], es)
    value = float(k["portfolio_value"])
    assert k["var_95_amount"] == f"{var * value:.2f}"
    assert k["expected_shortfall_amount"] == f"{es * value:.2f}"
    assert close(k["volatility"], qc.risk.volatility(x))
    assert close(k["beta"], qc.risk.beta(x, b), 1.5e-4)
    assert close(k["correlation_spy"], qc.risk.correlation(x, b), 1.5e-4)  # benchmark is SPY here
    alloc = api.client.get(f"/api/analytics/portfolio/{pid}/allocation/", headers=h).json()
    assert k["sector_concentration"] == alloc["by_sector"]
    w = [float(x["weight"]) for x in alloc["allocations"]]
    assert close(k["herfindahl_index"], sum(v * v for v in w), 1e-5)
    bad = api.client.get(f"/api/analytics/portfolio/{pid}/risk/?lookback=5", headers=h)
    assert bad.status_code == 400 and bad.json()["details"] == {
        "field": "lookback",
        "code": "min_value",
    }


def _asset_id(api: Api, symbol: str) -> int:
    return api.client.get(f"/api/assets/?symbol={symbol}").json()["results"][0]["id"]


def test_technical_indicators(api: Api) -> None:
    _, h = api.user()
    aid = _asset_id(api, "AAPL")
    q = (
        "indicators=sma_20&indicators=rsi,macd&indicators=bollinger_20_2.5&indicators=atr_10&indicators=obv"
        "&indicators=ema_12,wma_8,roc,rsi_7,adx,cci_14,williams_r,stochastic_5_3_2,vwap,macd_5_13_4&period=120"
    )
    r = api.client.get(f"/api/analytics/assets/{aid}/technical/?{q}", headers=h)
    assert r.status_code == 200, r.text
    t = r.json()
    bars = fixed_market().history("AAPL", TODAY - dt.timedelta(days=400), TODAY).iloc[-120:]
    c, hi, lo, v = (bars[k].to_numpy(dtype=float) for k in ("close", "high", "low", "volume"))
    assert (t["symbol"], t["period"], len(t["dates"])) == ("AAPL", 120, 120)
    assert t["dates"] == [ts.date().isoformat() for ts in bars.index]
    assert t["close"] == [f"{x:.4f}" for x in c]
    macd = qc.indicators.macd(c)
    bb = qc.indicators.bollinger_bands(c, 20, 2.5)
    stoch = qc.indicators.stochastic(hi, lo, c, 5, 3, smooth_k=2)
    fast = qc.indicators.macd(c, 5, 13, 4)
    expected = {
        "sma_20": qc.indicators.sma(c, 20),
        "rsi": qc.indicators.rsi(c, 14),
        "macd": macd.macd,
        "macd_signal": macd.signal,
        "macd_histogram": macd.histogram,
        "bollinger_20_2.5_upper": bb.upper,
        "bollinger_20_2.5_middle": bb.middle,
        "bollinger_20_2.5_lower": bb.lower,
        "atr_10": qc.indicators.atr(hi, lo, c, 10),
        "obv": qc.indicators.obv(c, v),
        "ema_12": qc.indicators.ema(c, 12),
        "wma_8": qc.indicators.wma(c, 8),
        "roc": qc.indicators.roc(c, 10),
        "rsi_7": qc.indicators.rsi(c, 7),
        "adx": qc.indicators.adx(hi, lo, c, 14),
        "cci_14": qc.indicators.cci(hi, lo, c, 14),
        "williams_r": qc.indicators.williams_r(hi, lo, c, 14),
        "stochastic_5_3_2_k": stoch.k,
        "stochastic_5_3_2_d": stoch.d,
        "vwap": qc.indicators.vwap(hi, lo, c, v),
        "macd_5_13_4": fast.macd,
        "macd_5_13_4_signal": fast.signal,
        "macd_5_13_4_histogram": fast.histogram,
    }
    assert set(t["indicators"]) == set(expected)
    for name, values in expected.items():
        got = t["indicators"][name]
        assert len(got) == 120
        for g, e in zip(got, values, strict=True):
            assert (g is None) == bool(np.isnan(e)), name
            assert g is None or close(g, e, 1e-6 * max(1.0, abs(e)))
    assert (
        t["indicators"]["sma_20"][:19] == [None] * 19 and t["indicators"]["sma_20"][19] is not None
    )
    assert t["indicators"]["macd"][:33] == [None] * 33


@pytest.mark.parametrize(
    "query,code",
    [
        ("indicators=foo_3", "invalid_choice"),
        ("indicators=sma", "invalid"),
        ("indicators=sma_x", "invalid"),
        ("indicators=sma_0", "invalid"),
        ("period=10", "required"),
        ("indicators=rsi&period=0", "min_value"),
    ],
)
def test_technical_errors(api: Api, query: str, code: str) -> None:
    _, h = api.user()
    aid = _asset_id(api, "MSFT")
    r = api.client.get(f"/api/analytics/assets/{aid}/technical/?{query}", headers=h)
    assert r.status_code == 400, r.text
    assert r.json()["details"]["code"] == code, r.text
    assert (
        api.client.get(
            "/api/analytics/assets/999999/technical/?indicators=rsi", headers=h
        ).status_code
        == 404
    )


def test_decimal_inputs_survive(api: Api) -> None:
    """Quantities with 8 decimals value exactly like the positions endpoint."""
    _, h = api.user()
    pid = _portfolio(
        api, h, ledger=[("ETH-USD", "buy", "1.23456789", "2000", "0", dt.date(2026, 1, 5))]
    )
    a = api.client.get(f"/api/analytics/portfolio/{pid}/allocation/", headers=h).json()
    pos = api.client.get(f"/api/portfolios/{pid}/positions/", headers=h).json()["results"][0]
    assert a["allocations"][0]["value"] == pos["current_value"]
    assert Decimal(a["allocations"][0]["weight"]) == Decimal("1.000000")
    m = api.client.get(f"/api/analytics/portfolio/{pid}/metrics/", headers=h).json()
    dates, _, rets, _ = twin([("ETH-USD", "buy", "1.23456789", "2000", "0", dt.date(2026, 1, 5))])
    keep = _window(dates, 12) & np.isfinite(rets)
    assert close(m["volatility"], qc.risk.volatility(rets[keep], periods_per_year=365))
