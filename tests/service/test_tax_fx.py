"""Tax figures in US dollars for assets quoted in other currencies, over HTTP.

The rule (26 U.S.C. 985; IRS Publication 54, "Foreign Currency"; ``service/tax/usd.py``):
a lot's basis is its cost and commission at the exchange rate of its purchase date, a
sale's proceeds its price less commission at the rate of its sale date, a dividend at
its payment date's rate. The expected figures are computed here by hand, in exact
``Decimal``, from the rates the app's own market serves (``MarketData.fx_rates``), and
rounded half-up to cents per Form 8949 row as the forms round.

The assets are test-only rows with ``currency="EUR"`` and symbols no other test uses.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import select

from quantcore import tax
from quantcore.fx import realized_in_base
from service.db import Database
from service.db.models import Asset, Transaction
from tests.service.conftest import Api

CENT = Decimal("0.01")
UNIT = Decimal("1E-8")


def cents(x: Decimal) -> Decimal:
    return x.quantize(CENT, rounding=ROUND_HALF_UP)


def money(x: Decimal) -> str:
    return format(cents(x), "f")


async def _ensure_asset(db: Database, symbol: str, currency: str) -> None:
    async with db.write() as s:
        found = (await s.execute(select(Asset).where(Asset.symbol == symbol))).scalar_one_or_none()
        if found is None:
            s.add(Asset(symbol=symbol, name=f"{symbol} (tax FX test)", asset_type="stock",
                        currency=currency, data_source="test"))  # fmt: skip


def asset(api: Api, symbol: str, currency: str = "EUR") -> str:
    api.call(_ensure_asset, api.db, symbol, currency)
    return symbol


def eurusd(api: Api, days: Sequence[dt.date]) -> list[Decimal]:
    """The rates the app's market serves, as the service reads them (shortest repr)."""
    market = api.client.app.state.resources.market
    values = market.fx_rates("EUR", "USD", list(days))
    assert np.isfinite(values).all()
    return [Decimal(repr(float(v))) for v in values]


def portfolio(api: Api, h: dict[str, str], rows: Sequence[tuple[Any, ...]]) -> tuple[int, list[int]]:
    """Record ``(symbol, type, quantity, price, fees, date)`` rows in a new portfolio."""
    pid = api.client.post("/api/portfolios/", json={"name": "FX"}, headers=h).json()["id"]
    ids = []
    for sym, kind, q, px, fee, day in rows:
        body = {"portfolio": pid, "asset_symbol": sym, "transaction_type": kind, "quantity": q,
                "price": px, "fees": fee, "transaction_date": day.isoformat()}  # fmt: skip
        r = api.client.post("/api/transactions/", json=body, headers=h)
        assert r.status_code == 201, r.text
        ids.append(r.json()["id"])
    return pid, ids


def summary(api: Api, h: dict[str, str], pid: int | None = None, year: int = 2025) -> dict:
    query = f"?year={year}" + (f"&portfolio_id={pid}" if pid is not None else "")
    r = api.client.get(f"/api/tax/analytics/summary/{query}", headers=h)
    assert r.status_code == 200, r.text
    return r.json()


def report(api: Api, h: dict[str, str], pid: int | None = None, year: int = 2025) -> dict:
    body: dict[str, Any] = {"year": year}
    if pid is not None:
        body["portfolio_id"] = pid
    r = api.client.post("/api/tax/reports/generate/", json=body, headers=h)
    assert r.status_code == 201, r.text
    doc: dict = api.client.get(r.json()["download"]["json"], headers=h).json()
    return doc


