"""The ``positions`` table as a cache of the ledger, re-derived on every ledger write.

A position (quantity, cost basis) is the sum of its open tax lots under the
portfolio's lot method, wash-sale adjustments included: the lots
``quantcore.tax.match_lots`` leaves open on the user's ledger (:mod:`service.ledger.lots`).
Nothing is added or subtracted incrementally: every write that can change lots (a
transaction created, edited or deleted, a lot method changed, a portfolio deleted)
calls :func:`sync_positions` in its write transaction, which re-derives the touched
assets' positions of all the user's portfolios (a purchase in one portfolio can wash
a loss, and so move basis, in another) and rewrites the rows that differ.

Only the touched assets are derived: the wash-sale rule joins a loss only to
purchases of the same symbol (the service has no substantially-identical groups
across symbols), so one symbol's lots depend on that symbol's rows alone, and on
those of the symbols a spin-off or merger links to it (:func:`read_ledger` reads
them together, :func:`service.ledger.lots.linked_ledger_rows`); the per-symbol derivation
equals the whole-ledger one
(``tests/service/test_ledger_write_path.py`` checks it on random ledgers). A
transaction write reads the symbol's rows once (:func:`read_ledger`), checks them
with the change applied and derives the positions from the same rows with the
written row in place (:meth:`SymbolLedger.changed`).

The rows stay, so readers (the per-user book, :mod:`service.ledger.book`) keep
their one integer version check; ``tests/service/test_ledger_positions.py`` proves
the table equals the derivation for random ledgers entered in any order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from quantcore.tax import LotLedger
from quantcore.tax.lots import from_fixed
from service.db.models import Asset, LedgerVersion, Portfolio, Position, Transaction, utcnow
from service.ledger.lots import (
    Action,
    LedgerRow,
    ledger_rows_with_actions,
    linked_ledger_rows,
    match_rows,
    split_symbol,
)

__all__ = [
    "SymbolLedger",
    "action_of",
    "lock_user_ledger",
    "read_ledger",
    "row_of",
    "sync_positions",
    "write_positions",
]


async def lock_user_ledger(s: AsyncSession, user_id: int) -> None:
    """Serialize the user's ledger writes and mark their read models stale, in one statement.

    Every write of a user's portfolios, transactions or positions calls this inside
    its write transaction: it bumps the user's ``ledger_versions`` row (creating it
    at 1 when missing). The row lock it takes serializes the user's writers on
    PostgreSQL (their positions depend on all their portfolios); on SQLite the write
    transaction (``BEGIN IMMEDIATE``) already serializes writers. Readers that keep a
    user's rows in memory (:mod:`service.ledger.book`) compare this version: it
    moves with the commit of the write, in whichever process it ran.
    """
    insert = pg_insert if s.get_bind().dialect.name == "postgresql" else sqlite_insert
    stmt = insert(LedgerVersion).values(user_id=user_id, version=1)
    await s.execute(
        stmt.on_conflict_do_update(
            index_elements=[LedgerVersion.user_id], set_={"version": LedgerVersion.version + 1}
        )
    )


@dataclasses.dataclass(frozen=True, slots=True)
class SymbolLedger:
    """The user's ledger rows of some assets (``None``: all) in all their portfolios."""

    methods: dict[int, str]  # portfolio id -> lot method
    asset_ids: frozenset[int] | None
    rows: list[LedgerRow]
    actions: dict[int, Action] = dataclasses.field(default_factory=dict)  # corporate actions by id

    def changed(
        self, *, drop: int | None = None, add: LedgerRow | None = None, action: Action | None = None
    ) -> SymbolLedger:
        """The same ledger without row ``drop`` and with ``add`` (a row just written, with
        its corporate-action fields ``action``)."""
        rows = [r for r in self.rows if r[0] != drop]
        actions = self.actions
        if (drop is not None and drop in actions) or action is not None:
            actions = {k: v for k, v in actions.items() if k != drop}
        if add is not None:
            rows.append(add)
            if action is not None:
                actions[add[0]] = action
        return dataclasses.replace(self, rows=rows, actions=actions)

    @property
    def has_actions(self) -> bool:
        """Whether any row is a corporate action (the writes then check with ``quantcore``)."""
        return bool(self.actions)


