"""``POST /api/portfolios/{id}/import/`` and ``python -m service import-transactions``.

Every statement is written here: OFX 1.x SGML and 2.x XML (OFX 2.2 section 13.9.2),
the Schwab and Fidelity history downloads and a generic CSV (layouts in
docs/service.md). The round trips value positions from real bars imported for the
symbols (and the simulated market's quotes and FX rates for the EUR listing), and
every figure (positions, cash per currency, total value) is computed here, in
Decimal, from the amounts in the files.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
from collections.abc import Sequence
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import text

from service.assets.market import MarketData
from service.assets.services import upsert_imported_asset
from service.cli import main
from service.errors import ValidationError
from service.imports import services as import_services
from service.imports import write as import_write
from service.marketdata.importers import import_prices
from service.marketdata.store import PriceStore
from tests.service.conftest import MARKET_NOW, Api
from tests.service.test_imports_parsers import AAPL, FUND, SAP, _bank, _invtran, ofx_v1, ofx_v2

D = Decimal
CENT = D("0.01")
MSFT = "<SECID><UNIQUEID>594918104</UNIQUEID><UNIQUEIDTYPE>CUSIP</UNIQUEIDTYPE></SECID>"
ZZZ = "<SECID><UNIQUEID>ZZZ000001</UNIQUEID><UNIQUEIDTYPE>CUSIP</UNIQUEIDTYPE></SECID>"
ZZE = "<SECID><UNIQUEID>ZZE000001</UNIQUEID><UNIQUEIDTYPE>CUSIP</UNIQUEIDTYPE></SECID>"
SECLIST = (
    "<SECLISTMSGSRSV1><SECLIST>"
    f"<STOCKINFO><SECINFO>{AAPL}<SECNAME>Apple Inc.</SECNAME><TICKER>AAPL</TICKER></SECINFO></STOCKINFO>"
    f"<STOCKINFO><SECINFO>{MSFT}<SECNAME>Microsoft</SECNAME><TICKER>MSFT</TICKER></SECINFO></STOCKINFO>"
    f"<STOCKINFO><SECINFO>{ZZZ}<SECNAME>Zed Corp</SECNAME><TICKER>ZZQX</TICKER></SECINFO></STOCKINFO>"
    f"<STOCKINFO><SECINFO>{ZZE}<SECNAME>Zed Europe</SECNAME><TICKER>ZZEU</TICKER></SECINFO></STOCKINFO>"
    # SAP.DE: the simulated universe's euro listing (service/marketdata/universe.py)
    f"<STOCKINFO><SECINFO>{SAP}<SECNAME>SAP SE</SECNAME><TICKER>SAP.DE</TICKER></SECINFO></STOCKINFO>"
    "</SECLIST></SECLISTMSGSRSV1>"
)


def _buy(fitid: str, day: str, sec: str, units: str, price: str, fees: str = "0") -> str:
    return (
        f"<BUYSTOCK><INVBUY>{_invtran(fitid, day)}{sec}<UNITS>{units}</UNITS>"
        f"<UNITPRICE>{price}</UNITPRICE><COMMISSION>{fees}</COMMISSION>"
        f"<TOTAL>-1</TOTAL>{FUND}</INVBUY><BUYTYPE>BUY</BUYTYPE></BUYSTOCK>"
    )


def _sell(fitid: str, day: str, sec: str, units: str, price: str, fees: str = "0") -> str:
    return (
        f"<SELLSTOCK><INVSELL>{_invtran(fitid, day)}{sec}<UNITS>-{units}</UNITS>"
        f"<UNITPRICE>{price}</UNITPRICE><COMMISSION>{fees}</COMMISSION>"
        f"<TOTAL>1</TOTAL>{FUND}</INVSELL><SELLTYPE>SELL</SELLTYPE></SELLSTOCK>"
    )


def _fx(currency: str, rate: str = "1.08", tag: str = "CURRENCY") -> str:
    """A ``CURRENCY`` (or ``ORIGCURRENCY``) aggregate, OFX 2.2 section 5.2."""
    return f"<{tag}><CURRATE>{rate}</CURRATE><CURSYM>{currency}</CURSYM></{tag}>"


def _buy_in(
    fitid: str, day: str, sec: str, units: str, price: str, fees: str, currency: str
) -> str:
    """A buy whose amounts are in ``currency`` (its ``CURRENCY`` follows ``TOTAL``)."""
    return (
        f"<BUYSTOCK><INVBUY>{_invtran(fitid, day)}{sec}<UNITS>{units}</UNITS>"
        f"<UNITPRICE>{price}</UNITPRICE><COMMISSION>{fees}</COMMISSION>"
        f"<TOTAL>-1</TOTAL>{_fx(currency)}{FUND}</INVBUY><BUYTYPE>BUY</BUYTYPE></BUYSTOCK>"
    )


def _bank_in(fitid: str, day: str, kind: str, amount: str, currency: str) -> str:
    """A bank transaction in ``currency`` (``CURRENCY`` after ``NAME``, as STMTTRN orders it)."""
    return (
        f"<INVBANKTRAN><STMTTRN><TRNTYPE>{kind}</TRNTYPE><DTPOSTED>2025{day}</DTPOSTED>"
        f"<TRNAMT>{amount}</TRNAMT><FITID>{fitid}</FITID><NAME>{kind}</NAME>{_fx(currency)}"
        "</STMTTRN><SUBACCTFUND>CASH</SUBACCTFUND></INVBANKTRAN>"
    )


# one transaction per line; the first is on line FIRST[version]
ACCOUNT = [
    _bank("D1", "0102", "CREDIT", "10000.00", "Deposit"),
    _buy("B1", "0103", AAPL, "10", "150.00", "1.05"),
    _sell("S1", "0210", AAPL, "4", "160.00", "1.00"),
    f"<INCOME>{_invtran('I1', '0215')}{AAPL}<INCOMETYPE>DIV</INCOMETYPE><TOTAL>1.50</TOTAL>{FUND}"
    "<WITHHOLDING>0.10</WITHHOLDING></INCOME>",
    f"<REINVEST>{_invtran('R1', '0216')}{AAPL}<INCOMETYPE>DIV</INCOMETYPE><TOTAL>-20.00</TOTAL>"
    "<SUBACCTSEC>CASH</SUBACCTSEC><UNITS>0.125</UNITS><UNITPRICE>160.00</UNITPRICE></REINVEST>",
    f"<MARGININTEREST>{_invtran('M1', '0305')}<TOTAL>-3.25</TOTAL><SUBACCTFUND>CASH</SUBACCTFUND>"
    "</MARGININTEREST>",
    _bank("W1", "0307", "DEBIT", "-500.00", "Withdrawal"),
    _buy("X1", "0311", MSFT, "5", "300.00"),
]
FIRST = {"v2": 8, "v1": 17}
MAKERS = {"v2": ofx_v2, "v1": ofx_v1}


def _bars(api: Api, tmp_path: Path, symbol: str, closes: list[float]) -> None:
    """Real daily bars for ``symbol`` ending today: its quote is the last close."""
    days = pd.bdate_range(end=MARKET_NOW.date(), periods=len(closes))
    path = tmp_path / f"{symbol.lower()}.csv"
    lines = ["Date,Open,High,Low,Close,Volume"]
    lines += [f"{d.date()},{c},{c},{c},{c},100" for d, c in zip(days, closes, strict=True)]
    path.write_text("\n".join(lines) + "\n")
    store = PriceStore(api.settings.prices_dir)
    api.call(upsert_imported_asset, api.db, import_prices(path, store=store))


@pytest.fixture(scope="module")
def priced(api: Api, tmp_path_factory: pytest.TempPathFactory) -> Api:
    tmp = tmp_path_factory.mktemp("bars")
    _bars(api, tmp, "AAPL", [190.0, 200.0])
    _bars(api, tmp, "MSFT", [305.0, 310.0])
    return api


def _portfolio(api: Api, headers: dict[str, str]) -> int:
    r = api.client.post("/api/portfolios/", json={"name": "Broker account"}, headers=headers)
    assert r.status_code == 201, r.text
    return int(r.json()["id"])


def _import(
    api: Api,
    pid: int,
    headers: dict[str, str],
    data: bytes,
    name: str = "statement.ofx",
    **form: Any,
) -> Any:
    fields = {k: (json.dumps(v) if isinstance(v, dict) else str(v).lower() if isinstance(v, bool) else v)
              for k, v in form.items()}  # fmt: skip
    return api.client.post(
        f"/api/portfolios/{pid}/import/", files={"file": (name, data)}, data=fields, headers=headers
    )


def _positions(api: Api, pid: int, headers: dict[str, str]) -> dict[str, tuple[str, ...]]:
    r = api.client.get(f"/api/portfolios/{pid}/positions/", headers=headers)
    assert r.status_code == 200, r.text
    return {
        p["asset"]["symbol"]: (p["quantity"], p["cost_basis"], p["current_value"])
        for p in r.json()["results"]
    }


def _ledger(api: Api, pid: int, headers: dict[str, str]) -> list[tuple[str, ...]]:
    r = api.client.get(f"/api/transactions/?portfolio={pid}&page_size=100", headers=headers)
    assert r.status_code == 200, r.text
    return sorted(
        (t["transaction_date"], t["transaction_type"], t["asset_symbol"] or "", t["quantity"],
         t["price"], t["fees"]) for t in r.json()["results"]
    )  # fmt: skip


def _market(api: Api) -> MarketData:
    return api.client.app.state.resources.market


def _price(api: Api, symbol: str) -> Decimal:
    quote = _market(api).quote(symbol)
    assert quote is not None
    return D(repr(quote.price))


def _rate(api: Api, currency: str, base: str = "USD") -> Decimal:
    fx = _market(api).fx_quote(currency, base)
    assert fx is not None
    return D(repr(fx.rate))


def _cents(x: Decimal) -> str:
    return str(x.quantize(CENT, ROUND_HALF_EVEN))


def _value(api: Api, holdings: dict[str, tuple[Decimal, str]], cash: dict[str, Decimal]) -> Decimal:
    """Positions (symbol -> quantity, currency) and cash at the market's quotes and
    rates, in USD: quantity x price x rate, plus each currency's cash x rate."""
    positions = sum(
        (q * _price(api, sym) * _rate(api, ccy) for sym, (q, ccy) in holdings.items()), D(0)
    )
    return positions + sum((amount * _rate(api, ccy) for ccy, amount in cash.items()), D(0))


