"""Importing a broker statement into a portfolio's ledger: all or nothing, idempotent.

One import is one database write transaction. The file is parsed first (outside the
transaction, :func:`service.imports.parse_statement`); then, with the portfolio and
the user's ledger locked as every ledger write locks them:

1. rows whose source id (OFX ``FITID``, or the hash of a CSV row) the portfolio
   already holds are skipped: importing the same statement twice adds nothing;
2. each remaining row is checked like a typed transaction (numbers, dates, fees;
   :class:`service.transactions.services.LedgerEntry`) and its symbol must be an
   asset (or is created with ``create_assets``);
3. the portfolio's whole ledger of every symbol the file touches, existing rows and
   imported ones together in ledger order, must relieve
   (:func:`service.transactions.lots.first_shortfall`): an uncovered sale, or a
   dividend on shares not held at the previous close, is an error on its line.

Every problem of the file is collected with its line and field. Any problem and
nothing is written (400 ``validation_error``, ``details.errors``); ``dry_run``
reports the same figures and errors without writing. Otherwise the rows are inserted
in one statement and the positions of the touched assets re-derived once
(:func:`service.portfolios.derive.sync_positions`).

Rows beyond buys, sells and dividends:

* cash rows (``deposit``, ``withdrawal``, ``interest``, ``fee``) are **ignored**
  and listed with the reason: portfolios hold securities only, so leaving them out
  changes no position, value or gain;
* ``split`` rows become ``split`` transactions: OFX gives the ratio; a CSV gives the
  shares added, so the ratio is (held + added) / held on the shares held before it
  (exact to 8 decimals, else an error on ``quantity``);
* ``transfer`` rows are **errors** (code ``unsupported``): skipping them would leave
  the positions wrong, and a transfer in carries an acquisition date the statement
  does not give, so the file is refused rather than imported wrong;
* a security row in another currency than USD is an error (code ``unsupported``
  on ``currency``): the ledger holds USD prices only.

Dividends: a statement gives a dividend's total, the ledger a per-share amount on
the shares held. A dividend is stored as quantity 1 at the total (exact), or, when
fewer than one share was held at the previous close (fractional shares), as the
shares held at the total divided by them (8 decimal places).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from service import formatting as fmt
from service.db import Database
from service.db.models import Asset, Portfolio, Transaction, utcnow
from service.db.types import quantize
from service.errors import ApiError, NotFoundError, ValidationError
from service.imports import CASH_TYPES, CsvMapping, ImportRow, ParseResult, parse_statement
from service.imports.schemas import (
    ImportErrorRead,
    ImportIgnoredRead,
    ImportRead,
    ImportRowRead,
    StatementFormat,
)
from service.portfolios import derive
from service.transactions import lots
from service.transactions.services import LedgerEntry

__all__ = [
    "MAX_FILE_BYTES",
    "FileTooLarge",
    "ImportOptions",
    "guess_format",
    "import_statement",
]

#: The largest statement accepted (bytes): a 50,000-row OFX file is about 25 MB.
MAX_FILE_BYTES = 64 * 1024 * 1024
#: Rows shown in a reply (``rows``); ``counts`` and ``added`` cover all of them.
PREVIEW_ROWS = 20
#: Shortfalls reported per import (the rest of the ledger is not checked further).
MAX_LEDGER_ERRORS = 1000

_LEDGER_TYPES = frozenset({"buy", "sell", "dividend", "split"})
_ZERO = Decimal(0)
_UNSUPPORTED = {
    "transfer": "share transfers in or out cannot be recorded yet; importing the rest without "
    "it would leave the positions wrong",
}
_IGNORED = "cash is not tracked yet: a {kind} moves cash only and changes no position"
_SYMBOL = re.compile(r"\A[A-Z0-9][A-Z0-9.\-/^=_]{0,31}\Z")
_TEMP_ID = 1 << 60  # ids of rows not yet written, above every real id, in file order
_FIELDS = {"transaction_date": "date"}


class FileTooLarge(ApiError):
    """413 ``request_too_large``: the statement is above :data:`MAX_FILE_BYTES`."""

    status_code = 413
    error = "request_too_large"


@dataclass(frozen=True, slots=True)
class ImportOptions:
    """How to read and apply a statement (see :func:`import_statement`)."""

    format: StatementFormat
    mapping: CsvMapping | None = None
    preset: str | None = None
    dry_run: bool = False
    create_assets: bool = False


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


@dataclass
class _Plan:
    """What an import would do."""

    entries: list[tuple[ImportRow, LedgerEntry]] = field(default_factory=list)
    errors: list[ImportErrorRead] = field(default_factory=list)
    ignored: list[ImportIgnoredRead] = field(default_factory=list)
    skipped: int = 0
    new_assets: list[str] = field(default_factory=list)

    def error(self, line: int, field_name: str, code: str, message: str) -> None:
        self.errors.append(ImportErrorRead(line=line, field=field_name, code=code, message=message))


def _source_id(raw: str) -> str:
    """The stored source id: the statement's own when it fits the column, else its hash."""
    if len(raw) <= 128:
        return raw
    return "sha256:" + hashlib.sha256(raw.encode()).hexdigest()


