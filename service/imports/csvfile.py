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
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray

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
    UNIT,
    ImportRow,
    ParsedColumns,
    ParseResult,
    RowError,
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


def parse_csv(
    data: bytes, *, mapping: CsvMapping | None = None, preset: str | None = None, columns: bool = False
) -> ParseResult:
    """Read a CSV statement.

    Args:
        data: the file's bytes (UTF-8, a byte-order mark allowed).
        mapping: a generic column mapping; when given, presets are not tried.
        preset: ``"schwab"`` or ``"fidelity"``; None detects one from the header
            and falls back to the generic layout with its default column names.
        columns: give the rows as columns (``ParseResult.columns``) when they are all
            plain and the file in the common form, read column by column without an
            object per row; else (or when False) read row by row.

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
    again = (lambda: parse_csv(data, mapping=mapping, preset=preset).rows) if columns else None
    return _read(
        reader, header, header_line, layout, lambda: _reader_after(data, delimiter, header_line), data, again
    )


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
    reader: Any,
    header: list[str],
    header_line: int,
    layout: Layout,
    again: Callable[[], Any],
    data: bytes,
    rows_again: Callable[[], list[ImportRow]] | None,
) -> ParseResult:
    """The records after the header: column by column into columns when ``rows_again`` is
    given (the rows read row by row, for a caller that needs them after all) and
    :func:`_read_columns` can, else row by row (``again``: a reader of the same records,
    for the row-by-row reader when the column reader gave up after taking them over). A
    file the reader would only split at its commas
    (``service.imports.csvcells.plain_cells``) goes to the column reader without it."""
    cols, fee_cols, problem = _columns(layout, header)
    if problem is not None:
        return _fail(header_line, problem.field, problem.code, problem.message)
    columnar = rows_again is not None and _columnar(layout, cols, fee_cols)

    def answer(fast: tuple[ParsedColumns, list[int]]) -> ParseResult:
        return ParseResult(
            format="csv", rows=[], errors=[], duplicates=fast[1], columns=fast[0], again=rows_again
        )

    width = max([*cols.values(), *fee_cols]) + 1
    plain = plain_cells(data, layout.delimiter, header_line) if columnar else None
    if plain is not None and plain[1] >= width:
        fast = _read_columns(cells_table(*plain, header_line), cols, fee_cols, layout)
        if fast is not None:
            return answer(fast)
        columnar = False  # the same cells, read again: the same answer
    del plain
    records, ends, broken = _records(reader, again)
    if broken is None and isinstance(ends, range) and columnar:  # a record a line
        table = records_table(records, width, header_line)
        fast = _read_columns(table, cols, fee_cols, layout) if table is not None else None
        if fast is not None:
            return answer(fast)
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
#: A cell ``parse_amount`` reads as ``Decimal`` of its text (no sign, separator, space or
#: letter to drop), or an empty one (no number).
_PLAIN_NUMBER = r"^(?:[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))?$"
_SPACE = re.compile(r"\s")
#: Units of an amount the column reader takes (sums of two stay within int64).
_MAX_UNITS = 1 << 62
_DECIMAL = pa.decimal128(38, 8)
_EPOCH = dt.date(1970, 1, 1).toordinal()

I64 = NDArray[np.int64]
_Bools = NDArray[np.bool_]


def _units(cells: Sequence[str]) -> tuple[I64, _Bools] | None:
    """A column of plain decimals (``parse_amount`` reads each as ``Decimal`` of its text) as
    exact counts of ``1e-8`` units and where a cell is not empty; None when a cell is not
    such a number, has more than eight fractional digits or is beyond :data:`_MAX_UNITS`
    (the row-by-row reader reads it). Arrow parses the text: no object per cell."""
    text = pa.array(cells, pa.string())
    if not pc.all(pc.match_substring_regex(text, _PLAIN_NUMBER)).as_py():
        return None
    blank = pc.equal(text, "")
    try:
        exact = pc.if_else(blank, pa.scalar(None, pa.string()), text).cast(_DECIMAL)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    n = len(exact)
    words = np.frombuffer(exact.buffers()[1], np.int64)[2 * exact.offset : 2 * (exact.offset + n)]
    low, high = words[0::2], words[1::2]
    present = ~blank.to_numpy(zero_copy_only=False)
    u = np.where(present, low, 0)
    if not ((high[present] == low[present] >> 63).all() and (np.abs(u) < _MAX_UNITS).all()):
        return None
    return u.astype(np.int64), present


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


def _coded(cells: Sequence[str]) -> tuple[NDArray[np.intp], list[str]]:
    """Each cell's index among the distinct cells, and those (each is read once)."""
    codes, distinct = pd.factorize(np.array(cells, dtype=object))
    return codes, cast(list[str], distinct.tolist())


