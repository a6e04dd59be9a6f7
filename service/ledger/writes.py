"""Writing the ledger: the one way a transaction is created, edited or deleted.

A write (create, edit, delete) locks the portfolio (``SELECT ... FOR UPDATE`` on
PostgreSQL; the SQLite write transaction is ``BEGIN IMMEDIATE``) and the user's
ledger, checks the symbol's whole ledger with the change applied
(:func:`service.ledger.checks.check_ledger`), writes the row and re-derives the
positions of that symbol from the same rows, read once (:mod:`service.ledger.positions`),
all in one transaction:
two concurrent writes can never both spend the same shares, and a crash leaves
either everything or nothing.

Positions are the open tax lots under the portfolio's lot method (FIFO by default),
wash-sale adjustments included, whatever order the rows were entered in.

Corporate actions (splits, stock dividends, returns of capital, spin-offs, mergers)
are rows of the same ledger. Once the rows read for a write include one (or the
write is one), the whole ledger of the assets involved (both of a spin-off or
merger, and every asset linked to them) is checked by ``quantcore`` itself
(:func:`service.ledger.lots.check_rows`) with the change applied, and its error,
mapped back to the transaction and field it names, is the 400.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from service.db import after_commit
from service.db.models import Asset, Portfolio, Position, Transaction, utcnow
from service.errors import ApiError, NotFoundError, ValidationError
from service.ledger import cash, read
from service.ledger import checks as lots
from service.ledger import positions as derive
from service.ledger.entry import LedgerEntry, check_amount
from service.ledger.lots import LedgerCheckError, check_rows

__all__ = [
    "LedgerEntry",
    "check_amount",
    "record",
    "remove",
    "update",
]

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
            lots.check_ledger(rows, action=action)


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


def _lot_rows(ledger: derive.SymbolLedger, portfolio_id: int, symbol: str) -> list[lots.LotRow]:
    """The rows of one (portfolio, asset) of ``ledger``, as the check reads them."""
    return [
        lots.LotRow(tid, kind, qty, day, lot, price, fees)
        for tid, pid, sym, day, kind, qty, price, fees, lot in ledger.rows
        if pid == portfolio_id and sym == symbol
    ]


def _row(entry: LedgerEntry, row_id: int | None) -> lots.LotRow:
    return lots.LotRow(
        row_id, entry.kind, entry.quantity, entry.date, entry.lot_id, entry.price, entry.fees
    )


def _cash_field(entry: LedgerEntry) -> str:
    """The request field a strict portfolio's cash refusal names."""
    return "price" if entry.is_cash else "quantity"


async def _check_cash(s: AsyncSession, portfolio: Portfolio, field: str, action: str) -> None:
    """Under the strict policy, refuse the (flushed) change when cash would go negative."""
    if portfolio.cash_policy != "strict":
        return
    rows = await cash.read_cash_rows(await s.connection(), portfolio_ids=[portfolio.id])
    cash.check_strict(rows, portfolio.base_currency, field, action)


async def _record_cash(
    s: AsyncSession, portfolio: Portfolio, entry: LedgerEntry
) -> Transaction:
    """Write a cash row (no asset, no positions to derive) and check the strict policy."""
    now = utcnow()
    txn = Transaction(
        portfolio_id=portfolio.id, asset_id=None, created_at=now,
        currency=entry.currency or portfolio.base_currency,
    )  # fmt: skip
    _set_fields(txn, entry, None)
    s.add(txn)
    portfolio.updated_at = now
    await s.flush()
    await _check_cash(s, portfolio, "price", f"Recording this {entry.kind} on {entry.date}")
    return txn


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
    at = await read.version(await s.connection(), user_id)
    target: Asset | None = None
    position: Position | None = None
    if entry.symbol is None:
        txn = await _record_cash(s, portfolio, entry)
        asset = None
    else:
        asset = await _asset(s, entry.symbol)
        target = await _target(s, entry)
        if entry.lot_id is not None:
            await lots.named_lot(s, user_id, portfolio.id, asset.id, entry.lot_id, entry.date)
        touched = [asset.id] if target is None else [asset.id, target.id]
        ledger = await derive.read_ledger(s, user_id, touched)
        action = f"Recording this {entry.kind} on {entry.date}"
        with_actions = ledger.has_actions or entry.is_action
        if not with_actions and entry.kind != "buy":  # an added buy leaves no row short
            lots.check_ledger(_lot_rows(ledger, portfolio.id, asset.symbol), add=_row(entry, None), action=action)
        now = utcnow()
        txn = Transaction(portfolio_id=portfolio.id, asset_id=asset.id, created_at=now)
        _set_fields(txn, entry, target)
        s.add(txn)
        portfolio.updated_at = now
        await s.flush()
        changed = ledger.changed(add=derive.row_of(txn, asset.symbol), action=entry.action())
        matched = None
        if with_actions:
            matched = _checked(changed, txn.id, entry.kind, action)
            _dividends_covered(changed, action)
        held = await derive.sync_positions(s, user_id, touched, ledger=changed, matched=matched)
        await _check_cash(s, portfolio, "quantity", action)
        position = held.get((portfolio.id, asset.id))
    await _follow(s, user_id, at, add=txn, assets=(asset, target))
    return txn, asset, position


