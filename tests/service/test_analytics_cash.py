"""Analytics with cash rows, external flows and currencies, over HTTP (SQLite and PostgreSQL).

Every expected figure is computed here by hand from the simulated market's closes and
the amounts the test sent, with the rule of docs/service_analytics.md ("How the value
history is computed"): a deposit or a withdrawal is money put in or taken out, never a
gain; idle cash earns 0; interest is a gain and a fee a loss; cash spent beyond what was
put in counts as put in when spent (so a ledger without cash rows keeps the
implicit-cash returns); amounts in another currency are converted at the day's rate.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math

import numpy as np
import pytest

import quantcore as qc
from service.marketdata.fx import SimulatedFX
from tests.service.conftest import MARKET_NOW, Api, fixed_market

TODAY = MARKET_NOW.date()
TOL = 1.5e-6  # returns are written with 6 fractional digits


def _portfolio(api: Api, h: dict[str, str], rows: list[dict], **fields: object) -> int:
    r = api.client.post("/api/portfolios/", json={"name": "Cash", **fields}, headers=h)
    assert r.status_code == 201, r.text
    pid = int(r.json()["id"])
    for row in rows:
        body = {"portfolio": pid, **row, "transaction_date": row["transaction_date"].isoformat()}
        r = api.client.post("/api/transactions/", json=body, headers=h)
        assert r.status_code == 201, r.text
    return pid


def _cash(kind: str, amount: str, day: dt.date, **extra: str) -> dict:
    return {"transaction_type": kind, "price": amount, "transaction_date": day, **extra}


def _trade(kind: str, symbol: str, qty: str, price: str, day: dt.date, fees: str = "0") -> dict:
    return {
        "transaction_type": kind, "asset_symbol": symbol, "quantity": qty, "price": price,
        "fees": fees, "transaction_date": day,
    }  # fmt: skip


def _get(api: Api, h: dict[str, str], pid: int, what: str, query: str = "") -> dict:
    r = api.client.get(f"/api/analytics/portfolio/{pid}/{what}/?{query}", headers=h)
    assert r.status_code == 200, r.text
    return r.json()


def _closes(symbol: str, start: dt.date) -> dict[dt.date, float]:
    bars = fixed_market().history(symbol, start, TODAY)
    return {ts.date(): float(c) for ts, c in zip(bars.index, bars["close"], strict=True)}


def _close_on(symbol: str, day: dt.date) -> float:
    return _closes(symbol, day)[day]


def _near(text: str | None, expected: float, tol: float = TOL) -> bool:
    return text is not None and abs(float(text) - expected) <= tol


def _held_returns(
    closes: dict[dt.date, float],
    qty: float,
    bought: dt.date,
    cost: float,
    cash: dict[dt.date, float],
) -> dict[dt.date, float]:
    """One holding beside idle cash: on the buy day the value against the cash that paid for
    it, then each day the stock's close-to-close return weighted by its share of the value at
    the previous close (``cash``: the end-of-day cash from each date on)."""
    days = sorted(closes)
    out: dict[dt.date, float] = {}
    for prev, day in itertools.pairwise(days):
        if day < bought:
            continue
        held_cash = [v for d, v in sorted(cash.items()) if d <= prev][-1]
        if day == bought:  # the cash held the evening before paid for the shares
            out[day] = (qty * closes[day] + held_cash - cost) / held_cash - 1.0
            continue
        weight = qty * closes[prev] / (qty * closes[prev] + held_cash)
        out[day] = weight * (closes[day] / closes[prev] - 1.0)
    return out


def test_deposits_alone_are_no_gain(api: Api) -> None:
    """(a) Several deposits on different days and nothing bought: a TWR of 0, every day."""
    _, h = api.user()
    deposits = [
        ("2500", dt.date(2026, 3, 2)),
        ("10000", dt.date(2026, 5, 4)),
        ("1234.56", dt.date(2026, 8, 3)),
    ]
    pid = _portfolio(api, h, [_cash("deposit", a, d) for a, d in deposits])
    m = _get(api, h, pid, "metrics", "period=1y")
    assert m["observations"] > 150 and m["start_date"] == "2026-03-02"
    assert float(m["total_return"]) == 0.0 and float(m["annualized_return"]) == 0.0
    assert float(m["volatility"]) == 0.0 and float(m["max_drawdown"]) == 0.0
    assert _near(m["money_weighted_return"], 0.0, 1e-6)  # paid in 13,734.56, worth as much
    series = _get(api, h, pid, "performance", "period=1y")["series"]
    assert all(float(p["daily_return"]) == 0.0 for p in series)
    assert all(float(p["cumulative_return"]) == 0.0 for p in series)
    for p in series:  # the value is what was paid in so far
        paid = sum(float(a) for a, d in deposits if d.isoformat() <= p["date"])
        assert p["value"] == f"{paid:.2f}"
    alloc = _get(api, h, pid, "allocation")
    assert alloc["total_value"] == "13734.56"
    assert alloc["allocations"] == [
        {"asset_symbol": "USD", "asset_name": "Cash (USD)", "asset_type": "cash",
         "sector": "Cash", "weight": "1.000000", "value": "13734.56"}
    ]  # fmt: skip
    assert alloc["by_asset_type"] == {"cash": "1.000000"}


def test_a_deposit_then_a_buy_weights_the_stock_by_its_share(api: Api) -> None:
    """(b) 10,000 deposited, then 20 AAPL bought: the return is AAPL's, weighted by the part
    of the value it is; the cash earns nothing."""
    _, h = api.user()
    d0, d1 = dt.date(2026, 1, 5), dt.date(2026, 2, 2)
    price = round(_close_on("AAPL", d1) * 0.995, 2)
    cost = 20 * price + 1.0
    pid = _portfolio(
        api,
        h,
        [_cash("deposit", "10000", d0), _trade("buy", "AAPL", "20", f"{price:.2f}", d1, "1.00")],
    )
    closes = _closes("AAPL", d0 - dt.timedelta(days=10))
    expected = _held_returns(closes, 20.0, d1, cost, {d0: 10000.0, d1: 10000.0 - cost})
    series = _get(api, h, pid, "performance", "period=1y")["series"]
    assert series[0]["date"] == d0.isoformat()
    got = {dt.date.fromisoformat(p["date"]): p for p in series}
    for day, p in got.items():
        if day < d1:  # cash only
            assert float(p["daily_return"]) == 0.0 and p["value"] == "10000.00"
        else:
            assert _near(p["daily_return"], expected[day]), (day, p, expected[day])
            assert p["value"] == f"{20 * closes[day] + 10000.0 - cost:.2f}"
    twr = math.prod(1.0 + r for r in expected.values()) - 1.0
    m = _get(api, h, pid, "metrics", "period=1y")
    assert _near(m["total_return"], twr)
    # the cash dilutes the stock: less than AAPL's own move over the same days
    aapl = closes[max(closes)] / closes[max(d for d in closes if d < d1)] - 1.0
    assert abs(twr) < abs(aapl)
    flows = np.array([10000.0, 0.0])
    days = np.array([d0, max(closes)], dtype="datetime64[D]")
    mwr = qc.returns.money_weighted_return(days, flows, 20 * closes[max(closes)] + 10000.0 - cost)
    assert _near(m["money_weighted_return"], mwr)


def test_interest_is_a_gain_and_a_fee_a_loss(api: Api) -> None:
    """(c) Interest of X on a cash-only account is a return of X / balance."""
    _, h = api.user()
    d0, d1, d2 = dt.date(2026, 3, 2), dt.date(2026, 3, 16), dt.date(2026, 4, 1)
    rows = [_cash("deposit", "5000", d0), _cash("interest", "12.50", d1), _cash("fee", "5.00", d2)]
    pid = _portfolio(api, h, rows)
    series = {p["date"]: p for p in _get(api, h, pid, "performance", "period=1y")["series"]}
    assert _near(series[d1.isoformat()]["daily_return"], 12.5 / 5000)
    assert _near(series[d2.isoformat()]["daily_return"], -5.0 / 5012.5)
    others = [p for d, p in series.items() if d not in (d1.isoformat(), d2.isoformat())]
    assert all(float(p["daily_return"]) == 0.0 for p in others)
    assert series[max(series)]["value"] == "5007.50"
    m = _get(api, h, pid, "metrics", "period=1y")
    assert _near(m["total_return"], (1 + 12.5 / 5000) * (1 - 5.0 / 5012.5) - 1)
    only_interest = _portfolio(api, h, rows[:2])
    m = _get(api, h, only_interest, "metrics", "period=1y")
    assert m["total_return"] == "0.002500"


def test_a_withdrawal_is_not_a_loss(api: Api) -> None:
    """(d) 3,000 taken out of a portfolio holding AAPL and cash: that day's return is still
    AAPL's weighted move; the money-weighted return counts it as money taken out."""
    _, h = api.user()
    d0, d1, d2 = dt.date(2026, 1, 5), dt.date(2026, 2, 2), dt.date(2026, 6, 1)
    price = round(_close_on("AAPL", d1), 2)
    cost = 20 * price
    rows = [
        _cash("deposit", "10000", d0),
        _trade("buy", "AAPL", "20", f"{price:.2f}", d1),
        _cash("withdrawal", "3000", d2),
    ]
    pid = _portfolio(api, h, rows)
    closes = _closes("AAPL", d0 - dt.timedelta(days=10))
    cash = {d0: 10000.0, d1: 10000.0 - cost, d2: 7000.0 - cost}
    expected = _held_returns(closes, 20.0, d1, cost, cash)
    series = {
        dt.date.fromisoformat(p["date"]): p
        for p in _get(api, h, pid, "performance", "period=1y")["series"]
    }
    assert abs(expected[d2]) < 0.1  # a 30 % loss if the withdrawal counted
    assert _near(series[d2]["daily_return"], expected[d2])
    assert series[d2]["value"] == f"{20 * closes[d2] + 7000.0 - cost:.2f}"
    for day in expected:
        assert _near(series[day]["daily_return"], expected[day]), day
    m = _get(api, h, pid, "metrics", "period=1y")
    assert _near(m["total_return"], math.prod(1.0 + r for r in expected.values()) - 1.0)
    last = max(closes)
    days = np.array([d0, d2, last], dtype="datetime64[D]")
    flows = np.array([10000.0, -3000.0, 0.0])
    mwr = qc.returns.money_weighted_return(days, flows, 20 * closes[last] + 7000.0 - cost)
    assert _near(m["money_weighted_return"], mwr)


