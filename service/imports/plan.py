"""What an import would write: rows checked as ledger entries, and the share checks.

:class:`Plan` collects the entries of a statement and every problem with its line.
Each row becomes a :class:`~service.transactions.services.LedgerEntry` (the checks
every typed transaction passes); the security rows are then fitted to the shares
held (:func:`walk_holdings`) and each symbol's whole ledger must relieve
(:func:`check_ledgers`). The import service (:mod:`service.imports.services`) reads
the database and writes; this module only decides.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from service import formatting as fmt
from service.db.types import quantize
from service.errors import ValidationError
from service.imports.rows import ImportRow
from service.imports.schemas import ImportErrorRead, ImportIgnoredRead
from service.ledger import checks as lots
from service.ledger.lots import Action, LedgerCheckError, LedgerRow, check_rows
from service.ledger.positions import SymbolLedger
from service.ledger.writes import LedgerEntry

if TYPE_CHECKING:
    from service.imports.table import EntryTable

__all__ = [
    "MAX_LEDGER_ERRORS",
    "RANK",
    "TEMP_ID",
    "Plan",
    "Planned",
    "cash_entry",
    "check_ledgers",
    "relieves_columns",
    "security_entry",
    "walk_holdings",
    "what",
]

#: Shortfalls reported per import (the rest of the ledger is not checked further).
MAX_LEDGER_ERRORS = 1000
#: Ids of rows not yet written: above every real id, in file order.
TEMP_ID = 1 << 60

_ZERO = Decimal(0)
_TRADES = frozenset(("buy", "sell", "dividend"))
#: A typed transaction's field -> the CSV column holding it.
_FIELDS = {"transaction_date": "date", "asset_symbol": "symbol"}

#: ``(order in the file, row, entry)``; ``entry`` None: a split given as shares added.
Planned = tuple[int, ImportRow, LedgerEntry | None]


@dataclass
class Plan:
    """What an import would do: the entries in file order (or their columns: ``table``)
    and every problem."""

    entries: list[tuple[ImportRow, LedgerEntry]] = field(default_factory=list)
    errors: list[ImportErrorRead] = field(default_factory=list)
    ignored: list[ImportIgnoredRead] = field(default_factory=list)
    skipped: int = 0
    new_assets: dict[str, str] = field(default_factory=dict)  # symbol -> its currency
    currency_of: dict[str, str] = field(default_factory=dict)  # symbol -> its asset's currency
    ledger: SymbolLedger | None = None  # the user's rows of the existing assets involved
    latest: dt.date = field(default_factory=lambda: _latest())  # the last date a row may have
    table: EntryTable | None = None  # the entries as columns, when planned so (then no entries)

    def error(self, line: int, field_name: str, code: str, message: str) -> None:
        """Record a problem; the message names the line (0: the file as a whole)."""
        if line > 0:
            message = f"line {line}: {message}"
        self.errors.append(ImportErrorRead(line=line, field=field_name, code=code, message=message))

    def currency(self, entry: LedgerEntry) -> str:
        """The currency ``entry`` moves cash in: its own (cash), else its asset's."""
        if entry.is_cash:
            assert entry.currency is not None
            return entry.currency
        assert entry.symbol is not None
        return self.currency_of[entry.symbol]


def _latest() -> dt.date:
    """The last transaction date a write accepts (the entries' own bound: today + 1)."""
    return dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)


def what(row: ImportRow) -> str:
    """A row in the user's words: its type, symbol and date (never an internal id)."""
    of = f" of {row.symbol}" if row.symbol else ""
    return f"the {row.type}{of} on {row.date}"


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
    if row.type not in lots.CORPORATE_ACTIONS:
        fast = LedgerEntry.plain(
            row.symbol, row.type, quantity, price, row.fees, row.date, plan.latest
        )
        if fast is not None:
            return fast
    try:
        if row.type in lots.CORPORATE_ACTIONS:
            return _action_entry(row, ratio)
        return LedgerEntry(
            row.symbol, row.type, quantity, price, row.fees, row.date, date_field="date"
        )
    except ValidationError as exc:
        field_name = _FIELDS.get(exc.field, exc.field)
        plan.error(row.line, field_name, exc.code, f"{what(row)}: {exc.message}")
        return None


