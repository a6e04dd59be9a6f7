"""The import's column-wise fast paths answer exactly what the row-by-row paths answer.

* the CSV reader (:func:`service.imports.csvfile._read_columns`) against the row-by-row
  reader, on valid files and on a file with every kind of bad line;
* :meth:`LedgerEntry.plain` against the ``LedgerEntry`` constructor;
* the share check over columns (``plan._relieves``) against ``first_shortfall``.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from service.errors import ValidationError
from service.imports import csvfile, parse_csv
from service.imports.plan import _relieves
from service.ledger.checks import LotRow, first_shortfall, ledger_key
from service.ledger.entry import LedgerEntry

HEADER = "date,type,symbol,quantity,price,fees,amount,id,currency"


def _row_by_row(data: bytes) -> object:
    real = csvfile._read_columns
    csvfile._read_columns = lambda *a: None  # type: ignore[assignment]
    try:
        return parse_csv(data)
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
        parse_csv(data)
    finally:
        csvfile._read_columns = real
    return bool(calls) and calls[0] is not None


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
@given(lines=st.lists(_line, min_size=1, max_size=12), blank=st.booleans())
def test_column_reader_equals_row_by_row(lines: list[tuple[str, ...]], blank: bool) -> None:
    body = [HEADER, *(",".join(cells) for cells in lines)]
    if blank:
        body.insert(2, "")
    data = ("\n".join(body) + "\n").encode()
    assert parse_csv(data) == _row_by_row(data)


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
    fast = parse_csv(data)
    assert fast == _row_by_row(data)
    assert fast.duplicates == [12] and len(fast.rows) == 9


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
    result = parse_csv(data)
    assert result == _row_by_row(data)
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
