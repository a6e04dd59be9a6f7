"""Writing a planned import: the rows inserted in one statement, the positions re-derived.

The rows go in as one statement on the request's connection (``COPY`` on PostgreSQL
through asyncpg, an ``executemany`` of tuples elsewhere); then the
positions of the touched assets are re-derived once
(:func:`service.ledger.writes.rederive_written`). A plan over columns
(:mod:`service.imports.table`) is written from its columns with ids taken before the
insert, and its rows are appended to the user's ledger columns
(:func:`service.ledger.columns.appended`) instead of read back: that and the lot match
run in a worker thread while the database inserts.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
from collections.abc import AsyncIterator, Callable, Collection, Mapping
from decimal import Decimal
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import Table, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from service.db.models import Asset, Portfolio, Transaction, utcnow
from service.imports.plan import Plan
from service.ledger import columns as ledger_columns
from service.ledger import read
from service.ledger.fixed import Fixed
from service.ledger.writes import Matched, match_written, rederive_written, write_matched

__all__ = ["source_id", "write_entries", "write_table"]

_TRANSACTIONS = cast(Table, Transaction.__table__)
_T = _TRANSACTIONS.c


def source_id(raw: str) -> str:
    """The stored source id: the statement's own when it fits the column, else its hash."""
    if len(raw) <= 128:
        return raw
    return "sha256:" + hashlib.sha256(raw.encode()).hexdigest()


async def _link_lots(s: AsyncSession, portfolio: Portfolio, plan: Plan) -> None:
    """Point each imported sale that names its lot at the written buy's transaction id."""
    named = [(row.source_id, row.lot_source) for row, _ in plan.entries if row.lot_source]
    if not named:
        return
    wanted = sorted({source_id(ref) for _, ref in named})
    result = await s.execute(
        select(Transaction.source_id, Transaction.id).where(
            Transaction.portfolio_id == portfolio.id, Transaction.source_id.in_(wanted)
        )
    )
    found = {str(source): int(tid) for source, tid in result.all()}
    for sell, ref in named:
        await s.execute(
            update(Transaction)
            .where(
                Transaction.portfolio_id == portfolio.id,
                Transaction.source_id == source_id(sell),
            )
            .values(lot_id=found[source_id(ref)])
        )


async def _asset_ids(
    s: AsyncSession, plan: Plan, symbols: set[str], now: dt.datetime
) -> dict[str, int]:
    """The asset id of each of ``symbols``: the plan's new assets created, the rest read."""
    ids: dict[str, int] = {}
    for sym, currency in sorted(plan.new_assets.items()):
        asset = Asset(
            symbol=sym, name=sym, asset_type="stock", sector="", data_source="statement",
            currency=currency, created_at=now, updated_at=now,
        )  # fmt: skip
        s.add(asset)
        await s.flush()
        ids[sym] = asset.id
    symbols = symbols - set(ids)
    if symbols:
        found = await s.execute(select(Asset.symbol, Asset.id).where(Asset.symbol.in_(symbols)))
        ids.update(found.tuples().all())
    return ids


async def write_entries(s: AsyncSession, portfolio: Portfolio, plan: Plan) -> None:
    """Write the plan's entries (``plan.entries``), sells naming their lots linked."""
    now = utcnow()
    symbols = {e.symbol for _, e in plan.entries if e.symbol is not None}
    symbols |= {e.target_symbol for _, e in plan.entries if e.target_symbol is not None}
    ids = await _asset_ids(s, plan, symbols, now)
    source = [source_id(row.source_id) for row, _ in plan.entries]
    entries = [e for _, e in plan.entries]
    columns: dict[str, list[Any]] = {
        "portfolio_id": [portfolio.id],
        "asset_id": [ids[e.symbol] if e.symbol is not None else None for e in entries],
        "currency": [e.currency if e.is_cash else None for e in entries],
        "transaction_type": [e.kind for e in entries],
        "quantity": [e.quantity for e in entries],
        "price": [e.price for e in entries],
        "fees": [e.fees for e in entries],
        "transaction_date": [e.date for e in entries],
        "created_at": [now],
        "lot_id": [None],
        "ratio": [e.ratio for e in entries],
        "cash": [e.cash for e in entries],
        "basis_allocation": [e.basis_allocation for e in entries],
        "target_asset_id": [
            ids[e.target_symbol] if e.target_symbol is not None else None for e in entries
        ],
        "source_id": source,
    }
    await _insert_rows(await s.connection(), columns, len(entries))
    await _link_lots(s, portfolio, plan)
    portfolio.updated_at = now
    await s.flush()
    if ids:
        await rederive_written(s, portfolio.user_id, set(ids.values()))