async def _follow(s: AsyncSession, user_id: int, version: int, **change: Any) -> None:
    """Once the write commits, move the kept ledger columns along (:func:`service.ledger.read.follow`)."""
    engine = (await s.connection()).sync_engine
    after_commit(s, read.follow(engine, user_id, version, **change))


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
    at = await read.version(await s.connection(), user_id)
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
    touched = {a for a in (txn.asset_id, new_asset_id) if a is not None}
    if target is not None:
        touched.add(target.id)
    ledger = await derive.read_ledger(s, user_id, touched) if touched else None
    with_actions = ledger is not None and (ledger.has_actions or entry.is_action)
    if ledger is not None and not with_actions:
        _check_moved_rows(ledger, txn, portfolio.id, asset, entry, action)
    now = utcnow()
    txn.portfolio_id = portfolio.id
    txn.asset_id = new_asset_id
    txn.currency = (entry.currency or portfolio.base_currency) if entry.is_cash else None
    _set_fields(txn, entry, target)
    old_portfolio.updated_at = portfolio.updated_at = now
    await s.flush()
    if ledger is not None:
        add = derive.row_of(txn, asset.symbol) if asset is not None else None
        changed = ledger.changed(drop=txn.id, add=add, action=entry.action())
        matched = None
        if with_actions:
            matched = _checked(changed, txn.id, entry.kind, action)
            _dividends_covered(changed, action)
        await derive.sync_positions(s, user_id, touched, ledger=changed, matched=matched)
    await _check_cash(s, portfolio, _cash_field(entry), action)
    if old_portfolio.id != portfolio.id:
        await _check_cash(s, old_portfolio, "portfolio", action)
    await _follow(s, user_id, at, drop=txn.id, add=txn, assets=(asset, target))
    return txn, asset


def _check_moved_rows(
    ledger: derive.SymbolLedger,
    txn: Transaction,
    portfolio_id: int,
    asset: Asset | None,
    entry: LedgerEntry,
    action: str,
) -> None:
    """The lot checks of an edit without corporate actions: the row leaves its old
    (portfolio, asset) ledger and joins the new one (either may be none: a cash row)."""
    new_row = _row(entry, txn.id)
    old_symbol = next((r[2] for r in ledger.rows if r[0] == txn.id), None)
    if asset is not None and (portfolio_id, asset.id) == (txn.portfolio_id, txn.asset_id):
        lots.check_ledger(
            _lot_rows(ledger, portfolio_id, asset.symbol), add=new_row, drop=txn.id, action=action
        )
        return
    if old_symbol is not None:
        lots.check_ledger(
            _lot_rows(ledger, txn.portfolio_id, old_symbol), drop=txn.id, action=action
        )
    if asset is not None:
        lots.check_ledger(_lot_rows(ledger, portfolio_id, asset.symbol), add=new_row, action=action)


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
    at = await read.version(await s.connection(), user_id)
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
    if txn.asset_id is None:  # a cash row: no positions to derive
        await s.delete(txn)
        portfolio.updated_at = utcnow()
        await s.flush()
        await _check_cash(s, portfolio, "cash_balance", action)
    else:
        asset_id = txn.asset_id
        touched = [asset_id] if txn.target_asset_id is None else [asset_id, txn.target_asset_id]
        ledger = await derive.read_ledger(s, user_id, touched)
        symbol = next(r[2] for r in ledger.rows if r[0] == txn.id)
        changed = ledger.changed(drop=txn.id)
        matched = None
        if ledger.has_actions:
            matched = _checked(changed, None, None, action)
            _dividends_covered(changed, action)
        else:
            lots.check_ledger(_lot_rows(ledger, txn.portfolio_id, symbol), drop=txn.id, action=action)
        await s.delete(txn)
        portfolio.updated_at = utcnow()
        await s.flush()
        await derive.sync_positions(s, user_id, touched, ledger=changed, matched=matched)
        await _check_cash(s, portfolio, "cash_balance", action)
    await _follow(s, user_id, at, drop=txn.id)
