"""A user's portfolios and positions kept in memory between requests, checked per request.

Listing portfolios means valuing every position of every portfolio. Reading those
rows again for each request costs more than the rest of the request together, so
each process keeps the user's *book*: the portfolio rows and the position arrays,
tagged with the user's ledger version (``ledger_versions``). The one invalidation
rule: every write of the user's portfolios, transactions or positions runs
:func:`service.portfolios.derive.lock_user_ledger` in its transaction, which bumps
that row, so the version moves with the commit, from any process. A request reads
that one integer (:meth:`service.db.Database.read_scalar`); only when it moved are
the rows read again, in one session (never older than the version read first). The valuation is kept too, keyed by the quotes it used, so it is
recomputed only when a price or the ledger changed.

Daily change counts what was held at the previous close: the book also keeps the
buys of the last week, and shares bought on or after a quote's day add
``value - cost`` instead of ``quantity x change`` (:func:`quantcore.portfolio.mark_positions`).
"""

from __future__ import annotations

import datetime as dt
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import Float, bindparam, cast, select
from sqlalchemy.ext.asyncio import AsyncConnection

from quantcore.portfolio import PortfolioTotals, mark_positions, portfolio_totals
from service import formatting as fmt
from service.assets.market import MarketData
from service.db import Database
from service.db.models import Asset, LedgerVersion, Portfolio, Position, Transaction
from service.portfolios.schemas import PortfolioRead

__all__ = [
    "POSITION_ROWS",
    "RECENT_BUYS",
    "Book",
    "BookCache",
    "PortfolioRow",
    "load_book",
    "read_model",
    "read_version",
    "recent_since",
    "warm_up",
]

_P = Portfolio.__table__.c
_POS = Position.__table__.c
_ASSET = Asset.__table__.c

#: ``(id, name, description, benchmark_symbol, is_active, created_at, updated_at)``.
PortfolioRow = tuple[Any, ...]
_PORTFOLIO_COLUMNS = (
    _P.id,
    _P.name,
    _P.description,
    _P.benchmark_symbol,
    _P.is_active,
    _P.created_at,
    _P.updated_at,
)
_VERSION = select(LedgerVersion.__table__.c.version).where(
    LedgerVersion.__table__.c.user_id == bindparam("user_id")
)
_USER_PORTFOLIOS = (
    select(*_PORTFOLIO_COLUMNS).where(_P.user_id == bindparam("user_id")).order_by(_P.id)
)
#: ``(portfolio_id, quantity, cost_basis, symbol)`` of positions: add a ``where``.
POSITION_ROWS = select(
    _POS.portfolio_id, cast(_POS.quantity, Float), cast(_POS.cost_basis, Float), _ASSET.symbol
).join_from(Position.__table__, Asset.__table__, _ASSET.id == _POS.asset_id)
_USER_POSITIONS = POSITION_ROWS.join(Portfolio.__table__, _P.id == _POS.portfolio_id).where(
    _P.user_id == bindparam("user_id")
)
_T = Transaction.__table__.c
#: Ledger rows that add shares not held at a previous close: buys, and splits and stock
#: dividends (their ``ratio`` multiplies the shares held).
_ADDS_SHARES = ("buy", "split", "stock_dividend")
#: ``(portfolio_id, symbol, date, quantity, price, fees, type, ratio)`` of the rows of
#: :data:`_ADDS_SHARES` dated on or after ``since``: add a ``where`` on the portfolios.
RECENT_BUYS = (
    select(
        _T.portfolio_id,
        _ASSET.symbol,
        _T.transaction_date,
        cast(_T.quantity, Float),
        cast(_T.price, Float),
        cast(_T.fees, Float),
        _T.transaction_type,
        cast(_T.ratio, Float),
    )
    .join_from(Transaction.__table__, Asset.__table__, _ASSET.id == _T.asset_id)
    .where(_T.transaction_type.in_(_ADDS_SHARES), _T.transaction_date >= bindparam("since"))
)
_USER_RECENT = RECENT_BUYS.join(Portfolio.__table__, _P.id == _T.portfolio_id).where(
    _P.user_id == bindparam("user_id")
)