async def import_statement(
    db: Database, user_id: int, portfolio_id: int, data: bytes, options: ImportOptions
) -> ImportRead:
    """Import a broker statement into one of the user's portfolios (module docstring).

    Raises:
        FileTooLarge: ``data`` above :data:`MAX_FILE_BYTES`.
        NotFoundError: the portfolio is not the user's.
        ValidationError: ``file`` ``invalid_rows`` with ``errors`` (every bad line);
            not raised by a dry run, which lists the errors in its reply.
    """
    if len(data) > MAX_FILE_BYTES:
        raise FileTooLarge(
            f"The file has {len(data)} bytes; statements up to {MAX_FILE_BYTES} bytes are accepted.",
            details={"field": "file", "code": "max_size", "max_bytes": MAX_FILE_BYTES},
        )
    parsed = await asyncio.to_thread(
        parse_statement, data, options.format, mapping=options.mapping, preset=options.preset
    )
    if options.dry_run:
        async with db.read() as s:
            portfolio = await _portfolio(s, user_id, portfolio_id, lock=False)
            plan = await _plan(s, user_id, portfolio, parsed, options.create_assets)
        return _reply(portfolio_id, options, parsed, plan)
    async with db.write() as s:
        portfolio = await _portfolio(s, user_id, portfolio_id, lock=True)
        await derive.lock_user_ledger(s, user_id)
        plan = await _plan(s, user_id, portfolio, parsed, options.create_assets)
        if plan.errors:
            plan.errors.sort(key=lambda e: (e.line, e.field))
            raise ValidationError(
                "file", "invalid_rows",
                f"{len(plan.errors)} problem(s) in the file; nothing was imported.",
                errors=[_error_dict(e) for e in plan.errors],
            )  # fmt: skip
        if plan.entries:
            await _write(s, portfolio, plan)
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


async def _plan(
    s: AsyncSession, user_id: int, portfolio: Portfolio, parsed: ParseResult, create_assets: bool
) -> _Plan:
    plan = _Plan()
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
    candidates: list[ImportRow] = []
    for row in parsed.rows:
        if _source_id(row.source_id) in held_ids:
            plan.skipped += 1
        elif row.type in CASH_TYPES:
            plan.ignored.append(
                ImportIgnoredRead(
                    line=row.line, type=row.type, reason=_IGNORED.format(kind=row.type)
                )
            )
        elif row.type not in _LEDGER_TYPES:
            plan.error(
                row.line, "type", "unsupported", f"{row.type}: {_UNSUPPORTED.get(row.type, '')}"
            )
        elif row.currency.upper() != "USD":
            plan.error(
                row.line, "currency", "unsupported",
                f"a {row.type} in {row.currency}: the ledger holds USD prices only",
            )  # fmt: skip
        elif row.symbol is None or not _SYMBOL.match(row.symbol):
            plan.error(row.line, "symbol", "invalid", f"not a ticker symbol: {row.symbol!r}")
        else:
            candidates.append(row)
    symbols = sorted({r.symbol for r in candidates if r.symbol is not None})
    assets: dict[str, int] = {}
    for i in range(0, len(symbols), 500):
        chunk = symbols[i : i + 500]
        found = await s.execute(select(Asset.symbol, Asset.id).where(Asset.symbol.in_(chunk)))
        assets.update(found.tuples().all())
    unknown = [sym for sym in symbols if sym not in assets]
    if create_assets:
        plan.new_assets = unknown
    ledger = await derive.read_ledger(s, user_id, list(assets.values()))
    existing: dict[str, list[lots.LotRow]] = defaultdict(list)
    for tid, pid, sym, day, kind, qty, price, fees, lot in ledger.rows:
        if pid == portfolio.id:
            action = ledger.actions.get(tid)  # a split's multiplier counts in the check
            ratio = action.ratio if action is not None else None
            existing[sym].append(lots.LotRow(tid, kind, qty, day, lot, price, fees, ratio))
    rows: list[tuple[ImportRow, LedgerEntry | None]] = []
    for row in candidates:
        assert row.symbol is not None
        if row.symbol not in assets and not create_assets:
            plan.error(
                row.line, "symbol", "not_found",
                f"unknown asset symbol {row.symbol!r} (import with create_assets to add it)",
            )  # fmt: skip
            continue
        if row.type == "split" and row.ratio is None:
            rows.append((row, None))  # shares added, no ratio (CSV): set from the holding
            continue
        entry = _entry(plan, row, row.quantity, row.price)
        if entry is not None:
            rows.append((row, entry))
    entries = _walk_holdings(plan, rows, existing)
    _check_ledgers(plan, entries, existing)
    plan.entries = entries
    return plan