def _legacy_returns(ledger: list[dict]) -> tuple[list[dt.date], list[float]]:
    """The implicit-cash model by loops: each buy money put in at the open, each sale or
    dividend money taken out at the close, value = holdings x closes."""
    start = min(r["transaction_date"] for r in ledger)
    symbols = sorted({r["asset_symbol"] for r in ledger})
    closes = {s: _closes(s, start) for s in symbols}
    days = sorted(set().union(*closes.values()))
    held = dict.fromkeys(symbols, 0.0)
    last = dict.fromkeys(symbols, math.nan)
    pending = sorted(ledger, key=lambda r: r["transaction_date"])
    prev, rets = 0.0, []
    for day in days:
        inflow = outflow = 0.0
        while pending and pending[0]["transaction_date"] <= day:
            r = pending.pop(0)
            q, p, f = float(r["quantity"]), float(r["price"]), float(r["fees"])
            if r["transaction_type"] == "buy":
                held[r["asset_symbol"]] += q
                inflow += q * p + f
            else:
                held[r["asset_symbol"]] -= q if r["transaction_type"] == "sell" else 0.0
                outflow += q * p - f
        for s in symbols:
            last[s] = closes[s].get(day, last[s])
        value = sum(held[s] * last[s] for s in symbols if abs(held[s]) > 1e-12)
        base = prev + inflow
        rets.append((value + outflow) / base - 1.0 if base > 1e-9 else math.nan)
        prev = value
    return days, rets