def _action_entry(row: ImportRow, ratio: Decimal | None) -> LedgerEntry:
    """A corporate action as the typed transaction with the same fields (a split stated as
    shares added: ``ratio`` from the holding). A price of 0 on an action that takes none
    (the export writes 0.00) is no price."""
    kind = row.type
    splits = kind in ("split", "stock_dividend")
    given = row.price != 0 or kind == "return_of_capital"
    return LedgerEntry(
        row.symbol, kind, None, row.price if given and ratio is None else None, row.fees,
        row.date, date_field="date",
        split_ratio=(ratio if ratio is not None else row.ratio) if splits else None,
        cash_in_lieu=row.cash if splits else None,
        ratio=None if splits else row.ratio,
        target_symbol=row.target_symbol,
        basis_allocation=row.basis_allocation,
        cash_per_share=row.cash if kind == "merger" else None,
    )  # fmt: skip


def cash_entry(plan: Plan, row: ImportRow, currency: str) -> LedgerEntry | None:
    """A cash row (no asset; ``price`` the amount) as a checked entry, or None and an error."""
    if row.symbol is None:
        fast = LedgerEntry.plain(
            None, row.type, row.quantity, row.price, row.fees, row.date, plan.latest, currency
        )
        if fast is not None:
            return fast
    try:
        return LedgerEntry(
            None, row.type, None, row.price, row.fees, row.date,
            price_field="amount", date_field="date", currency=currency,
        )  # fmt: skip
    except ValidationError as exc:
        field_name = _FIELDS.get(exc.field, exc.field)
        plan.error(row.line, field_name, exc.code, f"{what(row)}: {exc.message}")
        return None


def walk_holdings(
    plan: Plan,
    rows: list[Planned],
    existing: dict[str, list[lots.LotRow]],
    targets: dict[int, str] | None = None,
) -> list[tuple[int, ImportRow, LedgerEntry]]:
    """Fit the rows that depend on the shares held, walking the ledger in order.

    * a split given as shares added (CSV) gets ``ratio = (held + added) / held``, which
      must be exact to 8 decimals (else an error on ``quantity``);
    * a dividend stated as its total (quantity 1) on fewer than one share held at the
      previous close becomes (shares held) x (total / shares).

    One walk over all symbols in ledger order: a spin-off or merger adds shares of its
    target (``targets``: the target symbol of each existing such row, by id).

    Returns the entries in the order given (rows that failed are left out, with an error).
    """
    if not any(e is None or (e.kind == "dividend" and e.quantity == 1) for _, _, e in rows):
        return [(k, row, e) for k, row, e in rows if e is not None]
    if _whole_shares(rows, existing):  # never between 0 and 1 share held: nothing to fit
        return [(k, row, e) for k, row, e in rows if e is not None]
    targets = targets or {}
    events: list[tuple[tuple[Any, ...], str, int, lots.LotRow | None]] = []
    for sym, old in existing.items():
        for r in old:
            key = lots.ledger_key(r.date, r.kind, r.price, r.quantity, r.fees, r.id)
            events.append((key, sym, -1, r))
    for i, (_, row, e) in enumerate(rows):
        assert row.symbol is not None
        if e is None:
            key = lots.ledger_key(row.date, "split", _ZERO, _ZERO, _ZERO, TEMP_ID + i)
        else:
            key = lots.ledger_key(e.date, e.kind, e.price, e.quantity, e.fees, TEMP_ID + i)
        events.append((key, row.symbol, i, None))
    fitted: dict[int, LedgerEntry | None] = {}
    held: dict[str, Decimal] = defaultdict(Decimal)
    for _, sym, i, old_row in sorted(events, key=lambda ev: ev[0]):
        if old_row is not None:
            kind, quantity, ratio = old_row.kind, old_row.quantity, old_row.ratio
            target = targets.get(old_row.id) if old_row.id is not None else None
        else:
            _, row, e = rows[i]
            if e is None:
                e = fitted[i] = _split_from_shares(plan, row, held[sym])
            elif e.kind == "dividend" and e.quantity == 1 and _ZERO < held[sym] < 1:
                e = fitted[i] = security_entry(plan, row, held[sym], quantize(e.price / held[sym]))
            if e is None:
                continue
            kind, quantity, ratio, target = e.kind, e.quantity, e.ratio, e.target_symbol
        if kind == "buy":
            held[sym] += quantity
        elif kind == "sell":
            held[sym] -= quantity
        elif kind in ("split", "stock_dividend") and ratio is not None:
            held[sym] *= ratio
        elif kind in ("spin_off", "merger"):
            if target is not None and ratio is not None:
                held[target] += held[sym] * ratio
            if kind == "merger":
                held[sym] = _ZERO  # the shares became the target's (or cash)
    out: list[tuple[int, ImportRow, LedgerEntry]] = []
    for i, (k, row, e) in enumerate(rows):
        entry = fitted.get(i, e)
        if entry is not None:
            out.append((k, row, entry))
    return out