def _entry(
    plan: _Plan,
    row: ImportRow,
    quantity: Decimal,
    price: Decimal,
    *,
    ratio: Decimal | None = None,
) -> LedgerEntry | None:
    """The row as a checked ledger entry (a split: ``ratio``, else the row's), or None and an error."""
    assert row.symbol is not None
    try:
        if row.type == "split":
            return LedgerEntry(
                row.symbol, "split", None, None, 0, row.date, date_field="date",
                split_ratio=ratio if ratio is not None else row.ratio,
            )  # fmt: skip
        return LedgerEntry(
            row.symbol, row.type, quantity, price, row.fees, row.date, date_field="date"
        )
    except ValidationError as exc:
        plan.error(row.line, _FIELDS.get(exc.field, exc.field), exc.code, exc.message)
        return None


def _walk_holdings(
    plan: _Plan,
    rows: list[tuple[ImportRow, LedgerEntry | None]],
    existing: dict[str, list[lots.LotRow]],
) -> list[tuple[ImportRow, LedgerEntry]]:
    """Fit the rows that depend on the shares held, walking each symbol's ledger in order.

    * a split given as shares added (CSV) gets ``ratio = (held + added) / held``, which
      must be exact to 8 decimals (else an error on ``quantity``);
    * a dividend on fewer than one share held at the previous close becomes
      (shares held) x (total / shares).

    Returns the entries in file order (rows that failed are left out, with an error).
    """
    if not any(e is None or e.kind == "dividend" for _, e in rows):
        return [(row, e) for row, e in rows if e is not None]
    timeline: dict[str, list[tuple[tuple[Any, ...], int, lots.LotRow | None]]] = defaultdict(list)
    for sym, old in existing.items():
        for r in old:
            key = lots.ledger_key(r.date, r.kind, r.price, r.quantity, r.fees, r.id)
            timeline[sym].append((key, -1, r))
    for i, (row, e) in enumerate(rows):
        assert row.symbol is not None
        if e is None:
            key = lots.ledger_key(row.date, "split", _ZERO, _ZERO, _ZERO, _TEMP_ID + i)
        else:
            key = lots.ledger_key(e.date, e.kind, e.price, e.quantity, e.fees, _TEMP_ID + i)
        timeline[row.symbol].append((key, i, None))
    fitted: dict[int, LedgerEntry | None] = {}
    for events in timeline.values():
        held = _ZERO
        for _, i, old_row in sorted(events, key=lambda ev: ev[0]):
            if old_row is not None:
                kind, quantity, ratio = old_row.kind, old_row.quantity, old_row.ratio
            else:
                row, e = rows[i]
                if e is None:
                    e = fitted[i] = _split_from_shares(plan, row, held)
                elif e.kind == "dividend" and _ZERO < held < 1:
                    e = fitted[i] = _entry(plan, row, held, quantize(e.price / held))
                if e is None:
                    continue
                kind, quantity, ratio = e.kind, e.quantity, e.ratio
            if kind == "buy":
                held += quantity
            elif kind == "sell":
                held -= quantity
            elif kind in ("split", "stock_dividend") and ratio is not None:
                held *= ratio
            elif kind == "merger":
                held = _ZERO  # the shares became the target's
    out: list[tuple[ImportRow, LedgerEntry]] = []
    for i, (row, e) in enumerate(rows):
        entry = fitted.get(i, e)
        if entry is not None:
            out.append((row, entry))
    return out


