"""Writing the ledger: the one way a transaction is created, edited or deleted.

A write (create, edit, delete) locks the portfolio (``SELECT ... FOR UPDATE`` on
PostgreSQL; the SQLite write transaction is ``BEGIN IMMEDIATE``) and the user's
ledger, takes the ledger as committed before it (the user's ledger columns, kept
in the derivation cache: :func:`service.ledger.read.before_write`), writes the row
and patches it into those columns. Then, over the columns with the change applied
(:mod:`service.ledger.writecheck`), it checks the written symbol's ledger
(:func:`~service.ledger.writecheck.check_shares`), re-derives the positions of
that symbol in every portfolio from one lot match of its rows, and checks a strict
portfolio's cash; all in one transaction:
two concurrent writes can never both spend the same shares, and a crash leaves
either everything or nothing. Once it commits, the patched columns are kept under
the new ledger version (:func:`service.ledger.read.follow`).

Positions are the open tax lots under the portfolio's lot method (FIFO by default),
wash-sale adjustments included, whatever order the rows were entered in.

Corporate actions (splits, stock dividends, returns of capital, spin-offs, mergers)
are rows of the same ledger. Once the rows of the assets involved (both of a spin-off
or merger, and every asset linked to them) include one, before or after the change,
their whole ledger is checked by ``quantcore`` itself
(:func:`service.ledger.lots.check_rows`) with the change applied, and its error,
mapped back to the transaction and field it names, is the 400.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, NamedTuple

import numpy as np
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from quantcore.tax import LotLedger
from service.db import after_commit
from service.db.models import Asset, Portfolio, Position, Transaction, utcnow
from service.errors import ApiError, NotFoundError, ValidationError
from service.ledger import checks as lots
from service.ledger import columns, derived, linked, read, writecheck
from service.ledger import positions as derive
from service.ledger.columns import LedgerColumns, load_columns
from service.ledger.entry import LedgerEntry, check_amount
from service.ledger.lot_splice import lot_hints
from service.ledger.lots import LedgerCheckError, check_rows, columns_rows

__all__ = [
    "LedgerEntry",
    "Matched",
    "check_amount",
    "match_written",
    "record",
    "rederive_written",
    "remove",
    "update",
    "write_matched",
]


class Matched(NamedTuple):
    """A bulk write's lot match (:func:`match_written`): the ledger after the write, the
    assets whose positions it re-derives, their lots (``None``: no rows)."""

    after: LedgerColumns
    touched: frozenset[int]
    lots: LotLedger | None


_SPLITS = ("split", "stock_dividend")
_LINKED = ("spin_off", "merger")


async def _locked_portfolio(
    s: AsyncSession, user_id: int, portfolio_id: int, missing: type[ApiError] | None
) -> Portfolio:
    portfolio = (
        await s.execute(
            select(Portfolio)
            .where(Portfolio.id == portfolio_id, Portfolio.user_id == user_id)
            .with_for_update()
        )
    ).scalar_one_or_none()
    if portfolio is None:
        if missing is not None:
            raise missing(f"Portfolio {portfolio_id} not found.")
        raise ValidationError("portfolio", "not_found", f"Portfolio {portfolio_id} not found.")
    return portfolio


async def _asset(s: AsyncSession, symbol: str, field: str = "asset_symbol") -> Asset:
    asset = (await s.execute(select(Asset).where(Asset.symbol == symbol))).scalar_one_or_none()
    if asset is None:
        raise ValidationError(field, "not_found", f"Unknown asset symbol {symbol!r}.")
    return asset


async def _target(s: AsyncSession, entry: LedgerEntry) -> Asset | None:
    """The asset a spin-off or merger delivers (``target_symbol``), checked to exist."""
    if entry.target_symbol is None:
        return None
    return await _asset(s, entry.target_symbol, "target_symbol")


#: quantcore's column -> the request field, per transaction type
_FIELDS = {
    "ratio": {"split": "split_ratio", "stock_dividend": "split_ratio"},
    "cash": {"split": "cash_in_lieu", "stock_dividend": "cash_in_lieu", "merger": "cash_per_share"},
}


def _checked(
    ledger: derive.SymbolLedger, written: int | None, kind: str | None, action: str
) -> Any:
    """``quantcore``'s match of ``ledger`` (the changed rows of the linked assets), or the 400.

    ``written``: the id of the row written (its errors name its fields), ``kind`` its type.
    """
    try:
        return check_rows(ledger.rows, ledger.methods, ledger.actions)
    except LedgerCheckError as exc:
        if written is not None and exc.txn_id == written and kind is not None:
            if exc.code == "not_held":
                raise ValidationError(
                    "asset_symbol", "not_held",
                    f"No shares of this asset are held in the portfolio on the {kind}'s date.",
                ) from None  # fmt: skip
            if exc.code in ("oversold", "lot_exceeded"):
                raise ValidationError(
                    "quantity", "insufficient_quantity", f"{action}: {exc}"
                ) from None
            column = exc.column or "transaction_type"
            field = _FIELDS.get(column, {}).get(kind, column)
            raise ValidationError(field, "invalid", f"{action}: {exc}") from None
        raise ValidationError(
            "quantity", "insufficient_quantity",
            f"{action} would leave transaction {exc.txn_id} invalid: {exc}",
            transaction_id=exc.txn_id,
        ) from None  # fmt: skip


def _dividends_covered(changed: derive.SymbolLedger, action: str) -> None:
    """The quantity check (dividends on shares held) of every (portfolio, asset) that no
    spin-off or merger delivers shares to (quantcore checks the rest)."""
    targets = {(r[1], a.target) for r in changed.rows if (a := changed.actions.get(r[0])) and a.target}
    groups: dict[tuple[int, str], list[lots.LotRow]] = {}
    for tid, pid, sym, day, kind, qty, price, fees, lot in changed.rows:
        act = changed.actions.get(tid)
        groups.setdefault((pid, sym), []).append(
            lots.LotRow(tid, kind, qty, day, lot, price, fees, act.ratio if act else None)
        )
    for key, rows in groups.items():
        if key not in targets:
            lots.check_ledger(rows, action=action, symbol=key[1])


def _set_fields(txn: Transaction, entry: LedgerEntry, target: Asset | None) -> None:
    txn.transaction_type = entry.kind
    txn.quantity = entry.quantity
    txn.price = entry.price
    txn.fees = entry.fees
    txn.transaction_date = entry.date
    txn.lot_id = entry.lot_id
    txn.ratio = entry.ratio
    txn.cash = entry.cash
    txn.basis_allocation = entry.basis_allocation
    txn.target_asset_id = target.id if target is not None else None


def _cash_field(entry: LedgerEntry) -> str:
    """The request field a strict portfolio's cash refusal names."""
    return "price" if entry.is_cash else "quantity"