def _whole_shares(rows: list[Planned], existing: dict[str, list[lots.LotRow]]) -> bool:
    """Whether every row that changes the shares held is a buy or sell of whole shares:
    then the shares held are a whole number at every point of every ledger."""
    for _, _, e in rows:
        if e is None or e.kind not in _TRADES:
            return False
        if e.kind != "dividend" and e.quantity != e.quantity.to_integral_value():
            return False
    for old in existing.values():
        for r in old:
            if r.kind not in _TRADES:
                return False
            if r.kind != "dividend" and r.quantity != r.quantity.to_integral_value():
                return False
    return True


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
    *,
    actions: Mapping[int, Action] | None = None,
    portfolio_id: int = 0,
    lot_method: str = "fifo",
    held_lots: Mapping[str, int] | None = None,
) -> None:
    """Relieve each symbol's whole ledger with the imported rows; an error per short row.

    ``existing``: the portfolio's rows of the symbols involved, ``actions`` the fields of
    the corporate actions among them (by id), ``held_lots`` the buys of earlier imports
    that sales name (their ``lot_id`` reference -> transaction id): a sale naming its lot,
    in the file or written before, takes that lot's shares. A symbol a spin-off or merger
    delivers shares to is left to the second check: when any row is a corporate action,
    the portfolio's ledger of those symbols is matched by ``quantcore`` as a typed write's
    is (:func:`service.ledger.lots.check_rows`), and its error is one on the line it names.
    """
    actions = actions or {}
    by_symbol: dict[str, list[lots.LotRow]] = defaultdict(list)
    lines: dict[int, ImportRow] = {}
    # a sale naming its lot by the id column of a buy in the file relieves that buy, one
    # naming a buy of an earlier import (``held_lots``) that buy
    buys = {row.source_id: TEMP_ID + i for i, (_, row, e) in enumerate(rows) if e.kind == "buy"}
    held_lots = held_lots or {}
    named: dict[int, int | None] = {}
    for i, (_, row, e) in enumerate(rows):
        assert e.symbol is not None
        temp = TEMP_ID + i
        lines[temp] = row
        ref = row.lot_source
        named[temp] = None if ref is None else buys[ref] if ref in buys else held_lots.get(ref)
        by_symbol[e.symbol].append(
            lots.LotRow(temp, e.kind, e.quantity, e.date, named[temp], e.price, e.fees, e.ratio)
        )
    acting = bool(actions) or any(e.is_action for _, _, e in rows)
    if not acting and _relieves(by_symbol, existing):
        return  # the common case, decided over columns; the walk below words the errors
    delivered = {a.target for a in actions.values() if a.target is not None}
    delivered |= {e.target_symbol for _, _, e in rows if e.target_symbol is not None}
    before = len(plan.errors)
    reported = 0
    for sym, new in sorted(by_symbol.items()):
        if sym in delivered:  # its shares come from another symbol's rows: quantcore checks
            continue
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
                elif r.lot_id is not None:
                    bought = next((x.date for x in ledger if x.id == r.lot_id), None)
                    lot = "its lot" if bought is None else f"its lot bought on {bought}"
                    message = (
                        f"cannot sell {fmt.quantity(r.quantity)} {sym} on {r.date} from {lot} "
                        f"(lot_id): {held} left in it"
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
                f"the import would leave the {r.kind} of {sym} on {r.date} "
                f"({fmt.quantity(r.quantity)} {sym}) short of shares: {held} held",
            )  # fmt: skip
    if acting and len(plan.errors) == before:
        _check_actions(plan, rows, existing, actions, lines, named, portfolio_id, lot_method)