def _split_from_shares(plan: _Plan, row: ImportRow, held: Decimal) -> LedgerEntry | None:
    """A split stated as shares added: its ratio from the shares held before it."""
    if held <= 0:
        plan.error(
            row.line, "quantity", "insufficient_quantity",
            f"a split of {row.symbol} on {row.date} adds {row.quantity} shares to none held",
        )  # fmt: skip
        return None
    after = held + row.quantity
    ratio = quantize(after / held)
    if after <= 0 or ratio * held != after:
        plan.error(
            row.line, "quantity", "invalid",
            f"a split of {row.symbol} on {row.date} adding {row.quantity} shares to {held} held "
            "has no exact ratio (8 decimals)",
        )  # fmt: skip
        return None
    return _entry(plan, row, _ZERO, _ZERO, ratio=ratio)


def _check_ledgers(
    plan: _Plan, rows: list[tuple[ImportRow, LedgerEntry]], existing: dict[str, list[lots.LotRow]]
) -> None:
    """Relieve each symbol's whole ledger with the imported rows; an error per short row."""
    by_symbol: dict[str, list[lots.LotRow]] = defaultdict(list)
    lines: dict[int, ImportRow] = {}
    for i, (row, e) in enumerate(rows):
        temp = _TEMP_ID + i
        lines[temp] = row
        by_symbol[e.symbol].append(
            lots.LotRow(temp, e.kind, e.quantity, e.date, None, e.price, e.fees, e.ratio)
        )
    reported = 0
    for sym, new in sorted(by_symbol.items()):
        ledger = sorted(
            [*existing.get(sym, []), *new],
            key=lambda r: lots.ledger_key(r.date, r.kind, r.price, r.quantity, r.fees, r.id),
        )
        while reported < MAX_LEDGER_ERRORS:
            short = lots.first_shortfall(ledger)
            if short is None:
                break
            reported += 1
            r = short.row
            at = ledger.index(r)
            del ledger[at]
            held = fmt.quantity(short.held)
            if r.id is not None and r.id in lines:
                line = lines[r.id].line
                if r.kind == "dividend":
                    message = (
                        f"a dividend on {sym} on {r.date} needs shares held at the previous "
                        f"close: {held} held"
                    )
                else:
                    message = (
                        f"cannot sell {fmt.quantity(r.quantity)} {sym} on {r.date}: {held} held"
                    )
                plan.error(line, "quantity", "insufficient_quantity", message)
                continue
            # an existing row left short: blame the last imported sell before it
            cause = next(
                (x for x in reversed(ledger[:at]) if x.id in lines and x.kind == "sell"), None
            )
            plan.error(
                lines[cause.id].line if cause is not None and cause.id is not None else 0,
                "quantity", "insufficient_quantity",
                f"the import would leave the {r.kind} of transaction {r.id} on {r.date} "
                f"({fmt.quantity(r.quantity)} {sym}) short of shares: {held} held",
            )  # fmt: skip


async def _write(s: AsyncSession, portfolio: Portfolio, plan: _Plan) -> None:
    now = utcnow()
    ids: dict[str, int] = {}
    for sym in plan.new_assets:
        asset = Asset(
            symbol=sym, name=sym, asset_type="stock", sector="", data_source="statement",
            created_at=now, updated_at=now,
        )  # fmt: skip
        s.add(asset)
        await s.flush()
        ids[sym] = asset.id
    symbols = {e.symbol for _, e in plan.entries} - set(ids)
    found = await s.execute(select(Asset.symbol, Asset.id).where(Asset.symbol.in_(symbols)))
    ids.update(found.tuples().all())
    await s.execute(
        insert(Transaction),
        [
            {
                "portfolio_id": portfolio.id,
                "asset_id": ids[e.symbol],
                "transaction_type": e.kind,
                "quantity": e.quantity,
                "price": e.price,
                "fees": e.fees,
                "transaction_date": e.date,
                "created_at": now,
                "lot_id": None,
                "ratio": e.ratio,
                "source_id": _source_id(row.source_id),
            }
            for row, e in plan.entries
        ],
    )
    portfolio.updated_at = now
    await s.flush()
    await derive.sync_positions(s, portfolio.user_id, sorted(set(ids.values())))


def _reply(
    portfolio_id: int, options: ImportOptions, parsed: ParseResult, plan: _Plan
) -> ImportRead:
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
        created_assets=plan.new_assets if entries else [],
        rows=[
            ImportRowRead(
                line=row.line,
                source_id=_source_id(row.source_id),
                transaction_type=e.kind,
                asset_symbol=e.symbol,
                transaction_date=e.date,
                quantity=fmt.quantity(e.quantity),
                price=fmt.dec(e.price),
                fees=fmt.dec(e.fees),
            )
            for row, e in entries[:PREVIEW_ROWS]
        ],
        errors=sorted(plan.errors, key=lambda e: (e.line, e.field)),  # stable: a line's order kept
    )
