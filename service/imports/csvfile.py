"""Read a CSV statement through a :class:`~service.imports.csv_layouts.Layout`."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from typing import Any, cast

import msgspec

from service.imports.csv_layouts import (
    ACTION_FIELDS,
    PRESETS,
    CsvMapping,
    Layout,
    detect_preset,
    generic_layout,
    parse_date_any,
)
from service.imports.csvcells import Table, cells_table, plain_cells, records_table
from service.imports.rows import (
    ACTION_TYPES,
    CASH_TYPES,
    ONE,
    ImportRow,
    ParseResult,
    RowError,
    RowType,
    content_key,
    parse_amount,
)

__all__ = ["parse_csv"]

_ZERO = Decimal(0)
_SECURITY_TYPES = frozenset({"buy", "sell", "dividend", "split", "transfer", *ACTION_TYPES})
#: The columns each corporate action reads, named as the typed transaction's fields; the
#: ratio column first, then the cash column (``ImportRow.ratio`` and ``ImportRow.cash``).
_ACTION_COLUMNS: dict[str, tuple[str, ...]] = {
    "split": ("split_ratio", "cash_in_lieu"),
    "stock_dividend": ("split_ratio", "cash_in_lieu"),
    "return_of_capital": (),
    "spin_off": ("ratio", "basis_allocation", "target_symbol"),
    "merger": ("ratio", "cash_per_share", "target_symbol"),
}


def _fail(line: int, field: str, code: str, message: str) -> ParseResult:
    return ParseResult(
        format="csv", rows=[], errors=[RowError(line=line, field=field, code=code, message=message)],
        duplicates=[],
    )


def parse_csv(data: bytes, *, mapping: CsvMapping | None = None, preset: str | None = None) -> ParseResult:
    """Read a CSV statement.

    Args:
        data: the file's bytes (UTF-8, a byte-order mark allowed).
        mapping: a generic column mapping; when given, presets are not tried.
        preset: ``"schwab"`` or ``"fidelity"``; None detects one from the header
            and falls back to the generic layout with its default column names.

    Returns:
        The rows, every error with its line (a row may have several), and
        lines dropped because an earlier line had the same ``id`` column value.
    """
    try:
        data.decode("utf-8-sig")  # checked whole first: the reader decodes it again as it goes
    except UnicodeDecodeError as exc:
        return _fail(0, "file", "malformed", f"the file is not UTF-8 text: {exc.reason} at byte {exc.start}")
    if preset is not None and preset not in PRESETS:
        return _fail(0, "preset", "invalid", f"unknown preset {preset!r} (known: {', '.join(sorted(PRESETS))})")
    layout: Layout | None = None
    if mapping is not None:
        try:
            layout = generic_layout(mapping)
        except ValueError as exc:
            return _fail(0, "mapping", "invalid", str(exc))
    elif preset is not None:
        layout = PRESETS[preset]
    delimiter = layout.delimiter if layout else ","
    reader = _reader(data, delimiter)
    # the header is the first record naming the layout's date column (Fidelity puts
    # a preamble before it); without a layout, the first a preset or the generic
    # layout recognizes
    header: list[str] = []
    header_line = 0
    try:
        for record in reader:
            names = {c.strip().lower() for c in record}
            if layout is None:
                found = detect_preset(record)
                if found is not None:
                    layout = PRESETS[found]
                elif "date" in names:
                    layout = generic_layout()
            if layout is not None and names & {h.lower() for h in layout.headers["date"]}:
                header, header_line = record, reader.line_num
                break
    except csv.Error as exc:
        return _fail(reader.line_num, "file", "malformed", f"CSV: {exc}")
    if not header or layout is None:
        wanted = repr(layout.headers["date"][0]) if layout else "'date' (or a preset's header)"
        return _fail(0, "file", "required", f"no header line naming a {wanted} column found")
    return _read(reader, header, header_line, layout, lambda: _reader_after(data, delimiter, header_line), data)


def _reader(data: bytes, delimiter: str) -> Any:
    """A CSV reader of ``data`` (UTF-8), decoding as it reads: a ``StringIO`` of the text
    would hold it at 4 bytes a character, beside the text itself (the bytes are shared)."""
    return csv.reader(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline=""), delimiter=delimiter)


def _reader_after(data: bytes, delimiter: str, header_line: int) -> Any:
    """A reader of ``data`` past its header (the record ending on ``header_line``)."""
    reader = _reader(data, delimiter)
    for _ in reader:
        if reader.line_num >= header_line:
            break
    return reader


def _columns(layout: Layout, header: list[str]) -> tuple[dict[str, int], list[int], RowError | None]:
    # headers match case-insensitively: "Date" and "date" are the same column
    index = {h.strip().lower(): i for i, h in enumerate(header)}
    cols: dict[str, int] = {}
    fee_cols: list[int] = []
    for name, candidates in layout.headers.items():
        present = [index[c.lower()] for c in candidates if c.lower() in index]
        if name == "fees":
            fee_cols = present
        elif present:
            cols[name] = present[0]
    for required in ("date", "type"):
        if required not in cols:
            wanted = " or ".join(repr(c) for c in layout.headers[required])
            return cols, fee_cols, RowError(
                line=1, field=required, code="required", message=f"no {wanted} column in the header"
            )
    return cols, fee_cols, None


def _records(reader: Any, again: Callable[[], Any]) -> tuple[list[list[str]], Sequence[int], RowError | None]:
    """The records left in ``reader``, the line each ends on, and the error that stopped it
    (``again``: a reader of the same records). When each record is one line (the common
    file), the lines are a ``range``, not an int object per record."""
    first = reader.line_num
    try:
        records: list[list[str]] = list(reader)
    except csv.Error:
        records = []  # read them again, one at a time, to keep those before the error
    else:
        if reader.line_num == first + len(records):
            return records, range(first + 1, first + 1 + len(records)), None
    records = []
    ends: list[int] = []
    reader = again()
    try:
        for record in reader:
            records.append(record)
            ends.append(reader.line_num)
    except csv.Error as exc:
        return records, ends, RowError(line=reader.line_num, field="file", code="malformed", message=f"CSV: {exc}")
    return records, ends, None


def _read(
    reader: Any, header: list[str], header_line: int, layout: Layout, again: Callable[[], Any], data: bytes
) -> ParseResult:
    """The records after the header: column by column when :func:`_read_columns` can,
    else row by row (``again``: a reader of the same records, for the row-by-row reader
    when the column reader gave up after taking them over). A file the reader would only
    split at its commas (``service.imports.csvcells.plain_cells``) goes to the column
    reader without it."""
    cols, fee_cols, problem = _columns(layout, header)
    if problem is not None:
        return _fail(header_line, problem.field, problem.code, problem.message)
    columnar = _columnar(layout, cols, fee_cols)
    width = max([*cols.values(), *fee_cols]) + 1
    plain = plain_cells(data, layout.delimiter, header_line) if columnar else None
    if plain is not None and plain[1] >= width:
        fast = _read_columns(cells_table(*plain, header_line), cols, fee_cols, layout)
        if fast is not None:
            return fast
        columnar = False  # the same cells, read again: the same answer
    del plain
    records, ends, broken = _records(reader, again)
    if broken is None and isinstance(ends, range) and columnar:  # a record a line
        table = records_table(records, width, header_line)
        fast = _read_columns(table, cols, fee_cols, layout) if table is not None else None
        if fast is not None:
            return fast
        if len(records) < len(ends):  # taken over: read them again
            records, ends, broken = _records(again(), again)
    rows: list[ImportRow] = []
    errors: list[RowError] = []
    duplicates: list[int] = []
    seen_cells: Counter[str] = Counter()
    seen_ids: set[str] = set()
    prefix = f"csv:{layout.name}"
    last = header_line
    for record, end in zip(records, ends, strict=True):
        line, last = last + 1, end
        if not any(c.strip() for c in record):
            if layout.stop_at_blank and rows:
                break
            continue
        cells = {name: record[i].strip() if i < len(record) else "" for name, i in cols.items()}
        if cells["date"].lower() in layout.skip_dates:
            continue
        fields, row_errors = _fields(layout, cells, [record[i] if i < len(record) else "" for i in fee_cols], line)
        if fields is None:
            errors.extend(row_errors)
            continue
        if lot_ref := cells.get("lot_id", ""):
            if fields["type"] != "sell":
                errors.append(RowError(line=line, field="lot_id", code="invalid",
                                       message=f"a {fields['type']} relieves no lot"))  # fmt: skip
                continue
            fields["lot_source"] = f"{prefix}:{lot_ref}"  # the id column of the buy's line
        given_id = cells.get("id", "")
        if given_id:
            if given_id in seen_ids:
                duplicates.append(line)
                continue
            seen_ids.add(given_id)
            source_id = f"{prefix}:{given_id}"
        else:
            source_id = content_key(prefix, record, seen_cells)
        rows.append(ImportRow(line=line, source_id=source_id, **fields))
    if broken is not None:
        errors.append(broken)
    return ParseResult(format="csv", rows=rows, errors=errors, duplicates=duplicates)


#: The columns :func:`_read_columns` reads (a file with others takes the row-by-row path).
_PLAIN_COLUMNS = frozenset({"date", "type", "symbol", "quantity", "price", "amount", "id", "currency"})
_PLAIN_KINDS = frozenset({"buy", "sell", "dividend", *CASH_TYPES})
#: A character ``parse_amount`` reads other than ``Decimal`` does (or a cell can hold no number).
_NOT_PLAIN = re.compile(r"[^0-9.+\-|]")
_SPACE = re.compile(r"\s")


def _numbers(cells: list[str]) -> list[Decimal | None] | None:
    """A column of plain decimals as ``parse_amount`` reads them (``Decimal`` of the cell,
    which holds no currency sign, separator, space or letter), or None (not all plain)."""
    if _NOT_PLAIN.search("|".join(cells)):
        return None
    try:
        head = cells[:1024]
        if 2 * len(set(head)) > len(head):  # mostly distinct (amounts): nothing to share
            return [Decimal(c) if c else None for c in cells]
        # one object per distinct text (a statement repeats its fees and quantities): a
        # Decimal is immutable, and the same text reads as the same value and exponent
        seen: dict[str, Decimal | None] = {"": None}
        return [seen[c] if c in seen else seen.setdefault(c, Decimal(c)) for c in cells]
    except ArithmeticError:  # "-", "1.2.3": the row-by-row reader words it
        return None


def _spaced(columns: Iterable[Sequence[str]]) -> bool:
    """Whether any cell of ``columns`` holds whitespace (one scan of all their text)."""
    return bool(_SPACE.search(",".join(map(",".join, columns))))


def _columnar(layout: Layout, cols: dict[str, int], fee_cols: list[int]) -> bool:
    """Whether :func:`_read_columns` reads this layout's columns (else the row-by-row reader)."""
    return not (
        layout.name != "generic" or layout.decimal_comma or layout.date_formats != (None,)
        or layout.stop_at_blank or layout.skip_dates or not set(cols) <= _PLAIN_COLUMNS
        or len(fee_cols) > 1
    )  # fmt: skip


