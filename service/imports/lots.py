"""The lots an imported sale names: a buy of the file, or one an earlier import wrote."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from service.db.models import Asset, Transaction
from service.imports.plan import Plan
from service.imports.rows import ImportRow
from service.imports.write import source_id

__all__ = ["held_lots"]


async def held_lots(
    s: AsyncSession, portfolio_id: int, plan: Plan, rows: list[ImportRow], held_ids: set[str | None]
) -> dict[str, int]:
    """Check the lot each sale names (``lot_id``: the ``id`` of the buy's line) and return
    the ones an earlier import of the portfolio wrote, by reference: their transaction ids.

    A sale names a buy of the same symbol in the file (a line this import writes), or one
    an earlier import wrote (then the buy's line is skipped as already imported, or is
    not in the file): a buy of the same symbol, bought on or before the sale. Else an
    error on ``lot_id`` (``not_found`` or ``invalid``). The shares left in the lot are
    checked with the ledger (:func:`service.imports.plan.check_ledgers`), before anything
    is written.
    """
    written = {
        r.source_id: r.symbol
        for r in rows
        if r.type == "buy" and source_id(r.source_id) not in held_ids
    }
    earlier = {
        r.lot_source
        for r in rows
        if r.lot_source is not None
        and r.lot_source not in written
        and source_id(r.lot_source) in held_ids
    }
    found: dict[str, tuple[int, str, str | None, dt.date]] = {}
    if earlier:
        stored = {source_id(ref): ref for ref in earlier}
        result = await s.execute(
            select(
                Transaction.source_id, Transaction.id, Transaction.transaction_type, Asset.symbol,
                Transaction.transaction_date,
            )
            .outerjoin(Asset, Asset.id == Transaction.asset_id)
            .where(Transaction.portfolio_id == portfolio_id, Transaction.source_id.in_(stored))
        )  # fmt: skip
        for sid, tid, kind, symbol, day in result.tuples():
            found[stored[str(sid)]] = (tid, kind, symbol, day)
    held: dict[str, int] = {}
    for row in rows:
        ref = row.lot_source
        if ref is None or source_id(row.source_id) in held_ids:
            continue  # no lot named, or the sale itself was imported before
        if ref in written and written[ref] == row.symbol:
            continue
        if ref in found:
            tid, kind, sym, day = found[ref]
            problem = None
            if kind != "buy":
                problem = f"names a {kind}, not a buy"
            elif sym != row.symbol:
                problem = f"names a buy of {sym}, not of {row.symbol}"
            elif day > row.date:
                problem = f"names a buy of {day}, after the sale"
            if problem is None:
                held[ref] = tid
                continue
            plan.error(
                row.line, "lot_id", "invalid",
                f"the sell of {row.symbol} on {row.date}: lot_id {problem}",
            )  # fmt: skip
            continue
        plan.error(
            row.line, "lot_id", "not_found",
            f"lot_id names no buy of {row.symbol} in the file (the id column of its line)",
        )  # fmt: skip
    return held
