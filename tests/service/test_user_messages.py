"""Messages name what the user knows (symbol, date, line), never internal keys or row indexes."""

from __future__ import annotations

import re

import pytest

from service.imports import parse_ofx
from tests.service.conftest import Api
from tests.service.test_imports_parsers import AAPL, FUND, _invtran, ofx_v2

_INTERNAL = re.compile(r"\d+:[A-Z]|\brow \d+|\(index |lot '?\d|decimal\.|<class")


def _post(api: Api, h: dict[str, str], **body: object):  # type: ignore[no-untyped-def]
    return api.client.post("/api/transactions/", json=body, headers=h)


def test_a_ledger_refusal_names_symbol_and_date(api: Api) -> None:
    _, h = api.user()
    pid = api.client.post("/api/portfolios/", json={"name": "m"}, headers=h).json()["id"]
    common = {"portfolio": pid, "asset_symbol": "AAPL"}
    r = _post(api, h, **common, transaction_type="buy", quantity="10", price="100",
              transaction_date="2024-01-02")  # fmt: skip
    assert r.status_code == 201, r.text
    buy = r.json()["id"]
    r = _post(api, h, **common, transaction_type="split", split_ratio="2",
              transaction_date="2024-02-01")  # fmt: skip
    assert r.status_code == 201, r.text
    for extra in ({}, {"lot_id": buy}):
        r = _post(api, h, **common, transaction_type="sell", quantity="30", price="100",
                  transaction_date="2024-03-01", **extra)  # fmt: skip
        assert r.status_code == 400, r.text
        message = r.json()["message"]
        assert "AAPL" in message and "2024-03-01" in message, message
        assert not _INTERNAL.search(message), message


def test_an_ofx_number_error_names_the_element() -> None:
    bad = (
        f"<BUYSTOCK><INVBUY>{_invtran('B2', '0103')}{AAPL}<UNITS>10</UNITS>"
        f"<UNITPRICE>15O.00</UNITPRICE><TOTAL>-1500.00</TOTAL>{FUND}</INVBUY>"
        "<BUYTYPE>BUY</BUYTYPE></BUYSTOCK>"
    )
    result = parse_ofx(ofx_v2([bad]))
    (error,) = result.errors
    assert error.field == "UNITPRICE", error
    assert "'15O.00' is not a number" in error.message and "B2" in error.message
    assert not _INTERNAL.search(error.message), error.message


@pytest.mark.parametrize("fitid", ["B3"])
def test_other_ofx_errors_keep_their_text(fitid: str) -> None:
    bad = (
        f"<BUYSTOCK><INVBUY>{_invtran(fitid, '0103')}{AAPL}<UNITS>10</UNITS>"
        f"<UNITPRICE>15.00</UNITPRICE><TOTAL>-150.00</TOTAL>{FUND}</INVBUY>"
        "<BUYTYPE>HOLD</BUYTYPE></BUYSTOCK>"
    )
    (error,) = parse_ofx(ofx_v2([bad])).errors
    assert fitid in error.message and error.line > 0


def test_a_harvest_recommendation_names_the_symbol(api: Api) -> None:
    _, h = api.user()
    pid = api.client.post("/api/portfolios/", json={"name": "h"}, headers=h).json()["id"]
    r = _post(api, h, portfolio=pid, asset_symbol="WMT", transaction_type="buy", quantity="10",
              price="100000", transaction_date="2025-01-02")  # fmt: skip
    assert r.status_code == 201, r.text
    got = api.client.get("/api/tax/loss-harvesting/", headers=h).json()["opportunities"]
    (o,) = [x for x in got if x["position"]["asset_symbol"] == "WMT"]
    assert "WMT" in o["recommendation"], o["recommendation"]
    assert not re.search(r"\d+:[A-Z]", o["recommendation"]), o["recommendation"]