def _read_columns(table: Table, cols: dict[str, int], fee_cols: list[int], layout: Layout) -> ParseResult | None:
    """The rows of a generic CSV read column by column (``table``), or None when any line is
    not in the common form (ISO dates, plain decimals, buys, sells, dividends and cash rows,
    at most one fees column: :func:`_columnar`): the row-by-row reader then reads it, and
    words every error. When it answers, it answers what the row-by-row reader would."""
    columns, lines, record = table.columns, table.lines, table.record
    table.record = None
    assert record is not None
    n = len(lines)
    # cells hold no whitespace to strip when no record does (the common export)
    spaced = _spaced(columns.values())
    prefix = f"csv:{layout.name}"
    ids = list(columns[cols["id"]]) if "id" in cols else [""] * n
    if spaced:
        ids = [c.strip() for c in ids]
    keep: list[int] | range = range(n)
    duplicates: list[int] = []
    if all(ids) and len(set(ids)) == n:  # every line its own id: no duplicate, no hash
        sources = [f"{prefix}:{i}" for i in ids]
    else:
        seen_cells: Counter[str] = Counter()
        seen_ids: set[str] = set()
        keep, sources = [], []
        for k, given_id in enumerate(ids):
            if given_id:
                if given_id in seen_ids:
                    duplicates.append(lines[k])
                    continue
                seen_ids.add(given_id)
                sources.append(f"{prefix}:{given_id}")
            else:
                sources.append(content_key(prefix, record(k), seen_cells))
            keep.append(k)
    del ids, record
    reads = Counter(i for name, i in cols.items() if name != "id") + Counter(fee_cols)

    def cells_of(i: int) -> Sequence[str]:
        reads[i] -= 1  # a column's text goes with its last read
        return columns[i] if reads[i] else columns.pop(i)

    def column(name: str) -> list[str]:
        i = cols.get(name)
        if i is None:
            return [""] * n
        cells = cells_of(i)
        return [c.strip() for c in cells] if spaced else list(cells)

    day_cells = column("date")
    if _SPACE.search(",".join(day_cells)):
        return None  # "... as of ..." dates
    on: dict[str, dt.date] = {}  # one object per day
    try:
        days = [on[c] if c in on else on.setdefault(c, dt.date.fromisoformat(c[:10])) for c in day_cells]
    except ValueError:
        return None
    del day_cells
    quantity = _numbers(column("quantity"))
    price = _numbers(column("price"))
    amount = _numbers(column("amount"))
    fee_cells = [c.strip() for c in cells_of(fee_cols[0])] if fee_cols else None
    fee_values = _numbers(fee_cells) if fee_cells is not None else None
    if quantity is None or price is None or amount is None or (fee_cells is not None and fee_values is None):
        return None
    del fee_cells
    type_cells = column("type")
    classified = {t: layout.classify({"type": t}, None) for t in set(type_cells)}
    if not all(k in _PLAIN_KINDS for k in classified.values()):
        return None
    kinds_of = cast(dict[str, RowType], classified)
    symbols = column("symbol")
    currencies = column("currency")
    kinds = [kinds_of[t] for t in type_cells]
    del type_cells
    upper = {c: c.upper() or None for c in set(symbols)}
    syms = [upper[c] for c in symbols]
    del symbols
    fees = _fees(fee_values) if fee_values is not None else [_ZERO] * len(kinds)
    amounts = _amounts(kinds, syms, quantity, price, amount, fees)
    if amounts is None:
        return None
    del quantity, price, amount, fee_values, fees
    qs, ps, fs = amounts
    del amounts
    norm = {c: (v.strip().upper() if (v := c or layout.currency) else None) for c in set(currencies)}
    rows = [
        ImportRow(
            line=lines[k], source_id=source, date=days[k], type=kinds[k],
            symbol=None if kinds[k] in CASH_TYPES else syms[k], quantity=qs[k], price=ps[k],
            fees=fs[k], currency=norm[currencies[k]],
        )
        for k, source in zip(keep, sources, strict=True)
    ]  # fmt: skip
    return ParseResult(format="csv", rows=rows, errors=[], duplicates=duplicates)