def _check_cash(after: LedgerColumns, portfolio: Portfolio, field: str, action: str) -> None:
    """Under the strict policy, refuse the change when cash would go negative."""
    if portfolio.cash_policy == "strict":
        writecheck.check_cash(after, portfolio.id, portfolio.base_currency, field, action)


async def _after(
    s: AsyncSession, user_id: int, before: LedgerColumns, at: int, portfolio_ids: Collection[int], **change: Any
) -> LedgerColumns:
    """The ledger with the (flushed) change: ``before`` patched (:func:`read.patched_by`),
    or read again in this transaction when ``before`` lacks a portfolio of the change."""
    if all(before.portfolios.index(pid) >= 0 for pid in portfolio_ids):
        return read.patched_by(before, at, **change)
    return await load_columns(await s.connection(), user_id, at)


async def _rederive(
    s: AsyncSession,
    user_id: int,
    before: LedgerColumns,
    after: LedgerColumns,
    asset_ids: Collection[int],
    *,
    shares: Sequence[tuple[int, int]],
    written: int | None,
    kind: str | None,
    action: str,
) -> dict[tuple[int, int], Position]:
    """Check the change over the rows of ``asset_ids`` and of the assets linked to them,
    before or after it (in every portfolio), and rewrite their positions.

    ``shares``: the ``(portfolio_id, asset_id)`` ledgers whose shares are checked when no
    corporate action is among the rows (else ``quantcore`` checks them all).
    """
    touched = linked.linked_assets(before, asset_ids) | linked.linked_assets(after, asset_ids)
    rows = linked.rows_of_assets(after, touched)
    acting = derived.has_actions(after, rows) or derived.has_actions(
        before, linked.rows_of_assets(before, touched)
    )
    mine = columns.subset(after, rows)
    if acting:
        methods = dict(zip(after.portfolios.ids, after.portfolios.lot_method, strict=True))
        ledger = derive.SymbolLedger(methods, frozenset(touched), *columns_rows(mine))
        matched = _checked(ledger, written, kind, action)
        _dividends_covered(ledger, action)
    else:
        symbol_of = dict(zip(after.asset_ids.tolist(), after.symbols, strict=True))
        for pid, aid in shares:
            if aid in symbol_of:
                writecheck.check_shares(after, pid, symbol_of[aid], written=written, action=action)
        try:
            matched = writecheck.match(mine)
        except LedgerCheckError as exc:  # the checks prevent it: the last guard
            raise ValidationError(
                "lot_method", "invalid", f"The ledger cannot be matched: {exc}"
            ) from None
    return await derive.write_positions(s, user_id, touched, matched)


