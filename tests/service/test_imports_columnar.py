"""The import's column-wise fast paths answer exactly what the row-by-row paths answer.

* the CSV reader (:func:`service.imports.csvfile._read_columns`) against the row-by-row
  reader, on valid files and on a file with every kind of bad line;
* :meth:`LedgerEntry.plain` against the ``LedgerEntry`` constructor;
* the share check over columns (``plan._relieves``) against ``first_shortfall``;
* the columnar plan and write (:mod:`service.imports.table`) against the row-by-row ones,
  on SQLite and PostgreSQL: replies, errors, rows, positions, and the ledger columns kept
  after the write against the ledger read afresh.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import uuid
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import msgspec
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from service.db import Database
from service.db.models import Asset, Portfolio, Position, Transaction, User
from service.db.types import quantize
from service.errors import ValidationError
from service.imports import ParseResult, csvfile, parse_csv, services
from service.imports.plan import _relieves
from service.imports.rows import ParsedColumns, units
from service.ledger import read
from service.ledger.checks import LotRow, first_shortfall, ledger_key
from service.ledger.columns import LedgerColumns, load_columns
from service.ledger.entry import LedgerEntry
from service.ledger.fixed import Fixed

HEADER = "date,type,symbol,quantity,price,fees,amount,id,currency"


def _row_by_row(data: bytes) -> ParseResult:
    """The row-by-row reader's answer (the column reader not even asked)."""
    real = csvfile._read_columns
    csvfile._read_columns = lambda *a: None
    try:
        return parse_csv(data, columns=True)
    finally:
        csvfile._read_columns = real


def _answers(data: bytes) -> bool:
    """Whether the column reader answered (not fell back) for ``data``."""
    calls: list[object] = []
    real = csvfile._read_columns

    def spy(*args: object) -> object:
        calls.append(out := real(*args))  # type: ignore[arg-type]
        return out

    csvfile._read_columns = spy  # type: ignore[assignment]
    try:
        parse_csv(data, columns=True)
    finally:
        csvfile._read_columns = real
    return bool(calls) and calls[0] is not None


def _same_as_row_by_row(data: bytes) -> ParseResult:
    """The reader asked for columns answers what the row-by-row reader does: its rows as
    columns when it gives columns (and its rows when asked again), else the same result."""
    fast, slow = parse_csv(data, columns=True), _row_by_row(data)
    assert parse_csv(data) == slow  # without columns asked: row by row
    if fast.columns is None:
        assert fast == slow
        return fast
    assert fast.rows == [] and not slow.errors and fast.duplicates == slow.duplicates
    expected = ParsedColumns.from_rows(slow.rows)
    assert expected is not None
    for f in dataclasses.fields(ParsedColumns):
        a, b = getattr(fast.columns, f.name), getattr(expected, f.name)
        assert a.dtype == b.dtype if isinstance(a, np.ndarray) else True, f.name
        assert list(a) == list(b), f.name
    assert fast.row_objects() == slow.rows and fast.columns is None
    return fast


_number = st.one_of(
    st.just(""),
    st.decimals(min_value=-(10**6), max_value=10**6, places=2, allow_nan=False).map(str),
    st.integers(-1000, 1000).map(str),
    st.sampled_from(
        ["0", "-0", "0.00", "12.123456789", "1e3", "$5.00", "(3.00)", "1,000", "+7", "-", "x"]
    ),
)
_line = st.tuples(
    st.sampled_from(["2024-01-02", "2024-02-29", "2023-12-31", "2025-06-30T10:00", "2024-13-01", "", "01/02/2024"]),
    st.sampled_from(["buy", "sell", "dividend", "deposit", "withdrawal", "interest", "fee", "Buy", " sell ",
                     "split", "transfer", "bogus"]),
    st.sampled_from(["AAPL", "msft", "", "BRK.B"]),
    _number, _number, _number, _number,
    st.sampled_from(["", "r1", "r2", "r3", "x"]),
    st.sampled_from(["", "usd", "EUR"]),
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(_line, min_size=1, max_size=12), blank=st.booleans(), quoted=st.booleans(),
    preamble=st.booleans(),
)  # fmt: skip
def test_column_reader_equals_row_by_row(
    lines: list[tuple[str, ...]], blank: bool, quoted: bool, preamble: bool
) -> None:
    """Without a blank line or a quote the column reader splits the text itself; with one,
    it takes the CSV reader's records (a quoted cell reads as the same text)."""
    body = [HEADER, *(",".join(cells) for cells in lines)]
    if blank:
        body.insert(2, "")
    if quoted:
        body[1] = '"' + body[1].replace(",", '",', 1)
    if preamble:
        body.insert(0, "Statement of account 1234")
    data = ("\n".join(body) + "\n").encode()
    _same_as_row_by_row(data)


