"""A CSV export is one snapshot: a row written while it streams is not in the file and
neither repeats nor drops another row of it, on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import datetime as dt
import io
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import select

from service.db import Database
from service.db.models import Asset, Portfolio, Transaction
from service.transactions import export
from tests.service.conftest import Api


async def _stream_with_a_write_between_pages(db: Database, pid: int) -> list[str]:
    async with db.read() as s:
        user_id = (await s.execute(select(Portfolio.user_id).where(Portfolio.id == pid))).scalar_one()
        asset_id = (await s.execute(select(Asset.id).where(Asset.symbol == "AAPL"))).scalar_one()
    stream = export.transaction_csv(
        db, user_id, portfolio_id=pid, asset_symbol=None, transaction_type=None,
        date_from=None, date_to=None,
    )  # fmt: skip
    lines: Any = stream.iterator
    text = [await anext(lines) for _ in range(3)]  # the header and the first page (2 rows)
    async with db.write() as s:  # the newest row (first in the list's order) and the oldest
        for day in (dt.date(2030, 1, 2), dt.date(2020, 1, 2)):
            s.add(Transaction(portfolio_id=pid, asset_id=asset_id, transaction_type="buy",
                              quantity=Decimal(1), price=Decimal(1), fees=Decimal(0),
                              transaction_date=day))  # fmt: skip
    text += [line async for line in lines]
    return [row["id"] for row in csv.DictReader(io.StringIO("".join(text)))]


def test_a_write_during_an_export_changes_no_row_of_it(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, h = api.user()
    pid = api.client.post("/api/portfolios/", json={"name": "e"}, headers=h).json()["id"]
    made = []
    for day in range(2, 7):
        r = api.client.post("/api/transactions/", json={
            "portfolio": pid, "asset_symbol": "AAPL", "transaction_type": "buy", "quantity": "1",
            "price": "10", "transaction_date": f"2024-01-0{day}"}, headers=h)  # fmt: skip
        assert r.status_code == 201, r.text
        made.append(str(r.json()["id"]))
    monkeypatch.setattr(export, "CHUNK", 2)
    ids = api.call(_stream_with_a_write_between_pages, api.db, pid)
    assert ids == made[::-1]  # newest first, each once, as committed when the export began


def test_pages_of_one_day_follow_on_by_id(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each page starts after the last row of the one before (date, then id): rows of one
    day split across pages are each in the file once, in the list's order."""
    _, h = api.user()
    pid = api.client.post("/api/portfolios/", json={"name": "e"}, headers=h).json()["id"]
    for day in ("2024-01-02", "2024-01-03", "2024-01-03", "2024-01-03", "2024-01-03", "2024-01-04", "2024-01-03"):
        r = api.client.post("/api/transactions/", json={
            "portfolio": pid, "asset_symbol": "AAPL", "transaction_type": "buy", "quantity": "1",
            "price": "10", "transaction_date": day}, headers=h)  # fmt: skip
        assert r.status_code == 201, r.text
    listed = api.client.get(f"/api/transactions/?portfolio_id={pid}", headers=h).json()["results"]
    for chunk in (1, 2, 3, 7, 8):
        monkeypatch.setattr(export, "CHUNK", chunk)
        r = api.client.get(f"/api/transactions/?portfolio_id={pid}&format=csv", headers=h)
        got = [row["id"] for row in csv.DictReader(io.StringIO(r.text))]
        assert got == [str(t["id"]) for t in listed], chunk