def _relieves(
    by_symbol: Mapping[str, list[lots.LotRow]], existing: Mapping[str, list[lots.LotRow]]
) -> bool:
    """Whether every symbol's ledger (``existing`` and imported rows) relieves, decided over
    columns when its rows are buys, sells and dividends naming no lot; False when it does not
    or cannot be decided so (then :func:`lots.first_shortfall` walks it).

    Unnamed sells relieve when the shares held after each one are not negative, a dividend
    when the shares held before its day's trades cover it: the order of the rows within
    one day and rank (all buys, all sells or all dividends) decides which row is short,
    never whether one is, so a sort by (symbol, date, rank) is enough. Quantities are
    exact integers of 1e-8 shares.
    """
    code: list[int] = []
    day: list[int] = []
    rank: list[int] = []
    signed: list[int] = []
    need: list[int] = []
    for k, (sym, new) in enumerate(by_symbol.items()):
        for r in (*existing.get(sym, ()), *new):
            if r.kind not in _TRADES or r.lot_id is not None:
                return False
            units = int(r.quantity.scaleb(8))
            code.append(k)
            day.append(r.date.toordinal())
            rank.append(RANK[r.kind])
            signed.append(units if r.kind == "buy" else -units if r.kind == "sell" else 0)
            need.append(units if r.kind == "dividend" else 0)
    if not code:
        return True
    if sum(map(abs, signed)) >= 1 << 62:  # beyond int64 sums: the walk decides
        return False
    return relieves_columns(
        np.array(code), np.array(day), np.array(rank), np.array(signed, np.int64),
        np.array(need, np.int64),
    )  # fmt: skip


def relieves_columns(
    code: NDArray[np.int64],
    day: NDArray[np.int64],
    rank: NDArray[np.int64],
    signed: NDArray[np.int64],
    need: NDArray[np.int64],
) -> bool:
    """:func:`_relieves` of rows given as columns: each row's symbol ``code``, ``day``,
    rank within the day (:data:`RANK`), ``signed`` units of 1e-8 shares (a buy's positive,
    a sell's negative, a dividend's 0) and ``need`` (a dividend's shares, else 0); the
    caller keeps the sums of ``|signed|`` within int64."""
    order = np.lexsort((rank, day, code))
    groups = code[order]
    running = np.cumsum(signed[order])
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    before = np.where(starts > 0, running[starts - 1], 0)
    held = running - np.repeat(before, np.diff(np.r_[starts, len(groups)]))
    short = held < need[order]  # a dividend's need; a sell's 0
    return not bool(short.any())


#: The rank of a trade within its day (ledger order: dividends, buys, sells).
RANK = {"dividend": 0, "buy": 2, "sell": 3}

#: ``quantcore``'s column -> the CSV column, by row type (others keep their name).
_COLUMNS = {
    "ratio": {"split": "split_ratio", "stock_dividend": "split_ratio"},
    "cash": {"split": "cash_in_lieu", "stock_dividend": "cash_in_lieu", "merger": "cash_per_share"},
}


def _check_actions(
    plan: Plan,
    rows: list[tuple[int, ImportRow, LedgerEntry]],
    existing: dict[str, list[lots.LotRow]],
    actions: Mapping[int, Action],
    lines: dict[int, ImportRow],
    named: dict[int, int | None],
    portfolio_id: int,
    lot_method: str,
) -> None:
    """The portfolio's ledger with the imported rows, matched by ``quantcore``: its first
    error (a corporate action on shares not held, a sale of shares a spin-off did not
    deliver, a ratio leaving a lot empty) on the line of the row it names."""
    ledger: list[LedgerRow] = [
        (r.id or 0, portfolio_id, sym, r.date, r.kind, r.quantity, r.price, r.fees, r.lot_id)
        for sym, old in existing.items()
        for r in old
    ]
    acts = {tid: a for tid, a in actions.items()}
    for i, (_, _, e) in enumerate(rows):
        temp = TEMP_ID + i
        assert e.symbol is not None
        ledger.append(
            (temp, portfolio_id, e.symbol, e.date, e.kind, e.quantity, e.price, e.fees, named[temp])
        )
        if (act := e.action()) is not None:
            acts[temp] = act
    try:
        check_rows(ledger, {portfolio_id: lot_method}, acts)
    except LedgerCheckError as exc:
        row = lines.get(exc.txn_id)
        if row is None:  # an existing row left invalid: blame the last imported row before it
            day = next((r[3] for r in ledger if r[0] == exc.txn_id), None)
            before = [x for x in lines.values() if day is None or x.date <= day]
            cause = max(before, key=lambda x: (x.date, x.line), default=None)
            plan.error(
                cause.line if cause is not None else 0, "quantity", "insufficient_quantity",
                f"the import would leave an earlier transaction invalid: {exc}",
            )  # fmt: skip
        elif exc.code == "not_held":
            message = f"{what(row)}: no {row.symbol} shares are held on that date"
            plan.error(row.line, "symbol", "not_held", message)
        elif exc.code in ("oversold", "lot_exceeded"):
            plan.error(row.line, "quantity", "insufficient_quantity", str(exc))
        else:
            column = exc.column or "type"
            plan.error(row.line, _COLUMNS.get(column, {}).get(row.type, column), exc.code, str(exc))