async def write_table(s: AsyncSession, portfolio: Portfolio, plan: Plan, at: int) -> None:
    """Write the plan's entries given as columns (``plan.table``): their ids taken first
    (:func:`_reserved_ids`), then one insert whose cells are computed from the columns, in
    the driver's own form, a chunk of rows at a time and, beside it in a worker thread, the
    user's ledger columns (before the import) with those rows appended (never read back)
    and the lot match of the touched assets (:func:`service.ledger.writes.match_written`);
    their positions are written once both are done. A failure of either is raised after both ended, the
    transaction left for the caller to roll back."""
    table = plan.table
    assert table is not None
    user_id = portfolio.user_id
    conn = await s.connection()
    before = await read.before_write(conn, user_id, at)
    now = utcnow()
    symbols = set(plan.currency_of)
    ids = await _asset_ids(s, plan, symbols, now)
    n = len(table)
    new_ids = await _reserved_ids(conn, n)
    asset = np.array([ids[x] if x is not None else -1 for x in table.symbol.tolist()], np.int64)
    currency = np.where(table.cash, table.currency, np.array(None))
    direct = _direct(conn)

    def amounts(name: str) -> _Computed:
        if direct:
            return _Computed(n, lambda rows: table.text(name, rows))
        return _Computed(n, lambda rows: list(map(Decimal, table.text(name, rows))))

    def dates(rows: slice) -> list[Any]:
        if direct:
            return cast(list[Any], np.datetime_as_string(table.date[rows]).tolist())
        return cast(list[Any], table.date[rows].astype(object).tolist())

    # each column computed a slice at a time: the database reads the first rows while
    # the next are formatted, instead of waiting for a Python object per cell of all
    columns: dict[str, _Column] = {
        "id": _Computed(n, lambda rows: new_ids[rows].tolist()),
        "portfolio_id": [portfolio.id],
        "asset_id": _Computed(n, lambda rows: [None if a < 0 else a for a in asset[rows].tolist()]),
        "currency": _Computed(n, lambda rows: currency[rows].tolist()),
        "transaction_type": _Computed(n, lambda rows: table.kind[rows].tolist()),
        **{name: amounts(name) for name in ("quantity", "price", "fees")},
        "transaction_date": _Computed(n, dates),
        "created_at": [now],
        "source_id": _Computed(n, lambda rows: table.source[rows]),
    }
    ready = {"quantity", "price", "fees", "transaction_date"} if direct else {"transaction_date"}

    def matched() -> Matched:
        none = np.full(n, -1, np.int64)
        kinds = np.array([ledger_columns.KIND_CODE[k] for k in table.kind.tolist()], np.int8)
        null = Fixed(np.zeros(n, np.int64), np.zeros(n, np.int64), np.ones(n, np.bool_))
        after = ledger_columns.appended(
            before, at,
            {"id": new_ids, "portfolio": np.full(n, portfolio.id, np.int64),
             "asset": asset, "target": none, "date": table.date, "kind": kinds, "lot": none,
             "own": np.where(table.cash, table.currency, "").astype(object)},
            {"quantity": table.fixed("quantity"), "price": table.fixed("price"),
             "fees": table.fixed("fees"), "ratio": null, "basis_allocation": null, "cash": null},
            [(ids[sym], sym, plan.currency_of[sym]) for sym in sorted(symbols)],
        )  # fmt: skip
        return match_written(after, {ids[sym] for sym in symbols})

    insert = asyncio.ensure_future(_insert_rows(conn, columns, n, ready=ready))
    try:
        positions = await asyncio.to_thread(matched)
    finally:
        await insert  # never left running on the connection, whatever the match did
    portfolio.updated_at = now
    await s.flush()
    await write_matched(s, user_id, positions)


async def _reserved_ids(conn: AsyncConnection, n: int) -> NDArray[np.int64]:
    """The ids of ``n`` transactions about to be inserted, ascending: the ids the insert
    would have given them, known before it. On PostgreSQL, ``n`` values of the id's
    sequence in one statement (a concurrent writer's ids may fall between them, as they
    would during the insert's own); on SQLite, the ``n`` after the greatest ever given
    (``AUTOINCREMENT``'s counter), which no one else can take while this transaction
    holds the write lock (``BEGIN IMMEDIATE``)."""
    if not n:
        return np.zeros(0, np.int64)
    if conn.dialect.name == "postgresql":
        taken = text(  # the sequence looked up once (a subquery), not once per value
            "SELECT array_agg(nextval((SELECT pg_get_serial_sequence('transactions', 'id')"
            "::regclass))) FROM generate_series(1, :n)"
        )
        return np.sort(np.array((await conn.execute(taken, {"n": n})).scalar_one(), np.int64))
    last = (
        await conn.exec_driver_sql(
            "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'transactions'),"
            " 0), coalesce((SELECT max(id) FROM transactions), 0))"
        )
    ).scalar_one()
    return np.arange(last + 1, last + n + 1, dtype=np.int64)


def _direct(conn: AsyncConnection) -> bool:
    """Whether the insert takes an exact amount and a date as their canonical text:
    SQLite's columns are that text (``ExactDecimal``), asyncpg's ``COPY`` reads text."""
    return conn.dialect.name == "sqlite" or conn.dialect.driver == "asyncpg"


class _Computed:
    """A column of ``n`` values computed a slice at a time (``column[i:j]``, a list)."""

    __slots__ = ("_make", "_n")

    def __init__(self, n: int, make: Callable[[slice], list[Any]]) -> None:
        self._n, self._make = n, make

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, rows: slice) -> list[Any]:
        return self._make(rows)