def test_column_reader_answers_a_plain_statement() -> None:
    data = (
        b"date,type,symbol,quantity,price,fees,amount,id\n"
        b"2024-01-02,deposit,,,,0,10000.00,r0\n"
        b"2024-01-03,buy,AAPL,10,150.25,1.00,-1503.50,r1\n"
        b"2024-01-04,sell,AAPL,-4,160.00,1.00,639.00,r2\n"
        b"\n"
        b"2024-01-05,dividend,AAPL,6,0.24,0,1.44,r3\n"
        b"2024-01-05,dividend,AAPL,6,0.24,0,,r4\n"
        b"2024-01-06,withdrawal,,,,2.00,-100.00,r5\n"
        b"2024-01-06,fee,,,,0,-3.00,\n"
        b"2024-01-06,fee,,,,0,-3.00,\n"
        b"2024-01-07,interest,,,0.50,0,,r6\n"
        b"2024-01-07,buy,AAPL,1,1,0,,r1\n"
    )
    assert _answers(data)
    fast = parse_csv(data, columns=True)
    assert fast.columns is not None and fast.duplicates == [12] and len(fast.columns) == 9
    assert _same_as_row_by_row(data).rows[1].quantity == 10


def test_column_reader_reads_amounts_exactly_or_leaves_them_to_the_row_by_row_reader() -> None:
    """Numbers in every plain spelling read exactly; a ninth decimal, a number beyond the
    units it takes or a spelling ``Decimal`` refuses are left to the row-by-row reader."""
    head = b"date,type,symbol,quantity,price,fees,amount,id\n"
    data = head + (
        b"2024-01-02,deposit,,,,+.5,10000.,r0\n"
        b"2024-01-03,buy,AAPL,-.25,0150.12345678,1.,,r1\n"
        b"2024-01-04,interest,,3,0.00000007,0,,r2\n"
        b"2024-01-04,dividend,AAPL,0.25,-2,,,r3\n"
    )
    assert _answers(data)
    fast = _same_as_row_by_row(data)
    assert fast.rows[1].quantity == Decimal("0.25") and fast.rows[2].price == Decimal("2.1E-7")
    for cell in [b"1.000000001", b"99999999999", b"1..2", b"+-1", b".", b"1e3", b"--1"]:
        bad = head + b"2024-01-03,buy,AAPL," + cell + b",1,0,,r1\n"
        assert not _answers(bad)
        _same_as_row_by_row(bad)
    inexact = head + b"2024-01-04,interest,,0.5,0.00000001,0,,r2\n"  # 5e-9
    assert not _answers(inexact)
    _same_as_row_by_row(inexact)


def test_a_file_without_quotes_or_blank_lines_is_split_without_the_csv_reader(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The column reader splits such a file's text at its commas (a preamble line before
    the header skipped) and answers what the row-by-row reader does."""
    data = (
        b"Statement of account 1234\n"
        b"date,type,symbol,quantity,price,fees,amount,id\n"
        b"2024-01-02,deposit,,,,0,10000.00,r0\n"
        b"2024-01-03,buy,AAPL,10,150.25,1.00,-1503.50,r1\n"
        b"2024-01-06,fee,,,,0,-3.00,\n"
        b"2024-01-07,buy,AAPL,1,1,0,,r1"
    )
    slow = _row_by_row(data)
    monkeypatch.setattr(csvfile, "_records", lambda *a: pytest.fail("read by the CSV reader"))
    fast = parse_csv(data, columns=True)
    assert fast.columns is not None and fast.columns.line.tolist() == [3, 4, 5]
    assert fast.duplicates == slow.duplicates == [6]
    monkeypatch.undo()
    assert fast.row_objects() == slow.rows


@pytest.mark.parametrize("bad", [b"2024-13-02,buy,AAPL,1,10,0,,r2", b"2024-01-03,buy,AAPL,1.2.3,10,0,,r2",
                                 b"2024-01-03,swap,AAPL,1,10,0,,r2", b"2024-01-03,buy,,1,10,0,,r2"])
def test_a_line_the_column_reader_gives_up_on_after_taking_the_records_is_read_again(bad: bytes) -> None:
    """The column reader takes the records over before it reads dates, numbers and types;
    giving up there, the file's records are read again for the row-by-row reader."""
    data = b"date,type,symbol,quantity,price,fees,amount,id\n2024-01-02,deposit,,,,0,100.00,r0\n" + bad + b"\n"
    assert not _answers(data)
    result = _same_as_row_by_row(data)
    assert {e.line for e in result.errors} == {3} and len(result.rows) == 1