def recent_since() -> dt.date:
    """The first day whose buys a book keeps (a quote's previous close is within a week)."""
    return dt.datetime.now(dt.UTC).date() - dt.timedelta(days=7)


@dataclass(slots=True)
class Book:
    """One user's portfolios (rows in id order) and all their positions as arrays."""

    version: int
    portfolios: tuple[PortfolioRow, ...]
    group: np.ndarray  # per position: index into ``portfolios``
    quantity: np.ndarray
    cost_basis: np.ndarray
    symbols: tuple[str, ...]  # distinct, sorted
    symbol_of: np.ndarray  # per position: index into ``symbols``
    #: shares added lately ``(position index, day ordinal, quantity, cost)``: buys at
    #: their cost, and the shares a split or stock dividend added, at no cost
    recent: tuple[tuple[int, int, float, float], ...] = ()
    _valued: tuple[tuple[float, ...], list[PortfolioRead]] | None = field(default=None)

    @classmethod
    def from_rows(
        cls,
        version: int,
        portfolios: Sequence[PortfolioRow],
        positions: Sequence[Any],
        recent: Sequence[Any] = (),
    ) -> Book:
        """From portfolio rows, position rows ``(portfolio_id, quantity, cost_basis, symbol)``
        and recent rows of :data:`RECENT_BUYS`.

        A split or stock dividend of ratio ``r`` dated on or after a quote's day turned
        the ``q / r`` shares held at that close into the ``q`` held now: it adds
        ``q (1 - 1/r)`` shares at no cost (negative for a reverse split), so the day's
        change is ``value - q / r x previous close`` as the quote's unadjusted closes
        give it. ``q`` is the position as it stands (shares bought after the split on
        the same days are counted as their own buys as well).
        """
        index = {row[0]: i for i, row in enumerate(portfolios)}
        pid, qty, cost, symbol = zip(*positions, strict=True) if positions else ((), (), (), ())
        symbols = tuple(sorted(set(symbol)))
        where = {s: i for i, s in enumerate(symbols)}
        at = {(p, s): i for i, (p, s) in enumerate(zip(pid, symbol, strict=True))}
        kept: list[tuple[int, int, float, float]] = []
        for p, s, day, q, price, fees, *action in recent:
            i = at.get((p, s))
            if i is None:
                continue
            kind, ratio = action if action else ("buy", None)
            if kind == "buy":
                kept.append((i, day.toordinal(), q, q * price + fees))
            elif ratio:
                kept.append((i, day.toordinal(), qty[i] * (1.0 - 1.0 / ratio), 0.0))
        return cls(
            version=version,
            portfolios=tuple(portfolios),
            group=np.fromiter(map(index.__getitem__, pid), np.int64, len(pid)),
            quantity=np.array(qty, np.float64),
            cost_basis=np.array(cost, np.float64),
            symbols=symbols,
            symbol_of=np.fromiter(map(where.__getitem__, symbol), np.intp, len(symbol)),
            recent=tuple(kept),
        )

    def quotes(self, market: MarketData) -> tuple[float, ...]:
        """``(price, change, day ordinal)`` of each symbol, flattened (NaN when no quote)."""
        found = market.quotes(list(self.symbols))
        nan = float("nan")
        out: list[float] = []
        for s in self.symbols:
            q = found.get(s)
            out += (
                (q.price, q.change, float(q.timestamp.date().toordinal()))
                if q is not None
                else (nan, nan, nan)
            )
        return tuple(out)

    def totals(self, quotes: tuple[float, ...], n: int) -> PortfolioTotals:
        """Per-portfolio totals at ``quotes`` (vectorized: :mod:`quantcore.portfolio`)."""
        triples = np.array(quotes, np.float64).reshape(-1, 3)
        price = triples[self.symbol_of, 0]
        change = triples[self.symbol_of, 1]
        new_qty = np.zeros(self.quantity.shape[0])
        new_cost = np.zeros(self.quantity.shape[0])
        for i, day, q, cost in self.recent:  # added on or after the quote's day
            if day >= triples[self.symbol_of[i], 2]:
                new_qty[i] += q
                new_cost[i] += cost
        marks = mark_positions(self.quantity, self.cost_basis, price, change, new_qty, new_cost)
        return portfolio_totals(self.group, n, marks)

    def reads(self, market: MarketData) -> list[PortfolioRead]:
        """Read models of every portfolio at the current quotes, in id order.

        Reused while the quotes are unchanged (NaN compares unequal, so an
        unquoted symbol is revalued each time: rare, and still right).
        """
        quotes = self.quotes(market)
        if self._valued is not None and self._valued[0] == quotes:
            return self._valued[1]
        totals = self.totals(quotes, len(self.portfolios))
        reads = [read_model(row, totals, i) for i, row in enumerate(self.portfolios)]
        self._valued = (quotes, reads)
        return reads


