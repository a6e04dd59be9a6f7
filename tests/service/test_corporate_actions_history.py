"""A portfolio's value history across corporate actions: ledger quantities x unadjusted closes.

On a 4-for-1 split's date the unadjusted close falls to a quarter and the ledger's
quantity quadruples, so the value (and the day's return) shows no 75 % crash.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd

from quantcore.portfolio import ledger_holdings
from service.analytics.history import value_history
from service.analytics.prices import ClosePanel
from service.analytics.services import ledger_rows
from tests.service.conftest import Api

DAYS = np.array(["2024-06-03", "2024-06-04", "2024-06-05", "2024-06-06"], dtype="datetime64[D]")


async def _rows(db, pid: int):
    async with db.read() as s:
        return await ledger_rows(s, pid)


def _setup(api: Api, actions: list[dict]) -> tuple[dict[str, str], int]:
    _, h = api.user()
    pid = int(api.client.post("/api/portfolios/", json={"name": "h"}, headers=h).json()["id"])
    body = {"portfolio": pid, "asset_symbol": "AAPL", "transaction_type": "buy", "quantity": "10",
            "price": "100", "transaction_date": "2024-06-03"}  # fmt: skip
    assert api.client.post("/api/transactions/", json=body, headers=h).status_code == 201
    for a in actions:
        r = api.client.post("/api/transactions/", json={"portfolio": pid, **a}, headers=h)
        assert r.status_code == 201, r.text
    return h, pid


def test_split_is_not_a_crash(api: Api) -> None:
    _, pid = _setup(api, [{"asset_symbol": "AAPL", "transaction_type": "split", "split_ratio": "4",
                           "transaction_date": "2024-06-05"}])  # fmt: skip
    rows = api.call(_rows, api.db, pid)
    closes = np.array([[100.0], [100.0], [25.0], [26.0]])  # unadjusted: the split on 06-05
    h = value_history(rows, ClosePanel(DAYS, closes, ("AAPL",)))
    assert h.value.tolist() == [1000.0, 1000.0, 1000.0, 1040.0]
    assert h.holdings[:, 0].tolist() == [10.0, 10.0, 40.0, 40.0]
    assert np.allclose(h.returns[1:], [0.0, 0.0, 0.04])


def test_merger_with_cash_keeps_the_value_with_its_cash_out(api: Api) -> None:
    _, pid = _setup(api, [{"asset_symbol": "AAPL", "transaction_type": "merger", "target_symbol": "MSFT",
                           "ratio": "2", "cash_per_share": "20", "price": "40",
                           "transaction_date": "2024-06-05"}])  # fmt: skip
    rows = api.call(_rows, api.db, pid)
    # AAPL worth 2 x 40 + 20 = 100 a share on the merger: 20 MSFT at 40 plus $200 cash
    closes = np.array([[100.0, 40.0], [100.0, 40.0], [np.nan, 40.0], [np.nan, 41.0]])
    h = value_history(rows, ClosePanel(DAYS, closes, ("AAPL", "MSFT")))
    assert h.holdings[-1].tolist() == [0.0, 20.0]
    assert h.value.tolist() == [1000.0, 1000.0, 800.0, 820.0]
    assert h.outflow.tolist() == [0.0, 0.0, 200.0, 0.0]
    assert np.allclose(h.returns[1:], [0.0, 0.0, 0.025])


def test_quantcore_holdings_match_the_service_history() -> None:
    t = pd.DataFrame({"symbol": ["AAPL", "AAPL", "AAPL"], "date": ["2024-06-03", "2024-06-05", "2024-06-06"],
                      "type": ["buy", "split", "sell"], "quantity": [10, None, 8], "price": [100, None, 26],
                      "ratio": [None, 4, None]})  # fmt: skip
    held = ledger_holdings(t, [dt.date(2024, 6, d) for d in (3, 4, 5, 6)])
    assert held["AAPL"].tolist() == [10.0, 10.0, 40.0, 32.0]