def test_a_record_over_two_lines_or_a_broken_record_reads_row_by_row_with_its_lines() -> None:
    """All records are read at once; when one spans lines (a quoted newline) or the reader
    stops on a broken one, they are read again one at a time, each with the line it ends on."""
    head = b"date,type,symbol,quantity,price,fees,amount,id\n"
    spanning = head + b'2024-01-02,deposit,,,,0,100.00,"r\n0"\n2024-01-03,deposit,,,,0,5.00,r1\n'
    assert not _answers(spanning)
    assert [r.line for r in parse_csv(spanning).rows] == [2, 4]
    broken = head + b"2024-01-02,deposit,,,,0,100.00,r0\n2024-01-03,deposit,,,,0,5.00," + b"x" * 200_000
    result = parse_csv(broken + b"\n2024-01-04,deposit,,,,0,1.00,r2\n")
    assert [r.line for r in result.rows] == [2]
    assert [(e.line, e.code) for e in result.errors] == [(3, "malformed")]


def test_every_kind_of_bad_line_has_the_row_by_row_errors() -> None:
    data = (
        b"date,type,symbol,quantity,price,fees,amount,id\n"
        b"2024-01-02,deposit,,,,0,10000.00,r0\n"
        b"2024-13-02,buy,AAPL,1,10,0,,r1\n"  # not a date
        b"2024-01-03,buy,AAPL,ten,10,0,,r2\n"  # not a number
        b"2024-01-03,buy,AAPL,0,10,0,,r3\n"  # no quantity
        b"2024-01-03,buy,AAPL,1,,0,,r4\n"  # no price
        b"2024-01-03,buy,AAPL,1,-10,0,,r5\n"  # negative price
        b"2024-01-03,buy,,1,10,0,,r6\n"  # no symbol
        b"2024-01-03,swap,AAPL,1,10,0,,r7\n"  # unknown type
        b"2024-01-03,withdrawal,,,,20,-10.00,r8\n"  # fees above the amount
        b"2024-01-03,deposit,,,,0,,r9\n"  # no amount
        b"2024-01-03,dividend,,,,0,5.00,r10\n"  # a dividend without a symbol
        b"2024-01-03,buy,AAPL,1,NaN,0,,r11\n"  # not finite
        b"2024-01-03,buy,AAPL,1,10,0,,r12,extra\n"  # a longer row is fine
        b"2024-01-03,buy,AAPL\n"  # a short row
        b'2024-01-03,buy,AAPL,"1\n2",10,0,,r13\n'  # a record over two lines
    )
    assert not _answers(data)
    result = _same_as_row_by_row(data)
    assert {e.line for e in result.errors} >= set(range(3, 13))


_amount = st.one_of(
    st.decimals(min_value=-5, max_value=10**21, allow_nan=False, allow_infinity=False, places=10),
    st.sampled_from(
        [Decimal("NaN"), Decimal("Infinity"), Decimal("-0"), Decimal(0), Decimal("1e20")]
    ),
)


@settings(max_examples=400, deadline=None)
@given(
    kind=st.sampled_from(["buy", "sell", "dividend", "deposit", "withdrawal", "interest", "fee", "split"]),
    symbol=st.sampled_from([None, "AAPL", "msft"]),
    quantity=_amount, price=_amount, fees=_amount,
    date=st.dates(dt.date(1899, 12, 30), dt.date.today() + dt.timedelta(days=3)),
    currency=st.sampled_from([None, "USD"]),
)  # fmt: skip
def test_plain_entry_equals_the_constructor(
    kind: str, symbol: str | None, quantity: Decimal, price: Decimal, fees: Decimal,
    date: dt.date, currency: str | None,
) -> None:  # fmt: skip
    latest = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)
    fast = LedgerEntry.plain(symbol, kind, quantity, price, fees, date, latest, currency)
    cash = kind in ("deposit", "withdrawal", "interest", "fee")
    try:
        slow = LedgerEntry(
            symbol, kind, None if cash else quantity, price, fees, date,
            price_field="amount" if cash else "price", date_field="date", currency=currency,
        )  # fmt: skip
    except ValidationError:
        assert fast is None
        return
    if fast is None:  # only rows the constructor takes but the fast path leaves to it
        assert kind == "split" or (cash and currency is None) or (not cash and currency)
        return
    for name in LedgerEntry.__slots__:
        assert getattr(fast, name) == getattr(slow, name), name
        assert str(getattr(fast, name)) == str(getattr(slow, name)), name