def test_a_ledger_without_cash_rows_keeps_its_returns(api: Api) -> None:
    """(e) Buys, a sale and a dividend, no cash rows: the cash never ends a day above zero
    (the sale brings back less than was spent), so every daily return is the implicit-cash
    model's."""
    _, h = api.user()
    plan = [
        ("buy", "AAPL", "30", dt.date(2025, 12, 1), "1.00"),
        ("buy", "MSFT", "10", dt.date(2026, 2, 2), "0.50"),
        ("sell", "AAPL", "10", dt.date(2026, 5, 4), "1.00"),
        ("dividend", "MSFT", "10", dt.date(2026, 6, 15), "0"),
        ("buy", "XOM", "25", dt.date(2026, 7, 6), "0"),
    ]
    ledger = [
        _trade(k, s, q, f"{_close_on(s, d) if k != 'dividend' else 0.75:.2f}", d, fee)
        for k, s, q, d, fee in plan
    ]
    pid = _portfolio(api, h, ledger)
    days, rets = _legacy_returns(ledger)
    series = _get(api, h, pid, "performance", "period=1y")["series"]
    legacy = dict(zip(days, rets, strict=True))
    assert len(series) > 200
    for p in series:
        assert _near(p["daily_return"], legacy[dt.date.fromisoformat(p["date"])]), p
    spent = sum(float(r["quantity"]) * float(r["price"]) + float(r["fees"]) for r in ledger[:2])
    received = sum(float(r["quantity"]) * float(r["price"]) for r in ledger[2:4])
    assert received < spent  # the premise: cash never above zero, so no cash line either
    alloc = _get(api, h, pid, "allocation")
    assert all(x["asset_type"] != "cash" for x in alloc["allocations"])