#: A column to insert: its values, one value for every row, or computed by the slice.
_Column = list[Any] | _Computed


async def _insert_rows(
    conn: AsyncConnection, columns: Mapping[str, _Column], n: int, *, ready: Collection[str] = ()
) -> None:
    """Insert ``n`` transactions given as columns (a one-item column: the same value in every
    row) on the request's connection, inside its transaction: through asyncpg, one ``COPY``
    of CSV text on that connection (the server's per-row cost of an ``INSERT`` is gone and
    the client formats text instead of encoding parameters), a chunk of rows at a time;
    elsewhere one ``executemany`` of tuples.

    Each column's values pass through its type's bind processor, as a Core insert would
    pass them (exact decimals as canonical text on SQLite, dates, UTC datetimes), but once
    per column instead of through a parameter dict per row; the columns named in
    ``ready`` are in the driver's form already (text, for ``COPY``).
    """
    dialect = conn.dialect
    processors = {}
    for name in columns:
        process = _TRANSACTIONS.c[name].type.dialect_impl(dialect).bind_processor(dialect)
        if process is not None and name not in ready:
            processors[name] = process

    def cells(rows: slice) -> list[list[Any]]:
        """The ``rows`` of every column (a one-item column stays one item), processed."""
        out = []
        for name, column in columns.items():
            values = column[:] if len(column) == 1 else column[rows]
            if (process := processors.get(name)) is not None:
                values = [None if v is None else process(v) for v in values]
            out.append(values)
        return out

    if dialect.driver == "asyncpg":
        await _copy_rows(conn, list(columns), cells, n)
        return
    style = dialect.paramstyle
    marks = [
        "?" if style == "qmark" else f"${k}" if style == "numeric_dollar" else f":{k}"
        if style == "numeric" else "%s"
        for k in range(1, len(columns) + 1)
    ]  # fmt: skip
    sql = f"INSERT INTO {_TRANSACTIONS.name} ({', '.join(columns)}) VALUES ({', '.join(marks)})"
    rows = zip(*(v * n if len(v) == 1 else v for v in cells(slice(0, n))), strict=True)
    await conn.exec_driver_sql(sql, list(rows))


#: Rows of the first chunk of ``COPY`` data (the server starts on it at once), then of
#: each next one: the server reads one while the next is formatted.
_FIRST_CHUNK, _COPY_CHUNK = 2_048, 16_384


async def _copy_rows(
    conn: AsyncConnection, names: list[str], cells: Callable[[slice], list[list[Any]]], n: int
) -> None:
    """``COPY transactions (names) FROM STDIN`` of ``n`` rows given as columns (``cells`` of
    a slice of rows, a one-item column repeated) on the asyncpg connection under the
    request's session: the same connection and transaction, so a later failure rolls the
    rows back with everything else. Each chunk is computed and formatted as CSV
    (:func:`_csv_fields`) once the server has the one before: its parsing overlaps the
    formatting."""
    raw = await conn.get_raw_connection()
    driver = raw.driver_connection
    assert driver is not None
    if not driver.is_in_transaction():  # COPY outside it would commit on its own
        raise RuntimeError("COPY of an import needs the request's open transaction")

    async def chunks() -> AsyncIterator[bytes]:
        i = 0
        while i < n:
            k = min(_COPY_CHUNK if i else _FIRST_CHUNK, n - i)
            part = [_csv_fields(v, k) for v in cells(slice(i, i + k))]
            yield ("\n".join(map(",".join, zip(*part, strict=True))) + "\n").encode()
            i += k

    await driver.copy_to_table(_TRANSACTIONS.name, source=chunks(), columns=names, format="csv")


def _csv_fields(values: list[Any], n: int) -> list[str]:
    """A column as ``n`` CSV fields of ``COPY``: None the unquoted empty field (NULL), text
    quoted (its quotes doubled), a ``Decimal`` in fixed point, any other value its ``str``
    (integers, ISO dates and datetimes); a one-item column repeated. A column of text or
    integers (and None) is formatted in one comprehension, anything else value by value;
    a column of text none of whose values needs quotes (a delimiter, quote or line break
    in it, or empty: unquoted, NULL) is taken as it is."""
    if len(values) == 1:
        return [_csv_field(values[0])] * n
    kinds = set(map(type, values))
    if kinds <= {str, _NONE}:
        present = [v for v in values if v is not None] if _NONE in kinds else values
        text = "".join(present)
        if "" not in present and not any(c in text for c in ',\n\r"'):
            return ["" if v is None else v for v in values] if _NONE in kinds else values
        if '"' in text:
            return list(map(_csv_field, values))
        return ["" if v is None else '"' + v + '"' for v in values]
    if kinds <= {int, _NONE}:
        return ["" if v is None else str(v) for v in values]
    return list(map(_csv_field, values))


_NONE = type(None)


def _csv_field(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return '"' + value.replace('"', '""') + '"'
    if isinstance(value, Decimal):
        return format(value, "f")
    return str(value)