_lot_row = st.tuples(
    st.sampled_from(["buy", "sell", "dividend"]),
    st.sampled_from(["A", "B"]),
    st.integers(0, 6),
    st.sampled_from([Decimal(1), Decimal(2), Decimal(3), Decimal("0.5"), Decimal("0.00000001")]),
)


@settings(max_examples=300, deadline=None)
@given(old=st.lists(_lot_row, max_size=8), new=st.lists(_lot_row, min_size=1, max_size=10))
def test_share_check_over_columns_equals_the_walk(
    old: list[tuple[str, str, int, Decimal]], new: list[tuple[str, str, int, Decimal]]
) -> None:
    day = dt.date(2024, 1, 1)

    def rows(spec: list[tuple[str, str, int, Decimal]], first: int) -> dict[str, list[LotRow]]:
        out: dict[str, list[LotRow]] = {}
        for i, (kind, sym, d, q) in enumerate(spec):
            row = LotRow(
                first + i, kind, q, day + dt.timedelta(days=d), None, Decimal(10), Decimal(0)
            )
            out.setdefault(sym, []).append(row)
        return out

    existing, by_symbol = rows(old, 1), rows(new, 1000)
    walk = all(
        first_shortfall(
            sorted(
                [*existing.get(sym, []), *mine],
                key=lambda r: ledger_key(r.date, r.kind, r.price, r.quantity, r.fees, r.id),
            )
        )
        is None
        for sym, mine in by_symbol.items()
    )
    assert _relieves(by_symbol, existing) == walk


# --- the columnar plan and write (service.imports.table) against the row-by-row ones ---

_AMOUNT = st.one_of(
    st.decimals(min_value=-(10**12), max_value=10**12, places=10, allow_nan=False),
    st.sampled_from([Decimal("NaN"), Decimal("Infinity"), Decimal("-0"), Decimal("1e30")]),
)


@settings(max_examples=300, deadline=None)
@given(values=st.lists(_AMOUNT, max_size=6))
def test_units_are_exact_or_none(values: list[Decimal]) -> None:
    def exact(v: Decimal) -> bool:
        return v.is_finite() and abs(v) < Decimal(2**63) / 10**8 and v == quantize(v)

    out = units(values)
    if not all(map(exact, values)):
        assert out is None
        return
    assert out is not None
    assert [Decimal(int(u)).scaleb(-8) for u in out] == values


#: Assets the database tests trade (created once per database): two in USD, one in EUR.
_ASSETS = {"QCXA": "USD", "QCXB": "USD", "QCXE": "EUR"}

_day = st.integers(0, 8).map(lambda d: str(dt.date(2024, 1, 1) + dt.timedelta(days=d)))
_kind = st.sampled_from(
    ["buy", "buy", "sell", "dividend", "deposit", "withdrawal", "interest", "fee"]
)
#: A line the import takes (unless a sale or dividend is short, or cash overdrawn).
_clean_line = st.tuples(
    _day, st.sampled_from(["buy", "buy", "buy", "buy", "sell", "dividend", "deposit", "withdrawal",
                           "interest", "fee"]), st.sampled_from(["QCXA", "QCXB"]), st.sampled_from(["1", "2", "5", "3"]),
    st.sampled_from(["10", "20.50"]), st.sampled_from(["0", "1.00"]),
    st.sampled_from(["100.00", "25.00"]), st.sampled_from(["", "USD"]),
)  # fmt: skip
#: Any line: bad symbols, currencies, decimals, amounts.
_any_line = st.tuples(
    _day, _kind, st.sampled_from(["QCXA", "QCXB", "QCXE", "QCXN", "bad sym"]),
    st.sampled_from(["1", "2", "5", "0.5", "3"]), st.sampled_from(["10", "20.50", "0", "7.123456789"]),
    st.sampled_from(["0", "1.00", "500"]), st.sampled_from(["", "100.00", "25.00", "0", "5000.00"]),
    st.sampled_from(["", "", "USD", "EUR", "XXX"]),
)  # fmt: skip
_bad = st.one_of(st.just([]), st.just([]), st.just([]), st.lists(_any_line, max_size=2))
_lines = st.tuples(st.lists(_clean_line, max_size=10), _bad).flatmap(
    lambda parts: st.permutations(parts[0] + parts[1])
)


