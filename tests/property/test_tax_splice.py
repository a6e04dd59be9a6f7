"""``quantcore.tax.splice.splice_ledger`` equals a fresh ``match_lots`` of the changed table.

Random ledgers of two accounts (``"1:A"`` and ``"2:A"`` are substantially identical, so
wash sales cross accounts), every lot method, named lots, dividends, splits, returns of
capital and a spin-off; then one change (a row created, deleted or edited: any symbol,
date, type or amount). The splice re-matches only the processing groups the change
touches and must give the full match record for record: every realized piece (so every
8949 row and wash-sale adjustment), open lot, dividend, buy, lot name, and the encoded
rows that ``LotLedger.as_of`` relieves again.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from quantcore._kernels.tax_reports import cents_nb
from quantcore._records import realized_dt
from quantcore._validation import read_only
from quantcore.tax import form_8949, match_lots
from quantcore.tax.dividends import year_bounds
from quantcore.tax.lots import LedgerError
from quantcore.tax.rates import yearly_gains
from quantcore.tax.reports import _form_rows
from quantcore.tax.splice import _in_sell_order, grouped, splice_ledger

SYMBOLS = ["1:A", "2:A", "1:B", "2:B", "1:C"]
BARE = {s: s.split(":")[1] for s in SYMBOLS}
COLUMNS = ["symbol", "date", "type", "quantity", "price", "fees", "lot_id", "ratio", "target_symbol",
           "basis_allocation", "cash"]  # fmt: skip
START = dt.date(2024, 1, 2)


@st.composite
def rows_(
    draw: st.DrawFn, next_id: int, day: dt.date, held: dict[str, Decimal] | None = None
) -> dict[str, Any]:
    """One transaction row (its ``id`` is ``next_id``) on ``day``; with ``held`` (shares per
    symbol, updated), one that relieves: sells and actions only of held shares."""
    kind = draw(
        st.sampled_from(
            ["buy"] * 6 + ["sell"] * 4 + ["dividend", "split", "return_of_capital", "spin_off"]
        )
    )
    sym = "1:B" if kind == "spin_off" else draw(st.sampled_from(SYMBOLS))
    h = held.get(sym, Decimal(0)) if held is not None else Decimal(1)
    if kind != "buy" and h <= 0:
        kind = "buy"
    row: dict[str, Any] = {"id": next_id, "symbol": sym, "type": kind, "date": day}
    price = Decimal(draw(st.integers(100, 9_000))).scaleb(-2)
    if kind == "buy":
        q = Decimal(draw(st.integers(5, 40)))
        row.update(
            quantity=q,
            price=price,
            fees=Decimal(draw(st.sampled_from([0, 1]))),
            lot_id=str(next_id),
        )
        h += q
    elif kind == "sell":
        q = min(Decimal(draw(st.integers(1, 30))), h)
        row.update(quantity=q, price=price, fees=Decimal(0))
        h -= q
    elif kind == "dividend":
        row.update(
            quantity=Decimal(draw(st.integers(1, 10))), price=Decimal("0.25"), fees=Decimal(0)
        )
    elif kind == "split":
        ratio = draw(st.sampled_from([Decimal(2), Decimal(3)]))
        row.update(ratio=ratio, fees=Decimal(0))
        h *= ratio
    elif kind == "return_of_capital":
        row.update(price=Decimal("0.10"), fees=Decimal(0))
    else:
        row.update(
            ratio=Decimal("0.5"),
            target_symbol="1:C",
            basis_allocation=Decimal("0.2"),
            fees=Decimal(0),
        )
        if held is not None:
            held["1:C"] = held.get("1:C", Decimal(0)) + h / 2
    if held is not None:
        held[sym] = h
    return row


@st.composite
def cases(
    draw: st.DrawFn,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, str], set[int]]:
    """A ledger that relieves, the ledger after one change (any row, any day: it may not
    relieve), each symbol's method, the ids changed."""
    n = draw(st.integers(3, 40))
    held: dict[str, Decimal] = {}
    rows, day = [], START
    for i in range(n):
        day += dt.timedelta(days=draw(st.integers(0, 6)))
        rows.append(draw(rows_(i, day, held)))
    methods = {
        s: draw(st.sampled_from(["fifo", "lifo", "hifo", "specific", "average"])) for s in SYMBOLS
    }
    what = draw(st.sampled_from(["create", "delete", "edit"]))
    at = draw(st.integers(0, n - 1))
    any_day = START + dt.timedelta(days=draw(st.integers(0, 6 * n)))
    if what == "create":
        new = [*rows, draw(rows_(n, any_day))]
        changed = {n}
    elif what == "delete":
        new = rows[:at] + rows[at + 1 :]
        changed = {rows[at]["id"]}
    else:
        edited = draw(rows_(rows[at]["id"], any_day))
        if draw(st.booleans()):  # often the same type and symbol, another date or amount
            edited.update(type=rows[at]["type"], symbol=rows[at]["symbol"])
            for k in (
                "quantity",
                "price",
                "ratio",
                "target_symbol",
                "basis_allocation",
                "lot_id",
                "fees",
            ):
                edited.setdefault(k, rows[at].get(k))
        new = [*rows[:at], edited, *rows[at + 1 :]]
        changed = {rows[at]["id"]}
    return rows, new, methods, changed


