"""The ledger as columns (``service.ledger``): exact amounts, ledger order, and the
derivations against plain-``Decimal`` twins on generated ledgers of a few hundred rows
(every row type, corporate actions, two currencies, two portfolios)."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections import defaultdict
from decimal import ROUND_FLOOR, Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.ledger import derived
from service.ledger.cache import DerivationCache
from service.ledger.checks import ledger_key
from service.ledger.columns import build, patched
from service.ledger.fixed import LO, Fixed, parse, sort_keys

Q8 = Decimal("1e-8")
amounts = st.decimals(min_value=0, max_value=Decimal("1e20") - Q8, places=8, allow_nan=False)


@given(st.lists(st.one_of(st.none(), amounts, amounts.map(lambda d: -d)), max_size=60))
def test_parse_is_exact_and_orders_like_the_values(values: list[Decimal | None]) -> None:
    text = [None if v is None else format(v.quantize(Q8), "f") for v in values]
    fixed = parse(text)
    assert fixed.to_decimal() == [None if v is None else v.quantize(Q8) for v in values]
    assert ((fixed.lo >= 0) & (fixed.lo < LO)).all()
    some = [i for i, v in enumerate(values) if v is not None]
    order = np.lexsort(sort_keys(fixed.take(np.array(some, np.intp))))
    ranked = [values[some[i]] for i in order.tolist()]
    assert ranked == sorted(ranked)  # type: ignore[type-var]
    floats = fixed.to_float()
    for v, x in zip(values, floats.tolist(), strict=True):
        assert (v is None and np.isnan(x)) or x == pytest.approx(float(v or 0), rel=1e-15, abs=1e-8)


def test_parse_reads_text_in_other_forms() -> None:
    assert parse(["1E+2", "0.5", "7", "-0.00000001"]).to_decimal() == [
        Decimal(100), Decimal("0.5"), Decimal(7), Decimal("-1e-8"),
    ]
    with pytest.raises(ValueError):
        parse(["abc"])


def test_from_decimals_equals_parse() -> None:
    values = [Decimal("99999999999999999999.99999999"), Decimal("0.00000001"), None, Decimal(0)]
    a = Fixed.from_decimals(values)
    b = parse([None if v is None else format(v, "f") for v in values])
    assert a.to_decimal() == b.to_decimal() == values


# --- generated ledgers --------------------------------------------------------------------

ASSETS = [(11, "AAA", "USD"), (12, "BBB", "EUR"), (13, "CCC", "USD")]
PORTFOLIOS = [(1, "fifo", "USD", "track"), (2, "hifo", "EUR", "track")]
START = dt.date(2024, 1, 2)


@st.composite
def ledgers(draw: st.DrawFn) -> list[tuple]:
    n = draw(st.integers(50, 300))
    money = st.decimals(min_value=Decimal("0.01"), max_value=Decimal(5000), places=2)
    shares = st.decimals(min_value=Decimal("0.001"), max_value=Decimal(100), places=3)
    rows: list[tuple] = []
    for i in range(n):
        pid = draw(st.sampled_from([1, 2]))
        day = (START + dt.timedelta(days=draw(st.integers(0, 90)))).isoformat()
        kind = draw(
            st.sampled_from(
                ["buy"] * 6 + ["sell"] * 3 + ["dividend", "deposit", "withdrawal", "interest", "fee",
                 "split", "stock_dividend", "return_of_capital", "spin_off", "merger"]
            )
        )  # fmt: skip
        asset = draw(st.sampled_from([11, 12, 13]))
        q, p, f = draw(shares), draw(money), draw(st.sampled_from([Decimal(0), Decimal("1.25")]))
        ratio = cash = share = target = None
        cur = None
        if kind in ("deposit", "withdrawal", "interest", "fee"):
            asset, q, cur = None, Decimal(1), draw(st.sampled_from(["USD", "EUR"]))
            f = Decimal(0) if kind == "fee" else f
        elif kind in ("split", "stock_dividend"):
            q, p, f = Decimal(0), Decimal(0), Decimal(0)
            ratio = draw(st.sampled_from([Decimal(2), Decimal("1.5"), Decimal("0.5")]))
            cash = draw(st.sampled_from([None, Decimal("3.5")]))
        elif kind == "return_of_capital":
            q, f = Decimal(0), Decimal(0)
        elif kind in ("spin_off", "merger"):
            q, p, f = Decimal(0), Decimal(0), Decimal(0)
            target = draw(st.sampled_from([a for a, _, _ in ASSETS if a != asset]))
            ratio = Decimal("0.5")
            if kind == "spin_off":
                share = Decimal("0.2")
            else:
                cash = draw(st.sampled_from([None, Decimal(4)]))

        def text(v: Decimal | None) -> str | None:
            return None if v is None else format(v.quantize(Q8), "f")

        rows.append(
            (100 + i, pid, asset, target, day, kind, text(q), text(p), text(f), None,
             text(ratio), text(share), text(cash), cur)
        )  # fmt: skip
    return rows


def _twin(rows: list[tuple]) -> tuple[dict[int, dict[str, Decimal]], dict[tuple[int, str], Decimal]]:
    """Cash per portfolio and currency, and shares held per (portfolio, symbol), in Decimal,
    walking the rows in ledger order."""
    symbol = {a: s for a, s, _ in ASSETS}
    currency = {a: c for a, _, c in ASSETS}
    dec = {k: (lambda v: Decimal(v) if v is not None else None) for k in range(14)}
    ordered = sorted(
        rows,
        key=lambda r: ledger_key(
            dt.date.fromisoformat(r[4]), r[5], Decimal(r[7]), Decimal(r[6]), Decimal(r[8]), r[0]
        ),
    )
    cash: dict[int, dict[str, Decimal]] = {1: defaultdict(Decimal), 2: defaultdict(Decimal)}
    held: dict[tuple[int, str], Decimal] = defaultdict(Decimal)
    for r in ordered:
        tid, pid, asset, target, _, kind = r[:6]
        q, p, f, ratio, share, paid = (dec[0](r[i]) for i in (6, 7, 8, 10, 11, 12))
        del share
        assert q is not None and p is not None and f is not None
        if asset is None:
            amount = {"deposit": p - f, "interest": p - f, "withdrawal": -(p + f), "fee": -p}[kind]
            cash[pid][r[13]] += amount
            continue
        sym, code = symbol[asset], currency[asset]
        h = held[pid, sym]
        if kind == "buy":
            held[pid, sym] = h + q
            cash[pid][code] += -(q * p + f)
        elif kind == "sell":
            held[pid, sym] = h - q
            cash[pid][code] += q * p - f
        elif kind == "dividend":
            cash[pid][code] += q * p - f
        elif kind in ("split", "stock_dividend"):
            new = (h * ratio).quantize(Q8)  # type: ignore[operator]
            if paid is not None and paid > 0:
                new = new.to_integral_value(rounding=ROUND_FLOOR)
                cash[pid][code] += paid
            held[pid, sym] = new
        elif kind == "return_of_capital":
            cash[pid][code] += (h * p).quantize(Q8)
        else:  # spin-off, merger
            tsym = symbol[target]
            held[pid, tsym] += (h * ratio).quantize(Q8)  # type: ignore[operator]
            if kind == "merger":
                held[pid, sym] = Decimal(0)
                if paid is not None:
                    cash[pid][code] += (h * paid).quantize(Q8)
        del tid
    return {k: dict(v) for k, v in cash.items()}, dict(held)


@settings(max_examples=25, deadline=None)
@given(ledgers())
def test_columns_equal_the_decimal_twin_to_the_cent(rows: list[tuple]) -> None:
    cols = build(1, PORTFOLIOS, ASSETS, rows)
    assert len(cols) == len(rows)
    assert sorted(cols.id.tolist()) == sorted(r[0] for r in rows)
    want_cash, want_held = _twin(rows)
    got = derived.balances(cols)
    for pid in (1, 2):
        for code in set(want_cash[pid]) | set(got[pid]):
            assert got[pid].get(code, 0.0) == pytest.approx(
                float(want_cash[pid].get(code, Decimal(0))), abs=0.005
            ), (pid, code)
        hist = derived.history_input(cols, pid)
        signed = np.where(hist.kind == 1, -hist.quantity, np.where(hist.kind == 0, hist.quantity, 0.0))
        for s, name in enumerate(hist.names):
            total = float(signed[hist.symbol == s].sum())
            assert total == pytest.approx(float(want_held.get((pid, name), 0)), abs=1e-6), (pid, name)


def test_rows_are_in_ledger_order() -> None:
    rows = [
        (3, 1, 11, None, "2024-01-02", "sell", "1.00000000", "10.00000000", "0.00000000", None, None, None, None, None),
        (2, 1, 11, None, "2024-01-02", "buy", "1.00000000", "10.00000000", "0.00000000", None, None, None, None, None),
        (1, 1, 11, None, "2024-01-02", "dividend", "1.00000000", "0.50000000", "0.00000000", None, None, None, None, None),
        (4, 1, None, None, "2024-01-01", "deposit", "1.00000000", "9.00000000", "0.00000000", None, None, None, None, "USD"),
    ]  # fmt: skip
    cols = build(1, PORTFOLIOS, ASSETS, rows)
    assert cols.id.tolist() == [4, 1, 2, 3]
    assert cols.symbol_names(cols.symbol).tolist() == [None, "AAA", "AAA", "AAA"]
    assert [cols.currencies[c] for c in cols.currency.tolist()] == ["USD"] * 4


# --- the cache ----------------------------------------------------------------------------


def test_concurrent_misses_wait_on_one_derivation() -> None:
    cache = DerivationCache()
    calls = []

    async def slow() -> list[int]:
        calls.append(1)
        await asyncio.sleep(0.01)
        return [1, 2, 3]

    async def main() -> list[list[int]]:
        return await asyncio.gather(*(cache.get(7, 3, "x", slow) for _ in range(20)))

    results = asyncio.run(main())
    assert len(calls) == 1 and all(r is results[0] for r in results)
    # kept at that version; a newer version derives again and replaces it; older is not kept
    assert asyncio.run(cache.get(7, 3, "x", slow)) is results[0]
    assert asyncio.run(cache.get(7, 4, "x", slow)) == [1, 2, 3] and len(calls) == 2
    asyncio.run(cache.get(7, 3, "x", slow))
    assert len(calls) == 3
    assert asyncio.run(cache.get(7, 4, "x", slow)) is not results[0] and len(calls) == 3


def test_a_failed_derivation_reaches_every_waiter_and_is_not_kept() -> None:
    cache = DerivationCache()

    async def boom() -> int:
        await asyncio.sleep(0.01)
        raise RuntimeError("no")

    async def main() -> list[object]:
        return await asyncio.gather(*(cache.get(1, 1, "x", boom) for _ in range(5)), return_exceptions=True)

    out = asyncio.run(main())
    assert all(isinstance(e, RuntimeError) for e in out)

    async def fine() -> int:
        return 5

    assert asyncio.run(cache.get(1, 1, "x", fine)) == 5


def test_no_version_is_never_kept() -> None:
    cache = DerivationCache()
    n = []

    async def fn() -> int:
        n.append(1)
        return 1

    asyncio.run(cache.get(1, -1, "x", fn))
    asyncio.run(cache.get(1, -1, "x", fn))
    assert len(n) == 2


def _same(a, b) -> None:  # type: ignore[no-untyped-def]
    for name in ("id", "portfolio", "symbol", "target", "date", "kind", "currency", "lot"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    for name in ("quantity", "price", "fees", "ratio", "basis_allocation", "cash"):
        assert getattr(a, name).to_decimal() == getattr(b, name).to_decimal(), name
    assert (a.symbols, a.currencies, a.portfolios, a.version) == (b.symbols, b.currencies, b.portfolios, b.version)


@settings(max_examples=25, deadline=None)
@given(ledgers(), st.data())
def test_a_patched_ledger_equals_one_built_afresh(rows: list[tuple], data: st.DataObject) -> None:
    """A write's change applied to kept columns (``patched``) equals reading them again."""
    k = data.draw(st.integers(0, len(rows) - 1))
    row, rest = rows[k], rows[:k] + rows[k + 1 :]
    before = build(1, PORTFOLIOS, ASSETS, rest)
    _same(patched(before, 2, add=row, assets=ASSETS), build(2, PORTFOLIOS, ASSETS, rows))
    _same(patched(build(1, PORTFOLIOS, ASSETS, rows), 2, drop=row[0]), build(2, PORTFOLIOS, ASSETS, rest))
    edited = (row[0], *rest[0][1:]) if rest else row
    _same(
        patched(build(1, PORTFOLIOS, ASSETS, rows), 2, drop=row[0], add=edited, assets=ASSETS),
        build(2, PORTFOLIOS, ASSETS, [*rest, edited]),
    )


def test_a_patched_ledger_with_a_new_asset_or_currency_is_assembled_again() -> None:
    rows = [
        (1, 1, 11, None, "2024-01-02", "buy", "1.00000000", "10.00000000", "0.00000000", None, None, None, None, None),
    ]  # fmt: skip
    new = (2, 1, None, None, "2024-01-03", "deposit", "1.00000000", "5.00000000", "0.00000000", None, None, None, None, "GBP")
    _same(patched(build(1, PORTFOLIOS, ASSETS, rows), 2, add=new), build(2, PORTFOLIOS, ASSETS, [*rows, new]))
    other = (3, 1, 12, None, "2024-01-01", "buy", "2.00000000", "7.00000000", "0.00000000", None, None, None, None, None)
    _same(
        patched(build(1, PORTFOLIOS, ASSETS, rows), 2, add=other, assets=ASSETS),
        build(2, PORTFOLIOS, ASSETS, [*rows, other]),
    )