def _cash(api: Api, pid: int, headers: dict[str, str]) -> tuple[dict[str, str], str, str]:
    """The portfolio's cash per currency, its cash in USD and its total value."""
    r = api.client.get(f"/api/portfolios/{pid}/", headers=headers)
    assert r.status_code == 200, r.text
    body = r.json()
    per = {c["currency"]: c["amount"] for c in body["cash_balances"]}
    return per, body["cash_balance"], body["total_value"]


def _assert_cash(api: Api, pid: int, headers: dict[str, str],
                 holdings: dict[str, tuple[Decimal, str]], cash: dict[str, Decimal]) -> None:  # fmt: skip
    """Cash per currency, cash in USD and total value equal the hand-computed figures."""
    per, cash_usd, total = _cash(api, pid, headers)
    assert per == {ccy: _cents(amount) for ccy, amount in cash.items()}
    assert cash_usd == _cents(sum((a * _rate(api, c) for c, a in cash.items()), D(0)))
    assert total == _cents(_value(api, holdings, cash))


# Hand-computed figures of ACCOUNT.
# AAPL: bought 10 @ 150.00 + 1.05 fees (150.105 a share), sold 4 first in, first out:
# 6 left = 900.63; the reinvested dividend bought 0.125 @ 160.00 = 20.00.
# Quantity 6.125, basis 920.63, value 6.125 x 200.00 (last imported close) = 1225.00.
# MSFT: 5 @ 300.00 = 1500.00, value 5 x 310.00 = 1550.00.
POSITIONS = {
    "AAPL": ("6.12500000", "920.63", "1225.00"),
    "MSFT": ("5.00000000", "1500.00", "1550.00"),
}
HOLDINGS = {"AAPL": (D("6.125"), "USD"), "MSFT": (D(5), "USD")}
# Cash of ACCOUNT, row by row (received +, paid -): deposit, buy (10 x 150.00 + 1.05),
# sell (4 x 160.00 - 1.00), dividend (1.50 - 0.10 withheld), reinvested dividend and its
# buy, margin interest, withdrawal, MSFT buy. 7,136.10; total value 2,775.00 + 7,136.10.
ACCOUNT_CASH = (
    D("10000.00") - (10 * D("150.00") + D("1.05")) + (4 * D("160.00") - D("1.00"))
    + (D("1.50") - D("0.10")) + D("20.00") - D("0.125") * D("160.00") - D("3.25")
    - D("500.00") - 5 * D("300.00")
)  # fmt: skip
LEDGER = sorted([
    ("2025-01-02", "deposit", "", "1.00000000", "10000.00000000", "0E-8"),
    ("2025-01-03", "buy", "AAPL", "10.00000000", "150.00000000", "1.05000000"),
    ("2025-02-10", "sell", "AAPL", "4.00000000", "160.00000000", "1.00000000"),
    ("2025-02-15", "dividend", "AAPL", "1.00000000", "1.50000000", "0.10000000"),
    ("2025-02-16", "dividend", "AAPL", "1.00000000", "20.00000000", "0E-8"),
    ("2025-02-16", "buy", "AAPL", "0.12500000", "160.00000000", "0E-8"),
    ("2025-03-05", "fee", "", "1.00000000", "3.25000000", "0E-8"),
    ("2025-03-07", "withdrawal", "", "1.00000000", "500.00000000", "0E-8"),
    ("2025-03-11", "buy", "MSFT", "5.00000000", "300.00000000", "0E-8"),
])  # fmt: skip
COUNTS = {"buy": 3, "deposit": 1, "dividend": 2, "fee": 1, "sell": 1, "withdrawal": 1}


def _norm(rows: Sequence[tuple[str, ...]]) -> list[tuple[Any, ...]]:
    return sorted((d, k, s, D(q), D(p), D(f)) for d, k, s, q, p, f in rows)


