"""Hypothesis: the vectorized tax reports equal their plain-Python twins, figure for figure.

The twins are the row-by-row code the kernels replaced (cents per value with
``to_cents``, one ``Form8949Row`` per realized piece, a dict per symbol for 1099-DIV,
one ``Decimal`` per cell, one ``lot_id`` at a time), kept here as the oracle.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from dataclasses import asdict, fields
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quantcore.tax import (
    Form8949,
    Form8949Row,
    LotLedger,
    form_1099_div,
    form_8949,
    match_lots,
    schedule_d,
    tax_summary,
)
from quantcore.tax.encode import _fixed_column, encode
from quantcore.tax.money import cents, cents_text, from_fixed, quantity_text, to_cents
from quantcore.tax.rates import yearly_gains
from quantcore.tax.reports import _narrowest
from tests.property.test_tax_props import START, _frame, histories

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
UNITS = st.integers(-(2**62), 2**62)
_EPOCH = date(1970, 1, 1)
START_YEAR = START.year
COLUMNS = ("symbol", "quantity", "acquired", "sold", "proceeds", "cost_basis", "adjustment", "long_term", "wash_sale")


# -- the twins -------------------------------------------------------------------------


def twin_yearly_gains(ledger: LotLedger) -> dict[int, tuple[Decimal, Decimal]]:
    out: dict[int, tuple[Decimal, Decimal]] = {}
    zero = Decimal("0.00")
    for rec in ledger.realized.tolist():
        sold, p, b, d, lt = rec[5], rec[7], rec[8], rec[9], rec[10]
        y = (_EPOCH + timedelta(days=sold)).year
        gain = to_cents(p) - to_cents(b) + to_cents(d)
        st0, lt0 = out.get(y, (zero, zero))
        out[y] = (st0, lt0 + gain) if lt else (st0 + gain, lt0)
    return out


def twin_8949(ledger: LotLedger, year: int) -> tuple[list[Form8949Row], list[Form8949Row]]:
    part_i: list[Form8949Row] = []
    part_ii: list[Form8949Row] = []
    for rec in ledger.realized.tolist():
        sym, _, _, _, acquired, sold, qty, proceeds, basis, disallowed, long_term = rec
        if (_EPOCH + timedelta(days=sold)).year != year:
            continue
        p, b, a = to_cents(proceeds), to_cents(basis), to_cents(disallowed)
        name = ledger.symbols[sym]
        row = Form8949Row(
            description=f"{format(from_fixed(qty).normalize(), 'f')} sh. {name}" if qty
            else f"{name} nondividend distribution in excess of basis",
            date_acquired=_EPOCH + timedelta(days=acquired),
            date_sold=_EPOCH + timedelta(days=sold),
            proceeds=p, cost_basis=b, code="W" if disallowed > 0 else "", adjustment=a,
            gain_or_loss=p - b + a, long_term=bool(long_term),
        )
        (part_ii if long_term else part_i).append(row)
    return part_i, part_ii


def twin_8949_csv(part_i: list[Form8949Row], part_ii: list[Form8949Row]) -> str:
    records = [{"part": "I", **asdict(r)} for r in part_i] + [{"part": "II", **asdict(r)} for r in part_ii]
    columns = ["part"] + [f.name for f in fields(Form8949Row)]
    return pd.DataFrame.from_records(records, columns=columns).to_csv(index=False, lineterminator="\n")


def twin_1099(ledger: LotLedger, year: int) -> dict[str, list[Decimal]]:
    per: dict[str, list[Decimal]] = {}
    for sym, _, day, _, amount, qual in ledger.dividends.tolist():
        if (_EPOCH + timedelta(days=day)).year != year:
            continue
        acc = per.setdefault(ledger.symbols[sym], [Decimal("0.00"), Decimal("0.00")])
        acc[0] += to_cents(amount)
        acc[1] += to_cents(qual)
    return dict(sorted(per.items()))


def twin_fixed(values: list[object]) -> list[int] | str:
    out = []
    for v in values:
        try:
            d = v if type(v) is Decimal else Decimal(str(v))
            if not d.is_finite() or abs(d) >= Decimal("9.2e10"):
                raise InvalidOperation
        except (InvalidOperation, ValueError):
            return "error"
        out.append(int(d.scaleb(8).quantize(Decimal(1), rounding=ROUND_HALF_UP)))
    return out


def twin_lot_refs(ids: list[object], kinds: list[str], syms: list[str]) -> tuple[list[int], list[str]] | str:
    seen: dict[tuple[str, str], int] = {}
    ref, names = [-1] * len(ids), [""] * len(ids)
    for i, raw in enumerate(ids):
        if raw is None or (isinstance(raw, float) and np.isnan(raw)) or not str(raw).strip():
            continue
        lid = str(raw)
        if kinds[i] == "buy":
            if (syms[i], lid) in seen:
                return f"row {i} (index {i}): lot_id {lid!r} is used by an earlier buy of {syms[i]}"
            seen[(syms[i], lid)] = i
            names[i] = lid
        elif kinds[i] == "sell":
            j = seen.get((syms[i], lid))
            if j is None:
                return f"row {i} (index {i}): unknown lot_id {lid!r} for {syms[i]}"
            ref[i] = j
    return ref, names


# -- the properties ----------------------------------------------------------------------


@SETTINGS
@given(st.lists(UNITS, max_size=50))
def test_cents_equal_to_cents(units: list[int]) -> None:
    got = cents(np.array(units, dtype=np.int64))
    assert [Decimal(int(c)).scaleb(-2) for c in got] == [to_cents(u) for u in units]
    assert cents_text(got).tolist() == [str(to_cents(u)) for u in units]


@SETTINGS
@given(st.lists(st.integers(0, 2**62), max_size=50))
def test_quantity_text_equals_decimal_format(units: list[int]) -> None:
    assert quantity_text(np.array(units, dtype=np.int64)).tolist() == [
        format(from_fixed(u).normalize(), "f") for u in units
    ]


@SETTINGS
@given(histories(), st.booleans())
def test_reports_equal_row_by_row_twins(case: tuple[list[dict], str], wash: bool) -> None:
    rows, method = case
    led = match_lots(_frame(rows), method=method, wash_sales=wash)
    assert yearly_gains(led) == twin_yearly_gains(led)
    for year in {r["date"].year for r in rows}:
        form = form_8949(led, year)
        part_i, part_ii = twin_8949(led, year)
        assert list(form.part_i) == part_i and list(form.part_ii) == part_ii
        assert form.to_csv() == twin_8949_csv(part_i, part_ii)
        records = [{"part": "I", **asdict(r)} for r in part_i] + [{"part": "II", **asdict(r)} for r in part_ii]
        assert form.to_frame().to_dict("records") == records
        doc = json.loads(form.to_json())
        for part, twin_rows in (("part_i", part_i), ("part_ii", part_ii)):
            assert doc[part]["rows"] == [json.loads(json.dumps(asdict(r), default=str)) for r in twin_rows]
            total = sum((r.gain_or_loss for r in twin_rows), Decimal("0.00"))
            assert doc[part]["totals"]["gain_or_loss"] == str(total)
        div = form_1099_div(led, year)
        twin = twin_1099(led, year)
        assert [(r["symbol"], r["box_1a"], r["box_1b"]) for r in div.rows] == [(s, v[0], v[1]) for s, v in twin.items()]
        assert div.box_1a_total_ordinary_dividends == sum((v[0] for v in twin.values()), Decimal("0.00"))


@SETTINGS
@given(histories(), st.randoms(use_true_random=False))
def test_reports_of_pieces_in_any_order_and_stored_columns(case: tuple[list[dict], str], rnd) -> None:
    """A ledger assembled by hand need not hold its pieces in sale order: the rows are
    still those of the year, each part in the ledger's order; the carryovers found with
    the form equal the summary's own; the stored columns (packed, or the earlier lists)
    give the same form back."""
    rows, method = case
    led = match_lots(_frame(rows), method=method)
    order = list(range(led.realized.size))
    rnd.shuffle(order)
    led = dataclasses.replace(led, realized=led.realized[np.array(order, dtype=np.int64)])
    assert yearly_gains(led) == twin_yearly_gains(led)
    for year in {r["date"].year for r in rows} | {START_YEAR - 1}:
        form = form_8949(led, year)
        part_i, part_ii = twin_8949(led, year)
        assert list(form.part_i) == part_i and list(form.part_ii) == part_ii
        assert form.yearly_gains == yearly_gains(led)
        assert tax_summary(led, year, gains=form.yearly_gains) == tax_summary(led, year)
        assert schedule_d(led, year, form=form) == schedule_d(led, year)
        lists = {"tax_year": year, "symbols": list(form.symbols), **{k: getattr(form, k).tolist() for k in COLUMNS}}
        assert form.columns() == twin_columns(form)
        for stored in (json.loads(json.dumps(form.columns())), lists):
            back = Form8949.from_columns(stored)
            assert back.to_csv() == form.to_csv() and back.json_text() == form.json_text()
            for k in COLUMNS:
                assert getattr(back, k).dtype == getattr(form, k).dtype
                assert np.array_equal(getattr(back, k), getattr(form, k))


def twin_columns(form: Form8949) -> dict[str, object]:
    """``Form8949.columns`` as first written: a copy per column, joined, ``base64.b64encode``."""
    dtypes, chunks = {}, []
    for k in COLUMNS:
        a = getattr(form, k)
        flags = k in ("long_term", "wash_sale")
        dtypes[k] = "bits" if flags else _narrowest(a)
        chunks.append(np.packbits(a, bitorder="little").tobytes() if flags else a.astype(dtypes[k]).tobytes())
    data = base64.b64encode(b"".join(chunks)).decode("ascii")
    return {"tax_year": form.tax_year, "symbols": list(form.symbols), "rows": int(form.symbol.size),
            "dtypes": dtypes, "data": data}  # fmt: skip


@pytest.mark.parametrize("values", [[], [0], [-128, 127], [-129], [2**31], [-(2**63), 2**63 - 1]])
def test_stored_columns_keep_every_int64(values: list[int]) -> None:
    a = np.array(values, dtype=np.int64)
    n = a.size
    form = Form8949(
        2025, ("X",), np.zeros(n, np.int64), a, a, a, a, a, a, np.arange(n) % 2 == 1, np.arange(n) % 3 == 0,
    )
    assert form.columns() == twin_columns(form)
    back = Form8949.from_columns(json.loads(json.dumps(form.columns())))
    for k in COLUMNS:
        assert np.array_equal(getattr(back, k), getattr(form, k))


DECIMALS = st.decimals(min_value=Decimal("-9.19e10"), max_value=Decimal("9.19e10"), places=None, allow_nan=False)
CELLS = st.one_of(DECIMALS, st.decimals(allow_nan=True, allow_infinity=True), st.integers(-10, 10).map(Decimal))


@SETTINGS
@given(st.lists(CELLS, min_size=1, max_size=30))
def test_decimal_column_equals_one_by_one(values: list[Decimal]) -> None:
    """The Arrow path (every cell a Decimal) equals the exact conversion one value at a time."""
    df = pd.DataFrame({"x": pd.Series(values, dtype=object)})
    want = twin_fixed(values)
    if want == "error":
        with pytest.raises(ValueError, match="x must be a finite number"):
            _fixed_column(df, "x")
    else:
        assert _fixed_column(df, "x").tolist() == want
        small = [v for v in values if v == v.quantize(Decimal("1e-8")) and abs(v) < Decimal("1e29")]
        arrow = pd.DataFrame({"x": pd.array(small, dtype=pd.ArrowDtype(pa.decimal128(38, 8)))})
        assert _fixed_column(arrow, "x").tolist() == twin_fixed(small)


def _lot_id_frame(syms: list[str], kinds: list[str], column: object) -> pd.DataFrame:
    n = len(syms)
    return pd.DataFrame({
        "symbol": syms, "date": ["2025-01-02"] * n, "type": kinds, "quantity": [1] * n, "price": [1] * n,
        "lot_id": column,
    })


def _check_lot_ids(df: pd.DataFrame, want: tuple[list[int], list[str]] | str) -> None:
    if isinstance(want, str):
        with pytest.raises(ValueError) as err:
            encode(df, "specific", None)
        assert str(err.value) == want
    else:
        enc = encode(df, "specific", None)
        assert (enc.lot_ref.tolist(), list(enc.lot_names)) == want


LOT_IDS = st.one_of(st.none(), st.just(float("nan")), st.sampled_from(["1", "2", " 2", "", "  ", "x"]), st.integers(0, 3))


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(["A", "B"]), st.sampled_from(["buy", "sell"]), LOT_IDS), min_size=1, max_size=12))
def test_lot_ids_equal_one_at_a_time(cells: list[tuple[str, str, object]]) -> None:
    """``lot_id`` resolved for all rows at once equals the loop over the rows."""
    syms, kinds, ids = (list(x) for x in zip(*cells, strict=True))
    _check_lot_ids(_lot_id_frame(syms, kinds, pd.Series(ids, dtype=object)), twin_lot_refs(ids, kinds, syms))


TEXT_IDS = st.one_of(st.none(), st.sampled_from(["1", "2", " 2", "", "  ", "x", "\x1c", " \u00a0", "é"]))
INT_IDS = st.one_of(st.none(), st.integers(-2, 3), st.sampled_from([-(2**63), 2**63 - 1]))


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(["A", "B"]), st.sampled_from(["buy", "sell"]), TEXT_IDS), min_size=1, max_size=12))
def test_lot_ids_as_arrow_text_equal_one_at_a_time(cells: list[tuple[str, str, str | None]]) -> None:
    """An Arrow string ``lot_id`` column (read in Arrow) resolves as the loop over the rows,
    blank names by Python's ``str.strip``."""
    syms, kinds, ids = (list(x) for x in zip(*cells, strict=True))
    want = twin_lot_refs(ids, kinds, syms)
    for dtype in (pd.ArrowDtype(pa.string()), pd.ArrowDtype(pa.large_string()), pd.StringDtype("pyarrow")):
        _check_lot_ids(_lot_id_frame(syms, kinds, pd.array(ids, dtype=dtype)), want)


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(["A", "B"]), st.sampled_from(["buy", "sell"]), INT_IDS), min_size=1, max_size=12))
def test_lot_ids_as_integers_equal_one_at_a_time(cells: list[tuple[str, str, int | None]]) -> None:
    """An integer ``lot_id`` column (Arrow, nullable or NumPy) resolves as the loop over the
    rows: a lot is named by the integer's text."""
    syms, kinds, ids = (list(x) for x in zip(*cells, strict=True))
    want = twin_lot_refs(ids, kinds, syms)
    columns = [pd.array(ids, dtype=pd.ArrowDtype(pa.int64())), pd.array(ids, dtype="Int64")]
    if None not in ids:
        columns.append(np.array(ids, dtype=np.int64))
    for column in columns:
        _check_lot_ids(_lot_id_frame(syms, kinds, column), want)


@pytest.mark.parametrize("symbol", ['A,B', 'Q"X', "É", "back\\slash", "tab\there", "new\nline", "plain"])
def test_symbols_csv_and_json_must_escape(symbol: str) -> None:
    tx = pd.DataFrame({
        "symbol": [symbol, symbol, "Z", "Z"], "date": ["2024-01-02", "2025-03-03", "2025-01-02", "2025-02-03"],
        "type": ["buy", "sell", "buy", "sell"], "quantity": [1.5, 1.5, 2, 2], "price": [10, 12, 5, 4],
    })
    led = match_lots(tx)
    form = form_8949(led, 2025)
    part_i, part_ii = twin_8949(led, 2025)
    assert form.to_csv() == twin_8949_csv(part_i, part_ii)
    doc = json.loads(form.to_json())
    assert [r["description"] for r in doc["part_i"]["rows"] + doc["part_ii"]["rows"]] == [
        r.description for r in part_i + part_ii
    ]