def _statement(lines: Sequence[tuple[str, ...]], first: int) -> bytes:
    body = ["date,type,symbol,quantity,price,fees,amount,id,currency"]
    for k, (day, kind, sym, q, p, f, a, ccy) in enumerate(lines):
        cash = kind in ("deposit", "withdrawal", "interest", "fee")
        amount = a if cash or kind == "dividend" else ""
        body.append(
            ",".join([day, kind, "" if cash else sym, "" if cash else q, "" if cash else p,
                      f, amount, f"r{first + k}", ccy])
        )  # fmt: skip
    return ("\n".join(body) + "\n").encode()


async def _db_user(db: Database, policy: str) -> tuple[int, int]:
    async with db.write() as s:
        have = set(
            (await s.execute(select(Asset.symbol).where(Asset.symbol.in_(_ASSETS)))).scalars()
        )
        for sym, ccy in _ASSETS.items():
            if sym not in have:
                s.add(Asset(symbol=sym, name=sym, asset_type="stock", currency=ccy))
    async with db.write() as s:
        user = User(username=f"col_{uuid.uuid4().hex[:10]}", password_hash="x")
        s.add(user)
        await s.flush()
        portfolio = Portfolio(user_id=user.id, name="p", cash_policy=policy)
        s.add(portfolio)
        await s.flush()
        return user.id, portfolio.id


async def _never(*args: object) -> bool:
    return False


async def _import(
    db: Database,
    uid: int,
    pid: int,
    data: bytes,
    *,
    columnar: bool,
    dry_run: bool = False,
    create_assets: bool = False,
) -> tuple[str, object]:
    """The import's answer (its reply without the portfolio, or its error's details)."""
    real = services._plan_table
    if not columnar:
        services._plan_table = _never  # type: ignore[assignment]
    options = services.ImportOptions(format="csv", dry_run=dry_run, create_assets=create_assets)
    try:
        if dry_run:
            reply = await services.preview_statement(db, uid, pid, data, options)
        else:
            async with db.write() as s:
                reply = await services.import_statement(s, uid, pid, data, options)
    except ValidationError as exc:
        return "error", exc.details
    finally:
        services._plan_table = real
    out = msgspec.to_builtins(reply)
    out.pop("portfolio")
    return "ok", out


async def _state(
    db: Database, uid: int, pid: int
) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    t = Transaction.__table__.c
    async with db.read() as s:
        rows = (
            await s.execute(
                select(t.transaction_type, t.asset_id, t.currency, t.quantity, t.price, t.fees,
                       t.transaction_date, t.source_id, t.lot_id, t.ratio)
                .where(t.portfolio_id == pid).order_by(t.id)
            )
        ).all()  # fmt: skip
        held = (
            await s.execute(
                select(Position.asset_id, Position.quantity, Position.cost_basis)
                .where(Position.portfolio_id == pid).order_by(Position.asset_id)
            )
        ).all()  # fmt: skip
    return [tuple(r) for r in rows], [tuple(r) for r in held]


def _same_columns(kept: LedgerColumns, fresh: LedgerColumns) -> None:
    for f in dataclasses.fields(LedgerColumns):
        a, b = getattr(kept, f.name), getattr(fresh, f.name)
        if isinstance(a, Fixed):
            assert a.to_decimal() == b.to_decimal(), f.name
        elif isinstance(a, np.ndarray):
            assert np.array_equal(a, b), f.name
        else:
            assert a == b, f.name


