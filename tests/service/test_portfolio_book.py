"""The in-memory portfolio book: one invalidation rule, staleness, prices, LRU.

The book (``service/portfolios/book.py``) is only correct if every write moves the
user's ledger version, whoever makes it, and if a process notices writes made by
another process. Every service write calls ``derive.lock_user_ledger`` (lock and
bump) in its transaction; these tests make writes through the API and through a
second app on the same database (a second worker), on SQLite and PostgreSQL.
``test_book_invalidation.py`` checks the kept book against the derivation after
writes through every route.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import numpy as np
import pytest
from sqlalchemy import text

from quantcore.portfolio import mark_positions
from service.ledger.book import Book, BookCache, read_version
from service.marketdata.provider import Quote
from tests.service.conftest import Api

BUY = {"quantity": "10", "price": "100.00", "transaction_date": "2026-01-05"}


def _version(api: Api, user_id: int) -> int:
    async def run() -> int:
        async with api.db.read() as s:
            return await read_version(await s.connection(), user_id)

    return int(api.call(run))


def _me(api: Api, headers: dict[str, str]) -> int:
    return int(api.client.get("/api/auth/me/", headers=headers).json()["id"])


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
    created = api.client.post("/api/transactions/", json=tx, headers=h)
    assert created.status_code == 201
    assert moved()
    sell = {**tx, "transaction_type": "sell", "quantity": "4"}
    assert api.client.post("/api/transactions/", json=sell, headers=h).status_code == 201
    assert moved()
    tid = created.json()["id"]
    edit = {**tx, "quantity": "12"}
    assert api.client.put(f"/api/transactions/{tid}/", json=edit, headers=h).status_code == 200
    assert moved()
    body = {"name": "renamed"}
    assert api.client.put(f"/api/portfolios/{pid}/", json=body, headers=h).status_code == 200
    assert moved()
    assert api.client.delete(f"/api/portfolios/{pid}/", headers=h).status_code == 204
    assert moved()


def test_no_trigger_is_left_behind(api: Api) -> None:
    """The version is the application's alone (migration 0008 drops 0004's triggers)."""

    async def triggers() -> list[str]:
        sql = (
            "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal"
            if not api.db.is_sqlite
            else "SELECT name FROM sqlite_master WHERE type = 'trigger'"
        )
        async with api.db.engine.connect() as conn:
            return [r[0] for r in await conn.execute(text(sql))]

    assert [t for t in api.call(triggers) if t.startswith("qc_")] == []


def test_another_users_writes_leave_the_version_alone(api: Api) -> None:
    _, h1 = api.user()
    _, h2 = api.user()
    uid1 = _me(api, h1)
    api.client.post("/api/portfolios/", json={"name": "mine"}, headers=h1)
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

    assert two.client.post("/api/transactions/", json=tx, headers=h).status_code == 201
    doubled = _listing(one, h)
    assert float(doubled[0][1]) == pytest.approx(
        2 * float(after_buy[0][1]), abs=0.02
    )  # both rounded to cents

    body = {"name": "q"}
    assert two.client.put(f"/api/portfolios/{pid}/", json=body, headers=h).status_code == 200
    assert _listing(one, h)[0][0] == "q"
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
        (7, "x", "", "SPY", True, created, created, "USD", "track"),
        (9, "y", "", "SPY", True, created, created, "USD", "track"),
    ]
    positions = [
        (7, 2.0, 150.0, "AAA", "USD"),
        (9, 3.0, 330.0, "BBB", "USD"),
        (7, 1.5, 60.0, "BBB", "USD"),
    ]
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
