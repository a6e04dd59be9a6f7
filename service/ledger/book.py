"""A user's portfolios and positions kept in memory between requests, checked per request.

Listing portfolios means valuing every position of every portfolio. Reading those
rows again for each request costs more than the rest of the request together, so
each process keeps the user's *book*: the portfolio rows and the position arrays,
tagged with the user's ledger version (``ledger_versions``). The one invalidation
rule: every write of the user's portfolios, transactions or positions runs
:func:`service.ledger.positions.lock_user_ledger` in its transaction, which bumps
that row, so the version moves with the commit, from any process. A request reads
that one integer (:meth:`service.db.Database.read_scalar`); only when it moved are
the rows read again, in one session (never older than the version read first). The valuation is kept too, keyed by the quotes it used, so it is
recomputed only when a price or the ledger changed.

Daily change counts what was held at the previous close: the book also keeps the
buys of the last week, and shares bought on or after a quote's day add
``value - cost`` instead of ``quantity x change`` (:func:`quantcore.portfolio.mark_positions`).

Cash is derived with the rest (:mod:`service.ledger.cash`: the balance per currency
of each portfolio, from its ledger rows) when the book is read. Values are in each
portfolio's base currency: a position or a cash balance in another currency is
converted at the market's latest rate, and the day's change includes the rate's move
since the previous close (:func:`quantcore.portfolio.mark_positions` with rates).
"""

from __future__ import annotations

import datetime as dt
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np
from sqlalchemy import Float, bindparam, cast, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from quantcore.portfolio import PortfolioTotals, mark_positions, portfolio_totals
from service import formatting as fmt
from service.assets.market import MarketData
from service.db import Database
from service.db.models import Asset, LedgerVersion, Portfolio, Position, Transaction
from service.errors import NotFoundError
from service.ledger import read
from service.ledger.reads import CashBalanceRead, PortfolioRead
from service.pagination import PageParams

__all__ = [
    "POSITION_ROWS",
    "RECENT_BUYS",
    "Book",
    "BookCache",
    "PortfolioReads",
    "PortfolioRow",
    "load_book",
    "portfolio_reads",
    "read_model",
    "read_version",
    "recent_since",
    "warm_up",
]

_P = Portfolio.__table__.c
_POS = Position.__table__.c
_ASSET = Asset.__table__.c