def test_gain_is_proceeds_at_sale_rate_less_basis_at_purchase_rate(api: Api) -> None:
    sym = asset(api, "TXFXGAIN")
    buy, sell = dt.date(2025, 1, 6), dt.date(2025, 6, 2)
    x_buy, x_sell = eurusd(api, [buy, sell])
    assert x_buy != x_sell
    _, h = api.user()
    pid, _ = portfolio(api, h, [(sym, "buy", "10", "50", "2", buy), (sym, "sell", "10", "56", "3", sell)])
    basis = cents((10 * Decimal(50) + 2) * x_buy)
    proceeds = cents((10 * Decimal(56) - 3) * x_sell)
    doc = report(api, h, pid)
    (row,) = doc["form_8949"]["part_i"]["rows"]
    assert (row["proceeds"], row["cost_basis"], row["gain_or_loss"], row["code"]) == (
        str(proceeds), str(basis), str(proceeds - basis), "",
    )  # fmt: skip
    assert (row["date_acquired"], row["date_sold"]) == (buy.isoformat(), sell.isoformat())
    got = summary(api, h, pid)["capital_gains"]
    assert got["short_term_gain_loss"] == got["net_capital_gain_loss"] == str(proceeds - basis)
    # the same rule in quantcore.fx (float): within a cent
    ref = realized_in_base(10.0, 50.0, float(x_buy), 56.0, float(x_sell), buy_fees=2.0, sell_fees=3.0)
    assert abs(float(proceeds - basis) - ref.gain) <= 0.01
    # in euros the gain is 60 - 5 = 55; in dollars it is not 55 x any one rate
    assert proceeds - basis not in {cents(55 * x_buy), cents(55 * x_sell)}


def test_pure_currency_move_is_a_taxable_gain_or_loss(api: Api) -> None:
    """The euro price did not move; the rate did: the dollar difference is the gain."""
    sym = asset(api, "TXFXFLAT")
    buy, sell = dt.date(2025, 2, 3), dt.date(2025, 9, 1)
    x_buy, x_sell = eurusd(api, [buy, sell])
    assert x_buy != x_sell
    _, h = api.user()
    pid, _ = portfolio(api, h, [(sym, "buy", "10", "100", "0", buy), (sym, "sell", "10", "100", "0", sell)])
    gain = cents(1000 * x_sell) - cents(1000 * x_buy)
    assert gain != 0
    got = summary(api, h, pid)["capital_gains"]
    assert got["short_term_gain_loss"] == str(gain)
    if gain < 0:  # a pure currency loss is a capital loss too (here: no wash sale)
        assert "W" not in {r["code"] for r in report(api, h, pid)["form_8949"]["part_i"]["rows"]}


def test_partial_fifo_sale_across_lots_bought_at_different_rates(api: Api) -> None:
    sym = asset(api, "TXFXFIFO")
    d1, d2, d3 = dt.date(2025, 1, 13), dt.date(2025, 3, 17), dt.date(2025, 7, 14)
    x1, x2, x3 = eurusd(api, [d1, d2, d3])
    assert len({x1, x2, x3}) == 3
    _, h = api.user()
    pid, _ = portfolio(api, h, [
        (sym, "buy", "10", "40", "0", d1), (sym, "buy", "10", "42", "0", d2),
        (sym, "sell", "15", "45", "0", d3),
    ])  # fmt: skip
    rows = report(api, h, pid)["form_8949"]["part_i"]["rows"]
    expected = [
        # FIFO: all 10 of the first lot, then 5 of the second; proceeds split by quantity
        (d1, cents(10 * 45 * x3), cents(10 * 40 * x1)),
        (d2, cents(5 * 45 * x3), cents(5 * 42 * x2)),
    ]
    assert [(r["date_acquired"], r["proceeds"], r["cost_basis"], r["gain_or_loss"]) for r in rows] == [
        (d.isoformat(), str(p), str(b), str(p - b)) for d, p, b in expected
    ]
    total = sum((p - b for _, p, b in expected), Decimal(0))
    assert summary(api, h, pid)["capital_gains"]["short_term_gain_loss"] == str(total)
    # the asset has no quote: harvesting proposes nothing for its open lot, and does not fail
    r = api.client.post(
        "/api/tax/loss-harvesting/analyze/", json={"portfolio_id": pid, "as_of": "2025-12-01"}, headers=h
    )
    assert r.status_code == 200 and r.json()["opportunities"] == [], r.text


def _pair_dates(api: Api, want_drop: bool) -> tuple[dt.date, dt.date, list[Decimal]]:
    """Two business days of 2025 about a month apart over which EURUSD fell (or rose) 2 %+."""
    days = list(pd.bdate_range("2025-01-02", "2025-10-31").date)
    rates = eurusd(api, days)
    for i in range(len(days)):
        for j in range(i + 20, min(i + 60, len(days))):
            move = rates[j] / rates[i]
            if (move < Decimal("0.98")) if want_drop else (move > Decimal("1.02")):
                return days[i], days[j], [rates[i], rates[j]]
    raise AssertionError("no such move in the simulated EURUSD of 2025")


