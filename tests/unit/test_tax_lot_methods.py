"""Per-symbol lot methods in ``match_lots(method={symbol: method})`` and ``specific`` sells
without a lot id.

Oracles: hand-worked examples (the numbers of Pub 550, Wash Sales, Example 1), the
plain-Python Decimal reference (tests/reference), and ``match_lots`` itself run
with one method on a part of the table.
"""

from __future__ import annotations

import datetime as dt
import sys
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from quantcore.tax import LotLedger, match_lots
from quantcore.tax.lots import from_fixed

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reference"))
from tax_reference import RefLedger, reference_match_lots

METHODS = ["fifo", "lifo", "hifo", "specific", "average"]
START = dt.date(2023, 12, 1)
QTY = st.integers(1, 5_000_000_000).map(lambda n: Decimal(n).scaleb(-8))  # up to 50 shares, 8 decimals
PRICE = st.integers(1, 50_000_000).map(lambda n: Decimal(n).scaleb(-6))  # up to $50, 6 decimals
FEE = st.sampled_from([Decimal(0), Decimal(0), Decimal("0.99"), Decimal("0.005")])
NO_LOT = st.sampled_from([None, "", "  "])  # a sell that names no lot: missing or blank


# -- hand-worked examples ---------------------------------------------------------------


def _accounts(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["symbol", "date", "type", "quantity", "price"])


#: two accounts holding X, namespaced as the service does ("<portfolio id>:<symbol>")
SAME_X = {"1:X": "X", "2:X": "X"}
CROSS_ACCOUNT = [
    ("2:X", "2024-11-01", "buy", 100, 9.00),  # $900, more than 30 days before the sale
    ("1:X", "2025-01-06", "buy", 100, 10.00),  # Pub 550 Example 1: 100 shares for $1,000
    ("1:X", "2025-01-20", "buy", 100, 12.00),  # $1,200, 42 days before the sale
    ("1:X", "2025-03-03", "sell", 100, 7.50),  # sold for $750: FIFO relieves the $1,000 lot
    ("2:X", "2025-03-20", "buy", 100, 8.00),  # 17 days later, $800, in the other account
    ("2:X", "2025-04-01", "sell", 100, 11.00),  # $1,100
]


def test_fifo_loss_washed_by_a_purchase_in_a_hifo_account() -> None:
    """Pub 550, Wash Sales, Example 1 across two accounts: 100 shares bought for $1,000 and
    sold for $750 in a FIFO account, 100 shares bought 17 days later for $800 in a HIFO
    account: the $250 loss is disallowed and the new shares' basis is $1,050 ($10.50 a
    share), their holding period starting 56 days (Jan 6 to Mar 3) before Mar 20, i.e. on
    Jan 23. The HIFO account's sale then relieves that $10.50 lot before its $9.00 lot:
    gain 1,100 - 1,050 = $50, short-term. The FIFO account keeps its $1,200 lot."""
    ledger = match_lots(_accounts(CROSS_ACCOUNT), method={"1:X": "fifo", "2:X": "hifo"}, substantially_identical=SAME_X)
    r = ledger.realized_frame()
    assert list(zip(r["symbol"], r["proceeds"], r["basis"], r["disallowed"], r["gain"], strict=True)) == [
        ("1:X", 750.0, 1000.0, 250.0, 0.0),
        ("2:X", 1100.0, 1050.0, 0.0, 50.0),
    ]
    assert r["acquired"][1] == pd.Timestamp("2025-01-23") and not r["long_term"][1]
    o = ledger.open_lots_frame()
    assert list(zip(o["symbol"], o["quantity"], o["basis"], strict=True)) == [("1:X", 100.0, 1200.0), ("2:X", 100.0, 900.0)]
    assert (ledger.method, ledger.symbol_methods) == ("fifo+hifo", ("fifo", "hifo"))
    # matched account by account (what one call per method did), the wash sale is missed
    alone = match_lots(_accounts(CROSS_ACCOUNT[1:4]))
    assert alone.realized["disallowed"][0] == 0


def test_loss_washed_into_an_average_cost_account_enters_its_pool() -> None:
    """The same sale washed by the same purchase in an average-cost account: its pool holds
    100 shares for $900 and 100 for $800 + $250 = $1,050, i.e. $1,950 for 200 shares; the
    sale of 100 takes half, $975 (gain 1,100 - 975 = $125), and the 100 left keep $975."""
    ledger = match_lots(_accounts(CROSS_ACCOUNT), method={"1:X": "fifo", "2:X": "average"}, substantially_identical=SAME_X)
    r = ledger.realized_frame()
    assert list(zip(r["symbol"], r["basis"], r["disallowed"], r["gain"], strict=True)) == [
        ("1:X", 1000.0, 250.0, 0.0),
        ("2:X", 975.0, 0.0, 125.0),
    ]
    assert list(ledger.open_lots_frame()["basis"]) == [1200.0, 975.0]