#: ``(id, name, description, benchmark_symbol, is_active, created_at, updated_at,
#: base_currency, cash_policy)``.
PortfolioRow = tuple[Any, ...]
_PORTFOLIO_COLUMNS = (
    _P.id,
    _P.name,
    _P.description,
    _P.benchmark_symbol,
    _P.is_active,
    _P.created_at,
    _P.updated_at,
    _P.base_currency,
    _P.cash_policy,
)
_VERSION = select(LedgerVersion.__table__.c.version).where(
    LedgerVersion.__table__.c.user_id == bindparam("user_id")
)
_USER_PORTFOLIOS = (
    select(*_PORTFOLIO_COLUMNS).where(_P.user_id == bindparam("user_id")).order_by(_P.id)
)
#: ``(portfolio_id, quantity, cost_basis, symbol, currency)`` of positions: add a ``where``.
POSITION_ROWS = select(
    _POS.portfolio_id,
    cast(_POS.quantity, Float),
    cast(_POS.cost_basis, Float),
    _ASSET.symbol,
    _ASSET.currency,
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


def base_currency(row: PortfolioRow) -> str:
    """A portfolio row's base currency."""
    return str(row[7])


def cash_policy(row: PortfolioRow) -> str:
    """A portfolio row's cash policy."""
    return str(row[8])


def recent_since(today: dt.date) -> dt.date:
    """The first day whose buys a book keeps: a quote's previous close is within a week
    of the market's ``today`` (its clock's day, which tests and replays set apart from
    the wall clock's)."""
    return today - dt.timedelta(days=7)


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
    #: exchange rates the valuation needs: ``(currency, base)`` with ``currency != base``
    pairs: tuple[tuple[str, str], ...] = ()
    pair_of: np.ndarray = field(default_factory=lambda: np.zeros(0, np.intp))  # per position; -1: none
    #: cash balances: per entry its portfolio index, currency, amount and pair (-1: none)
    cash_group: np.ndarray = field(default_factory=lambda: np.zeros(0, np.intp))
    cash_currency: tuple[str, ...] = ()
    cash_amount: np.ndarray = field(default_factory=lambda: np.zeros(0))
    cash_pair: np.ndarray = field(default_factory=lambda: np.zeros(0, np.intp))
    _valued: tuple[tuple[float, ...], list[PortfolioRead]] | None = field(default=None)

    @classmethod
    def from_rows(
        cls,
        version: int,
        portfolios: Sequence[PortfolioRow],
        positions: Sequence[Any],
        recent: Sequence[Any] = (),
        cash: dict[int, dict[str, float]] | None = None,
    ) -> Book:
        """From portfolio rows, position rows ``(portfolio_id, quantity, cost_basis, symbol,
        currency)``, recent rows of :data:`RECENT_BUYS` and the cash of each portfolio
        (portfolio id -> currency -> amount).

        A split or stock dividend of ratio ``r`` dated on or after a quote's day turned
        the ``q / r`` shares held at that close into the ``q`` held now: it adds
        ``q (1 - 1/r)`` shares at no cost (negative for a reverse split), so the day's
        change is ``value - q / r x previous close`` as the quote's unadjusted closes
        give it. ``q`` is the position as it stands (shares bought after the split on
        the same days are counted as their own buys as well).
        """
        index = {row[0]: i for i, row in enumerate(portfolios)}
        pid, qty, cost, symbol, currency = (
            zip(*positions, strict=True) if positions else ((), (), (), (), ())
        )
        bases = [base_currency(row) for row in portfolios]
        pairs: dict[tuple[str, str], int] = {}

        def pair(code: str, base: str) -> int:
            return -1 if code == base else pairs.setdefault((code, base), len(pairs))

        pair_of = [pair(c, bases[index[p]]) for p, c in zip(pid, currency, strict=True)]
        held = [
            (index[p], code, amount)
            for p, by_code in (cash or {}).items()
            if p in index
            for code, amount in sorted(by_code.items())
        ]
        cash_pair = [pair(code, bases[g]) for g, code, _ in held]
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
            pairs=tuple(pairs),
            pair_of=np.array(pair_of, np.intp),
            cash_group=np.array([g for g, _, _ in held], np.intp),
            cash_currency=tuple(code for _, code, _ in held),
            cash_amount=np.array([a for _, _, a in held], np.float64),
            cash_pair=np.array(cash_pair, np.intp),
        )

    def quotes(self, market: MarketData) -> tuple[float, ...]:
        """``(price, change, day ordinal)`` of each symbol, then ``(rate, previous close)``
        of each of :attr:`pairs`, flattened (NaN when no quote)."""
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
        for code, base in self.pairs:
            fx = market.fx_quote(code, base)
            out += (fx.rate, fx.previous_close) if fx is not None else (nan, nan)
        return tuple(out)

    def _rates(self, quotes: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
        """``(rate, previous close)`` per pair index, with a last entry of ones for ``-1``."""
        fx = np.array(quotes[3 * len(self.symbols) :], np.float64).reshape(-1, 2)
        fx = np.vstack([fx, np.ones((1, 2))])
        return fx[:, 0], fx[:, 1]

    def cash_values(self, quotes: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Per cash entry, its value in the base currency and the rate used."""
        rate, _ = self._rates(quotes)
        used = rate[self.cash_pair]
        return self.cash_amount * used, used

    def totals(self, quotes: tuple[float, ...], n: int) -> PortfolioTotals:
        """Per-portfolio totals at ``quotes`` (vectorized: :mod:`quantcore.portfolio`)."""
        triples = np.array(quotes[: 3 * len(self.symbols)], np.float64).reshape(-1, 3)
        price = triples[self.symbol_of, 0]
        change = triples[self.symbol_of, 1]
        rate, previous = self._rates(quotes)
        new_qty = np.zeros(self.quantity.shape[0])
        new_cost = np.zeros(self.quantity.shape[0])
        for i, day, q, cost in self.recent:  # added on or after the quote's day
            if day >= triples[self.symbol_of[i], 2]:
                new_qty[i] += q
                new_cost[i] += cost
        marks = mark_positions(
            self.quantity, self.cost_basis, price, change, new_qty, new_cost,
            rate[self.pair_of], previous[self.pair_of],
        )  # fmt: skip
        # cash of an unknown rate counts as nothing (its balance is still listed)
        moved = np.nan_to_num(self.cash_amount * (rate[self.cash_pair] - previous[self.cash_pair]))
        cash_value = np.bincount(
            self.cash_group, np.nan_to_num(self.cash_values(quotes)[0]), minlength=n
        )
        cash_change = np.bincount(self.cash_group, moved, minlength=n)
        return portfolio_totals(self.group, n, marks, cash_value, cash_change)

    def cash_reads(self, quotes: tuple[float, ...], n: int) -> tuple[np.ndarray, list[list[CashBalanceRead]]]:
        """Per portfolio, its cash in base currency and its balances per currency."""
        value, used = self.cash_values(quotes)
        total = np.bincount(self.cash_group, np.nan_to_num(value), minlength=n)
        per: list[list[CashBalanceRead]] = [[] for _ in range(n)]
        for k, g in enumerate(self.cash_group):
            per[g].append(
                CashBalanceRead(
                    currency=self.cash_currency[k],
                    amount=fmt.money(float(self.cash_amount[k])) or "0.00",
                    fx_rate=fmt.fx_rate(float(used[k])),
                    value=fmt.money(float(value[k])),
                )
            )
        return total, per

    def reads(self, market: MarketData) -> list[PortfolioRead]:
        """Read models of every portfolio at the current quotes, in id order.

        Reused while the quotes are unchanged (NaN compares unequal, so an
        unquoted symbol is revalued each time: rare, and still right).
        """
        quotes = self.quotes(market)
        if self._valued is not None and self._valued[0] == quotes:
            return self._valued[1]
        n = len(self.portfolios)
        totals = self.totals(quotes, n)
        cash_total, balances = self.cash_reads(quotes, n)
        reads = [
            read_model(row, totals, i, float(cash_total[i]), balances[i])
            for i, row in enumerate(self.portfolios)
        ]
        self._valued = (quotes, reads)
        return reads


def read_model(
    row: PortfolioRow,
    totals: PortfolioTotals,
    i: int,
    cash_total: float = 0.0,
    cash_balances: Sequence[CashBalanceRead] = (),
) -> PortfolioRead:
    """The read model of a portfolio row valued at position ``i`` of ``totals``."""
    return PortfolioRead(
        id=row[0],
        name=row[1],
        description=row[2],
        benchmark_symbol=row[3],
        is_active=bool(row[4]),
        base_currency=base_currency(row),
        cash_policy=cash_policy(row),
        cash_balance=fmt.money(cash_total) or "0.00",
        cash_balances=list(cash_balances),
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


async def load_book(
    conn: AsyncConnection, user_id: int, today: dt.date, version: int | None = None
) -> Book:
    """The user's portfolios and positions, tagged with ``version`` (read first when not given);
    the buys of the week before the market's ``today`` (:func:`recent_since`).

    The version is read before the rows, so the rows are never older than it (on
    SQLite one snapshot; on PostgreSQL a write committed in between only makes the
    rows newer, and the next request reloads).
    """
    if version is None:
        version = await read_version(conn, user_id)
    params = {"user_id": user_id}
    portfolios = [tuple(r) for r in await conn.execute(_USER_PORTFOLIOS, params)]
    positions = (await conn.execute(_USER_POSITIONS, params)).all()
    recent = (await conn.execute(_USER_RECENT, {**params, "since": recent_since(today)})).all()
    bases = {row[0]: base_currency(row) for row in portfolios}
    held = await read.balances(conn, user_id, at=version)
    cash = {pid: held.get(pid, {}) for pid in bases}
    return Book.from_rows(version, portfolios, positions, recent, cash)


def warm_up() -> None:
    """Value a one-position book once, so that the kernels are loaded before the first request."""
    now = dt.datetime.now(dt.UTC)
    book = Book.from_rows(
        0, [(1, "", "", "", True, now, now, "USD", "track")], [(1, 1.0, 1.0, "X", "EUR")], cash={1: {"GBP": 1.0}}
    )
    quotes = (1.0, 0.0, float(now.toordinal()), 1.1, 1.0, 1.3, 1.2)
    totals = book.totals(quotes, 1)
    cash_total, balances = book.cash_reads(quotes, 1)
    read_model(book.portfolios[0], totals, 0, float(cash_total[0]), balances[0])


class BookCache:
    """The books of the ``max_users`` most recently seen users of this process (LRU).

    ``max_users=0`` disables keeping books: every request reads the rows.
    """

    def __init__(self, max_users: int = 10_000) -> None:
        self.max_users = max_users
        self._books: OrderedDict[int, Book] = OrderedDict()

    async def current(self, db: Database, user_id: int, today: dt.date) -> Book:
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
            book = await load_book(await session.connection(), user_id, today)
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


#: ``(portfolio_id, quantity, cost_basis, symbol)`` of every position of some portfolios.
_POSITIONS = POSITION_ROWS.where(Position.portfolio_id.in_(bindparam("ids", expanding=True)))
_RECENT = RECENT_BUYS.where(
    Transaction.__table__.c.portfolio_id.in_(bindparam("ids", expanding=True))
)


def _row(p: Portfolio) -> PortfolioRow:
    return (
        p.id,
        p.name,
        p.description,
        p.benchmark_symbol,
        p.is_active,
        p.created_at,
        p.updated_at,
        p.base_currency,
        p.cash_policy,
    )


async def portfolio_reads(
    session: AsyncSession,
    market: MarketData,
    portfolios: Sequence[Portfolio],
    *,
    cached: bool = True,
) -> list[PortfolioRead]:
    """Valued read models of ``portfolios`` (one positions query, one vectorized valuation;
    the cash of each owner's ledger, :func:`service.ledger.read.balances`). ``cached=False``
    in a write transaction (see :func:`service.ledger.read.columns`)."""
    rows: Sequence[Any] = []
    recent: Sequence[Any] = []
    held: dict[int, dict[str, float]] = {}
    if portfolios:
        conn = await session.connection()
        ids = {"ids": [p.id for p in portfolios]}
        rows = (await conn.execute(_POSITIONS, ids)).all()
        recent = (await conn.execute(_RECENT, {**ids, "since": recent_since(market.today())})).all()
        for owner in sorted({p.user_id for p in portfolios}):
            every = await read.balances(conn, owner, cached=cached)
            held.update({p.id: every.get(p.id, {}) for p in portfolios if p.user_id == owner})
    book = Book.from_rows(-1, [_row(p) for p in portfolios], rows, recent, held)
    return book.reads(market)


_SORT_KEYS: dict[str, Callable[[PortfolioRead], Any]] = {
    "name": lambda r: (r.name, r.id),
    "created_at": lambda r: (r.created_at, r.id),
    "total_value": lambda r: Decimal(r.total_value),
}


class PortfolioReads:
    """Portfolio reads: the process's books over the database, valued at the market.

    One per application (the ``portfolios`` dependency). A call opens at most one
    session: the book's version check is a point read
    (:meth:`~service.db.Database.read_scalar`), and rows are read only when it moved.
    """

    __slots__ = ("books", "db", "market")

    def __init__(self, db: Database, market: MarketData, books: BookCache) -> None:
        self.db = db
        self.market = market
        self.books = books

    async def _reads(self, user_id: int) -> list[PortfolioRead]:
        book = await self.books.current(self.db, user_id, self.market.today())
        return book.reads(self.market)

    async def listing(
        self, user_id: int, page: PageParams, *, active_only: bool, ordering: str
    ) -> tuple[list[PortfolioRead], int]:
        """The user's portfolios, ordered (``name``, ``created_at``, ``total_value``; ``-`` descending).

        Ties keep id order (ascending; descending for ``-name`` and ``-created_at``).
        """
        key, desc = ordering.lstrip("-"), ordering.startswith("-")
        reads = await self._reads(user_id)
        if active_only:
            reads = [r for r in reads if r.is_active]
        ordered = sorted(reads, key=_SORT_KEYS[key], reverse=desc)
        return ordered[page.offset : page.offset + page.limit], len(reads)

    async def get(self, user_id: int, portfolio_id: int) -> PortfolioRead:
        """One of the user's portfolios, valued; another user's (or no) portfolio is a 404."""
        for one in await self._reads(user_id):
            if one.id == portfolio_id:
                return one
        raise NotFoundError(f"Portfolio {portfolio_id} not found.")