def test_wash_sale_is_judged_and_carried_in_dollars(api: Api) -> None:
    """A flat euro price and a falling euro: a dollar loss, washed by a repurchase within
    30 days, moves into the replacement's dollar basis (Form 8949 code W)."""
    sym = asset(api, "TXFXWASH")
    buy, sell, _ = _pair_dates(api, want_drop=True)
    rebuy, resell = sell + dt.timedelta(days=10), sell + dt.timedelta(days=70)
    x_buy, x_sell, x_rebuy, x_resell = eurusd(api, [buy, sell, rebuy, resell])
    _, h = api.user()
    pid, _ = portfolio(api, h, [
        (sym, "buy", "10", "100", "0", buy), (sym, "sell", "10", "100", "0", sell),
        (sym, "buy", "10", "100", "0", rebuy), (sym, "sell", "10", "100", "0", resell),
    ])  # fmt: skip
    loss = cents(1000 * x_sell) - cents(1000 * x_buy)
    assert loss < 0
    rows = report(api, h, pid)["form_8949"]["part_i"]["rows"]
    first, second = rows
    assert (first["code"], first["adjustment"], first["gain_or_loss"]) == ("W", str(-loss), "0.00")
    # the replacement's basis: its own cost at its rate plus the disallowed dollar loss
    assert second["cost_basis"] == str(cents(1000 * x_rebuy) - loss)
    assert second["proceeds"] == str(cents(1000 * x_resell))
    net = cents(1000 * x_resell) - (cents(1000 * x_rebuy) - loss)
    assert summary(api, h, pid)["capital_gains"]["short_term_gain_loss"] == str(net)


def test_a_loss_in_euros_that_is_a_dollar_gain_is_no_wash_sale(api: Api) -> None:
    sym = asset(api, "TXFXNOWASH")
    buy, sell, (x_buy, x_sell) = _pair_dates(api, want_drop=False)
    rebuy = sell + dt.timedelta(days=5)
    _, h = api.user()
    pid, _ = portfolio(api, h, [
        (sym, "buy", "10", "100", "0", buy), (sym, "sell", "10", "99", "0", sell),  # -10 EUR
        (sym, "buy", "10", "99", "0", rebuy),
    ])  # fmt: skip
    gain = cents(990 * x_sell) - cents(1000 * x_buy)
    assert gain > 0
    (row,) = report(api, h, pid)["form_8949"]["part_i"]["rows"]
    assert (row["code"], row["adjustment"], row["gain_or_loss"]) == ("", "0.00", str(gain))


def test_dividend_at_the_payment_date_rate(api: Api) -> None:
    sym = asset(api, "TXFXDIV")
    buy, paid = dt.date(2025, 1, 6), dt.date(2025, 5, 5)
    x_buy, x_paid = eurusd(api, [buy, paid])
    _, h = api.user()
    pid, _ = portfolio(api, h, [
        (sym, "buy", "100", "20", "0", buy), (sym, "dividend", "100", "0.75", "1.5", paid),
    ])  # fmt: skip
    amount = cents(((100 * Decimal("0.75")).quantize(UNIT) - Decimal("1.5")) * x_paid)
    got = summary(api, h, pid)["dividend_income"]
    assert got["total_dividends"] == str(amount) and amount != cents(Decimal("73.5") * x_buy)
    div = report(api, h, pid)["form_1099_div"]
    assert div["box_1a_total_ordinary_dividends"] == str(amount)


def _usd_ledger(rows: Sequence[tuple[str, str, str, str, str, dt.date]], rates: dict[dt.date, Decimal]) -> Any:
    """``match_lots`` of rows whose prices and fees are converted at 1e-8 (the service's unit)."""
    table = pd.DataFrame(
        [(s, d, k, Decimal(q), (Decimal(p) * rates[d]).quantize(UNIT, ROUND_HALF_UP),
          (Decimal(f) * rates[d]).quantize(UNIT, ROUND_HALF_UP)) for s, k, q, p, f, d in rows],
        columns=["symbol", "date", "type", "quantity", "price", "fees"],
    )  # fmt: skip
    return tax.match_lots(table)


