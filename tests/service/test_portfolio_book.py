"""The in-memory portfolio book: ledger versions kept by triggers, staleness, prices, LRU.

The book (``service/portfolios/book.py``) is only correct if every write moves the
user's ledger version, whoever makes it, and if a process notices writes made by
another process. These tests make writes through the API, through a second app on
the same database (a second worker) and through plain SQL, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from sqlalchemy import text

from quantcore.portfolio import mark_positions
from service.marketdata.provider import Quote
from service.portfolios.book import _VERSION, Book, BookCache
from tests.service.conftest import Api

BUY = {"quantity": "10", "price": "100.00", "transaction_date": "2026-01-05"}


def _version(api: Api, user_id: int) -> int:
    return int(api.call(api.db.read_scalar, _VERSION, {"user_id": user_id}))


def _me(api: Api, headers: dict[str, str]) -> int:
    return int(api.client.get("/api/auth/me/", headers=headers).json()["id"])


def _sql(api: Api, statement: str, **params: Any) -> None:
    async def run() -> None:
        async with api.db.engine.begin() as conn:
            await conn.execute(text(statement), params)

    api.call(run)


def test_every_write_moves_the_ledger_version(api: Api) -> None:
    _, h = api.user()
    uid = _me(api, h)
    seen = [_version(api, uid)]

    def moved() -> bool:
        seen.append(_version(api, uid))
        return seen[-1] > seen[-2]

    pid = api.client.post("/api/portfolios/", json={"name": "a"}, headers=h).json()["id"]
    assert moved()
    tx = {"portfolio": pid, "asset_symbol": "AAPL", "transaction_type": "buy", **BUY}
    assert api.client.post("/api/transactions/", json=tx, headers=h).status_code == 201
    assert moved()
    sell = {**tx, "transaction_type": "sell", "quantity": "4"}
    assert api.client.post("/api/transactions/", json=sell, headers=h).status_code == 201
    assert moved()
    body = {"name": "renamed"}
    assert api.client.put(f"/api/portfolios/{pid}/", json=body, headers=h).status_code == 200
    assert moved()
    # a statement outside the service: the trigger still sees it
    _sql(api, "UPDATE positions SET quantity = '1' WHERE portfolio_id = :pid", pid=pid)
    assert moved()
    assert api.client.delete(f"/api/portfolios/{pid}/", headers=h).status_code == 204
    assert moved()


def test_another_users_writes_leave_the_version_alone(api: Api) -> None:
    _, h1 = api.user()
    _, h2 = api.user()
    uid1 = _me(api, h1)
    before = _version(api, uid1)
    api.client.post("/api/portfolios/", json={"name": "b"}, headers=h2)
    assert _version(api, uid1) == before


def _listing(api: Api, h: dict[str, str]) -> list[tuple[str, str, int]]:
    results = api.client.get("/api/portfolios/", headers=h).json()["results"]
    return [(r["name"], r["total_value"], r["position_count"]) for r in results]


def test_a_second_worker_sees_the_first_workers_writes(
    api_factory: Callable[..., Api],
) -> None:
    """Two apps on one database stand for two worker processes, each with its own books."""
    one, two = api_factory(), api_factory()
    _, h = one.user()
    pid = one.client.post("/api/portfolios/", json={"name": "p"}, headers=h).json()["id"]
    assert _listing(one, h) == [("p", "0.00", 0)]  # now kept in worker one

    tx = {"portfolio": pid, "asset_symbol": "SPY", "transaction_type": "buy", **BUY}
    assert two.client.post("/api/transactions/", json=tx, headers=h).status_code == 201
    after_buy = _listing(one, h)
    assert after_buy == _listing(two, h)
    assert after_buy[0][2] == 1
    detail = one.client.get(f"/api/portfolios/{pid}/", headers=h).json()
    assert (detail["total_value"], detail["position_count"]) == after_buy[0][1:]

    _sql(two, "UPDATE positions SET quantity = '20' WHERE portfolio_id = :pid", pid=pid)
    doubled = _listing(one, h)
    assert float(doubled[0][1]) == pytest.approx(
        2 * float(after_buy[0][1]), abs=0.02
    )  # both rounded to cents

    assert two.client.delete(f"/api/portfolios/{pid}/", headers=h).status_code == 204
    assert _listing(one, h) == []
    assert one.client.get(f"/api/portfolios/{pid}/", headers=h).status_code == 404


class _Market:
    """A stand-in for :class:`MarketData` whose prices the test sets."""

    def __init__(self, prices: dict[str, tuple[float, float]]) -> None:
        self.prices = prices
        self.calls = 0

    def quotes(self, symbols: list[str]) -> dict[str, Quote]:
        self.calls += 1
        now = dt.datetime(2026, 1, 5, tzinfo=dt.UTC)
        return {
            s: Quote(s, p, c, 0.0, 0, now)
            for s in symbols
            if (pc := self.prices.get(s)) is not None
            for p, c in [pc]
        }


def _book() -> Book:
    created = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    portfolios = [
        (7, "x", "", "SPY", True, created, created),
        (9, "y", "", "SPY", True, created, created),
    ]
    positions = [(7, 2.0, 150.0, "AAA"), (9, 3.0, 330.0, "BBB"), (7, 1.5, 60.0, "BBB")]
    return Book.from_rows(1, portfolios, positions)


def test_valuation_is_kept_until_a_price_moves() -> None:
    book = _book()
    market = _Market({"AAA": (80.0, 1.0), "BBB": (110.0, -2.0)})
    first = book.reads(market)  # type: ignore[arg-type]
    assert book.reads(market) is first  # type: ignore[arg-type]
    # the same numbers as quantcore on the rows directly
    marks = mark_positions(
        np.array([2.0, 1.5, 3.0]),
        np.array([150.0, 60.0, 330.0]),
        np.array([80.0, 110.0, 110.0]),
        np.array([1.0, -2.0, -2.0]),
    )
    assert [r.total_value for r in first] == [
        f"{marks.value[0] + marks.value[1]:.2f}",
        f"{marks.value[2]:.2f}",
    ]
    assert [r.position_count for r in first] == [2, 1]

    market.prices["BBB"] = (111.0, -1.0)
    moved = book.reads(market)  # type: ignore[arg-type]
    assert moved is not first
    assert moved[1].total_value == "333.00"
    assert moved[1].daily_change == "-3.00"

    del market.prices["AAA"]  # an unquoted symbol: no value for its position
    assert book.reads(market)[0].total_value == "166.50"  # type: ignore[arg-type]  # 1.5 x 111


def test_book_cache_keeps_the_most_recent_users() -> None:
    cache = BookCache(max_users=2)
    books = {uid: _book() for uid in (1, 2, 3)}
    for uid in (1, 2, 3):
        cache.keep(uid, books[uid])
    assert list(cache._books) == [2, 3]

    older = Book.from_rows(0, [], [])
    cache.keep(3, older)  # a read that finished late does not replace a newer book
    assert cache._books[3] is books[3]
    assert list(cache._books) == [2, 3]

    off = BookCache(max_users=0)
    off.keep(1, books[1])
    assert not off._books
