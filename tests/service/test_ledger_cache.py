"""The ledger read through the derivation cache equals a fresh read and derivation, at every
ledger version, and the columns equal the rows as the ORM reads them."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
from sqlalchemy import select

from service.db import Database
from service.db.models import Portfolio, Transaction, User
from service.ledger import derived, read
from service.ledger.cache import cache_for
from service.ledger.columns import LedgerColumns, load_columns
from service.ledger.lots import ledger_rows_with_actions, load_ledger, match_rows
from tests.service.conftest import Api


async def _user_id(db: Database, name: str) -> int:
    async with db.read() as s:
        return int((await s.execute(select(User.id).where(User.username == name))).scalar_one())


async def _cached_and_fresh(db: Database, user_id: int, pid: int) -> tuple:
    async with db.read() as s:
        conn = await s.connection()
        cached = await read.columns(conn, user_id)
        at = await read.version(conn, user_id)
        fresh = await load_columns(conn, user_id, at)
        return (
            cached,
            fresh,
            await read.balances(conn, user_id),
            derived.balances(fresh),
            await read.history_input(conn, user_id, pid),
            derived.history_input(fresh, pid),
        )


async def _lots(db: Database, user_id: int, portfolio_id: int | None = None) -> tuple:
    """The user's lot ledger (or one portfolio's part of it) through the cache, and matched
    afresh from the rows as queried."""
    async with db.read() as s:
        grouped = await load_ledger(s, user_id, portfolio_id)
        assert grouped is not None
        cached = grouped.whole()  # every piece, in sell order, from the parts kept per group
        methods = dict(
            (await s.execute(select(Portfolio.id, Portfolio.lot_method).where(Portfolio.user_id == user_id))).tuples().all()
        )
        rows, actions = await ledger_rows_with_actions(s, list(methods), None)
        fresh = match_rows(rows, methods, actions)
        if portfolio_id is not None:
            fresh = fresh.only({n for n in fresh.symbols if n.startswith(f"{portfolio_id}:")})
        return cached, fresh


async def _orm_rows(db: Database, user_id: int) -> dict[int, tuple]:
    async with db.read() as s:
        rows = await s.execute(
            select(Transaction)
            .join(Portfolio, Portfolio.id == Transaction.portfolio_id)
            .where(Portfolio.user_id == user_id)
        )
        return {
            t.id: (t.transaction_type, t.quantity, t.price, t.fees, t.ratio, t.cash, t.transaction_date)
            for t in rows.scalars()
        }


def _same_columns(a: LedgerColumns, b: LedgerColumns) -> None:
    assert a.version == b.version
    for name in ("id", "portfolio", "symbol", "target", "date", "kind", "currency", "lot"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    for name in ("quantity", "price", "fees", "ratio", "basis_allocation", "cash"):
        assert getattr(a, name).to_decimal() == getattr(b, name).to_decimal(), name
    assert (a.symbols, a.currencies, a.portfolios) == (b.symbols, b.currencies, b.portfolios)


def _check(api: Api, user_id: int, pid: int) -> LedgerColumns:
    cached, fresh, bal, bal_fresh, hist, hist_fresh = api.call(_cached_and_fresh, api.db, user_id, pid)
    _same_columns(cached, fresh)
    assert bal == bal_fresh
    for name in ("symbol", "kind", "quantity", "price", "fees", "date", "currency"):
        assert np.array_equal(getattr(hist, name), getattr(hist_fresh, name)), name
    for part in (None, pid):  # the whole ledger, and the portfolio's part (cached apart)
        cached_lots, fresh_lots = api.call(_lots, api.db, user_id, part)
        for field in ("symbols", "method", "lot_names", "symbol_methods"):
            assert getattr(cached_lots, field) == getattr(fresh_lots, field), field
        for field in ("open_lots", "realized", "dividends", "buys", "groups"):
            assert np.array_equal(getattr(cached_lots, field), getattr(fresh_lots, field)), field
    orm = api.call(_orm_rows, api.db, user_id)
    assert sorted(orm) == sorted(fresh.id.tolist())
    kinds = fresh.kind_names()
    for i, tid in enumerate(fresh.id.tolist()):
        kind, q, p, f, ratio, cash, day = orm[tid]
        assert kinds[i] == kind
        assert fresh.quantity.take(np.array([i])).to_decimal() == [q]
        assert fresh.price.take(np.array([i])).to_decimal() == [p]
        assert fresh.fees.take(np.array([i])).to_decimal() == [f]
        assert fresh.ratio.take(np.array([i])).to_decimal() == [ratio]
        assert fresh.cash.take(np.array([i])).to_decimal() == [cash]
        assert fresh.date[i].astype(object) == day
    return cached


def test_cached_ledger_equals_a_fresh_derivation_at_every_version(api: Api) -> None:
    name, h = api.user()
    user_id = api.call(_user_id, api.db, name)
    pid = api.client.post("/api/portfolios/", json={"name": "c", "base_currency": "USD"}, headers=h).json()["id"]
    other = api.client.post("/api/portfolios/", json={"name": "d"}, headers=h).json()["id"]
    rows = [
        {"portfolio": pid, "transaction_type": "deposit", "price": "10000", "transaction_date": "2024-01-02"},
        {"portfolio": pid, "transaction_type": "deposit", "price": "500", "currency": "EUR",
         "transaction_date": "2024-01-02"},
        {"portfolio": pid, "asset_symbol": "AAPL", "transaction_type": "buy", "quantity": "10",
         "price": "150.12345678", "fees": "1", "transaction_date": "2024-01-03"},
        {"portfolio": other, "asset_symbol": "AAPL", "transaction_type": "buy", "quantity": "3",
         "price": "149", "transaction_date": "2024-01-03"},
        {"portfolio": pid, "asset_symbol": "MSFT", "transaction_type": "buy", "quantity": "2.5",
         "price": "300", "transaction_date": "2024-01-04"},
        {"portfolio": pid, "asset_symbol": "AAPL", "transaction_type": "split", "split_ratio": "4",
         "transaction_date": "2024-02-01"},
        {"portfolio": pid, "asset_symbol": "AAPL", "transaction_type": "sell", "quantity": "8",
         "price": "40", "fees": "0.5", "transaction_date": "2024-03-01"},
        {"portfolio": pid, "asset_symbol": "MSFT", "transaction_type": "dividend", "quantity": "2.5",
         "price": "0.75", "transaction_date": "2024-03-15"},
        {"portfolio": pid, "transaction_type": "fee", "price": "12.34", "transaction_date": "2024-03-20"},
        # amounts of 1e9 and above cross the read as text, the rest as integer units
        {"portfolio": pid, "transaction_type": "deposit", "price": "123456789012.12345678",
         "transaction_date": "2024-03-21"},
        {"portfolio": pid, "transaction_type": "withdrawal", "price": "1000000000",
         "transaction_date": "2024-03-22"},
    ]  # fmt: skip
    seen: set[int] = set()
    for body in rows:
        r = api.client.post("/api/transactions/", json=body, headers=h)
        assert r.status_code == 201, r.text
        cols = _check(api, user_id, pid)
        assert cols.version not in seen  # every write moved the version
        seen.add(cols.version)
        _check(api, user_id, pid)  # warm: the kept value, still equal
    assert Decimal(str(api.call(_cached_and_fresh, api.db, user_id, pid)[2][pid]["EUR"])) == 500
    # an edit and deletes move it too (a cash row's and a security row's)
    listed = api.client.get(f"/api/transactions/?portfolio_id={pid}", headers=h).json()["results"]
    fee = next(t["id"] for t in listed if t["transaction_type"] == "fee")
    buy = next(t["id"] for t in listed if t["transaction_type"] == "buy" and t["asset_symbol"] == "MSFT")
    body = {"portfolio": pid, "asset_symbol": "MSFT", "transaction_type": "buy", "quantity": "3",
            "price": "301.5", "transaction_date": "2024-01-05"}  # fmt: skip
    assert api.client.put(f"/api/transactions/{buy}/", json=body, headers=h).status_code == 200
    cols = _check(api, user_id, pid)
    assert cols.version not in seen
    assert api.client.delete(f"/api/transactions/{fee}/", headers=h).status_code == 204
    cols = _check(api, user_id, pid)
    assert fee not in cols.id.tolist()
    dividend = next(t["id"] for t in listed if t["transaction_type"] == "dividend")
    assert api.client.delete(f"/api/transactions/{dividend}/", headers=h).status_code == 204
    assert dividend not in _check(api, user_id, pid).id.tolist()
    # the typed writes moved the kept columns along (no read of the ledger after them)
    cache = cache_for(api.db.engine.sync_engine)
    assert cache.advances >= len(rows) + 2
    # and the lot ledger was spliced from the previous version's (not after the writes that
    # brought a symbol into a portfolio: those derive it whole)
    assert cache.hinted >= 6