def _fees(values: list[Decimal | None]) -> list[Decimal]:
    """Each row's fees, non-negative (one object per distinct object of ``values``)."""
    made = {id(v): _ZERO + abs(v or _ZERO) for v in {id(v): v for v in values}.values()}
    return [made[id(v)] for v in values]


_TRADE = frozenset({"buy", "sell"})


def _amounts(
    kinds: list[RowType],
    syms: list[str | None],
    quantity: list[Decimal | None],
    price: list[Decimal | None],
    amount: list[Decimal | None],
    fees: list[Decimal],
) -> tuple[list[Decimal], list[Decimal], list[Decimal]] | None:
    """Each plain row's ``(quantity, price, fees)`` in the ledger's conventions (as
    :func:`_fields` sets them), group by group; None when a row has a problem (the
    row-by-row reader words it)."""
    qs: list[Any] = list(quantity)
    ps: list[Any] = list(price)
    fs = list(fees)
    made: dict[int, Decimal] = {}  # one absolute value per distinct object (they stay alive here)

    def positive(v: Decimal) -> Decimal:
        out = made.get(id(v))
        if out is None:
            out = made[id(v)] = abs(v)
        return out

    groups: dict[str, list[int]] = {}
    for k, name in enumerate(kinds):
        groups.setdefault(name, []).append(k)
    for kind, members in groups.items():
        if kind in _TRADE:
            for k in members:
                q, p = quantity[k], price[k]
                if syms[k] is None or not q or p is None or p < 0:
                    return None
                a = made.get(id(q))
                if a is None:
                    a = made[id(q)] = abs(q)
                qs[k] = a
            continue
        for k in members:
            q, p, a = quantity[k], price[k], amount[k]
            if kind == "dividend":
                if syms[k] is None:
                    return None
                if a is None and p is not None and q:  # the ledger's own form
                    qs[k], ps[k] = positive(q), positive(p)
                    continue
            if a is not None:
                net = abs(a)
                if kind == "fee":
                    ps[k], fs[k] = net, _ZERO
                elif kind == "withdrawal":
                    if fs[k] > net:
                        return None
                    ps[k] = net - fs[k]
                else:
                    ps[k] = net + fs[k]
            elif p is not None:
                ps[k] = abs(p * (q or ONE))
            else:
                return None
            qs[k] = ONE
    return qs, ps, fs