def test_unlisted_symbols_use_fifo_and_unknown_methods_name_the_symbol() -> None:
    """Symbol Y is not in the mapping: its sale relieves the first lot ($10), while X (lifo)
    relieves its last ($20)."""
    tx = _accounts([
        ("X", "2025-01-02", "buy", 10, 10.0), ("Y", "2025-01-02", "buy", 10, 10.0),
        ("X", "2025-01-03", "buy", 10, 20.0), ("Y", "2025-01-03", "buy", 10, 20.0),
        ("X", "2025-02-03", "sell", 10, 25.0), ("Y", "2025-02-03", "sell", 10, 25.0),
    ])
    ledger = match_lots(tx, method={"X": "lifo"})
    assert list(ledger.realized_frame()["basis"]) == [200.0, 100.0]
    assert (ledger.method, ledger.symbol_methods) == ("fifo+lifo", ("lifo", "fifo"))
    assert match_lots(tx, method={}).method == "fifo"
    with pytest.raises(ValueError, match=r"method for symbol 'Y' must be one of"):
        match_lots(tx, method={"X": "lifo", "Y": "FIFO"})


@pytest.mark.parametrize("no_lot", [None, "", "  ", np.nan])
def test_specific_sell_without_lot_id_relieves_fifo(no_lot: object) -> None:
    """Treas. Reg. 1.1012-1(c)(1): shares sold without adequate identification are the
    earliest acquired. The second sale names lot "c"; the first names none and takes the
    first-in lot "a" ($10); "a" is then exhausted, so naming it again is an error."""
    tx = _accounts([
        ("A", "2024-01-02", "buy", 10, 10.0),
        ("A", "2024-01-03", "buy", 10, 30.0),
        ("A", "2024-01-04", "buy", 10, 20.0),
        ("A", "2025-03-03", "sell", 10, 25.0),
        ("A", "2025-03-04", "sell", 5, 25.0),
    ]).assign(lot_id=["a", "b", "c", no_lot, "c"])
    ledger = match_lots(tx, method="specific")
    r = ledger.realized_frame()
    assert list(zip(r["lot"], r["quantity"], r["basis"], strict=True)) == [("a", 10.0, 100.0), ("c", 5.0, 100.0)]
    assert list(ledger.open_lots_frame()["lot"]) == ["b", "c"]
    again = pd.concat([tx, tx.iloc[[4]].assign(lot_id="a")], ignore_index=True)
    with pytest.raises(ValueError, match=r"row 5 .*lot_id 'a' holds fewer shares than sold"):
        match_lots(again, method="specific")
    with pytest.raises(ValueError, match=r"row 4 .*unknown lot_id 'z' for A"):
        match_lots(tx.assign(lot_id=["a", "b", "c", no_lot, "z"]), method="specific")


def test_blank_lot_ids_name_no_lot() -> None:
    """A blank ``lot_id`` is no lot id: two blank buys do not clash, and their lots are
    labelled by row."""
    tx = _accounts([("A", "2024-01-02", "buy", 10, 10.0), ("A", "2024-01-03", "buy", 10, 30.0)]).assign(lot_id=["", " "])
    assert list(match_lots(tx, method="specific").open_lots_frame()["lot"]) == ["row 0", "row 1"]


# -- generated histories ----------------------------------------------------------------


@st.composite
def histories(draw: st.DrawFn, symbols: tuple[str, ...]) -> list[dict]:
    """Buys, partial sells and dividends over ``symbols``, with gaps straddling the
    30/31-day wash-sale boundary. Each sell has a ``lot`` (the buy row it names, kept valid
    by tracking what FIFO relief took) or none; the lot is read only for ``specific``
    symbols, so the same history serves every method."""
    n = draw(st.integers(1, 30))
    day = START
    open_buys: dict[str, list[list]] = {s: [] for s in symbols}  # [row, shares left], in purchase order
    rows: list[dict] = []
    for i in range(n):
        day += dt.timedelta(days=draw(st.sampled_from([0, 1, 3, 10, 29, 30, 31, 45, 366])))
        sym = draw(st.sampled_from(symbols))
        kind = draw(st.sampled_from(["buy", "buy", "sell", "sell", "dividend"]))
        held = [b for b in open_buys[sym] if b[1] > 0]
        fees = draw(FEE)
        if kind == "sell" and held:
            if draw(st.booleans()):
                pick = draw(st.sampled_from(held))
                qty = min(pick[1], draw(QTY))
                pick[1] -= qty
                lot: int | None = pick[0]
            else:  # names no lot: the earliest shares go first
                qty = min(sum((b[1] for b in held), Decimal(0)), draw(QTY))
                left = qty
                for b in held:
                    t = min(left, b[1])
                    b[1] -= t
                    left -= t
                lot = None
            rows.append({"symbol": sym, "date": day, "type": "sell", "quantity": qty, "price": draw(PRICE),
                         "fees": fees, "lot": lot, "no_lot": draw(NO_LOT)})
        elif kind == "dividend":
            shares = sum((b[1] for b in held), Decimal(0))
            rows.append({"symbol": sym, "date": day, "type": "dividend", "quantity": max(shares, Decimal(1)),
                         "price": Decimal("0.37"), "fees": Decimal(0)})
        else:
            qty = draw(QTY)
            open_buys[sym].append([i, qty])
            rows.append({"symbol": sym, "date": day, "type": "buy", "quantity": qty, "price": draw(PRICE), "fees": fees, "id": i})
    return rows