def read_model(row: PortfolioRow, totals: PortfolioTotals, i: int) -> PortfolioRead:
    """The read model of a portfolio row valued at position ``i`` of ``totals``."""
    return PortfolioRead(
        id=row[0],
        name=row[1],
        description=row[2],
        benchmark_symbol=row[3],
        is_active=bool(row[4]),
        total_value=fmt.money(float(totals.total_value[i])) or "0.00",
        daily_change=fmt.money(float(totals.daily_change[i])) or "0.00",
        daily_change_percent=fmt.percent(float(totals.daily_change_percent[i])) or "0.00",
        position_count=int(totals.position_count[i]),
        created_at=row[5],
        updated_at=row[6],
    )


async def read_version(conn: AsyncConnection, user_id: int) -> int:
    """The user's ledger version (``-1`` without a row: such a book is never kept)."""
    version = (await conn.execute(_VERSION, {"user_id": user_id})).scalar_one_or_none()
    return -1 if version is None else int(version)


async def load_book(conn: AsyncConnection, user_id: int, version: int | None = None) -> Book:
    """The user's portfolios and positions, tagged with ``version`` (read first when not given).

    The version is read before the rows, so the rows are never older than it (on
    SQLite one snapshot; on PostgreSQL a write committed in between only makes the
    rows newer, and the next request reloads).
    """
    if version is None:
        version = await read_version(conn, user_id)
    params = {"user_id": user_id}
    portfolios = [tuple(r) for r in await conn.execute(_USER_PORTFOLIOS, params)]
    positions = (await conn.execute(_USER_POSITIONS, params)).all()
    recent = (await conn.execute(_USER_RECENT, {**params, "since": recent_since()})).all()
    return Book.from_rows(version, portfolios, positions, recent)


def warm_up() -> None:
    """Value a one-position book once, so that the kernels are loaded before the first request."""
    now = dt.datetime.now(dt.UTC)
    book = Book.from_rows(0, [(1, "", "", "", True, now, now)], [(1, 1.0, 1.0, "X")])
    totals = book.totals((1.0, 0.0, float(now.toordinal())), 1)
    read_model(book.portfolios[0], totals, 0)


class BookCache:
    """The books of the ``max_users`` most recently seen users of this process (LRU).

    ``max_users=0`` disables keeping books: every request reads the rows.
    """

    def __init__(self, max_users: int = 10_000) -> None:
        self.max_users = max_users
        self._books: OrderedDict[int, Book] = OrderedDict()

    async def current(self, db: Database, user_id: int) -> Book:
        """The user's book: the kept one while the ledger version is unchanged, else read anew.

        The version check is :meth:`Database.read_scalar` (the one point read outside
        a session); the rows are read in one session, only when the version moved.
        """
        kept = self._books.get(user_id)
        if kept is not None:
            version = await db.read_scalar(_VERSION, {"user_id": user_id})
            if version == kept.version:
                self._books.move_to_end(user_id)
                return kept
        async with db.read() as session:
            book = await load_book(await session.connection(), user_id)
        self.keep(user_id, book)
        return book

    def keep(self, user_id: int, book: Book) -> None:
        """Remember ``book`` (a newer one kept meanwhile wins); on the event loop only."""
        if self.max_users <= 0 or book.version < 0:
            return
        kept = self._books.get(user_id)
        if kept is None or kept.version <= book.version:
            self._books[user_id] = book
        self._books.move_to_end(user_id)
        while len(self._books) > self.max_users:
            self._books.popitem(last=False)
