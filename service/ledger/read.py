"""The way features read a user's ledger: columns and derivations, once per ledger version.

A read takes the request's own connection (``await session.connection()``): it reads
the user's ledger version there, then the columns (:func:`~service.ledger.columns.load_columns`)
and any derivation (:mod:`service.ledger.derived`) come from the derivation cache at
that version (:mod:`service.ledger.cache`), derived on a miss by one request while
the others wait. No second pool or driver: a miss reads on the connection of the
request that missed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any, TypeVar

from sqlalchemy import Engine, bindparam, select
from sqlalchemy.ext.asyncio import AsyncConnection

from service.db.models import LedgerVersion, Transaction
from service.ledger import derived
from service.ledger.cache import DerivationCache, cache_for
from service.ledger.columns import LedgerColumns, RawRow, load_columns, patched

__all__ = [
    "balances", "before_write", "columns", "derive", "follow", "history_input", "ledger_cache",
    "patched_by", "raw_row", "version",
]  # fmt: skip

T = TypeVar("T")
_VERSION = select(LedgerVersion.__table__.c.version).where(
    LedgerVersion.__table__.c.user_id == bindparam("user_id")
)


def ledger_cache(conn: AsyncConnection) -> DerivationCache:
    """The derivation cache of ``conn``'s database."""
    return cache_for(conn.sync_engine)


async def version(conn: AsyncConnection, user_id: int) -> int:
    """The user's ledger version (``-1`` before the first write: nothing is cached then)."""
    found = (await conn.execute(_VERSION, {"user_id": user_id})).scalar_one_or_none()
    return -1 if found is None else int(found)


async def _columns_at(conn: AsyncConnection, user_id: int, at: int, cached: bool) -> LedgerColumns:
    if not cached:
        return await load_columns(conn, user_id, at)
    return await ledger_cache(conn).get(
        user_id, at, "columns", lambda: load_columns(conn, user_id, at)
    )


async def columns(conn: AsyncConnection, user_id: int, *, cached: bool = True) -> LedgerColumns:
    """The user's ledger as columns at its current version.

    ``cached=False`` inside a write transaction: what it sees is not committed yet,
    so it must not be kept under the version the write is about to commit.
    """
    return await _columns_at(conn, user_id, await version(conn, user_id), cached)


async def before_write(conn: AsyncConnection, user_id: int, at: int) -> LedgerColumns:
    """The user's ledger as a write sees it before changing anything: the write holds the
    ledger lock and moved the version to ``at`` (:func:`service.ledger.positions.lock_user_ledger`),
    so no other write can commit in between, and what its transaction sees is the ledger
    committed at ``at - 1``: the columns kept for that version (read here and kept on a
    miss). Called before the write's first change of a transaction row."""
    return await _columns_at(conn, user_id, at - 1, True)


async def derive(
    conn: AsyncConnection,
    user_id: int,
    name: str,
    fn: Callable[[LedgerColumns], T],
    *,
    at: int | None = None,
    cached: bool = True,
) -> T:
    """``fn(columns)`` at the user's current version (or at version ``at``, read by the
    caller on this connection), cached under ``name``: a pure function of the columns,
    the name saying everything it depends on. ``cached``: as in :func:`columns`."""
    if at is None:
        at = await version(conn, user_id)
    cols = await _columns_at(conn, user_id, at, cached)
    if not cached:
        return fn(cols)

    async def run() -> T:
        return fn(cols)

    return await ledger_cache(conn).get(user_id, at, name, run)


async def balances(
    conn: AsyncConnection, user_id: int, *, at: int | None = None, cached: bool = True
) -> dict[int, dict[str, float]]:
    """:func:`service.ledger.derived.balances` of the user's portfolios."""
    return await derive(conn, user_id, "balances", derived.balances, at=at, cached=cached)


async def history_input(
    conn: AsyncConnection, user_id: int, portfolio_id: int
) -> derived.HistoryInput:
    """:func:`service.ledger.derived.history_input` of one of the user's portfolios."""
    return await derive(
        conn, user_id, f"history:{portfolio_id}", lambda c: derived.history_input(c, portfolio_id)
    )


def _text(value: Decimal | None) -> str | None:
    return None if value is None else format(value, "f")


def raw_row(txn: Transaction) -> RawRow:
    """A transaction just written, as :func:`service.ledger.columns.build` reads a row."""
    return (
        txn.id, txn.portfolio_id, txn.asset_id, txn.target_asset_id, txn.transaction_date,
        txn.transaction_type, _text(txn.quantity), _text(txn.price), _text(txn.fees), txn.lot_id,
        _text(txn.ratio), _text(txn.basis_allocation), _text(txn.cash), txn.currency,
    )  # fmt: skip


def follow(
    engine: Engine,
    user_id: int,
    version: int,
    *,
    drop: int | None = None,
    add: Transaction | None = None,
    assets: Sequence[Any] = (),
    columns: LedgerColumns | None = None,
    hints: Callable[
        [dict[str, Any], dict[str, Callable[[], Any]], LedgerColumns], dict[str, Callable[[], Any]]
    ]
    | None = None,
) -> Callable[[], None]:
    """The step that, once a write moving the user's ledger to ``version`` by one change
    (``drop`` a row id, ``add`` a row: an edit is both) has committed, moves the kept
    columns along (:func:`service.ledger.columns.patched`) when they are at
    ``version - 1``: the next read in this process derives from them without reading the
    ledger again. The row is taken now, in the write's transaction; the step runs after
    its commit (:func:`service.db.after_commit`). ``assets``: the rows' assets (``id``,
    ``symbol``, ``currency`` attributes; ``None`` skipped). ``columns``: the columns at
    ``version`` when the write has them already (:func:`patched_by`). ``hints``: cheaper
    ways to other derivations at ``version`` from the old version's values (or its hints
    not yet run) and the new columns (:meth:`~service.ledger.cache.DerivationCache.advance`)."""
    cache = cache_for(engine)
    if columns is not None:
        ready = columns

        def keep() -> None:
            cache.advance(user_id, version, "columns", lambda _: ready, hints)

        return keep
    row = raw_row(add) if add is not None else None
    named = [(a.id, a.symbol, a.currency) for a in assets if a is not None]

    def advance() -> None:
        cache.advance(
            user_id, version, "columns", lambda cols: patched(cols, version, drop=drop, add=row, assets=named),
            hints,
        )

    return advance


def patched_by(
    cols: LedgerColumns,
    version: int,
    *,
    drop: int | None = None,
    add: Transaction | None = None,
    assets: Sequence[Any] = (),
) -> LedgerColumns:
    """``cols`` after one write (``drop`` a row id, ``add`` a row just flushed; ``assets``
    as in :func:`follow`), tagged ``version``: what the write checks, and what
    :func:`follow` keeps once it commits."""
    named = [(a.id, a.symbol, a.currency) for a in assets if a is not None]
    row = raw_row(add) if add is not None else None
    return patched(cols, version, drop=drop, add=row, assets=named)