def _frame(rows: list[dict]) -> pd.DataFrame:
    def lot_id(r: dict) -> object:  # a buy's lot id is its row in the whole history
        if r["type"] == "buy":
            return f"L{r['id']}"
        if r["type"] == "sell":
            return f"L{r['lot']}" if r["lot"] is not None else r["no_lot"]
        return None

    return pd.DataFrame(
        {
            "symbol": [r["symbol"] for r in rows],
            "date": [pd.Timestamp(r["date"]) for r in rows],
            "type": [r["type"] for r in rows],
            "quantity": pd.Series([r["quantity"] for r in rows], dtype=object),
            "price": pd.Series([r["price"] for r in rows], dtype=object),
            "fees": pd.Series([r["fees"] for r in rows], dtype=object),
            "lot_id": pd.Series([lot_id(r) for r in rows], dtype=object),
        }
    )


def _records(led: LotLedger, rows_of: list[int] | None = None) -> tuple[list[tuple], list[tuple], list[tuple]]:
    """Realized pieces, open lots and dividends with symbol names and (mapped) row numbers."""
    row = (lambda x: int(x)) if rows_of is None else (lambda x: rows_of[int(x)])
    realized = [
        (led.symbols[r["symbol"]], row(r["lot"]), row(r["row"]), int(r["acquired"]), from_fixed(r["quantity"]),
         from_fixed(r["proceeds"]), from_fixed(r["basis"]), from_fixed(r["disallowed"]), bool(r["long_term"]))
        for r in led.realized
    ]
    lots = [
        (led.symbols[o["symbol"]], row(o["lot"]), int(o["acquired"]), from_fixed(o["quantity"]), from_fixed(o["basis"]),
         bool(o["replacement"]))
        for o in led.open_lots
    ]
    divs = [(row(d["row"]), from_fixed(d["amount"]), from_fixed(d["qualified"])) for d in led.dividends]
    return realized, lots, divs


def _day(d: dt.date) -> int:
    return (d - dt.date(1970, 1, 1)).days


def _reference_records(ref: RefLedger) -> tuple[list[tuple], list[tuple], list[tuple]]:
    realized = [
        (p["symbol"], p["lot"], p["row"], _day(p["acquired"]), p["quantity"], p["proceeds"], p["basis"],
         p["disallowed"], p["long_term"])
        for p in ref.realized
    ]
    lots = [(x.symbol, x.origin, _day(x.acquired), x.qty, x.basis, x.used) for x in ref.open_lots]
    divs = [(d["row"], d["amount"], d["qualified"]) for d in ref.dividends]
    return realized, lots, divs


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    histories(("A", "B", "C")),
    st.sampled_from(METHODS),
    st.sampled_from(METHODS),
    st.sampled_from(METHODS),
    st.booleans(),
)
def test_mapping_equals_each_method_on_its_own_rows(rows: list[dict], m_ab: str, m_c: str, m_d: str, grouped: bool) -> None:
    """No wash sale crosses the units {A, B} (one method, A and B maybe substantially
    identical) and {C}: the mapping's ledger is the union of the units matched alone with
    their one method (row numbers mapped back). ``m_d`` is the method of a symbol that
    does not trade: listing it changes nothing."""
    groups = {"A": "AB", "B": "AB"} if grouped else None
    full = match_lots(_frame(rows), method={"A": m_ab, "B": m_ab, "C": m_c, "D": m_d}, substantially_identical=groups)
    got = _records(full)
    want: tuple[list[tuple], list[tuple], list[tuple]] = ([], [], [])
    for unit, m in (({"A", "B"}, m_ab), ({"C"}, m_c)):
        idx = [i for i, r in enumerate(rows) if r["symbol"] in unit]
        if not idx:
            continue
        part = match_lots(_frame([rows[i] for i in idx]), method=m, substantially_identical=groups)
        for acc, recs in zip(want, _records(part, idx), strict=True):
            acc.extend(recs)
    # merge the units as match_lots orders them: pieces by sell row, lots by symbol, dividends by row
    assert got[0] == sorted(want[0], key=lambda p: p[2])
    assert got[1] == sorted(want[1], key=lambda x: x[0])
    assert got[2] == sorted(want[2], key=lambda d: d[0])
    event(f"wash sales: {any(p[7] > 0 for p in got[0])}")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    histories(("A", "B", "C")),
    st.permutations(METHODS),
    st.sampled_from([*METHODS, None]),
    st.booleans(),
    st.booleans(),
)
def test_mapping_equals_reference_when_wash_sales_cross_methods(
    rows: list[dict], perm: list[str], m_c: str | None, wash: bool, abc: bool
) -> None:
    """A and B (and C when ``abc``) are substantially identical; A and B have different
    methods, C any or none (fifo), so a loss in one is washed by purchases of another:
    kernel == Decimal reference at the 1e-8 unit."""
    methods = {"A": perm[0], "B": perm[1], **({"C": m_c} if m_c else {})}
    groups = {"A": "G", "B": "G", **({"C": "G"} if abc else {})}
    led = match_lots(_frame(rows), method=methods, wash_sales=wash, substantially_identical=groups)
    ref = reference_match_lots(rows, method=methods, wash=wash, groups=groups)
    assert _records(led) == _reference_records(ref)
    washed = {methods.get(led.symbols[r["symbol"]], "fifo") for r in led.realized if r["disallowed"] > 0}
    replaced = {methods.get(led.symbols[o["symbol"]], "fifo") for o in led.open_lots if o["replacement"]}
    event(f"washed loss and replacement lot of different methods: {any(a != b for a in washed for b in replaced)}")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(("A", "B")), st.booleans())