def test_harvesting_values_open_lots_at_the_current_rate(api: Api) -> None:
    """An open lot's basis is at its purchase rate, its value at the current rate."""
    from service.marketdata.store import PriceStore

    sym = asset(api, "TXFXHARV")
    days = pd.bdate_range(end="2026-11-20", periods=5)
    closes = [30.0, 30.5, 29.5, 30.25, 30.0]
    bars = pd.DataFrame({"open": closes, "high": closes, "low": closes, "close": closes,
                         "volume": [1000] * 5}, index=days.tz_localize("UTC"))  # fmt: skip
    PriceStore(api.settings.prices_dir).write(sym, bars)
    market = api.client.app.state.resources.market
    quote, fx = market.quote(sym), market.fx_quote("EUR", "USD")
    assert quote is not None and quote.price == 30.0 and fx is not None
    buy = dt.date(2026, 3, 2)
    (x_buy,) = eurusd(api, [buy])
    _, h = api.user()
    pid, ids = portfolio(api, h, [(sym, "buy", "20", "45", "1", buy)])
    r = api.client.post(
        "/api/tax/loss-harvesting/analyze/", json={"portfolio_id": pid, "as_of": "2026-11-20"}, headers=h
    )
    assert r.status_code == 200, r.text
    (got,) = r.json()["opportunities"]
    now = (Decimal(repr(quote.price)) * Decimal(repr(fx.rate))).quantize(UNIT, ROUND_HALF_UP)
    basis = (20 * Decimal(45) + 1) * x_buy
    assert got["lots"] == [str(ids[0])]
    assert got["potential_loss_amount"] == money(basis - 20 * now)
    assert got["position"]["current_price"] == format(now.quantize(Decimal("0.0001")), "f")
    # the same as quantcore on the dollar ledger at the dollar price
    ledger = _usd_ledger([(f"{pid}:{sym}", "buy", "20", "45", "1", buy)], {buy: x_buy})
    (e,) = tax.harvest_opportunities(ledger, {f"{pid}:{sym}": float(now)}, "2026-11-20")
    assert got["potential_loss_amount"] == money(e.potential_loss_amount)
    assert got["position"]["average_cost"] == money(e.average_cost)


def test_usd_assets_unchanged_beside_foreign_ones(api: Api) -> None:
    """A USD portfolio's figures are exactly quantcore's on its rows as entered, whether or
    not the user also holds a foreign asset; the user's total adds the dollar figures."""
    sym = asset(api, "TXFXMIX")
    usd_rows = [
        ("MSFT", "buy", "5", "300", "1", dt.date(2024, 2, 1)),
        ("MSFT", "buy", "5", "400", "0", dt.date(2024, 9, 3)),
        ("MSFT", "sell", "6", "380", "2", dt.date(2025, 7, 1)),
        ("MSFT", "dividend", "4", "0.83", "0", dt.date(2025, 8, 14)),
    ]
    eur_rows = [(sym, "buy", "8", "61.5", "1", dt.date(2025, 2, 10)),
                (sym, "sell", "8", "58.25", "1", dt.date(2025, 8, 11))]  # fmt: skip
    _, h = api.user()
    usd_pid, _ = portfolio(api, h, usd_rows)
    before = summary(api, h, usd_pid)
    eur_pid, _ = portfolio(api, h, eur_rows)
    assert summary(api, h, usd_pid) == before
    native = tax.match_lots(pd.DataFrame(
        [(f"{usd_pid}:{s}", d, k, Decimal(q), Decimal(p), Decimal(f)) for s, k, q, p, f, d in usd_rows],
        columns=["symbol", "date", "type", "quantity", "price", "fees"],
    ))  # fmt: skip
    expected = tax.tax_summary(native, 2025)
    assert before["capital_gains"] == {k: money(v) for k, v in expected.capital_gains().items()}
    assert before["dividend_income"] == {k: money(v) for k, v in expected.dividend_income().items()}
    # all portfolios: the USD rows as entered plus the euro rows at their dates' rates
    x_buy, x_sell = eurusd(api, [eur_rows[0][5], eur_rows[1][5]])
    eur_gain = cents((8 * Decimal("58.25") - 1) * x_sell) - cents((8 * Decimal("61.5") + 1) * x_buy)
    both = summary(api, h)["capital_gains"]
    usd_st = Decimal(before["capital_gains"]["short_term_gain_loss"])
    assert both["short_term_gain_loss"] == str(usd_st + eur_gain)
    assert both["long_term_gain_loss"] == before["capital_gains"]["long_term_gain_loss"]
    assert summary(api, h, eur_pid)["capital_gains"]["short_term_gain_loss"] == str(eur_gain)