async def record(
    s: AsyncSession,
    user_id: int,
    portfolio_id: int,
    entry: LedgerEntry,
    *,
    missing_portfolio: type[ApiError] | None = None,
) -> tuple[Transaction, Asset | None, Position | None]:
    """Append ``entry`` to the ledger of one of the user's portfolios; re-derive the positions.

    A cash row (deposit, withdrawal, interest, fee) has no asset: the asset returned is
    ``None`` and no position changes. Under ``cash_policy = "strict"`` a row that leaves
    cash negative on some day is refused (``insufficient_cash``).

    Args:
        missing_portfolio: raise this (404) instead of a 400 on ``portfolio`` when the
            portfolio is not the user's (used when the id comes from the path).

    Raises:
        ValidationError: unknown portfolio or asset, a sell or dividend the ledger does
            not cover on its date, or one that leaves a later row short
            (``quantity`` ``insufficient_quantity``), ``lot_id`` not a buy of this
            portfolio and asset on or before the sale (``not_found``, ``invalid``);
            nothing is written then.
    """
    portfolio = await _locked_portfolio(s, user_id, portfolio_id, missing_portfolio)
    await derive.lock_user_ledger(s, user_id)
    conn = await s.connection()
    at = await read.version(conn, user_id)
    before = await read.before_write(conn, user_id, at)
    target: Asset | None = None
    asset: Asset | None = None
    position: Position | None = None
    action = f"Recording this {entry.kind} on {entry.date}"
    if entry.symbol is not None:
        asset = await _asset(s, entry.symbol)
        target = await _target(s, entry)
        if entry.lot_id is not None:
            await lots.named_lot(s, user_id, portfolio.id, asset.id, entry.lot_id, entry.date)
    now = utcnow()
    txn = Transaction(
        portfolio_id=portfolio.id, asset_id=asset.id if asset is not None else None, created_at=now,
        currency=(entry.currency or portfolio.base_currency) if asset is None else None,
    )  # fmt: skip
    _set_fields(txn, entry, target)
    s.add(txn)
    portfolio.updated_at = now
    await s.flush()
    after = await _after(s, user_id, before, at, [portfolio.id], add=txn, assets=(asset, target))
    if asset is not None:
        held = await _rederive(
            s, user_id, before, after, [asset.id] if target is None else [asset.id, target.id],
            shares=[] if entry.kind == "buy" else [(portfolio.id, asset.id)],  # a buy leaves no row short
            written=txn.id, kind=entry.kind, action=action,
        )  # fmt: skip
        position = held.get((portfolio.id, asset.id))
    _check_cash(after, portfolio, _cash_field(entry), action)
    await _follow(s, user_id, at, after, (None, txn.id))
    return txn, asset, position


async def _follow(
    s: AsyncSession, user_id: int, version: int, after: LedgerColumns,
    changed: tuple[int | None, int | None] | None = None,
) -> None:
    """Once the write commits, keep ``after`` as the user's ledger columns at ``version``
    (:func:`service.ledger.read.follow`); a write of ``changed`` (dropped id, added id)
    leaves the lot ledger's splice as the next read's way to it
    (:func:`service.ledger.lot_splice.lot_hints`)."""
    engine = (await s.connection()).sync_engine
    hints = None if changed is None else lot_hints(*changed)
    after_commit(s, read.follow(engine, user_id, version, columns=after, hints=hints))