async def read_ledger(
    s: AsyncSession, user_id: int, asset_ids: Collection[int] | None
) -> SymbolLedger:
    """One read of the user's rows of ``asset_ids`` (``None``: every asset), with the
    assets spin-offs and mergers link to them."""
    query = select(Portfolio.id, Portfolio.lot_method).where(Portfolio.user_id == user_id)
    methods: dict[int, str] = dict((await s.execute(query)).tuples().all())
    if not methods:
        return SymbolLedger(methods, None if asset_ids is None else frozenset(asset_ids), [], {})
    if asset_ids is None:
        rows, actions = await ledger_rows_with_actions(s, list(methods), None)
        return SymbolLedger(methods, None, rows, actions)
    rows, actions, linked = await linked_ledger_rows(s, list(methods), asset_ids)
    return SymbolLedger(methods, linked, rows, actions)


def row_of(txn: Transaction, symbol: str) -> LedgerRow:
    """A transaction just written, as :func:`read_ledger` would read it."""
    return (
        txn.id, txn.portfolio_id, symbol, txn.transaction_date, txn.transaction_type,
        txn.quantity, txn.price, txn.fees, txn.lot_id,
    )  # fmt: skip


def action_of(txn: Transaction, target_symbol: str | None) -> Action | None:
    """A transaction's corporate-action fields (``None`` for a buy, sell or dividend)."""
    if (
        txn.ratio is None
        and txn.cash is None
        and target_symbol is None
        and txn.basis_allocation is None
    ):
        return None
    return Action(txn.ratio, target_symbol, txn.basis_allocation, txn.cash)


async def sync_positions(
    s: AsyncSession,
    user_id: int,
    asset_ids: Collection[int] | None = None,
    *,
    ledger: SymbolLedger | None = None,
    matched: LotLedger | None = None,
) -> dict[tuple[int, int], Position]:
    """Rewrite the user's position rows of ``asset_ids`` (``None``: all) that differ from the ledger.

    ``ledger``: the rows of exactly those assets as they now are (a write passes the
    rows it read and checked, changed); read here when not given. Its assets (those
    asked for and the ones spin-offs and mergers link to them) are the ones synced.
    ``matched``: ``match_rows`` of ``ledger`` when the caller has it already.
    Returns the positions held after the sync, by ``(portfolio_id, asset_id)``.

    Raises:
        ValidationError: ``lot_method`` ``invalid`` when the ledger cannot be relieved
            (the write checks prevent it; this is the last guard).
    """
    if ledger is None:
        ledger = await read_ledger(s, user_id, asset_ids)
    if ledger.rows and matched is None:
        matched = match_rows(ledger.rows, ledger.methods, ledger.actions)
    return await write_positions(s, user_id, ledger.asset_ids, matched if ledger.rows else None)


async def write_positions(
    s: AsyncSession, user_id: int, asset_ids: Collection[int] | None, lots: LotLedger | None
) -> dict[tuple[int, int], Position]:
    """Rewrite the user's position rows of ``asset_ids`` (``None``: all) that differ from the
    open lots of ``lots`` (``quantcore``'s match of exactly those assets' rows in every
    portfolio; ``None``: no rows). Returns the positions held, by ``(portfolio_id, asset_id)``."""
    want: dict[tuple[int, str], tuple[int, int]] = {}
    if lots is not None:
        for i, q, b in zip(*lots.position_totals(), strict=True):
            want[split_symbol(lots.symbols[i])] = (int(q), int(b))
    query = (
        select(Position, Asset.symbol)
        .join(Portfolio, Portfolio.id == Position.portfolio_id)
        .join(Asset, Asset.id == Position.asset_id)
        .where(Portfolio.user_id == user_id)
    )
    if asset_ids is not None:
        query = query.where(Position.asset_id.in_(list(asset_ids)))
    now = utcnow()
    stale: list[int] = []
    held: dict[tuple[int, int], Position] = {}
    for pos, symbol in (await s.execute(query)).tuples():
        new = want.pop((pos.portfolio_id, symbol), None)
        if new is None:
            stale.append(pos.id)
            continue
        quantity, basis = from_fixed(new[0]), from_fixed(new[1])
        if (pos.quantity, pos.cost_basis) != (quantity, basis):
            pos.quantity, pos.cost_basis, pos.updated_at = quantity, basis, now
        held[pos.portfolio_id, pos.asset_id] = pos
    if stale:
        await s.execute(delete(Position).where(Position.id.in_(stale)))
    if want:
        names = {symbol for _, symbol in want}
        found = await s.execute(select(Asset.symbol, Asset.id).where(Asset.symbol.in_(names)))
        ids = dict(found.tuples().all())
        for (pid, symbol), (q, b) in want.items():
            pos = Position(
                portfolio_id=pid, asset_id=ids[symbol], quantity=from_fixed(q),
                cost_basis=from_fixed(b), updated_at=now,
            )  # fmt: skip
            s.add(pos)
            held[pid, pos.asset_id] = pos
    await s.flush()
    return held