@pytest.mark.parametrize("version", ["v2", "v1"])
def test_ofx_round_trip_positions_and_value_by_hand(priced: Api, version: str) -> None:
    api = priced
    _, headers = api.user("imp")
    pid = _portfolio(api, headers)
    data = MAKERS[version](ACCOUNT, seclist=SECLIST)
    r = _import(api, pid, headers, data)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["dry_run"] is False and body["format"] == "ofx"
    # the deposit, the margin interest and the withdrawal are imported too (they used to
    # be ignored while portfolios held securities only: cash is now part of the value)
    assert body["added"] == 9 and body["counts"] == COUNTS
    assert body["skipped_duplicates"] == 0 and body["errors"] == [] and body["ignored"] == []
    first = FIRST[version]
    got = [(x["line"], x["source_id"], x["transaction_type"], x["asset_symbol"], x["currency"])
           for x in body["rows"]]  # fmt: skip
    assert got == [
        (first, "D1", "deposit", None, "USD"), (first + 1, "B1", "buy", "AAPL", "USD"),
        (first + 2, "S1", "sell", "AAPL", "USD"), (first + 3, "I1", "dividend", "AAPL", "USD"),
        (first + 4, "R1#income", "dividend", "AAPL", "USD"), (first + 4, "R1#buy", "buy", "AAPL", "USD"),
        (first + 5, "M1", "fee", None, "USD"), (first + 6, "W1", "withdrawal", None, "USD"),
        (first + 7, "X1", "buy", "MSFT", "USD"),
    ]  # fmt: skip
    assert _norm(_ledger(api, pid, headers)) == _norm(LEDGER)
    assert _positions(api, pid, headers) == POSITIONS
    assert ACCOUNT_CASH == D("7136.10")  # the comment above, by hand
    _assert_cash(api, pid, headers, HOLDINGS, {"USD": ACCOUNT_CASH})
    portfolio = api.client.get(f"/api/portfolios/{pid}/", headers=headers).json()
    assert (portfolio["total_value"], portfolio["position_count"]) == ("9911.10", 2)

    # the same file again adds nothing
    again = _import(api, pid, headers, data)
    assert again.status_code == 200, again.text
    assert (again.json()["added"], again.json()["skipped_duplicates"]) == (0, 9)
    assert _norm(_ledger(api, pid, headers)) == _norm(LEDGER)
    assert _positions(api, pid, headers) == POSITIONS
    _assert_cash(api, pid, headers, HOLDINGS, {"USD": ACCOUNT_CASH})

    # a later statement overlapping the first adds only its new rows
    later = MAKERS[version](
        [*ACCOUNT[-2:], _sell("S2", "0320", MSFT, "2", "320.00")], seclist=SECLIST
    )
    r = _import(api, pid, headers, later)
    assert r.status_code == 200, r.text
    assert (r.json()["added"], r.json()["skipped_duplicates"], r.json()["counts"]) == (
        1,
        2,
        {"sell": 1},
    )
    assert _positions(api, pid, headers)["MSFT"] == ("3.00000000", "900.00", "930.00")
    holdings = {**HOLDINGS, "MSFT": (D(3), "USD")}
    _assert_cash(api, pid, headers, holdings, {"USD": ACCOUNT_CASH + 2 * D("320.00")})


def test_dry_run_reports_without_writing(priced: Api) -> None:
    api = priced
    _, headers = api.user("dry")
    pid = _portfolio(api, headers)
    data = ofx_v2(ACCOUNT, seclist=SECLIST)
    r = _import(api, pid, headers, data, dry_run=True)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["dry_run"] is True
    assert (body["added"], body["counts"]) == (9, COUNTS)  # the cash rows counted by type too
    assert len(body["rows"]) == 9 and body["errors"] == []
    assert _ledger(api, pid, headers) == [] and _positions(api, pid, headers) == {}
    # a dry run with problems lists every one of them, still writing nothing
    bad = ofx_v2([*ACCOUNT, _sell("S9", "0312", MSFT, "50", "1.00")], seclist=SECLIST)
    r = _import(api, pid, headers, bad, dry_run=True)
    assert r.status_code == 200, r.text
    assert [(e["line"], e["field"], e["code"]) for e in r.json()["errors"]] == [
        (FIRST["v2"] + 8, "quantity", "insufficient_quantity"),
    ]
    assert _ledger(api, pid, headers) == []


def test_every_bad_line_is_reported_and_nothing_is_written(priced: Api) -> None:
    api = priced
    _, headers = api.user("bad")
    pid = _portfolio(api, headers)
    rows = [
        _buy("B1", "0103", AAPL, "10", "150.00"),                 # fine
        _sell("S1", "0110", AAPL, "12", "151.00"),                # more than held
        _buy("B2", "0111", ZZZ, "1", "10.00"),                    # unknown symbol
        _buy("B3", "0112", AAPL, "1", "-5.00"),                   # negative price
        _buy("B4", "1340", AAPL, "1", "5.00"),                    # month 13
        f"<TRANSFER>{_invtran('T1', '0301')}{AAPL}<SUBACCTSEC>CASH</SUBACCTSEC><UNITS>5</UNITS>"
        "<TFERACTION>IN</TFERACTION><POSTYPE>LONG</POSTYPE></TRANSFER>",  # not supported
        _buy("B5", "0302", AAPL, "1", "5.123456789"),             # 9 decimals
        f"<INCOME>{_invtran('I1', '0303')}{MSFT}<INCOMETYPE>DIV</INCOMETYPE><TOTAL>3.00</TOTAL>{FUND}"
        "</INCOME>",                                               # never held
    ]  # fmt: skip
    r = _import(api, pid, headers, ofx_v2(rows, seclist=SECLIST))
    assert r.status_code == 400, r.text
    body = r.json()
    assert (body["error"], body["details"]["field"], body["details"]["code"]) == (
        "validation_error", "file", "invalid_rows",
    )  # fmt: skip
    first = FIRST["v2"]
    got = [(e["line"] - first, e["field"], e["code"]) for e in body["details"]["errors"]]
    assert got == [
        (1, "quantity", "insufficient_quantity"),
        (2, "symbol", "not_found"),
        (3, "UNITPRICE", "invalid"),
        (4, "BUYSTOCK", "invalid"),  # ofxtools refuses the aggregate (its DTTRADE)
        (5, "type", "unsupported"),  # the transfer
        (6, "price", "max_decimal_places"),
        (7, "quantity", "insufficient_quantity"),
    ]
    assert "ZZQX" in body["details"]["errors"][1]["message"]
    assert _ledger(api, pid, headers) == [] and _positions(api, pid, headers) == {}


