"""Importing a broker statement into a portfolio's ledger: all or nothing, idempotent.

One import is one database write transaction: the request's session, which its caller
commits (:func:`service.state.provide_session`). The file is parsed first, before the
transaction's first statement (:func:`service.imports.parse_statement`); then, with the
portfolio and the user's ledger locked as every ledger write locks them:

1. rows whose source id (OFX ``FITID``, or the hash of a CSV row) the portfolio
   already holds are skipped: importing the same statement twice adds nothing;
2. each remaining row is checked like a typed transaction (numbers, dates, fees;
   :class:`service.transactions.services.LedgerEntry`); a security row's symbol must
   be an asset (or is created with ``create_assets``) and its currency the asset's;
3. the portfolio's whole ledger of every symbol the file touches, existing rows and
   imported ones together in ledger order, must relieve
   (:func:`service.ledger.checks.first_shortfall`): an uncovered sale, or a
   dividend on shares not held at the previous close, is an error on its line;
4. under ``cash_policy = "strict"``, the portfolio's cash, existing rows and imported
   ones together, must not end a day below zero in any currency
   (:func:`quantcore.cash.first_overdraft`): else an error on the imported line that
   overdraws it (``insufficient_cash``). Checked once every line is fine: a refused
   deposit would otherwise show as an overdraft later.

Every problem of the file is collected with its line and field. Any problem and
nothing is written (400 ``validation_error``, ``details.errors``); ``dry_run``
reports the same figures and errors without writing. Otherwise the rows are inserted
in one statement and the positions of the touched assets re-derived once
(:func:`service.ledger.writes.rederive_written`).

Rows by kind:

* cash rows (``deposit``, ``withdrawal``, ``interest``, ``fee``) are written with no
  asset, ``price`` the amount, in their currency; a cash row of 0 (no amount, no
  fees) carries nothing and is listed in ``ignored``;
* ``split`` rows become ``split`` transactions: OFX gives the ratio; a CSV gives the
  shares added, so the ratio is (held + added) / held on the shares held before it
  (exact to 8 decimals, else an error on ``quantity``);
* the other corporate actions of a generic CSV (``stock_dividend``,
  ``return_of_capital``, ``spin_off``, ``merger``, and a split's ``cash_in_lieu``) are
  the typed transactions with the same fields; a spin-off's or merger's target must be an
  asset (or is created with ``create_assets``, in the currency of the shares it
  replaces). With any corporate action among the portfolio's rows of the symbols
  involved, their whole ledger is matched by ``quantcore`` as a typed write's is, its
  error on the line of the row it names;
* ``transfer`` rows are **errors** (code ``unsupported``): skipping them would leave
  the positions wrong, and a transfer in carries an acquisition date the statement
  does not give, so the file is refused rather than imported wrong.

Currencies: a code the market has no rates for (:meth:`MarketData.currencies`,
passed in :class:`ImportOptions`) is an error on ``currency`` (``unsupported``). A
security row's amounts are in its asset's currency: a row stating another one is an
error (``mismatch``); a row stating none is taken in it. An asset created by the
import takes its first row's currency, else the portfolio's base currency. A cash
row's cash moves in its stated currency, else the portfolio's base currency.

Dividends: a statement gives a dividend's total, the ledger a per-share amount on
the shares held. A dividend is stored as quantity 1 at the total (exact), or, when
fewer than one share was held at the previous close (fractional shares), as the
shares held at the total divided by them (8 decimal places).
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, select
from sqlalchemy.ext.asyncio import AsyncSession

from service import formatting as fmt
from service.db import Database
from service.db.models import Asset, Portfolio, Transaction
from service.errors import ApiError, NotFoundError, ValidationError
from service.imports import CASH_TYPES, CsvMapping, ImportRow, ParseResult, parse_statement
from service.imports import lots as named_lots
from service.imports import table as columnar
from service.imports.plan import (
    TEMP_ID,
    Plan,
    Planned,
    cash_entry,
    check_ledgers,
    security_entry,
    walk_holdings,
    what,
)
from service.imports.rows import ParsedColumns
from service.imports.schemas import (
    ImportErrorRead,
    ImportIgnoredRead,
    ImportRead,
    ImportRowRead,
    StatementFormat,
)
from service.imports.write import source_id, write_entries, write_table
from service.ledger import cash, read
from service.ledger import checks as lots
from service.ledger import positions as derive
from service.ledger.columns import LedgerColumns
from service.ledger.lots import Action
from service.ledger.writes import LedgerEntry
from service.marketdata.fx import CURRENCIES

__all__ = [
    "MAX_FILE_BYTES",
    "FileTooLarge",
    "ImportOptions",
    "guess_format",
    "import_statement",
    "preview_statement",
]

#: The largest statement accepted (bytes): a 50,000-row OFX file is about 25 MB.
MAX_FILE_BYTES = 64 * 1024 * 1024
#: Rows shown in a reply (``rows``); ``counts`` and ``added`` cover all of them.
PREVIEW_ROWS = 20

_LEDGER_TYPES = frozenset({"buy", "sell", "dividend", *lots.CORPORATE_ACTIONS})
_PAYS = frozenset({"buy", "withdrawal", "fee"})  # rows that take cash out
_UNSUPPORTED = {
    "transfer": "share transfers in or out cannot be recorded yet; importing the rest without "
    "it would leave the positions wrong",
}
_TRANSACTIONS = cast(Table, Transaction.__table__)
_SYMBOL = columnar.SYMBOL


class FileTooLarge(ApiError):
    """413 ``request_too_large``: the statement is above :data:`MAX_FILE_BYTES`."""

    status_code = 413
    error = "request_too_large"


@dataclass(frozen=True, slots=True)
class ImportOptions:
    """How to read and apply a statement (see :func:`import_statement`).

    ``currencies``: the ISO 4217 codes rows may be in (the market's
    :meth:`~service.assets.market.MarketData.currencies`).
    """

    format: StatementFormat
    mapping: CsvMapping | None = None
    preset: str | None = None
    dry_run: bool = False
    create_assets: bool = False
    currencies: tuple[str, ...] = CURRENCIES


def guess_format(filename: str | None, data: bytes) -> StatementFormat | None:
    """``ofx`` for ``.ofx``/``.qfx`` names or OFX content, ``csv`` for ``.csv``; else None."""
    name = (filename or "").lower()
    if name.endswith((".ofx", ".qfx")):
        return "ofx"
    if name.endswith(".csv"):
        return "csv"
    head = data[:4096].lstrip().upper()
    if head.startswith(b"OFXHEADER") or b"<?OFX" in head or b"<OFX>" in head:
        return "ofx"
    return None


async def _parse(data: bytes, options: ImportOptions) -> ParseResult:
    if len(data) > MAX_FILE_BYTES:
        raise FileTooLarge(
            f"The file has {len(data)} bytes; statements up to {MAX_FILE_BYTES} bytes are accepted.",
            details={"field": "file", "code": "max_size", "max_bytes": MAX_FILE_BYTES},
        )
    return await asyncio.to_thread(
        parse_statement, data, options.format, mapping=options.mapping, preset=options.preset,
        columns=True,
    )  # fmt: skip


async def import_statement(
    s: AsyncSession, user_id: int, portfolio_id: int, data: bytes, options: ImportOptions
) -> ImportRead:
    """Import a broker statement into one of the user's portfolios (module docstring).

    ``s``: the request's session, a write transaction its caller commits; the file is
    parsed before the session's first statement, so no lock is held while parsing. The
    rows are written and flushed, never committed: a raised error leaves the caller
    nothing to commit. A dry run only reads (:func:`preview_statement` gives it a read
    session of its own).

    Raises:
        FileTooLarge: ``data`` above :data:`MAX_FILE_BYTES`.
        NotFoundError: the portfolio is not the user's.
        ValidationError: ``file`` ``invalid_rows`` with ``errors`` (every bad line);
            not raised by a dry run, which lists the errors in its reply.
    """
    parsed = await _parse(data, options)
    if options.dry_run:
        return await _preview(s, user_id, portfolio_id, parsed, options)
    portfolio = await _portfolio(s, user_id, portfolio_id, lock=True)
    await derive.lock_user_ledger(s, user_id)
    conn = await s.connection()
    at = await read.version(conn, user_id)
    plan = await _plan(
        s, user_id, portfolio, parsed, options, lambda: read.before_write(conn, user_id, at)
    )
    if plan.errors:
        plan.errors.sort(key=lambda e: (e.line, e.field))
        raise ValidationError(
            "file", "invalid_rows",
            f"{len(plan.errors)} problem(s) in the file; nothing was imported.",
            errors=[_error_dict(e) for e in plan.errors],
        )  # fmt: skip
    if plan.table is not None:
        # the table holds what is written: the parser's rows go before the insert and
        # the lot match that follow it (the reply needs only the duplicates)
        parsed.rows, parsed.columns = [], None
        if len(plan.table):
            await write_table(s, portfolio, plan, at)
    elif plan.entries:
        await write_entries(s, portfolio, plan)
    return _reply(portfolio_id, options, parsed, plan)


async def preview_statement(
    db: Database, user_id: int, portfolio_id: int, data: bytes, options: ImportOptions
) -> ImportRead:
    """A dry run (``options.dry_run``) of :func:`import_statement` in a read session of its
    own: the request's session of a POST is a write transaction, which on SQLite would hold
    the write lock while the file is planned."""
    if not options.dry_run:
        raise ValueError("a preview writes nothing: options.dry_run must be set")
    parsed = await _parse(data, options)
    async with db.read() as s:
        return await _preview(s, user_id, portfolio_id, parsed, options)


async def _preview(
    s: AsyncSession, user_id: int, portfolio_id: int, parsed: ParseResult, options: ImportOptions
) -> ImportRead:
    """What the import would do, errors listed instead of raised, nothing locked or written."""
    portfolio = await _portfolio(s, user_id, portfolio_id, lock=False)
    conn = await s.connection()
    plan = await _plan(s, user_id, portfolio, parsed, options, lambda: read.columns(conn, user_id))
    return _reply(portfolio_id, options, parsed, plan)


def _error_dict(e: ImportErrorRead) -> dict[str, Any]:
    return {"line": e.line, "field": e.field, "code": e.code, "message": e.message}


async def _portfolio(s: AsyncSession, user_id: int, portfolio_id: int, *, lock: bool) -> Portfolio:
    query = select(Portfolio).where(Portfolio.id == portfolio_id, Portfolio.user_id == user_id)
    if lock:
        query = query.with_for_update()
    portfolio = (await s.execute(query)).scalar_one_or_none()
    if portfolio is None:
        raise NotFoundError(f"Portfolio {portfolio_id} not found.")
    return portfolio


async def _assets(s: AsyncSession, symbols: list[str]) -> dict[str, tuple[int, str]]:
    """``(id, currency)`` of the assets of ``symbols`` that exist, by symbol."""
    assets: dict[str, tuple[int, str]] = {}
    for i in range(0, len(symbols), 500):
        chunk = symbols[i : i + 500]
        found = await s.execute(
            select(Asset.symbol, Asset.id, Asset.currency).where(Asset.symbol.in_(chunk))
        )
        assets.update((sym, (aid, ccy)) for sym, aid, ccy in found.tuples())
    return assets


async def _plan_table(
    s: AsyncSession,
    portfolio: Portfolio,
    parsed: ParseResult,
    options: ImportOptions,
    plan: Plan,
    held_ids: set[str | None],
    ledger: Callable[[], Awaitable[LedgerColumns]],
) -> bool:
    """Plan the common case over columns (:mod:`service.imports.table`) into ``plan.table``;
    False, with ``plan`` untouched, wherever the row-by-row plan must decide."""
    rows = parsed.columns if parsed.columns is not None else ParsedColumns.from_rows(parsed.rows)
    if rows is None:
        return False
    stored = [source_id(raw) for raw in rows.source]
    screened = columnar.screen(rows, stored, held_ids, options.currencies)
    if screened is None:
        return False
    symbols = {x for x in screened.rows.symbol.tolist() if x is not None}  # None: cash rows
    assets = await _assets(s, sorted(x for x in symbols if _SYMBOL.match(x)))
    made = columnar.entry_table(
        screened, assets, options.create_assets, portfolio.base_currency, plan.latest
    )
    if made is None:
        return False
    table, new_assets, currency_of = made
    if not table.cash.all():
        cols = await ledger()
        at = columnar.ledger_rows(cols, portfolio.id, currency_of)
        if at is None or not columnar.shares_relieve(table, cols, at):
            return False
    if len(table) and portfolio.cash_policy == "strict":
        held = await cash.read_cash_rows(await s.connection(), portfolio_ids=[portfolio.id])
        more = columnar.cash_columns(table, portfolio.id)
        if cash.overdraft(held, portfolio.base_currency, more) is not None:
            return False  # the row-by-row plan names the line
    plan.skipped, plan.ignored = screened.skipped, screened.ignored
    plan.new_assets, plan.currency_of, plan.table = new_assets, currency_of, table
    return True


async def _plan(
    s: AsyncSession,
    user_id: int,
    portfolio: Portfolio,
    parsed: ParseResult,
    options: ImportOptions,
    ledger: Callable[[], Awaitable[LedgerColumns]],
) -> Plan:
    """What the import would do. ``ledger``: the user's ledger columns as the import sees
    them (the columnar plan's existing rows)."""
    plan = Plan()
    named: set[tuple[int, str]] = set()
    for e in parsed.errors:
        if (e.line, e.field) not in named:  # "ten" is invalid, not also a missing quantity
            named.add((e.line, e.field))
            plan.error(e.line, e.field, e.code, e.message)
    held_ids = set(
        (
            await s.execute(
                select(Transaction.source_id).where(
                    Transaction.portfolio_id == portfolio.id, Transaction.source_id.is_not(None)
                )
            )
        ).scalars()
    )
    if not plan.errors and await _plan_table(s, portfolio, parsed, options, plan, held_ids, ledger):
        return plan
    parsed.row_objects()  # read row by row: the checks below word each row's problem
    supported = frozenset(options.currencies)
    candidates: list[tuple[int, ImportRow]] = []
    cash_rows: list[tuple[int, ImportRow, LedgerEntry]] = []
    for order, row in enumerate(parsed.rows):
        if source_id(row.source_id) in held_ids:
            plan.skipped += 1
        elif row.currency is not None and row.currency not in supported:
            plan.error(
                row.line, "currency", "unsupported",
                f"{what(row)}: {row.currency!r} has no exchange rates here; supported: "
                f"{', '.join(options.currencies)}",
            )  # fmt: skip
        elif row.type in CASH_TYPES:
            if row.price == 0 and row.fees == 0:
                reason = "moves no cash (amount 0)"
                plan.ignored.append(ImportIgnoredRead(line=row.line, type=row.type, reason=reason))
                continue
            entry = cash_entry(plan, row, row.currency or portfolio.base_currency)
            if entry is not None:
                cash_rows.append((order, row, entry))
        elif row.type not in _LEDGER_TYPES:
            plan.error(
                row.line, "type", "unsupported", f"{row.type}: {_UNSUPPORTED.get(row.type, '')}"
            )
        elif row.symbol is None or not _SYMBOL.match(row.symbol):
            plan.error(row.line, "symbol", "invalid", f"not a ticker symbol: {row.symbol!r}")
        elif row.target_symbol is not None and not _SYMBOL.match(row.target_symbol):
            plan.error(
                row.line, "target_symbol", "invalid",
                f"the {row.type} of {row.symbol}: not a ticker symbol: {row.target_symbol!r}",
            )  # fmt: skip
        else:
            candidates.append((order, row))
    held_lots = await named_lots.held_lots(s, portfolio.id, plan, parsed.rows, held_ids)
    symbols = sorted(
        {r.symbol for _, r in candidates if r.symbol is not None}
        | {r.target_symbol for _, r in candidates if r.target_symbol is not None}
    )
    assets = await _assets(s, symbols)
    ledger_rows = plan.ledger = await derive.read_ledger(
        s, user_id, [aid for aid, _ in assets.values()]
    )
    existing: dict[str, list[lots.LotRow]] = defaultdict(list)
    actions: dict[int, Action] = {}  # the portfolio's corporate actions among them, by id
    for tid, pid, sym, day, kind, qty, price, fees, lot in ledger_rows.rows:
        if pid == portfolio.id:
            action = ledger_rows.actions.get(tid)  # a split's multiplier counts in the check
            ratio = action.ratio if action is not None else None
            existing[sym].append(lots.LotRow(tid, kind, qty, day, lot, price, fees, ratio))
            if action is not None:
                actions[tid] = action
    rows: list[Planned] = []
    for order, row in candidates:
        if not _asset_currency(plan, row, assets, options.create_assets, portfolio.base_currency):
            continue
        target = row.target_symbol
        if target is not None and not _target_asset(plan, row, assets, options.create_assets):
            continue
        if row.type == "split" and row.ratio is None:
            rows.append((order, row, None))  # shares added, no ratio (CSV): set from the holding
            continue
        entry = security_entry(plan, row, row.quantity, row.price)
        if entry is not None:
            rows.append((order, row, entry))
    targets = {tid: a.target for tid, a in actions.items() if a.target is not None}
    securities = walk_holdings(plan, rows, existing, targets)
    check_ledgers(
        plan, securities, existing, actions=actions, portfolio_id=portfolio.id,
        lot_method=portfolio.lot_method, held_lots=held_lots,
    )  # fmt: skip
    merged = sorted([*securities, *cash_rows], key=lambda planned: planned[0])
    plan.entries = [(row, entry) for _, row, entry in merged]
    if not plan.errors and plan.entries and portfolio.cash_policy == "strict":
        await _check_cash(s, portfolio, plan)
    return plan


def _asset_currency(
    plan: Plan,
    row: ImportRow,
    assets: dict[str, tuple[int, str]],
    create_assets: bool,
    base_currency: str,
) -> bool:
    """Whether the row's asset exists (or will) in the row's currency; else an error."""
    assert row.symbol is not None
    sym = row.symbol
    if sym in assets:
        currency = assets[sym][1]
        whose = f"{sym} is priced in {currency}"
    elif create_assets:
        currency = plan.new_assets.setdefault(sym, row.currency or base_currency)
        whose = f"the new asset {sym} is in {currency}, as an earlier line of the file has it"
    else:
        plan.error(
            row.line, "symbol", "not_found",
            f"unknown asset symbol {sym!r} (import with create_assets to add it)",
        )  # fmt: skip
        return False
    if row.currency is not None and row.currency != currency:
        plan.error(row.line, "currency", "mismatch", f"a {row.type} in {row.currency}: {whose}")
        return False
    plan.currency_of[sym] = currency
    return True


def _target_asset(
    plan: Plan, row: ImportRow, assets: dict[str, tuple[int, str]], create_assets: bool
) -> bool:
    """Whether the asset a spin-off or merger delivers exists (or will: in the currency of
    the shares it replaces); else an error on ``target_symbol``."""
    assert row.symbol is not None and row.target_symbol is not None
    target = row.target_symbol
    if target in assets:
        plan.currency_of.setdefault(target, assets[target][1])
        return True
    if create_assets:
        currency = plan.new_assets.setdefault(target, plan.currency_of[row.symbol])
        plan.currency_of.setdefault(target, currency)
        return True
    plan.error(
        row.line, "target_symbol", "not_found",
        f"the {row.type} of {row.symbol} on {row.date}: unknown asset symbol {target!r} "
        "(import with create_assets to add it)",
    )  # fmt: skip
    return False


async def _check_cash(s: AsyncSession, portfolio: Portfolio, plan: Plan) -> None:
    """The strict policy on the portfolio's rows and the planned ones: an error on the
    imported line that first leaves cash below zero (module docstring, step 4)."""
    held = await cash.read_cash_rows(await s.connection(), portfolio_ids=[portfolio.id])
    planned = [
        _cash_row(portfolio.id, TEMP_ID + i, e, plan.currency(e))
        for i, (_, e) in enumerate(plan.entries)
    ]
    low = cash.overdraft([*held, *planned], portfolio.base_currency)
    if low is None:
        return
    day = low.date.date()
    row, entry = _overdrawing(plan, day, low.currency)
    plan.error(
        row.line if row is not None else 0,
        "amount" if entry is not None and entry.is_cash else "quantity",
        "insufficient_cash",
        cash.overdraft_message("The import", low),
    )


def _cash_row(portfolio_id: int, temp_id: int, e: LedgerEntry, currency: str) -> cash.CashRow:
    """A planned entry as :func:`service.ledger.cash.read_cash_rows` gives a stored row."""
    ratio = float(e.ratio) if e.ratio is not None else None
    return (
        portfolio_id, temp_id, e.date, e.kind, e.symbol, currency,
        float(e.quantity), float(e.price), float(e.fees), ratio,
        float(e.cash) if e.cash is not None else None, e.target_symbol,
    )  # fmt: skip


def _overdrawing(
    plan: Plan, day: dt.date, currency: str
) -> tuple[ImportRow | None, LedgerEntry | None]:
    """The imported row to blame for ``currency`` below zero on ``day``: the first one
    paying cash out that day, else the last one paying out before it."""
    paying = [
        (e.date, row.line, i)
        for i, (row, e) in enumerate(plan.entries)
        if e.kind in _PAYS and e.date <= day and plan.currency(e) == currency
    ]
    if not paying:
        return None, None
    same_day = [p for p in paying if p[0] == day]
    return plan.entries[(min(same_day) if same_day else max(paying))[2]]


def _reply(
    portfolio_id: int, options: ImportOptions, parsed: ParseResult, plan: Plan
) -> ImportRead:
    if plan.table is not None:  # planned over columns: no errors
        table = plan.table
        return ImportRead(
            portfolio=portfolio_id,
            format=options.format,
            dry_run=options.dry_run,
            added=len(table),
            counts=table.counts(),
            skipped_duplicates=plan.skipped,
            duplicate_lines=list(parsed.duplicates),
            ignored=plan.ignored,
            created_assets=sorted(plan.new_assets) if len(table) else [],
            rows=table.preview(PREVIEW_ROWS),
            errors=[],
        )
    entries = [] if plan.errors and not options.dry_run else plan.entries
    counts = Counter(e.kind for _, e in entries)
    return ImportRead(
        portfolio=portfolio_id,
        format=options.format,
        dry_run=options.dry_run,
        added=len(entries),
        counts=dict(sorted(counts.items())),
        skipped_duplicates=plan.skipped,
        duplicate_lines=list(parsed.duplicates),
        ignored=plan.ignored,
        created_assets=sorted(plan.new_assets) if entries else [],
        rows=[
            ImportRowRead(
                line=row.line,
                source_id=source_id(row.source_id),
                transaction_type=e.kind,
                asset_symbol=e.symbol,
                currency=plan.currency(e),
                transaction_date=e.date,
                quantity=fmt.quantity(e.quantity),
                price=fmt.dec(e.price),
                fees=fmt.dec(e.fees),
            )
            for row, e in entries[:PREVIEW_ROWS]
        ],
        errors=sorted(plan.errors, key=lambda e: (e.line, e.field)),  # stable: a line's order kept
    )