async def _cash_rows(db: Database, pid: int) -> None:
    """Cash rows as the transactions API writes them: no asset, the amount as price."""
    now = dt.datetime.now(dt.UTC)
    async with db.write() as s:
        for kind, amount, currency, day in (
            ("deposit", "5000", "USD", dt.date(2025, 1, 2)),
            ("interest", "12.34", "EUR", dt.date(2025, 3, 31)),
            ("fee", "2.5", "EUR", dt.date(2025, 4, 1)),
            ("withdrawal", "100", "USD", dt.date(2025, 10, 1)),
        ):
            s.add(Transaction(
                portfolio_id=pid, asset_id=None, transaction_type=kind, quantity=Decimal(1),
                price=Decimal(amount), fees=Decimal(0), transaction_date=day, currency=currency,
                created_at=now,
            ))  # fmt: skip


def test_cash_rows_hold_no_lots_and_change_nothing(api: Api) -> None:
    """Rows without an asset are left out of the lots; interest is not a dividend (the
    summary has no interest line), so no tax figure moves."""
    sym = asset(api, "TXFXCASH")
    _, h = api.user()
    pid, _ = portfolio(api, h, [
        (sym, "buy", "10", "50", "0", dt.date(2025, 1, 6)), (sym, "sell", "4", "52", "0", dt.date(2025, 6, 2)),
        ("KO", "buy", "10", "60", "0", dt.date(2025, 1, 6)), ("KO", "dividend", "10", "0.5", "0", dt.date(2025, 4, 1)),
    ])  # fmt: skip
    before = (summary(api, h, pid), summary(api, h))
    doc_before = report(api, h, pid)
    api.call(_cash_rows, api.db, pid)
    assert (summary(api, h, pid), summary(api, h)) == before
    doc = report(api, h, pid)
    for part in ("form_8949", "schedule_d", "form_1099_div", "summary"):
        assert doc[part] == doc_before[part], part
    r = api.client.post("/api/tax/analytics/calculate/", json={"year": 2025, "portfolio_id": pid}, headers=h)
    assert r.status_code == 200 and r.json()["summary"] == before[0]
    r = api.client.get(f"/api/tax/loss-harvesting/?portfolio_id={pid}", headers=h)
    assert r.status_code == 200, r.text


def test_a_date_without_a_rate_or_an_unsupported_currency_is_a_400(api: Api) -> None:
    early = asset(api, "TXFXEARLY")
    market = api.client.app.state.resources.market
    day = dt.date(2014, 6, 2)  # before the first simulated EURUSD close
    assert np.isnan(market.fx_rates("EUR", "USD", [day])).all()
    _, h = api.user()
    pid, _ = portfolio(api, h, [(early, "buy", "1", "10", "0", day)])
    r = api.client.get(f"/api/tax/analytics/summary/?year=2025&portfolio_id={pid}", headers=h)
    assert r.status_code == 400, r.text
    assert r.json()["details"] == {"field": "currency", "code": "unavailable", "currency": "EUR",
                                   "date": "2014-06-02"}  # fmt: skip
    other = asset(api, "TXFXCHF", "CHF")
    _, h2 = api.user()
    pid2, _ = portfolio(api, h2, [(other, "buy", "1", "10", "0", dt.date(2025, 3, 3))])
    for r in (
        api.client.get(f"/api/tax/analytics/summary/?year=2025&portfolio_id={pid2}", headers=h2),
        api.client.post("/api/tax/reports/generate/", json={"year": 2025}, headers=h2),
        api.client.post("/api/tax/analytics/calculate/", json={"year": 2025}, headers=h2),
    ):
        assert r.status_code == 400, r.text
        assert r.json()["details"] == {"field": "currency", "code": "unsupported", "currency": "CHF"}