def test_specific_without_lot_ids_is_fifo(rows: list[dict], grouped: bool) -> None:
    """No sell names a lot (lot_id missing or blank): ``specific`` relieves like ``fifo``."""
    for r in rows:
        r["lot"] = None
    groups = {"A": "AB", "B": "AB"} if grouped else None
    df = _frame(rows)
    spec = match_lots(df, method="specific", substantially_identical=groups)
    fifo = match_lots(df, method="fifo", substantially_identical=groups)
    assert _records(spec) == _records(fifo)
    assert _records(match_lots(df.drop(columns="lot_id"), method="specific", substantially_identical=groups)) == _records(fifo)
    assert (spec.method, fifo.method) == ("specific", "fifo")


def test_only_keeps_one_accounts_records_with_the_whole_ledgers_wash_sales() -> None:
    """``LotLedger.only``: one account cut from a ledger matched over all accounts.

    Account 1 sells at a loss; account 2 buys the same stock 10 days later (Pub 550,
    "Wash Sales": purchases in any account count). Account 1 alone shows the loss;
    cut from the joint ledger it shows the loss disallowed, and keeps every buy.
    """
    t = pd.DataFrame(
        {
            "symbol": ["1:X", "1:X", "2:X", "2:Y"],
            "date": ["2025-01-06", "2025-06-02", "2025-06-12", "2025-06-13"],
            "type": ["buy", "sell", "buy", "buy"],
            "quantity": [100, 100, 100, 5],
            "price": [30, 25, 26, 10],
        }
    )
    same = {"1:X": "X", "2:X": "X", "2:Y": "Y"}
    alone = match_lots(t[t["symbol"].str.startswith("1:")], substantially_identical=same)
    joint = match_lots(t, substantially_identical=same)
    cut = joint.only({"1:X"})
    assert alone.realized_frame()["gain"].tolist() == [-500.0]
    assert cut.realized_frame()["gain"].tolist() == [0.0]
    assert cut.realized_frame()["disallowed"].tolist() == [500.0]
    assert cut.open_lots.size == 0 and cut.dividends.size == 0
    assert np.array_equal(cut.buys, joint.buys) and cut.symbols == joint.symbols
    assert set(joint.only({"2:X", "2:Y"}).open_lots_frame()["symbol"]) == {"2:X", "2:Y"}
    assert joint.only({"nope"}).realized.size == 0
    every = joint.only(set(joint.symbols))  # all of them: the records themselves, not a copy
    assert every.realized is joint.realized and every.open_lots is joint.open_lots
    for wanted in ({"1:X"}, {"2:X", "2:Y"}, {"2:Y"}, set()):
        codes = [k for k, s in enumerate(joint.symbols) if s in wanted]
        cut = joint.only(wanted)
        for name in ("open_lots", "realized", "dividends"):
            records = getattr(joint, name)
            assert np.array_equal(getattr(cut, name), records[np.isin(records["symbol"], codes)])
