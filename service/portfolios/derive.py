"""The ``positions`` table as a cache of the ledger, re-derived on every ledger write.

A position (quantity, cost basis) is the sum of its open tax lots under the
portfolio's lot method, wash-sale adjustments included: the lots
``quantcore.tax.match_lots`` leaves open on the user's ledger (:mod:`service.tax.ledger`).
Nothing is added or subtracted incrementally: every write that can change lots (a
transaction created, edited or deleted, a lot method changed, a portfolio deleted)
calls :func:`sync_positions` in its write transaction, which re-derives the touched
assets' positions of all the user's portfolios (a purchase in one portfolio can wash
a loss, and so move basis, in another) and rewrites the rows that differ. The rows
stay, so readers (the per-user book, :mod:`service.portfolios.book`) keep their one
integer version check; ``tests/service/test_ledger_positions.py`` proves the table
equals the derivation for random ledgers entered in any order.
"""

from __future__ import annotations

from collections.abc import Collection
from decimal import Decimal

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from quantcore.tax.lots import from_fixed
from service.db.models import Asset, LedgerVersion, Portfolio, Position, utcnow
from service.tax.ledger import load_ledger, split_symbol

__all__ = ["derived_positions", "lock_user_ledger", "sync_positions"]


async def lock_user_ledger(s: AsyncSession, user_id: int) -> None:
    """Serialize ledger writes of one user (their positions depend on all their portfolios).

    ``SELECT ... FOR UPDATE`` of the user's ``ledger_versions`` row on PostgreSQL; on
    SQLite the write transaction (``BEGIN IMMEDIATE``) already serializes writers.
    """
    await s.execute(
        select(LedgerVersion.version).where(LedgerVersion.user_id == user_id).with_for_update()
    )


async def derived_positions(
    s: AsyncSession, user_id: int, asset_ids: Collection[int] | None = None
) -> dict[tuple[int, int], tuple[Decimal, Decimal]]:
    """``(portfolio_id, asset_id) -> (quantity, cost_basis)`` of the open lots, exact.

    Only positions still held; ``asset_ids`` limits the assets (``None``: all).
    """
    ledger = await load_ledger(s, user_id, None, asset_ids=asset_ids)
    if ledger is None or not ledger.symbols:
        return {}
    sym, qty, basis = ledger.position_totals()
    names = [split_symbol(ledger.symbols[i]) for i in sym]
    bare = {symbol for _, symbol in names}
    found = await s.execute(select(Asset.symbol, Asset.id).where(Asset.symbol.in_(bare)))
    ids = dict(found.tuples().all())
    return {
        (pid, ids[symbol]): (from_fixed(int(q)), from_fixed(int(b)))
        for (pid, symbol), q, b in zip(names, qty, basis, strict=True)
    }


async def sync_positions(
    s: AsyncSession, user_id: int, asset_ids: Collection[int] | None = None
) -> None:
    """Rewrite the user's position rows of ``asset_ids`` (``None``: all) that differ from the ledger.

    Raises:
        ValidationError: ``lot_method`` ``invalid`` when the ledger cannot be relieved
            (the write checks prevent it; this is the last guard).
    """
    want = await derived_positions(s, user_id, asset_ids)
    query = (
        select(Position)
        .join(Portfolio, Portfolio.id == Position.portfolio_id)
        .where(Portfolio.user_id == user_id)
    )
    if asset_ids is not None:
        query = query.where(Position.asset_id.in_(list(asset_ids)))
    now = utcnow()
    stale: list[int] = []
    for pos in (await s.execute(query)).scalars():
        new = want.pop((pos.portfolio_id, pos.asset_id), None)
        if new is None:
            stale.append(pos.id)
        elif (pos.quantity, pos.cost_basis) != new:
            pos.quantity, pos.cost_basis, pos.updated_at = new[0], new[1], now
    if stale:
        await s.execute(delete(Position).where(Position.id.in_(stale)))
    for (pid, aid), (q, b) in want.items():
        s.add(Position(portfolio_id=pid, asset_id=aid, quantity=q, cost_basis=b, updated_at=now))
    await s.flush()