async def _compare(url: str, policy: str, old: bytes, new: bytes) -> None:
    db = Database(url)
    try:
        users = [await _db_user(db, policy), await _db_user(db, policy)]
        for uid, pid in users:  # the same ledger before, written row by row
            await _import(db, uid, pid, old, columnar=False)
        (ua, pa), (ub, pb) = users
        for dry in (True, False):
            fast = await _import(db, ua, pa, new, columnar=True, dry_run=dry)
            slow = await _import(db, ub, pb, new, columnar=False, dry_run=dry)
            assert fast == slow
        (rows_a, held_a), (rows_b, held_b) = await _state(db, ua, pa), await _state(db, ub, pb)
        assert rows_a == rows_b and held_a == held_b
        async with db.read() as s:  # the columns kept after the write are the ledger's
            conn = await s.connection()
            at = await read.version(conn, ua)
            kept = await read.columns(conn, ua)
            _same_columns(kept, await load_columns(conn, ua, at))
    finally:
        await db.dispose()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    old=_lines,
    new=_lines.filter(bool),
    policy=st.sampled_from(["strict", "track"]),
    again=st.booleans(),
)
def test_columnar_import_equals_row_by_row(
    database_url: str,
    old: list[tuple[str, ...]],
    new: list[tuple[str, ...]],
    policy: str,
    again: bool,
) -> None:
    """Random statements (bad symbols, currencies, decimals, shortfalls, overdrafts) into a
    random ledger: the same reply or errors, rows, positions; the kept columns are the
    ledger's. ``again``: the new file repeats the old one's lines (skipped)."""
    deposit = [("2024-01-01", "deposit", "", "", "", "0", "100000.00", "")]
    old_data = _statement(deposit + old, 0)
    new_data = _statement(deposit + old + new, 0) if again else _statement(new, 100)
    asyncio.run(_compare(database_url, policy, old_data, new_data))


def test_columnar_plan_answers_a_plain_statement(database_url: str) -> None:
    """The benchmark's kind of file is planned over columns (not left to the row path)."""
    lines = [
        ("2024-01-01", "deposit", "", "", "", "0", "100000.00", ""),
        ("2024-01-02", "buy", "QCXA", "10", "20.50", "1.00", "", ""),
        ("2024-01-03", "sell", "QCXA", "4", "21", "1.00", "", ""),
        ("2024-01-04", "dividend", "QCXA", "6", "0", "0", "3.00", ""),
        ("2024-01-05", "withdrawal", "", "", "", "1.00", "50.00", ""),
        ("2024-01-05", "fee", "", "", "", "0", "0", ""),
    ]
    data = _statement(lines, 0)
    answered: list[bool] = []
    real = services._plan_table

    async def spy(*args: Any) -> bool:
        answered.append(await real(*args))
        return answered[-1]

    services._plan_table = spy  # type: ignore[assignment]
    try:
        asyncio.run(_compare(database_url, "strict", _statement(lines[:1], 50), data))
    finally:
        services._plan_table = real
    assert answered and all(answered)


async def _new_assets(url: str) -> None:
    db = Database(url)
    try:
        uid, pid = await _db_user(db, "strict")
        fresh = [f"QN{uuid.uuid4().hex[:6].upper()}" for _ in range(2)]
        lines = [
            ("2024-01-01", "deposit", "", "", "", "0", "1000.00", "", ""),
            ("2024-01-01", "deposit", "", "", "", "0", "1000.00", "", "EUR"),
            ("2024-01-02", "buy", fresh[1], "2", "10", "0", "", "", ""),
            ("2024-01-02", "buy", fresh[0], "3", "10", "0", "", "", "EUR"),
            ("2024-01-03", "sell", fresh[0], "1", "12", "0", "", "", ""),
            ("2024-01-04", "buy", "QCXA", "1", "10", "0", "", "", ""),
        ]
        data = _statement([(d, k, y, q, p, f, a, c) for d, k, y, q, p, f, a, _, c in lines], 0)
        kind, reply = await _import(db, uid, pid, data, columnar=True, create_assets=True)
        assert kind == "ok", reply
        assert isinstance(reply, dict) and reply["created_assets"] == sorted(fresh)
        async with db.read() as s:
            found = dict(
                (
                    await s.execute(
                        select(Asset.symbol, Asset.currency).where(Asset.symbol.in_(fresh))
                    )
                )
                .tuples()
                .all()
            )
            assert found == {fresh[0]: "EUR", fresh[1]: "USD"}
            conn = await s.connection()
            at = await read.version(conn, uid)
            _same_columns(await read.columns(conn, uid), await load_columns(conn, uid, at))
    finally:
        await db.dispose()


def test_columnar_import_creates_assets(database_url: str) -> None:
    """New assets (the first row's currency, else the base) are created and named in the
    reply; the columns kept after the write know them."""
    answered: list[bool] = []
    real = services._plan_table

    async def spy(*args: Any) -> bool:
        answered.append(await real(*args))
        return answered[-1]

    services._plan_table = spy  # type: ignore[assignment]
    try:
        asyncio.run(_new_assets(database_url))
    finally:
        services._plan_table = real
    assert answered == [True]