async def _owned_txn(s: AsyncSession, user_id: int, txn_id: int) -> Transaction:
    """The user's transaction, as committed now (an object the session already holds is
    refreshed: a writer that waited for the ledger lock must not keep what it read before)."""
    txn = (
        await s.execute(
            select(Transaction)
            .join(Portfolio, Portfolio.id == Transaction.portfolio_id)
            .where(Transaction.id == txn_id, Portfolio.user_id == user_id)
            .execution_options(populate_existing=True)
        )
    ).scalar_one_or_none()
    if txn is None:
        raise NotFoundError(f"Transaction {txn_id} not found.")
    return txn


async def _named_by(s: AsyncSession, txn_id: int) -> list[int]:
    """Ids of the sells that name ``txn_id`` as their lot."""
    return list(
        (await s.execute(select(Transaction.id).where(Transaction.lot_id == txn_id))).scalars()
    )


async def update(
    s: AsyncSession, user_id: int, txn_id: int, portfolio_id: int, entry: LedgerEntry
) -> tuple[Transaction, Asset | None]:
    """Replace one of the user's transactions by ``entry`` (its id and ``created_at`` stay).

    The old and the new (portfolio, asset) ledgers are both re-checked with the change
    applied; a buy that sells name as their lot keeps its portfolio, asset and type.
    A row may turn from a security row into a cash row or back.

    Raises:
        NotFoundError: not the user's transaction.
        ValidationError: as :func:`record`; ``lot_id`` ``in_use`` for a named buy moved
            away; nothing changes then.
    """
    txn = await _owned_txn(s, user_id, txn_id)
    old_portfolio = await _locked_portfolio(s, user_id, txn.portfolio_id, None)
    portfolio = (
        old_portfolio
        if portfolio_id == txn.portfolio_id
        else await _locked_portfolio(s, user_id, portfolio_id, None)
    )
    await derive.lock_user_ledger(s, user_id)
    conn = await s.connection()
    at = await read.version(conn, user_id)
    before = await read.before_write(conn, user_id, at)
    # read again under the lock: a concurrent writer may have changed it meanwhile (an
    # ORM flush writes only what differs from the state it loaded, so a stale copy
    # could leave a value unwritten that the positions were derived with)
    txn = await _owned_txn(s, user_id, txn_id)
    if txn.portfolio_id != old_portfolio.id:
        old_portfolio = await _locked_portfolio(s, user_id, txn.portfolio_id, None)
    asset = await _asset(s, entry.symbol) if entry.symbol is not None else None
    target = await _target(s, entry)
    if entry.lot_id == txn.id:
        raise ValidationError("lot_id", "invalid", "A sell cannot name itself as its lot.")
    if entry.lot_id is not None and asset is not None:
        await lots.named_lot(s, user_id, portfolio.id, asset.id, entry.lot_id, entry.date)
    new_asset_id = asset.id if asset is not None else None
    moved = (portfolio.id, new_asset_id, entry.kind) != (txn.portfolio_id, txn.asset_id, "buy")
    if txn.transaction_type == "buy" and moved and (users := await _named_by(s, txn.id)):
        raise ValidationError(
            "lot_id", "in_use",
            f"Transaction {txn.id} is the lot of sell(s) {users}: it stays a buy of the "
            "same portfolio and asset.",
            transaction_ids=users,
        )  # fmt: skip
    action = f"Changing transaction {txn.id}"
    old_portfolio_id, old_asset_id = txn.portfolio_id, txn.asset_id
    now = utcnow()
    txn.portfolio_id = portfolio.id
    txn.asset_id = new_asset_id
    txn.currency = (entry.currency or portfolio.base_currency) if entry.is_cash else None
    _set_fields(txn, entry, target)
    old_portfolio.updated_at = portfolio.updated_at = now
    await s.flush()
    after = await _after(
        s, user_id, before, at, [old_portfolio.id, portfolio.id], drop=txn.id, add=txn, assets=(asset, target)
    )
    touched = {a for a in (old_asset_id, new_asset_id) if a is not None}
    if target is not None:
        touched.add(target.id)
    if touched:
        # the row leaves its old (portfolio, asset) ledger and joins the new one
        shares = [(old_portfolio_id, old_asset_id)] if old_asset_id is not None else []
        if new_asset_id is not None and (portfolio.id, new_asset_id) not in shares:
            shares.append((portfolio.id, new_asset_id))
        await _rederive(
            s, user_id, before, after, touched, shares=shares, written=txn.id, kind=entry.kind,
            action=action,
        )  # fmt: skip
    _check_cash(after, portfolio, _cash_field(entry), action)
    if old_portfolio.id != portfolio.id:
        _check_cash(after, old_portfolio, "portfolio", action)
    await _follow(s, user_id, at, after, (txn.id, txn.id))
    return txn, asset