def test_a_failure_after_the_insert_rolls_the_whole_import_back(
    priced: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows, the new asset and the portfolio's stamp are written in the request's
    session; an error after them (here: re-deriving the positions refusing) is a 400 and the
    session commits none of it."""
    api = priced
    _, headers = api.user("rollback")
    pid = _portfolio(api, headers)
    before = api.client.get(f"/api/portfolios/{pid}/", headers=headers).json()["updated_at"]
    sec = "<SECID><UNIQUEID>ZZR000001</UNIQUEID><UNIQUEIDTYPE>CUSIP</UNIQUEIDTYPE></SECID>"
    seclist = SECLIST.replace(
        "</SECLIST>",
        f"<STOCKINFO><SECINFO>{sec}<SECNAME>Zed Rollback</SECNAME><TICKER>ZZRB</TICKER>"
        "</SECINFO></STOCKINFO></SECLIST>",
    )
    data = ofx_v2([*ACCOUNT, _buy("ZR9", "0312", sec, "2", "10.00")], seclist=seclist)
    seen: list[int] = []

    async def _count(conn: Any) -> int:
        sql = text("SELECT count(*) FROM transactions WHERE portfolio_id = :p")
        return int((await conn.execute(sql, {"p": pid})).scalar())

    async def refuse_counting(s: Any, user_id: int, *args: Any, **kwargs: Any) -> Any:
        seen.append(await _count(await s.connection()))  # the rows are in the transaction
        raise ValidationError("lot_method", "invalid", "refused by the test")

    monkeypatch.setattr(import_write, "rederive_written", refuse_counting)
    r = _import(api, pid, headers, data, create_assets=True)
    monkeypatch.undo()
    assert r.status_code == 400, r.text
    assert (r.json()["details"]["field"], r.json()["details"]["code"]) == (
        "lot_method",
        "invalid",
    ), r.text
    assert seen == [len(LEDGER) + 1]
    assert _ledger(api, pid, headers) == [] and _positions(api, pid, headers) == {}
    assert api.client.get("/api/assets/?symbol=ZZRB").json()["results"] == []
    after = api.client.get(f"/api/portfolios/{pid}/", headers=headers).json()["updated_at"]
    assert after == before
    # the same file then imports whole: nothing of the failed attempt is held
    r = _import(api, pid, headers, data, create_assets=True)
    assert r.status_code == 200, r.text
    assert (r.json()["added"], r.json()["skipped_duplicates"]) == (len(LEDGER) + 1, 0)


def test_uncovered_sale_is_checked_on_the_whole_resulting_ledger(priced: Api) -> None:
    api = priced
    _, headers = api.user("whole")
    pid = _portfolio(api, headers)
    for kind, qty, day in (("buy", "10", "2025-01-02"), ("sell", "8", "2025-06-02")):
        r = api.client.post(
            "/api/transactions/",
            json={"portfolio": pid, "asset_symbol": "AAPL", "transaction_type": kind,
                  "quantity": qty, "price": "100", "transaction_date": day},
            headers=headers,
        )  # fmt: skip
        assert r.status_code == 201, r.text
    before = _ledger(api, pid, headers)
    # selling 5 in March is covered then, but leaves the typed June sale of 8 short
    r = _import(
        api, pid, headers, ofx_v2([_sell("S1", "0303", AAPL, "5", "120.00")], seclist=SECLIST)
    )
    assert r.status_code == 400, r.text
    (err,) = r.json()["details"]["errors"]
    assert (err["line"], err["field"], err["code"]) == (
        FIRST["v2"],
        "quantity",
        "insufficient_quantity",
    )
    assert "2025-06-02" in err["message"]
    assert _ledger(api, pid, headers) == before
    # a backdated buy in the same file covers it: the ledger is checked in date order
    fixed = [_sell("S1", "0303", AAPL, "5", "120.00"), _buy("B1", "0104", AAPL, "3", "90.00")]
    r = _import(api, pid, headers, ofx_v2(fixed, seclist=SECLIST))
    assert r.status_code == 200, r.text
    quantity = _positions(api, pid, headers).get("AAPL", ("0",))[0]
    assert D(quantity) == D(0)  # 10 + 3 - 5 - 8


def test_create_assets_adds_unknown_symbols(priced: Api) -> None:
    api = priced
    _, headers = api.user("new")
    pid = _portfolio(api, headers)
    data = ofx_v2([_buy("B1", "0103", ZZZ, "4", "12.50")], seclist=SECLIST)
    r = _import(api, pid, headers, data, dry_run=True, create_assets=True)
    assert r.status_code == 200, r.text
    assert r.json()["created_assets"] == ["ZZQX"]
    assert api.client.get("/api/assets/?symbol=ZZQX").json()["results"] == []
    r = _import(api, pid, headers, data, create_assets=True)
    assert r.status_code == 200, r.text
    assert (r.json()["added"], r.json()["created_assets"]) == (1, ["ZZQX"])
    (asset,) = [a for a in api.client.get("/api/assets/?symbol=ZZQX").json()["results"]
                if a["symbol"] == "ZZQX"]  # fmt: skip
    assert asset["data_source"] == "statement"
    assert _positions(api, pid, headers)["ZZQX"][:2] == ("4.00000000", "50.00")


def test_duplicate_fitids_in_one_file_are_dropped(priced: Api) -> None:
    api = priced
    _, headers = api.user("dup")
    pid = _portfolio(api, headers)
    buy = _buy("B1", "0103", AAPL, "2", "150.00")
    r = _import(api, pid, headers, ofx_v2([buy, buy, buy], seclist=SECLIST))
    assert r.status_code == 200, r.text
    first = FIRST["v2"]
    assert (r.json()["added"], r.json()["duplicate_lines"]) == (1, [first + 1, first + 2])
    assert _positions(api, pid, headers)["AAPL"][0] == "2.00000000"


def test_broken_files_are_400_naming_the_line(priced: Api) -> None:
    api = priced
    _, headers = api.user("broken")
    pid = _portfolio(api, headers)
    good = ofx_v2(ACCOUNT, seclist=SECLIST)
    truncated = good[: len(good) // 2]
    r = _import(api, pid, headers, truncated)
    assert r.status_code == 400, r.text
    (err,) = r.json()["details"]["errors"]
    assert (err["field"], err["code"]) == ("file", "malformed") and err["line"] > 0
    r = _import(api, pid, headers, b"\x89PNG\r\n\x1a\n\x00\x00", name="statement.ofx")
    assert r.status_code == 400, r.text
    assert r.json()["details"]["errors"][0]["code"] == "malformed"
    r = _import(api, pid, headers, b"date,type\n2025-01-02,buy\n", name="x.csv", preset="robinhood")
    assert r.status_code == 400, r.text
    assert r.json()["details"]["errors"][0]["field"] == "preset"
    assert _ledger(api, pid, headers) == []


def test_form_errors_are_400(priced: Api) -> None:
    api = priced
    _, headers = api.user("form")
    pid = _portfolio(api, headers)
    r = _import(api, pid, headers, b"hello", name="notes.txt")
    assert (r.status_code, r.json()["details"]["field"]) == (400, "format"), r.text
    r = _import(api, pid, headers, b"x", name="x.csv", format="xls")
    assert (r.status_code, r.json()["details"]["field"]) == (400, "format"), r.text
    r = _import(api, pid, headers, b"x", name="x.csv", mapping="{not json")
    assert (r.status_code, r.json()["details"]["field"]) == (400, "mapping"), r.text
    r = _import(api, pid, headers, b"x", name="x.ofx", preset="schwab")
    assert (r.status_code, r.json()["details"]["field"]) == (400, "preset"), r.text
    r = api.client.post(f"/api/portfolios/{pid}/import/", data={"format": "ofx"}, headers=headers)
    assert r.status_code == 400, r.text
    # a JSON body where the form is expected: refused before the handler, naming the body
    r = api.client.post(f"/api/portfolios/{pid}/import/", json={"format": "ofx"}, headers=headers)
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "validation_error", r.text
    assert (r.json()["details"]["field"], r.json()["details"]["code"]) == (
        "body",
        "invalid_multipart",
    )


def test_owner_only(priced: Api) -> None:
    api = priced
    _, owner = api.user("own")
    _, other = api.user("other")
    pid = _portfolio(api, owner)
    data = ofx_v2(ACCOUNT, seclist=SECLIST)
    r = _import(api, pid, other, data)
    assert (r.status_code, r.json()["error"]) == (404, "not_found")
    r = _import(api, pid, other, data, dry_run=True)
    assert r.status_code == 404
    r = _import(api, 10**9, owner, data)
    assert r.status_code == 404
    r = api.client.post(f"/api/portfolios/{pid}/import/", files={"file": ("s.ofx", data)})
    assert r.status_code == 401
    assert _ledger(api, pid, owner) == []


def test_size_limit_is_413(priced: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    api = priced
    _, headers = api.user("big")
    pid = _portfolio(api, headers)
    monkeypatch.setattr(import_services, "MAX_FILE_BYTES", 1000)
    r = _import(api, pid, headers, ofx_v2(ACCOUNT, seclist=SECLIST))
    assert r.status_code == 413, r.text
    body = r.json()
    assert (body["error"], body["details"]["field"], body["details"]["code"]) == (
        "request_too_large", "file", "max_size",
    )  # fmt: skip
    assert _ledger(api, pid, headers) == []


SCHWAB = """"Date","Action","Symbol","Description","Quantity","Price","Fees & Comm","Amount"
"03/11/2025","Buy","MSFT","MICROSOFT CORP","5","$300.00","","-$1,500.00"
"03/07/2025","MoneyLink Transfer","","Tfr BANK, JANE DOE","","","","-$500.00"
"03/05/2025","Margin Interest","","MARGIN INT","","","","-$3.25"
"02/16/2025","Reinvest Shares","AAPL","APPLE INC","0.125","$160.00","","-$20.00"
"02/16/2025","Reinvest Dividend","AAPL","APPLE INC","","","","$20.00"
"02/15/2025","Qualified Dividend","AAPL","APPLE INC","","","","$1.50"
"02/10/2025","Sell","AAPL","APPLE INC","4","$160.00","$1.00","$639.00"
"01/03/2025","Buy","AAPL","APPLE INC","10","$150.00","$1.05","-$1,501.05"
"01/02/2025","MoneyLink Transfer","","Tfr BANK, JANE DOE","","","","$10,000.00"
"01/02/2025","Journal","","JOURNAL FRM ...123","","","","$0.00"
"Transactions Total","","","","","","","$7,136.20"
"""

FIDELITY = """
Brokerage

Run Date,Action,Symbol,Description,Type,Quantity,Price ($),Commission ($),Fees ($),Accrued Interest ($),Amount ($),Settlement Date
03/11/2025, YOU BOUGHT MICROSOFT CORP (MSFT) (Cash), MSFT,MICROSOFT CORP,Cash,5,300,,,,-1500.00,03/12/2025
02/16/2025, REINVESTMENT APPLE INC (AAPL) (Cash), AAPL,APPLE INC,Cash,0.125,160,,,,-20.00,
02/16/2025, DIVIDEND RECEIVED APPLE INC (AAPL) (Cash), AAPL,APPLE INC,Cash,,,,,,20.00,
02/15/2025, DIVIDEND RECEIVED APPLE INC (AAPL) (Cash), AAPL,APPLE INC,Cash,,,,,,1.50,
02/10/2025, YOU SOLD APPLE INC (AAPL) (Cash), AAPL,APPLE INC,Cash,-4,160,1,,,639.00,02/11/2025
01/03/2025, YOU BOUGHT APPLE INC (AAPL) (Cash), AAPL,APPLE INC,Cash,10,150,1,0.05,,-1501.05,01/06/2025
01/02/2025, Electronic Funds Transfer Received (Cash), ,No Description,Cash,,,,,,10000,

"The data and information in this spreadsheet is provided to you solely for your use and is not for distribution."
"""

GENERIC = """When;What;Ticker;Shares;Px;Costs;Cash
03.01.2025;Kauf;AAPL;10;150,00;1,05;
10.02.2025;Verkauf;AAPL;4;160,00;1,00;
15.02.2025;Dividende;AAPL;;;;1,50
16.02.2025;Dividende;AAPL;;;;20,00
16.02.2025;Kauf;AAPL;0,125;160,00;;
11.03.2025;Kauf;MSFT;5;300,00;;
02.01.2025;Einzahlung;;;;;10.000,00
"""
MAPPING = {
    "columns": {"date": "When", "type": "What", "symbol": "Ticker", "quantity": "Shares",
                "price": "Px", "fees": "Costs", "amount": "Cash"},
    "types": {"Kauf": "buy", "Verkauf": "sell", "Dividende": "dividend", "Einzahlung": "deposit"},
    "date_format": "%d.%m.%Y", "decimal_comma": True, "delimiter": ";",
}  # fmt: skip


def _amount_column(text: str, header: str) -> Decimal:
    """The sum of a broker file's amount column (the net cash of each row), summary lines
    and the preamble left out: the account's cash by another road than the ledger's."""
    lines = text.strip().splitlines()
    start = next(i for i, line in enumerate(lines) if header in line)
    total = D(0)
    for record in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        cell = (record.get(header) or "").strip().replace("$", "").replace(",", "")
        date = (record.get("Date") or record.get("Run Date") or "").strip()
        if cell and date[:2].isdigit():
            total += D(cell)
    return total


# Cash of the generic file by hand (it has no amount on trades): the deposit, the buy
# (10 x 150.00 + 1.05), the sale (4 x 160.00 - 1.00), two dividends, the reinvested buy
# and the MSFT buy. 7,639.45.
GENERIC_CASH = (
    D("10000.00") - (10 * D("150.00") + D("1.05")) + (4 * D("160.00") - D("1.00")) + D("1.50")
    + D("20.00") - D("0.125") * D("160.00") - 5 * D("300.00")
)  # fmt: skip
SCHWAB_COUNTS = {"buy": 3, "deposit": 1, "dividend": 2, "fee": 1, "sell": 1, "withdrawal": 1}
FIDELITY_COUNTS = {"buy": 3, "deposit": 1, "dividend": 2, "sell": 1}


@pytest.mark.parametrize(
    ("text", "form", "counts", "cash"),
    [
        (SCHWAB, {}, SCHWAB_COUNTS, _amount_column(SCHWAB, "Amount")),
        (FIDELITY, {"preset": "fidelity"}, FIDELITY_COUNTS, _amount_column(FIDELITY, "Amount ($)")),
        (GENERIC, {"mapping": MAPPING}, FIDELITY_COUNTS, GENERIC_CASH),
    ],
    ids=["schwab", "fidelity", "generic"],
)
def test_csv_presets_round_trip(
    priced: Api, text: str, form: dict[str, Any], counts: dict[str, int], cash: Decimal
) -> None:
    # the same account as ACCOUNT in each broker's layout: the same positions; the cash
    # rows each file has are imported (they used to be ignored), so cash and total
    # value follow each file's amounts
    api = priced
    _, headers = api.user("csv")
    pid = _portfolio(api, headers)
    data = text.encode("utf-8-sig")
    r = _import(api, pid, headers, data, name="history.csv", **form)
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["format"], body["counts"]) == ("csv", counts)
    # only Schwab's $0.00 journal carries nothing: listed, not written
    ignored = [(x["line"], x["type"]) for x in body["ignored"]]
    assert ignored == ([(11, "deposit")] if "Journal" in text else [])
    assert all(x["source_id"].startswith("csv:") for x in body["rows"])
    assert all(x["currency"] == "USD" for x in body["rows"])
    assert _positions(api, pid, headers) == POSITIONS
    _assert_cash(api, pid, headers, HOLDINGS, {"USD": cash})
    again = _import(api, pid, headers, data, name="history.csv", **form)
    assert (again.json()["added"], again.json()["skipped_duplicates"]) == (0, sum(counts.values()))
    assert _positions(api, pid, headers) == POSITIONS
    _assert_cash(api, pid, headers, HOLDINGS, {"USD": cash})


def test_the_files_cash_by_hand() -> None:
    # the amount columns against the rows' own arithmetic: Schwab has ACCOUNT's rows
    # but no withholding on the dividend (+0.10); Fidelity and the generic file have no
    # margin interest and no withdrawal
    assert _amount_column(SCHWAB, "Amount") == ACCOUNT_CASH + D("0.10") == D("7136.20")
    assert _amount_column(FIDELITY, "Amount ($)") == GENERIC_CASH == D("7639.45")


def test_fractional_holdings_get_their_dividend(priced: Api) -> None:
    api = priced
    _, headers = api.user("frac")
    pid = _portfolio(api, headers)
    text = "date,type,symbol,quantity,price,amount\n2025-01-02,buy,AAPL,0.4,100,\n2025-02-03,dividend,AAPL,,,0.10\n"
    r = _import(api, pid, headers, text.encode(), name="f.csv")
    assert r.status_code == 200, r.text
    (_, div) = r.json()["rows"]
    assert (D(div["quantity"]), D(div["price"])) == (D("0.4"), D("0.25"))  # 0.10 / 0.4 shares


def test_cli_import_transactions(priced: Api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    api = priced
    _, headers = api.user("cli")
    pid = _portfolio(api, headers)
    monkeypatch.setenv("QC_DATABASE_URL", api.settings.database)
    monkeypatch.setenv("QC_DATA_DIR", str(tmp_path))
    path = tmp_path / "statement.qfx"
    path.write_bytes(ofx_v2(ACCOUNT, seclist=SECLIST))
    assert main(["import-transactions", str(pid), str(path), "--dry-run"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["dry_run"], report["added"], report["counts"]) == (True, 9, COUNTS)
    assert _ledger(api, pid, headers) == []
    assert main(["import-transactions", str(pid), str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["added"] == 9
    assert _positions(api, pid, headers)["AAPL"][:2] == POSITIONS["AAPL"][:2]
    assert _cash(api, pid, headers)[0] == {"USD": _cents(ACCOUNT_CASH)}
    assert main(["import-transactions", str(pid), str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["skipped_duplicates"] == 9
    # errors: exit 1, each line on stderr, nothing written
    bad = tmp_path / "bad.ofx"
    bad.write_bytes(ofx_v2([_sell("S7", "0601", MSFT, "99", "1.00")], seclist=SECLIST))
    assert main(["import-transactions", str(pid), str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"line {FIRST['v2']}: quantity:" in err
    mapping = tmp_path / "mapping.json"
    mapping.write_text(json.dumps(MAPPING))
    generic = tmp_path / "g.csv"
    generic.write_text(GENERIC)
    assert (
        main(["import-transactions", str(pid), str(generic), f"--mapping=@{mapping}", "--dry-run"])
        == 0
    )
    assert json.loads(capsys.readouterr().out)["counts"] == FIDELITY_COUNTS
    assert main(["import-transactions", "999999999", str(path)]) == 1
    assert "no portfolio" in capsys.readouterr().err
    assert _positions(api, pid, headers)["MSFT"][:2] == POSITIONS["MSFT"][:2]


def test_openapi_documents_the_import(api: Api) -> None:
    schema = api.client.get("/schema/openapi.json").json()
    op = schema["paths"]["/api/portfolios/{portfolio_id}/import"]["post"]
    assert "All or nothing" in op["description"]
    form = op["requestBody"]["content"]["multipart/form-data"]["schema"]
    assert form["$ref"].endswith("/ImportForm")
    components = schema["components"]["schemas"]
    assert set(components["ImportForm"]["properties"]) == {
        "file", "format", "mapping", "preset", "dry_run", "create_assets",
    }  # fmt: skip
    assert components["ImportForm"]["required"] == ["file"]
    reply = op["responses"]["200"]["content"]["application/json"]["schema"]
    assert reply["$ref"].endswith("/ImportRead")
    assert {"added", "counts", "skipped_duplicates", "ignored", "rows", "errors"} <= set(
        components["ImportRead"]["properties"]
    )


def _split(fitid: str, day: str, sec: str, old: str, new: str, num: str, den: str) -> str:
    return (
        f"<SPLIT>{_invtran(fitid, day)}{sec}<SUBACCTSEC>CASH</SUBACCTSEC><OLDUNITS>{old}</OLDUNITS>"
        f"<NEWUNITS>{new}</NEWUNITS><NUMERATOR>{num}</NUMERATOR><DENOMINATOR>{den}</DENOMINATOR></SPLIT>"
    )


SPLIT_CSV = """"Date","Action","Symbol","Description","Quantity","Price","Fees & Comm","Amount"
"03/10/2025","Sell","AAPL","APPLE INC","30","$30.00","",""
"03/03/2025","Stock Split","AAPL","APPLE INC","30","","",""
"01/03/2025","Buy","AAPL","APPLE INC","10","$100.00","","-$1,000.00"
"""


@pytest.mark.parametrize("kind", ["ofx", "schwab"])
def test_splits_are_imported(priced: Api, kind: str) -> None:
    # 10 bought for 1,000.00, split 4-for-1 (40 shares at 25.00), 30 sold first in, first out:
    # 10 shares left, basis 250.00, value 10 x 200.00 (the last imported close) = 2,000.00
    api = priced
    _, headers = api.user("split")
    pid = _portfolio(api, headers)
    if kind == "ofx":
        data, name = ofx_v2([
            _buy("B1", "0103", AAPL, "10", "100.00"),
            _split("P1", "0303", AAPL, "10", "40", "4", "1"),
            _sell("S1", "0310", AAPL, "30", "30.00"),
        ], seclist=SECLIST), "s.ofx"  # fmt: skip
    else:
        data, name = SPLIT_CSV.encode(), "s.csv"
    r = _import(api, pid, headers, data, name=name)
    assert r.status_code == 200, r.text
    assert r.json()["counts"] == {"buy": 1, "sell": 1, "split": 1}
    assert _positions(api, pid, headers) == {"AAPL": ("10.00000000", "250.00", "2000.00")}
    txns = api.client.get(
        f"/api/transactions/?portfolio={pid}&transaction_type=split", headers=headers
    )
    (split,) = txns.json()["results"]
    assert (split["transaction_date"], D(split["split_ratio"])) == ("2025-03-03", D(4))


def test_split_errors(priced: Api) -> None:
    api = priced
    _, headers = api.user("splitbad")
    pid = _portfolio(api, headers)
    text = (
        '"Date","Action","Symbol","Description","Quantity","Price","Fees & Comm","Amount"\n'
        '"03/03/2025","Stock Split","MSFT","MICROSOFT","5","","",""\n'  # none held
        '"03/03/2025","Stock Split","AAPL","APPLE INC","1","","",""\n'  # 3 -> 4: no exact ratio
        '"01/03/2025","Buy","AAPL","APPLE INC","3","$100.00","","-$300.00"\n'
    )
    r = _import(api, pid, headers, text.encode(), name="s.csv")
    assert r.status_code == 400, r.text
    got = [(e["line"], e["field"], e["code"]) for e in r.json()["details"]["errors"]]
    assert got == [(2, "quantity", "insufficient_quantity"), (3, "quantity", "invalid")]
    # OFX: a ratio beyond 8 decimals (1-for-3) is refused on the split, not rounded
    r = _import(api, pid, headers, ofx_v2([
        _buy("B1", "0103", AAPL, "3", "100.00"), _split("P1", "0303", AAPL, "3", "1", "1", "3"),
    ], seclist=SECLIST))  # fmt: skip
    assert r.status_code == 400, r.text
    (err,) = r.json()["details"]["errors"]
    assert (err["line"], err["field"], err["code"]) == (
        FIRST["v2"] + 1,
        "split_ratio",
        "max_decimal_places",
    )
    assert _ledger(api, pid, headers) == []


async def _concurrently(db: Any, user_id: int, pid: int, data: bytes, n: int) -> list[Any]:
    """``n`` imports of ``data`` at once, each in a write transaction as a request's."""
    opts = import_services.ImportOptions(format="ofx")

    async def one() -> Any:
        async with db.write() as s:
            return await import_services.import_statement(s, user_id, pid, data, opts)

    return list(await asyncio.gather(*(one() for _ in range(n))))


def test_concurrent_imports_of_one_file_add_it_once(priced: Api) -> None:
    api = priced
    _, headers = api.user("race")
    pid = _portfolio(api, headers)
    user_id = api.client.get("/api/auth/me/", headers=headers).json()["id"]
    data = ofx_v2(ACCOUNT, seclist=SECLIST)
    reports = api.call(_concurrently, api.db, user_id, pid, data, 4)
    assert sorted((r.added, r.skipped_duplicates) for r in reports) == [(0, 9)] * 3 + [(9, 0)]
    assert _norm(_ledger(api, pid, headers)) == _norm(LEDGER)
    assert _positions(api, pid, headers) == POSITIONS


def test_csv_bad_lines_name_their_field(priced: Api) -> None:
    api = priced
    _, headers = api.user("csvbad")
    pid = _portfolio(api, headers)
    text = (
        "date,type,symbol,quantity,price,fees\n"
        "2025-01-02,buy,AAPL,10,100,0\n"  # line 2: fine
        "2025-13-01,buy,AAPL,1,100,0\n"  # bad date
        "2025-01-03,buy,AAPL,ten,100,0\n"  # bad number
        "2099-01-02,buy,AAPL,1,100,0\n"  # in the future
        "2025-01-04,sell,AAPL,11,100,0\n"  # more than held
        "2025-01-05,sell,AAPL,1,100,500\n"  # fees above the proceeds
        "2025-01-06,swap,AAPL,1,100,0\n"  # unknown type
        "2025-01-07,buy,,1,100,0\n"  # no symbol
    )
    r = _import(api, pid, headers, text.encode(), name="bad.csv")
    assert r.status_code == 400, r.text
    got = [(e["line"], e["field"], e["code"]) for e in r.json()["details"]["errors"]]
    assert got == [
        (3, "date", "invalid"),
        (4, "quantity", "invalid"),
        (5, "date", "max_value"),
        (6, "quantity", "insufficient_quantity"),
        (7, "fees", "max_value"),
        (8, "type", "unknown_type"),
        (9, "symbol", "required"),
    ]
    assert _ledger(api, pid, headers) == []


def test_statements_above_the_default_body_limit_are_accepted(priced: Api) -> None:
    # the app's JSON bodies stop at QC_MAX_BODY_BYTES (1 MiB); a statement may be larger
    api = priced
    _, headers = api.user("large")
    pid = _portfolio(api, headers)
    row = f"2025-01-02,buy,AAPL,1,100,{'x' * 1000}\n"
    text = "date,type,symbol,quantity,price,memo\n" + row * 2100  # 2.1 MB
    assert len(text) > 2 * 10**6
    r = _import(api, pid, headers, text.encode(), name="big.csv", dry_run=True)
    assert r.status_code == 200, r.text[:300]
    assert (r.json()["added"], r.json()["errors"]) == (2100, [])


# The euro part of an account: a deposit, a buy of the euro listing SAP.DE, its dividend
# and interest, all with a CURRENCY aggregate (amounts in EUR).
EURO = [
    _bank_in("ED1", "0310", "DEP", "1000.00", "EUR"),
    _buy_in("EB1", "0312", SAP, "3", "120.00", "2.00", "EUR"),
    f"<INCOME>{_invtran('EI1', '0320')}{SAP}<INCOMETYPE>DIV</INCOMETYPE><TOTAL>4.50</TOTAL>{FUND}"
    f"{_fx('EUR')}</INCOME>",
    _bank_in("EN1", "0325", "INT", "1.25", "EUR"),
]
# deposit - (3 x 120.00 + 2.00) + dividend + interest = 643.75 EUR
EURO_CASH = D("1000.00") - (3 * D("120.00") + D("2.00")) + D("4.50") + D("1.25")


@pytest.mark.parametrize("version", ["v2", "v1"])
def test_ofx_two_currencies_round_trip(priced: Api, version: str) -> None:
    # a security row in EUR used to be refused ("the ledger holds USD prices only"): it
    # is now imported in its asset's currency, and the euro cash beside it
    api = priced
    _, headers = api.user("eur")
    pid = _portfolio(api, headers)
    data = MAKERS[version]([*ACCOUNT, *EURO], seclist=SECLIST)
    r = _import(api, pid, headers, data)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["counts"] == {**COUNTS, "buy": 4, "deposit": 2, "dividend": 3, "interest": 1}
    first = FIRST[version] + len(ACCOUNT)
    assert [(x["line"], x["transaction_type"], x["asset_symbol"], x["currency"], x["price"])
            for x in body["rows"][-4:]] == [
        (first, "deposit", None, "EUR", "1000.00"),
        (first + 1, "buy", "SAP.DE", "EUR", "120.00"),
        (first + 2, "dividend", "SAP.DE", "EUR", "4.50"),
        (first + 3, "interest", None, "EUR", "1.25"),
    ]  # fmt: skip
    # SAP.DE: 3 shares, basis 362.00 EUR as recorded, valued in USD at the EURUSD rate
    sap_value = _cents(3 * _price(api, "SAP.DE") * _rate(api, "EUR"))
    assert _positions(api, pid, headers) == {
        **POSITIONS, "SAP.DE": ("3.00000000", "362.00", sap_value),
    }  # fmt: skip
    assert EURO_CASH == D("643.75")
    holdings = {**HOLDINGS, "SAP.DE": (D(3), "EUR")}
    cash = {"EUR": EURO_CASH, "USD": ACCOUNT_CASH}
    _assert_cash(api, pid, headers, holdings, cash)
    txns = api.client.get(
        f"/api/transactions/?portfolio={pid}&transaction_type=deposit", headers=headers
    ).json()["results"]
    assert sorted((t["currency"], t["price"]) for t in txns) == [
        ("EUR", "1000.00"), ("USD", "10000.00"),
    ]  # fmt: skip
    again = _import(api, pid, headers, data)
    assert (again.json()["added"], again.json()["skipped_duplicates"]) == (0, 13)
    _assert_cash(api, pid, headers, holdings, cash)


def test_cash_rows_default_to_the_portfolio_base_currency(priced: Api) -> None:
    # a CSV without a currency column: the deposit is in the portfolio's base currency
    # (EUR here), the SAP.DE buy in its asset's currency (EUR), the AAPL buy in USD
    api = priced
    _, headers = api.user("base")
    r = api.client.post(
        "/api/portfolios/", json={"name": "Euro", "base_currency": "EUR"}, headers=headers
    )
    assert r.status_code == 201, r.text
    pid = int(r.json()["id"])
    text = (
        "date,type,symbol,quantity,price,fees,amount\n"
        "2025-01-02,deposit,,,,,500.00\n"
        "2025-01-03,buy,SAP.DE,2,100.00,1.00,\n"
        "2025-01-03,buy,AAPL,1,150.00,,\n"
        "2025-01-06,withdrawal,,,,2.00,-50.00\n"  # 50.00 out, fees included: 48.00 + 2.00
    )
    r = _import(api, pid, headers, text.encode(), name="e.csv")
    assert r.status_code == 200, r.text
    rows = [(x["transaction_type"], x["currency"], x["price"], x["fees"]) for x in r.json()["rows"]]
    assert rows == [
        ("deposit", "EUR", "500.00", "0.00"), ("buy", "EUR", "100.00", "1.00"),
        ("buy", "USD", "150.00", "0.00"), ("withdrawal", "EUR", "48.00", "2.00"),
    ]  # fmt: skip
    per, cash_eur, total = _cash(api, pid, headers)
    eur = D("500.00") - (2 * D("100.00") + D("1.00")) - D("50.00")
    assert per == {"EUR": _cents(eur), "USD": _cents(-D("150.00"))}
    usd_in_eur = _rate(api, "USD", "EUR")
    assert cash_eur == _cents(eur - D("150.00") * usd_in_eur)
    positions = 2 * _price(api, "SAP.DE") + _price(api, "AAPL") * usd_in_eur
    assert total == _cents(positions + eur - D("150.00") * usd_in_eur)


def test_currency_errors(priced: Api) -> None:
    api = priced
    _, headers = api.user("ccy")
    pid = _portfolio(api, headers)
    rows = [
        _buy("B1", "0103", SAP, "3", "120.00"),  # SAP.DE in the statement's USD: not its EUR
        _buy_in("B2", "0104", AAPL, "1", "100.00", "0", "EUR"),  # AAPL is in USD
        _bank_in("D1", "0105", "DEP", "100.00", "CHF"),  # no CHF rates here
        _buy_in("B3", "0106", ZZE, "2", "10.00", "0", "GBP"),  # unknown symbol
        _buy("B4", "0107", ZZE, "1", "10.00"),  # unknown symbol
    ]
    data = ofx_v2(rows, seclist=SECLIST)
    first = FIRST["v2"]
    r = _import(api, pid, headers, data)
    assert r.status_code == 400, r.text
    errors = r.json()["details"]["errors"]
    assert [(e["line"] - first, e["field"], e["code"]) for e in errors] == [
        (0, "currency", "mismatch"),
        (1, "currency", "mismatch"),
        (2, "currency", "unsupported"),
        (3, "symbol", "not_found"),
        (4, "symbol", "not_found"),
    ]
    assert "SAP.DE is priced in EUR" in errors[0]["message"]
    assert "'CHF'" in errors[2]["message"] and "EUR" in errors[2]["message"]
    # creating ZZEU: it takes its first row's currency (GBP), which the next row contradicts
    r = _import(api, pid, headers, data, create_assets=True, dry_run=True)
    assert r.status_code == 200, r.text
    got = [(e["line"] - first, e["field"], e["code"]) for e in r.json()["errors"]]
    assert got[3:] == [(4, "currency", "mismatch")]
    assert "new asset ZZEU is in GBP" in r.json()["errors"][3]["message"]
    assert _ledger(api, pid, headers) == []
    r = _import(api, pid, headers, ofx_v2(rows[3:4], seclist=SECLIST), create_assets=True)
    assert r.status_code == 200, r.text
    assert (r.json()["created_assets"], r.json()["rows"][0]["currency"]) == (["ZZEU"], "GBP")
    (asset,) = [a for a in api.client.get("/api/assets/?symbol=ZZEU").json()["results"]
                if a["symbol"] == "ZZEU"]  # fmt: skip
    assert asset["currency"] == "GBP"
    assert _positions(api, pid, headers)["ZZEU"][:2] == ("2.00000000", "20.00")
    assert _cash(api, pid, headers)[0] == {"GBP": "-20.00"}  # no GBP deposit: track policy


def test_strict_portfolio_refuses_an_import_that_overdraws(priced: Api) -> None:
    api = priced
    _, headers = api.user("strict")
    r = api.client.post(
        "/api/portfolios/", json={"name": "Strict", "cash_policy": "strict"}, headers=headers
    )
    assert r.status_code == 201, r.text
    pid = int(r.json()["id"])
    first = FIRST["v2"]
    # 1,000.00 in, then a buy of 1,501.05 on 01-03: cash -501.05 that day (the deposit of
    # 01-10 comes too late); the buy's line is named
    rows = [
        _bank("D1", "0102", "CREDIT", "1000.00", "Deposit"),
        _buy("B1", "0103", AAPL, "10", "150.00", "1.05"),
        _bank("D2", "0110", "CREDIT", "2000.00", "Deposit"),
    ]
    data = ofx_v2(rows, seclist=SECLIST)
    for dry in (True, False):
        r = _import(api, pid, headers, data, dry_run=dry)
        assert r.status_code == (200 if dry else 400), r.text
        errors = r.json()["errors"] if dry else r.json()["details"]["errors"]
        assert [(e["line"], e["field"], e["code"]) for e in errors] == [
            (first + 1, "quantity", "insufficient_cash")
        ]
        short = D("1000.00") - (10 * D("150.00") + D("1.05"))
        assert f"{short} USD of cash on 2025-01-03" in errors[0]["message"]
    assert _ledger(api, pid, headers) == []
    # the second deposit on the buy's day covers it: a day counts once all its rows are in
    rows[2] = _bank("D2", "0103", "CREDIT", "2000.00", "Deposit")
    r = _import(api, pid, headers, ofx_v2(rows, seclist=SECLIST))
    assert r.status_code == 200, r.text
    left = D("3000.00") - (10 * D("150.00") + D("1.05"))
    assert _cash(api, pid, headers)[0] == {"USD": _cents(left)}
    # a withdrawal of more than is left, on its own line: named, field amount
    r = _import(api, pid, headers, ofx_v2([_bank("W1", "0105", "DEBIT", "-1500.00", "Out")]))
    assert r.status_code == 400, r.text
    (err,) = r.json()["details"]["errors"]
    assert (err["line"], err["field"], err["code"]) == (first, "amount", "insufficient_cash")
    # a withdrawal that leaves cash, but not enough for a typed buy later on: the
    # overdraft is on the typed row's day, and the last imported row paying before it
    # is named
    r = api.client.post(
        "/api/transactions/",
        json={"portfolio": pid, "asset_symbol": "AAPL", "transaction_type": "buy", "quantity": "1",
              "price": "100", "transaction_date": "2025-02-03"},
        headers=headers,
    )  # fmt: skip
    assert r.status_code == 201, r.text
    r = _import(api, pid, headers, ofx_v2([_bank("W2", "0120", "DEBIT", "-1400.00", "Out")]))
    assert r.status_code == 400, r.text
    (err,) = r.json()["details"]["errors"]
    assert (err["line"], err["field"], err["code"]) == (first, "amount", "insufficient_cash")
    assert "2025-02-03" in err["message"]
    assert _cash(api, pid, headers)[0] == {"USD": _cents(left - D("100"))}