def _fields(
    layout: Layout, cells: dict[str, str], fee_cells: list[str], line: int
) -> tuple[dict[str, Any] | None, list[RowError]]:
    """A row's fields in the ledger's conventions, or None and every problem of the row."""
    errors: list[RowError] = []

    def bad(field: str, code: str, message: str) -> None:
        errors.append(RowError(line=line, field=field, code=code, message=message))

    def number(field: str, text: str | None) -> Decimal | None:
        try:
            return parse_amount(text, decimal_comma=layout.decimal_comma)
        except ValueError as exc:
            bad(field, "invalid", f"{field} is {exc}")
            return None

    date = None
    terms: dict[str, Any] = {"ratio": None}
    try:
        date = parse_date_any(cells["date"], layout.date_formats)
    except ValueError as exc:
        bad("date", "invalid", str(exc))
    quantity = number("quantity", cells.get("quantity"))
    price = number("price", cells.get("price"))
    amount = number("amount", cells.get("amount"))
    fees = sum((abs(number("fees", c) or _ZERO) for c in fee_cells), _ZERO)
    kind = layout.classify(cells, amount)
    if kind is None:
        bad("type", "unknown_type", f"unknown transaction type {cells['type']!r}")
    symbol = cells.get("symbol", "").upper() or None
    if kind in _SECURITY_TYPES and symbol is None:
        bad("symbol", "required", f"a {kind} needs a symbol")
    if kind in ("buy", "sell"):
        if quantity is None or quantity == 0:
            bad("quantity", "required", f"a {kind} needs a non-zero quantity")
        if price is None:
            bad("price", "required", f"a {kind} needs a price")
        elif price < 0:
            bad("price", "invalid", f"price must not be negative, got {price}")
        quantity = abs(quantity) if quantity is not None else None
    elif kind in ACTION_TYPES or (kind == "split" and cells.get("split_ratio")):
        # a corporate action as the export writes it: the typed transaction's fields
        terms = _action_terms(kind, symbol, cells, quantity, number, bad)
        quantity, price = _ZERO, price if price is not None else _ZERO
    elif kind in ("split", "transfer"):
        if quantity is None or quantity == 0:
            bad("quantity", "required", f"a {kind} needs a non-zero quantity")
        price = abs(price) if price is not None else _ZERO
    elif kind == "dividend" and amount is None and price is not None and quantity:
        # the ledger's own form (as the export writes it): shares paid on, amount per share
        quantity, price = abs(quantity), abs(price)
    elif kind is not None:  # cash rows and dividends: quantity 1, price the gross amount
        if amount is not None:
            price, fees = _gross(kind, abs(amount), fees, bad)
        elif price is not None:
            price = abs(price * (quantity or ONE))
        else:
            bad("amount", "required", f"a {kind} needs an amount")
        quantity = ONE
    if errors or kind is None or date is None or quantity is None or price is None:
        if symbol is not None:  # say whose row it is: "the split of GE: split_ratio is ..."
            word = kind or cells["type"]
            errors = [
                e
                if symbol in e.message
                else msgspec.structs.replace(e, message=f"the {word} of {symbol}: {e.message}")
                for e in errors
            ]
        return None, errors
    currency = cells.get("currency") or layout.currency
    return {
        "date": date, "type": kind, "symbol": None if kind in CASH_TYPES else symbol,
        "quantity": quantity, "price": price, "fees": fees,
        "currency": currency.strip().upper() if currency else None, **terms,
    }, errors


