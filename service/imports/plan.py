"""What an import would write: rows checked as ledger entries, and the share checks.

:class:`Plan` collects the entries of a statement and every problem with its line.
Each row becomes a :class:`~service.transactions.services.LedgerEntry` (the checks
every typed transaction passes); the security rows are then fitted to the shares
held (:func:`walk_holdings`) and each symbol's whole ledger must relieve
(:func:`check_ledgers`). The import service (:mod:`service.imports.services`) reads
the database and writes; this module only decides.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from service import formatting as fmt
from service.db.types import quantize
from service.errors import ValidationError
from service.imports.rows import ImportRow
from service.imports.schemas import ImportErrorRead, ImportIgnoredRead
from service.ledger import checks as lots
from service.ledger.writes import LedgerEntry

__all__ = [
    "MAX_LEDGER_ERRORS",
    "TEMP_ID",
    "Plan",
    "Planned",
    "cash_entry",
    "check_ledgers",
    "security_entry",
    "walk_holdings",
]

#: Shortfalls reported per import (the rest of the ledger is not checked further).
MAX_LEDGER_ERRORS = 1000
#: Ids of rows not yet written: above every real id, in file order.
TEMP_ID = 1 << 60

_ZERO = Decimal(0)
_FIELDS = {"transaction_date": "date"}

#: ``(order in the file, row, entry)``; ``entry`` None: a split given as shares added.
Planned = tuple[int, ImportRow, LedgerEntry | None]


@dataclass
class Plan:
    """What an import would do: the entries in file order and every problem."""

    entries: list[tuple[ImportRow, LedgerEntry]] = field(default_factory=list)
    errors: list[ImportErrorRead] = field(default_factory=list)
    ignored: list[ImportIgnoredRead] = field(default_factory=list)
    skipped: int = 0
    new_assets: dict[str, str] = field(default_factory=dict)  # symbol -> its currency
    currency_of: dict[str, str] = field(default_factory=dict)  # symbol -> its asset's currency

    def error(self, line: int, field_name: str, code: str, message: str) -> None:
        self.errors.append(ImportErrorRead(line=line, field=field_name, code=code, message=message))

    def currency(self, entry: LedgerEntry) -> str:
        """The currency ``entry`` moves cash in: its own (cash), else its asset's."""
        if entry.is_cash:
            assert entry.currency is not None
            return entry.currency
        assert entry.symbol is not None
        return self.currency_of[entry.symbol]


def security_entry(
    plan: Plan,
    row: ImportRow,
    quantity: Decimal,
    price: Decimal,
    *,
    ratio: Decimal | None = None,
) -> LedgerEntry | None:
    """A security row as a checked entry (a split: ``ratio``, else the row's), or None and an error."""
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


def cash_entry(plan: Plan, row: ImportRow, currency: str) -> LedgerEntry | None:
    """A cash row (no asset; ``price`` the amount) as a checked entry, or None and an error."""
    try:
        return LedgerEntry(
            None, row.type, None, row.price, row.fees, row.date,
            price_field="amount", date_field="date", currency=currency,
        )  # fmt: skip
    except ValidationError as exc:
        plan.error(row.line, _FIELDS.get(exc.field, exc.field), exc.code, exc.message)
        return None


def walk_holdings(
    plan: Plan, rows: list[Planned], existing: dict[str, list[lots.LotRow]]
) -> list[tuple[int, ImportRow, LedgerEntry]]:
    """Fit the rows that depend on the shares held, walking each symbol's ledger in order.

    * a split given as shares added (CSV) gets ``ratio = (held + added) / held``, which
      must be exact to 8 decimals (else an error on ``quantity``);
    * a dividend on fewer than one share held at the previous close becomes
      (shares held) x (total / shares).

    Returns the entries in the order given (rows that failed are left out, with an error).
    """
    if not any(e is None or e.kind == "dividend" for _, _, e in rows):
        return [(k, row, e) for k, row, e in rows if e is not None]
    timeline: dict[str, list[tuple[tuple[Any, ...], int, lots.LotRow | None]]] = defaultdict(list)
    for sym, old in existing.items():
        for r in old:
            key = lots.ledger_key(r.date, r.kind, r.price, r.quantity, r.fees, r.id)
            timeline[sym].append((key, -1, r))
    for i, (_, row, e) in enumerate(rows):
        assert row.symbol is not None
        if e is None:
            key = lots.ledger_key(row.date, "split", _ZERO, _ZERO, _ZERO, TEMP_ID + i)
        else:
            key = lots.ledger_key(e.date, e.kind, e.price, e.quantity, e.fees, TEMP_ID + i)
        timeline[row.symbol].append((key, i, None))
    fitted: dict[int, LedgerEntry | None] = {}
    for events in timeline.values():
        held = _ZERO
        for _, i, old_row in sorted(events, key=lambda ev: ev[0]):
            if old_row is not None:
                kind, quantity, ratio = old_row.kind, old_row.quantity, old_row.ratio
            else:
                _, row, e = rows[i]
                if e is None:
                    e = fitted[i] = _split_from_shares(plan, row, held)
                elif e.kind == "dividend" and _ZERO < held < 1:
                    e = fitted[i] = security_entry(plan, row, held, quantize(e.price / held))
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
    out: list[tuple[int, ImportRow, LedgerEntry]] = []
    for i, (k, row, e) in enumerate(rows):
        entry = fitted.get(i, e)
        if entry is not None:
            out.append((k, row, entry))
    return out


def _split_from_shares(plan: Plan, row: ImportRow, held: Decimal) -> LedgerEntry | None:
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
    return security_entry(plan, row, _ZERO, _ZERO, ratio=ratio)


def check_ledgers(
    plan: Plan,
    rows: list[tuple[int, ImportRow, LedgerEntry]],
    existing: dict[str, list[lots.LotRow]],
) -> None:
    """Relieve each symbol's whole ledger with the imported rows; an error per short row."""
    by_symbol: dict[str, list[lots.LotRow]] = defaultdict(list)
    lines: dict[int, ImportRow] = {}
    for i, (_, row, e) in enumerate(rows):
        assert e.symbol is not None
        temp = TEMP_ID + i
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
