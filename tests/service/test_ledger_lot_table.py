"""The lot ledger read from the columns (``service.ledger.lots.lot_table``) equals the one
built row by row from exact ``Decimal`` rows (``columns_rows`` + ``match_rows``), array
for array, on generated ledgers that relieve: buys, sells (some naming their lot),
dividends, every corporate action, two portfolios with different lot methods, wash
sales across them; and an unrelievable ledger gets the same 400 either way."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.errors import ValidationError
from service.ledger import writecheck
from service.ledger.columns import LedgerColumns, build, subset
from service.ledger.fixed import Fixed
from service.ledger.linked import linked_assets, rows_of_assets
from service.ledger.lots import LedgerCheckError, _match_columns, columns_rows, match_rows

ASSETS = [(11, "AAA", "USD"), (12, "BBB", "USD"), (13, "CCC", "USD")]
PORTFOLIOS = [(1, "fifo", "USD", "track"), (2, "specific", "USD", "track")]
START = dt.date(2024, 1, 2)
Q8 = Decimal("1e-8")


def _text(v: Decimal | None) -> str | None:
    return None if v is None else format(v.quantize(Q8), "f")


@st.composite
def relievable(draw: st.DrawFn) -> list[tuple]:
    """Rows in date order that relieve: a sell never sells more than is held (its named
    lot, when it names one, is a whole untouched buy), corporate actions act on held
    shares, dividends are paid on shares held."""
    n = draw(st.integers(20, 80))
    rows: list[tuple] = []
    held: dict[tuple[int, int], Decimal] = {}
    untouched: dict[tuple[int, int], list[tuple[int, Decimal]]] = {}  # whole buys, nameable
    day = START
    for i in range(n):
        tid = 100 + i
        day += dt.timedelta(days=draw(st.integers(1, 6)))  # one row a day: no same-day ranks
        pid = draw(st.sampled_from([1, 2]))
        asset = draw(st.sampled_from([11, 12, 13]))
        key = (pid, asset)
        h = held.get(key, Decimal(0))
        kind = draw(st.sampled_from(["buy"] * 5 + ["sell"] * 3 + ["dividend", "split", "return_of_capital",
                                                                   "spin_off", "merger", "deposit"]))  # fmt: skip
        if kind != "buy" and kind != "deposit" and h <= 0:
            kind = "buy"
        q = p = f = Decimal(0)
        lot = ratio = share = cash = target = None
        own = None
        if kind == "deposit":
            asset, q, p, own = None, Decimal(1), Decimal(1000), "USD"
        elif kind == "buy":
            q = draw(st.integers(1, 50)).__int__() * Decimal(1)
            p = Decimal(draw(st.integers(100, 20000))) / 100
            f = draw(st.sampled_from([Decimal(0), Decimal(1)]))
            held[key] = h + q
            untouched.setdefault(key, []).append((tid, q))
        elif kind == "sell":
            named = untouched.get(key) if pid == 2 else None
            if named and draw(st.booleans()):
                lot, q = named.pop(draw(st.integers(0, len(named) - 1)))
            else:
                q = Decimal(draw(st.integers(1, max(int(h), 1)))).min(h)
                untouched[key] = []  # first-in first-out may have touched any buy
            p = Decimal(draw(st.integers(100, 20000))) / 100
            held[key] = h - q
        elif kind == "dividend":
            q, p = h, Decimal("0.25")
        elif kind == "split":
            ratio = Decimal(2)
            held[key] = h * 2
            untouched[key] = []
        elif kind == "return_of_capital":
            p = Decimal("0.10")
        else:  # spin-off or merger into another asset of the same portfolio
            target = draw(st.sampled_from([a for a, _, _ in ASSETS if a != asset]))
            ratio = Decimal("0.5")
            tkey = (pid, target)
            held[tkey] = held.get(tkey, Decimal(0)) + h * ratio
            untouched[tkey] = []
            if kind == "spin_off":
                share = Decimal("0.2")
            else:
                cash, p = Decimal(4), Decimal(10)  # cash and shares: the new share's value
                held[key] = Decimal(0)
                untouched[key] = []
        rows.append(
            (tid, pid, asset, target, day.isoformat(), kind, _text(q), _text(p), _text(f), lot,
             _text(ratio), _text(share), _text(cash), own)
        )  # fmt: skip
    return rows


def _rows_path(cols: LedgerColumns):  # type: ignore[no-untyped-def]
    rows, actions = columns_rows(cols)
    return match_rows(rows, dict(zip(cols.portfolios.ids, cols.portfolios.lot_method, strict=True)), actions)


def _assert_same(a: object, b: object) -> None:
    for name, want in vars(a).items():
        got = getattr(b, name)
        if isinstance(want, np.ndarray):
            assert want.dtype == got.dtype and want.shape == got.shape, name
            assert (want == got).all(), name
        elif name != "source":
            assert want == got, name


@settings(max_examples=40, deadline=None)
@given(relievable())
def test_the_columnar_lot_ledger_equals_the_row_by_row_one(rows: list[tuple]) -> None:
    cols = build(1, PORTFOLIOS, ASSETS, rows)
    want = _rows_path(cols)
    got = _match_columns(cols).whole()
    _assert_same(want, got)
    assert got.realized.size or got.open_lots.size  # something was matched


@settings(max_examples=40, deadline=None)
@given(relievable(), st.sets(st.sampled_from([11, 12, 13])))
def test_the_match_of_masked_rows_equals_that_of_their_copy(rows: list[tuple], assets: set[int]) -> None:
    """``writecheck.match(cols, mask)`` (no copy of the columns, as a write re-derives
    positions) equals the match of ``subset`` of the same rows."""
    cols = build(1, PORTFOLIOS, ASSETS, rows)
    at = rows_of_assets(cols, linked_assets(cols, assets))
    mask = np.zeros(len(cols), np.bool_)
    mask[at] = True
    want = writecheck.match(subset(cols, at))
    got = writecheck.match(cols, mask)
    if want is None:
        assert got is None
    else:
        _assert_same(want, got)


def test_an_unrelievable_masked_match_gets_the_same_error() -> None:
    rows = [
        (1, 1, 11, None, "2024-01-02", "buy", "5.00000000", "10.00000000", "0.00000000", None,
         None, None, None, None),
        (2, 1, 12, None, "2024-01-02", "buy", "1.00000000", "10.00000000", "0.00000000", None,
         None, None, None, None),
        (3, 1, 11, None, "2024-01-03", "sell", "7.00000000", "12.00000000", "0.00000000", None,
         None, None, None, None),
    ]  # fmt: skip
    cols = build(1, PORTFOLIOS, ASSETS, rows)
    at = rows_of_assets(cols, {11})
    mask = np.zeros(len(cols), np.bool_)
    mask[at] = True
    with pytest.raises(LedgerCheckError) as want:
        writecheck.match(subset(cols, at))
    with pytest.raises(LedgerCheckError) as got:
        writecheck.match(cols, mask)
    assert str(got.value) == str(want.value)


def test_an_unrelievable_ledger_gets_the_same_error_either_way() -> None:
    rows = [
        (1, 1, 11, None, "2024-01-02", "buy", "5.00000000", "10.00000000", "0.00000000", None,
         None, None, None, None),
        (2, 1, 11, None, "2024-01-03", "sell", "7.00000000", "12.00000000", "0.00000000", None,
         None, None, None, None),
    ]  # fmt: skip
    cols = build(1, PORTFOLIOS, ASSETS, rows)
    with pytest.raises(ValidationError) as want:
        _rows_path(cols)
    with pytest.raises(ValidationError) as got:
        _match_columns(cols)
    assert got.value.message == want.value.message
    assert "AAA" in got.value.message and "1:AAA" not in got.value.message


@given(st.lists(st.one_of(st.none(), st.decimals(min_value=Decimal("-1e20") + Q8, max_value=Decimal("1e20") - Q8,
                                                   places=8, allow_nan=False)), max_size=40))  # fmt: skip
def test_amounts_reach_arrow_exactly(values: list[Decimal | None]) -> None:
    """Including values beyond 63 bits of 1e-8 units (|value| >= 9.2e10)."""
    got = Fixed.from_decimals(values).to_arrow().to_pylist()
    assert got == [None if v is None else v.quantize(Q8) for v in values]
