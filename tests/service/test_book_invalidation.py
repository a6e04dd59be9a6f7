"""The kept portfolio book equals the derivation after a write through every route.

A process keeps each user's book (``service/portfolios/book.py``) while the user's
ledger version is unchanged; every write moves that version in its own transaction
(``derive.lock_user_ledger``). Here a book is kept (a listing), then a write goes
through one route: the API (portfolios, positions, transactions, lot method,
statement import), the CLI's ``import-transactions`` (its own ``Database``, as
another process would) or a second app on the same database (another worker). After
each write the next listing must serve a book equal to one read afresh, whose
positions equal the lots derived from the ledger.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import pytest

from quantcore.tax.lots import from_fixed
from service.cli import main
from service.db import Database
from service.ledger import positions as derive
from service.ledger.book import Book, load_book
from service.ledger.lots import match_rows, split_symbol
from tests.service.conftest import Api
from tests.service.test_imports_api import ACCOUNT, SECLIST, ofx_v2

BUY = {"quantity": "10", "price": "100.00", "transaction_date": "2026-01-05"}


async def _fresh(
    db: Database, user_id: int
) -> tuple[Book, dict[tuple[int, str], tuple[float, float]]]:
    """A book read afresh, and the positions derived from the ledger (quantity, basis)."""
    async with db.read() as s:
        book = await load_book(await s.connection(), user_id, dt.date.today())
        ledger = await derive.read_ledger(s, user_id, None)
    want: dict[tuple[int, str], tuple[float, float]] = {}
    if ledger.rows:
        lots = match_rows(ledger.rows, ledger.methods)
        for i, q, b in zip(*lots.position_totals(), strict=True):
            pid, symbol = split_symbol(lots.symbols[i])
            want[pid, symbol] = (float(from_fixed(int(q))), float(from_fixed(int(b))))
    return book, want


def _held(book: Book) -> dict[tuple[int, str], tuple[float, float]]:
    return {
        (book.portfolios[int(g)][0], book.symbols[int(s)]): (float(q), float(c))
        for g, s, q, c in zip(
            book.group, book.symbol_of, book.quantity, book.cost_basis, strict=True
        )
    }


class Checker:
    """Lists the user's portfolios on ``api`` and compares the kept book with the derivation."""

    def __init__(self, api: Api, headers: dict[str, str]) -> None:
        self.api, self.headers = api, headers
        self.user_id = int(api.client.get("/api/auth/me/", headers=headers).json()["id"])
        self.versions: list[int] = []

    def __call__(self) -> None:
        r = self.api.client.get("/api/portfolios/?limit=100", headers=self.headers)
        assert r.status_code == 200, r.text
        kept = self.api.client.app.state.resources.books._books[self.user_id]
        fresh, derived = self.api.call(_fresh, self.api.db, self.user_id)
        assert kept.version == fresh.version
        assert kept.portfolios == fresh.portfolios
        held = _held(kept)
        assert held.keys() == derived.keys()
        for key, (q, c) in derived.items():
            assert held[key] == pytest.approx((q, c), rel=1e-12, abs=1e-9), key
        names = {p["id"]: p["name"] for p in r.json()["results"]}
        assert names == {row[0]: row[1] for row in fresh.portfolios}
        assert not self.versions or kept.version > self.versions[-1]  # the write moved it
        self.versions.append(kept.version)


def test_every_route_invalidates_the_kept_book(
    api_factory: Callable[..., Api], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, two = api_factory(), api_factory()
    _, h = one.user("inv")
    check = Checker(one, h)
    c = one.client

    r = c.post("/api/portfolios/", json={"name": "a"}, headers=h)
    pid = r.json()["id"]
    check()
    other = c.post("/api/portfolios/", json={"name": "b"}, headers=h).json()["id"]
    check()
    tx = {"portfolio": pid, "asset_symbol": "AAPL", "transaction_type": "buy", **BUY}
    t1 = c.post("/api/transactions/", json=tx, headers=h).json()["id"]
    check()
    body = {"asset_symbol": "MSFT", "quantity": "3", "purchase_price": "50.00",
            "purchase_date": "2026-01-06"}  # fmt: skip
    assert c.post(f"/api/portfolios/{other}/positions/", json=body, headers=h).status_code == 201
    check()
    sell = {**tx, "transaction_type": "sell", "quantity": "4", "transaction_date": "2026-02-02"}
    t2 = c.post("/api/transactions/", json=sell, headers=h).json()["id"]
    check()
    assert (
        c.put(f"/api/transactions/{t1}/", json={**tx, "quantity": "12"}, headers=h).status_code
        == 200
    )
    check()
    lifo = {"lot_method": "lifo"}
    assert c.put(f"/api/tax/portfolios/{pid}/settings/", json=lifo, headers=h).status_code == 200
    check()
    assert c.delete(f"/api/transactions/{t2}/", headers=h).status_code == 204
    check()
    assert c.put(f"/api/portfolios/{pid}/", json={"name": "a2"}, headers=h).status_code == 200
    check()

    # a statement import through the API
    statement = ofx_v2(ACCOUNT, seclist=SECLIST)
    imported = c.post("/api/portfolios/", json={"name": "broker"}, headers=h).json()["id"]
    check()
    r = c.post(f"/api/portfolios/{imported}/import/", files={"file": ("s.ofx", statement)},
               headers=h)  # fmt: skip
    assert r.status_code == 200, r.text
    check()

    # the CLI: its own Database on the same file or server, like another process
    cli = c.post("/api/portfolios/", json={"name": "cli"}, headers=h).json()["id"]
    check()
    monkeypatch.setenv("QC_DATABASE_URL", one.settings.database)
    monkeypatch.setenv("QC_DATA_DIR", str(tmp_path))
    path = tmp_path / "statement.ofx"
    path.write_bytes(statement)
    assert main(["import-transactions", str(cli), str(path)]) == 0
    check()

    # another worker: a second app (its own Database and books) on the same database
    assert two.client.post("/api/transactions/", json=tx, headers=h).status_code == 201
    check()
    body = {"name": "renamed by two"}
    assert two.client.put(f"/api/portfolios/{other}/", json=body, headers=h).status_code == 200
    check()
    assert two.client.delete(f"/api/portfolios/{other}/", headers=h).status_code == 204
    check()
    assert c.delete(f"/api/portfolios/{pid}/", headers=h).status_code == 204
    check()