async def remove(s: AsyncSession, user_id: int, txn_id: int) -> None:
    """Delete one of the user's transactions when the rest of the ledger still relieves.

    Raises:
        NotFoundError: not the user's transaction.
        ValidationError: ``lot_id`` ``in_use`` (a sell names this buy as its lot), or
            ``quantity`` ``insufficient_quantity`` naming the row left short.
    """
    txn = await _owned_txn(s, user_id, txn_id)
    portfolio = await _locked_portfolio(s, user_id, txn.portfolio_id, None)
    await derive.lock_user_ledger(s, user_id)
    conn = await s.connection()
    at = await read.version(conn, user_id)
    before = await read.before_write(conn, user_id, at)
    txn = await _owned_txn(s, user_id, txn_id)  # as committed once the lock is held
    if txn.portfolio_id != portfolio.id:
        portfolio = await _locked_portfolio(s, user_id, txn.portfolio_id, None)
    if users := await _named_by(s, txn.id):
        raise ValidationError(
            "lot_id", "in_use",
            f"Transaction {txn.id} is the lot of sell(s) {users}; delete or change those first.",
            transaction_ids=users,
        )  # fmt: skip
    action = f"Deleting transaction {txn.id}"
    asset_id, target_id = txn.asset_id, txn.target_asset_id
    await s.delete(txn)
    portfolio.updated_at = utcnow()
    await s.flush()
    after = await _after(s, user_id, before, at, [portfolio.id], drop=txn_id)
    if asset_id is not None:
        await _rederive(
            s, user_id, before, after, [asset_id] if target_id is None else [asset_id, target_id],
            shares=[(portfolio.id, asset_id)], written=None, kind=None, action=action,
        )  # fmt: skip
    _check_cash(after, portfolio, "cash_balance", action)
    await _follow(s, user_id, at, after, (txn_id, None))


def match_written(after: LedgerColumns, asset_ids: Collection[int]) -> Matched:
    """The lot match of ``asset_ids`` (and the assets linked to them) over ``after`` (the
    ledger with a bulk write applied), from which :func:`write_matched` rewrites their
    positions. Columns and kernels only, no database: a writer may run it in a worker
    thread while its insert is under way (:func:`service.imports.write.write_table`).

    Raises:
        ValidationError: ``lot_method`` ``invalid`` when the rows cannot be matched (the
            write's checks prevent it: the last guard).
    """
    touched = linked.linked_assets(after, asset_ids)
    try:
        mine = np.zeros(len(after), np.bool_)
        mine[linked.rows_of_assets(after, touched)] = True
        lots_matched = writecheck.match(after, mine)  # no copy of the (whole, for an import) columns
    except LedgerCheckError as exc:
        raise ValidationError("lot_method", "invalid", f"The ledger cannot be matched: {exc}") from None
    return Matched(after, touched, lots_matched)


async def write_matched(s: AsyncSession, user_id: int, matched: Matched) -> None:
    """Write the positions of :func:`match_written`'s assets (the rows written and flushed,
    the ledger lock held) and keep its columns under their version once the write commits."""
    await derive.write_positions(s, user_id, matched.touched, matched.lots)
    await _follow(s, user_id, matched.after.version, matched.after)


async def rederive_written(
    s: AsyncSession, user_id: int, asset_ids: Collection[int], *, after: LedgerColumns | None = None
) -> None:
    """After a bulk write of rows of ``asset_ids`` (flushed, the ledger lock held): read the
    user's ledger as columns once in this transaction (or take ``after``, the columns the
    writer built at the new version: :func:`service.ledger.columns.appended`), re-derive
    the positions of those assets (and the ones linked to them) from one lot match of
    their rows (:func:`match_written`, :func:`write_matched`), and keep the columns under
    the new version once the write commits.

    Raises:
        ValidationError: as :func:`match_written`.
    """
    if after is None:
        conn = await s.connection()
        after = await load_columns(conn, user_id, await read.version(conn, user_id))
    await write_matched(s, user_id, match_written(after, asset_ids))