def _read_columns(
    table: Table, cols: dict[str, int], fee_cols: list[int], layout: Layout
) -> tuple[ParsedColumns, list[int]] | None:
    """The rows of a generic CSV read column by column (``table``) as columns, with the
    lines dropped as duplicates, or None when any line is not in the common form (ISO
    dates, plain decimals, buys, sells, dividends and cash rows, at most one fees column:
    :func:`_columnar`): the row-by-row reader then reads it, and words every error. When it
    answers, its columns are those of the row-by-row reader's rows
    (:meth:`ParsedColumns.from_rows`)."""
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

    day_code, day_text = _coded(column("date"))
    if _SPACE.search(",".join(day_text)):
        return None  # "... as of ..." dates
    try:
        ordinals = np.array([dt.date.fromisoformat(c[:10]).toordinal() for c in day_text], np.int64)
    except ValueError:
        return None
    date = (ordinals[day_code] - _EPOCH).astype("datetime64[D]")
    numbers = [_units(column(name)) for name in ("quantity", "price", "amount")]
    fees = _units([c.strip() for c in cells_of(fee_cols[0])]) if fee_cols else None
    if any(x is None for x in numbers) or (fee_cols and fees is None):
        return None
    type_code, type_text = _coded(column("type"))
    classified = [layout.classify({"type": t}, None) for t in type_text]
    if not all(k in _PLAIN_KINDS for k in classified):
        return None
    kind = np.array(classified, dtype=object)[type_code]
    sym_code, sym_text = _coded(column("symbol"))
    symbol = np.array([c.upper() or None for c in sym_text], dtype=object)[sym_code]
    cash = np.isin(kind, _CASH)
    symbol[cash] = None
    (q, _), price, amount = cast(list[tuple[I64, _Bools]], numbers)
    f = np.abs(fees[0]) if fees is not None else np.zeros(n, np.int64)
    amounts = _amounts(kind, symbol, q, price, amount, f)
    if amounts is None:
        return None
    ccy_code, ccy_text = _coded(column("currency"))
    norm = [(v.strip().upper() if (v := c or layout.currency) else None) for c in ccy_text]
    at = np.asarray(keep, np.intp)
    parsed = ParsedColumns(
        line=np.asarray(lines, np.int64)[at], source=sources, date=date[at], kind=kind[at],
        symbol=symbol[at], currency=np.array(norm, dtype=object)[ccy_code][at],
        quantity=amounts[0][at], price=amounts[1][at], fees=amounts[2][at],
    )  # fmt: skip
    return parsed, duplicates


_PLAIN_KINDS = frozenset({"buy", "sell", "dividend", *CASH_TYPES})
_CASH = np.array(sorted(CASH_TYPES), dtype=object)


def _amounts(
    kind: NDArray[np.object_],
    symbol: NDArray[np.object_],
    q: I64,
    price: tuple[I64, _Bools],
    amount: tuple[I64, _Bools],
    fees: I64,
) -> tuple[I64, I64, I64] | None:
    """Each plain row's ``(quantity, price, fees)`` in units, in the ledger's conventions
    (as :func:`_fields` sets them; a price and an amount with where they are present, an
    absent quantity 0, which reads as none); None when
    a row has a problem (the row-by-row reader words it) or an amount is not exact to
    ``1e-8`` (the row-by-row reader and plan decide)."""
    (p, p_in), (a, a_in) = price, amount
    trade = (kind == "buy") | (kind == "sell")
    dividend = kind == "dividend"
    if (symbol[trade | dividend] == None).any():  # noqa: E711 (elementwise)
        return None
    if ((q[trade] == 0) | ~p_in[trade] | (p[trade] < 0)).any():  # an absent quantity is 0
        return None
    own = dividend & ~a_in & p_in & (q != 0)  # a dividend in the ledger's own form
    rest = ~trade & ~own  # quantity 1 and the gross amount
    if (rest & ~a_in & ~p_in).any():
        return None
    withdrawal, fee = kind == "withdrawal", kind == "fee"
    stated = rest & a_in
    net = np.abs(a)
    if (stated & withdrawal & (fees > net)).any():
        return None
    gross = np.where(fee, net, np.where(withdrawal, net - fees, net + fees))
    price_out = np.where(trade, p, np.where(own, np.abs(p), np.where(stated, gross, 0)))
    fees_out = np.where(stated & fee, 0, fees)
    for i in np.flatnonzero(rest & ~a_in).tolist():  # a price (times a quantity) given
        shares = int(q[i]) or UNIT
        total, left = divmod(abs(int(p[i]) * shares), UNIT)
        if left or total >= _MAX_UNITS:
            return None
        price_out[i] = total
    quantity_out = np.where(trade | own, np.abs(q), UNIT)
    return quantity_out.astype(np.int64), price_out.astype(np.int64), fees_out.astype(np.int64)


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