def _action_terms(
    kind: str,
    symbol: str | None,
    cells: dict[str, str],
    quantity: Decimal | None,
    number: Callable[[str, str | None], Decimal | None],
    bad: Callable[[str, str, str], None],
) -> dict[str, Any]:
    """A corporate action's fields (``ratio``, ``cash``, ``target_symbol``,
    ``basis_allocation``); its values are checked as a typed transaction's on import."""
    columns = _ACTION_COLUMNS[kind]
    what = f"a {kind} of {symbol}"
    for name in ACTION_FIELDS:
        if cells.get(name) and name not in columns:
            bad(name, "invalid", f"{name} does not apply to {what}")
    if quantity:
        bad("quantity", "invalid", f"{what} acts on every share held; it takes no quantity")
    read = {name: number(name, cells.get(name)) for name in columns if name != "target_symbol"}
    return {
        "ratio": read.get("split_ratio", read.get("ratio")),
        "cash": read.get("cash_in_lieu", read.get("cash_per_share")),
        "basis_allocation": read.get("basis_allocation"),
        "target_symbol": cells.get("target_symbol", "").upper() or None,
    }


def _gross(
    kind: str, net: Decimal, fees: Decimal, bad: Callable[[str, str, str], None]
) -> tuple[Decimal | None, Decimal]:
    """``(price, fees)`` of a row whose amount column is the net cash it moved.

    An amount column is net of the fees beside it (as the brokers' ``Amount`` is:
    a buy's is ``-(quantity x price + fees)``), while the ledger keeps the gross
    amount and the fees apart: received rows are ``net + fees``, a withdrawal
    ``net - fees``; a fee row's amount is all cost (its fees are part of it).
    """
    if kind == "fee":
        return net, _ZERO
    if kind == "withdrawal":
        if fees > net:
            bad("fees", "max_value", f"fees {fees} above the withdrawal's amount {net}")
            return None, fees
        return net - fees, fees
    return net + fees, fees