def _sorted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        rows, key=lambda r: (r["date"], r["id"])
    )  # the ledger's order: by date, then fixed


def _table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame([{c: r.get(c) for c in COLUMNS} for r in rows], columns=COLUMNS)


def _match(rows: list[dict[str, Any]], methods: dict[str, str]) -> Any:
    return match_lots(_table(rows), method=methods, substantially_identical=BARE)  # type: ignore[arg-type]


def _grouped(rows: list[dict[str, Any]], methods: dict[str, str]) -> Any:
    return grouped(_table(rows), method=methods, substantially_identical=BARE)  # type: ignore[arg-type]


def _same(a: Any, b: Any) -> None:
    for f in ("symbols", "method", "lot_names", "symbol_methods"):
        assert getattr(a, f) == getattr(b, f), f
    for f in ("open_lots", "realized", "dividends", "buys", "groups"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    ea, eb = a.source.encoded, b.source.encoded
    for f in ("sym", "day", "kind", "qty", "price", "fee", "ex_day", "lot_ref", "ratio", "cash", "alloc",
              "target", "links", "groups"):  # fmt: skip
        assert np.array_equal(getattr(ea, f), getattr(eb, f)), f
    assert ea.lot_names == eb.lot_names and a.source.n_rows == b.source.n_rows


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(cases())
def test_splice_equals_a_full_match_after_any_change(case: Any) -> None:
    rows, new, methods, changed = case
    rows, new = _sorted(rows), _sorted(new)
    old = _grouped(rows, methods)
    _same(old.whole(), _match(rows, methods))  # laid out by group by the match: the same pieces
    try:
        full = _match(new, methods)
    except (LedgerError, ValueError):
        assume(False)  # the change sells more than held: no ledger to splice
        return
    touched = {
        r[k]
        for r in (*rows, *new)
        if r["id"] in changed
        for k in ("symbol", "target_symbol")
        if r.get(k)
    }
    links = old.ledger.source.encoded.links
    index = {s: k for k, s in enumerate(old.ledger.symbols)}
    codes = [index[s] for s in touched if s in index]
    replaced = {old.ledger.symbols[k] for k in np.flatnonzero(np.isin(links, links[codes])).tolist()}
    replaced |= touched - index.keys()
    part_at = [i for i, r in enumerate(new) if r["symbol"] in replaced]
    new_at = {r["id"]: i for i, r in enumerate(new)}
    old_to_new = np.array(
        [-1 if r["symbol"] in replaced else new_at[r["id"]] for r in rows], np.int64
    )
    part = _match([new[i] for i in part_at], methods)
    linking = any(r["type"] == "spin_off" for r in (*rows, *new) if r["id"] in changed)
    try:
        spliced = splice_ledger(old, part, replaced, old_to_new, np.array(part_at, np.int64))
    except ValueError:
        # only when a symbol appears or vanishes, or a spin-off (the groups' links) changed
        assert linking or old.ledger.symbols != full.symbols
        event("refused")
        return
    event("spliced")
    _same(spliced.whole(), full)
    moved = set(links[[index[s] for s in replaced if s in index]].tolist())
    for g, piece in enumerate(spliced.parts):  # the groups not replaced: shared, not copied
        assert (piece is old.parts[g]) == (g not in moved)
    account = {"1:A", "1:B", "1:C"}  # one account's part: groups shared with the other cut
    for year in (2024, 2025):  # one year's sales, as Form 8949 reads them
        first, last = year_bounds(year)
        sold = full.realized[(full.realized["sold"] >= first) & (full.realized["sold"] <= last)]
        assert np.array_equal(spliced.year(year).realized, sold)
        _same_form(form_8949(spliced, year), form_8949(full, year))  # from the parts' slices
        _same_form(form_8949(spliced.only(account), year), form_8949(full.only(account), year))
    assert spliced.yearly_gains() == yearly_gains(full)
    _same(spliced.only(account).whole(), full.only(account))
    assert spliced.only(account).yearly_gains() == yearly_gains(full.only(account))
    day = START + dt.timedelta(
        days=75
    )  # and the ledger up to a date, relieved again from the splice
    _same(spliced.whole().as_of(day), full.as_of(day))


def _same_form(a: Any, b: Any) -> None:
    assert a.tax_year == b.tax_year and a.symbols == b.symbols and a.yearly_gains == b.yearly_gains
    for k in ("symbol", "quantity", "acquired", "sold", "proceeds", "cost_basis", "adjustment", "long_term",
              "wash_sale"):  # fmt: skip
        assert getattr(a, k).dtype == getattr(b, k).dtype and np.array_equal(getattr(a, k), getattr(b, k)), k


def test_splice_refuses_what_it_cannot_describe() -> None:
    rows = _sorted([
        {"id": 0, "symbol": "1:A", "type": "buy", "date": START, "quantity": Decimal(10), "price": Decimal(5)},
        {"id": 1, "symbol": "1:B", "type": "buy", "date": START, "quantity": Decimal(10), "price": Decimal(5)},
        {"id": 2, "symbol": "1:A", "type": "sell", "date": START + dt.timedelta(days=3), "quantity": Decimal(2),
         "price": Decimal(4)},
    ])  # fmt: skip
    methods = dict.fromkeys(SYMBOLS, "fifo")
    whole = _match(rows, methods)
    old = _grouped(rows, methods)
    part = _match([rows[0], rows[2]], methods)
    with pytest.raises(ValueError, match="replaced"):  # the part's symbols are not those replaced
        splice_ledger(old, part, {"1:A", "1:B"}, np.array([-1, -1, -1]), np.array([0, 2]))
    with pytest.raises(ValueError, match="dropped"):  # a kept row mapped away
        splice_ledger(old, part, {"1:A"}, np.array([-1, -1, -1]), np.array([0, 2]))
    with pytest.raises(ValueError, match="one new table"):  # two rows on one place
        splice_ledger(old, part, {"1:A"}, np.array([-1, 0, -1]), np.array([0, 2]))
    spliced = splice_ledger(old, part, {"1:A"}, np.array([-1, 1, -1]), np.array([0, 2]))
    _same(spliced.whole(), whole)


def _sell_order_twin(chosen: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """The plain computation: the slices concatenated, row and lot renumbered to the table's
    rows, a stable sort by row."""
    out = np.concatenate([p for p, _ in chosen]).copy()
    at = 0
    for p, rows in chosen:
        for c in (ROW, LOT):
            col = out[at : at + p.shape[0], c]
            col[:] = np.where(col >= 0, rows[np.maximum(col, 0)], col)
        at += p.shape[0]
    return out[np.argsort(out[:, ROW], kind="stable")].view(realized_dt)[:, 0]


ROW, LOT, LONG = ((realized_dt.names or ()).index(f) for f in ("row", "lot", "long_term"))


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_sales_placed_in_sell_order_as_the_plain_sort(data: st.DataObject) -> None:
    """``GroupedLedger.sales``' counting placement equals concatenating, renumbering and a
    stable sort by row, on random groups: a sell's pieces (one to three) all of its group;
    and Form 8949 placed from the same slices equals the form of those sorted pieces."""
    n = data.draw(st.integers(1, 60))
    group = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), np.int64)
    chosen = []
    for g in range(4):
        rows = np.flatnonzero(group == g).astype(np.int64)
        if not rows.size:
            continue
        sells = sorted(data.draw(st.sets(st.integers(0, rows.size - 1), max_size=rows.size)))
        pieces = []
        for s in sells:
            for _ in range(data.draw(st.integers(1, 3))):
                rec = data.draw(st.lists(st.integers(-(10**9), 10**9), min_size=11, max_size=11))
                rec[LONG] = data.draw(st.integers(0, 1))
                rec[ROW] = s
                rec[LOT] = data.draw(st.integers(-1, rows.size - 1))
                pieces.append(rec)
        if pieces:
            chosen.append((read_only(np.array(pieces, np.int64)), read_only(rows)))
    got = _in_sell_order(chosen)
    want = _sell_order_twin(chosen) if chosen else np.empty(0, realized_dt)
    assert got.dtype == realized_dt and np.array_equal(got, want)
    # Form 8949 placed from the same slices: short-term rows, then long-term, in sell order
    lt = want["long_term"] != 0
    at = np.concatenate([np.flatnonzero(~lt), np.flatnonzero(lt)])
    r = want[at]
    twin = (r["symbol"], r["quantity"], r["acquired"], r["sold"], cents_nb(read_only(r["proceeds"])),
            cents_nb(read_only(r["basis"])), cents_nb(read_only(r["disallowed"])), lt[at], r["disallowed"] > 0)  # fmt: skip
    for a, b in zip(_form_rows(chosen), twin, strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b)


def test_sales_out_of_sell_order_raise() -> None:
    rows = read_only(np.arange(4, dtype=np.int64))
    a = np.zeros((2, 11), np.int64)
    a[:, ROW] = [3, 0]  # the first and last pieces bound the rows wrongly
    b = np.zeros((1, 11), np.int64)
    b[:, ROW] = [2]
    with pytest.raises(ValueError, match="sell order"):
        _in_sell_order([(read_only(a), rows), (read_only(b), rows)])