def test_a_euro_holding_in_a_dollar_portfolio(api: Api) -> None:
    """(f) SAP.DE (EUR) in a USD portfolio is worth close x EURUSD each day; bought without
    a deposit, its euro cost is money put in at that day's rate, so the returns are the
    dollar returns of the holding."""
    _, h = api.user()
    day = dt.date(2026, 6, 1)
    price = round(_close_on("SAP.DE", day), 2)
    pid = _portfolio(api, h, [_trade("buy", "SAP.DE", "10", f"{price:.2f}", day)])
    closes = _closes("SAP.DE", day)
    dates = sorted(closes)
    eurusd = dict(
        zip(dates, SimulatedFX(clock=lambda: MARKET_NOW).rates("EURUSD", dates), strict=True)
    )
    series = _get(api, h, pid, "performance", "period=1y")["series"]
    assert [p["date"] for p in series] == [d.isoformat() for d in dates]
    usd = {d: 10 * closes[d] * eurusd[d] for d in dates}
    for prev, d, p in zip([None, *dates], dates, series, strict=False):
        assert p["value"] == f"{usd[d]:.2f}"
        expected = usd[d] / (usd[prev] if prev else 10 * price * eurusd[d]) - 1.0
        assert _near(p["daily_return"], expected), d
    # the euro moved: the dollar return is not the stock's return in euros
    local = closes[dates[-1]] / price - 1.0
    m = _get(api, h, pid, "metrics", "period=1y")
    assert _near(m["total_return"], usd[dates[-1]] / (10 * price * eurusd[day]) - 1.0)
    assert abs(float(m["total_return"]) - local) > 1e-4
    # current quotes too: quantity x quote x the latest rate
    market = api.client.app.state.resources.market
    value = 10 * market.quote("SAP.DE").price * market.fx_quote("EUR", "USD").rate
    alloc = _get(api, h, pid, "allocation")
    assert alloc["total_value"] == f"{value:.2f}"


def test_euro_cash_in_a_dollar_portfolio_moves_with_the_rate(api: Api) -> None:
    """Cash in a foreign currency is worth its amount x the day's rate: its moves are gains."""
    _, h = api.user()
    day = dt.date(2026, 9, 1)
    pid = _portfolio(api, h, [_cash("deposit", "1000", day, currency="EUR")])
    series = _get(api, h, pid, "performance", "period=1y")["series"]
    dates = [dt.date.fromisoformat(p["date"]) for p in series]
    eurusd = SimulatedFX(clock=lambda: MARKET_NOW).rates("EURUSD", dates).to_numpy()
    assert [p["value"] for p in series] == [f"{1000 * x:.2f}" for x in eurusd]
    assert float(series[0]["daily_return"]) == 0.0  # the deposit itself is no gain
    for i in range(1, len(series)):
        assert _near(series[i]["daily_return"], eurusd[i] / eurusd[i - 1] - 1.0)


@pytest.mark.parametrize("kind", ["deposit", "withdrawal"])
def test_cash_rows_alone_never_fail(api: Api, kind: str) -> None:
    """A withdrawal with nothing deposited (cash policy ``track``) is money that came from
    outside and went straight back: no return, no error."""
    _, h = api.user()
    pid = _portfolio(api, h, [_cash(kind, "100", dt.date(2026, 10, 1))])
    m = _get(api, h, pid, "metrics")
    # a withdrawal of cash never held: no capital was ever at work, so no return at all
    assert m["total_return"] == ("0.000000" if kind == "deposit" else None)
    risk = _get(api, h, pid, "risk")
    assert risk["portfolio_value"] == ("100.00" if kind == "deposit" else "0.00")


def test_a_dollar_stock_and_the_benchmark_in_a_euro_portfolio(api: Api) -> None:
    """A portfolio whose base currency is EUR values AAPL at close / EURUSD, and compares
    it with SPY in euros too (SPY's close / EURUSD, close to close)."""
    _, h = api.user()
    day = dt.date(2026, 6, 1)
    price = round(_close_on("AAPL", day), 2)
    rows = [_trade("buy", "AAPL", "10", f"{price:.2f}", day)]
    pid = _portfolio(api, h, rows, base_currency="EUR")
    closes = _closes("AAPL", day)
    dates = sorted(closes)
    fx = SimulatedFX(clock=lambda: MARKET_NOW)
    eurusd = dict(zip(dates, fx.rates("EURUSD", dates), strict=True))
    series = _get(api, h, pid, "performance", "period=1y")["series"]
    assert [p["value"] for p in series] == [f"{10 * closes[d] / eurusd[d]:.2f}" for d in dates]
    m = _get(api, h, pid, "metrics", "period=1y")
    spy = _closes("SPY", day - dt.timedelta(days=10))
    spy_days = sorted(spy)
    before = max(d for d in spy_days if d < day)
    rate = dict(zip(spy_days, fx.rates("EURUSD", spy_days), strict=True))
    in_eur = spy[dates[-1]] / rate[dates[-1]] / (spy[before] / rate[before]) - 1.0
    assert _near(m["benchmark_return"], in_eur)
    assert abs(in_eur - (spy[dates[-1]] / spy[before] - 1.0)) > 1e-4  # the rate moved
