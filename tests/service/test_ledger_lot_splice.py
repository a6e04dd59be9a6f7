"""After a typed write, the user's lot ledger spliced from the previous version's
(``service.ledger.lot_splice.spliced``: only the written symbols' groups matched again) equals
the whole ledger matched afresh from the new columns, array for array: every realized
piece (8949 row, wash-sale adjustment), open lot, dividend and lot name. Generated
relievable ledgers of two portfolios (wash sales across them) with every row type and
corporate action, then one create, edit or delete of any row, on any symbol and date.
When the splice cannot apply it says so (``None``) and the derivation runs whole.

Through the derivation cache, a random sequence of such writes with or without a read
of the lot ledger between them (the splice then carried from the last ledger derived,
over the union of the written symbols) gives the ledger matched afresh at every read."""

from __future__ import annotations

import asyncio
import datetime as dt
from decimal import Decimal
from typing import Any

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from service.errors import ValidationError
from service.ledger.cache import DerivationCache
from service.ledger.columns import LedgerColumns, build, patched
from service.ledger.lot_splice import CHAIN_DEPTH, LotSplice, lot_hints, spliced
from service.ledger.lots import _match_columns
from tests.service.test_ledger_lot_table import (
    ASSETS,
    PORTFOLIOS,
    START,
    _assert_same,
    _text,
    relievable,
)


@st.composite
def new_row(draw: st.DrawFn, tid: int) -> tuple[Any, ...]:
    """A typed write's row: a buy, sell or dividend of any asset of either portfolio, any day
    of the ledger's span (it may be unrelievable: the splice must then give up)."""
    kind = draw(st.sampled_from(["buy", "buy", "sell", "dividend", "split", "deposit"]))
    day = START + dt.timedelta(days=draw(st.integers(0, 400)))
    pid = draw(st.sampled_from([1, 2]))
    if kind == "deposit":
        return (
            tid,
            pid,
            None,
            None,
            day.isoformat(),
            kind,
            "1",
            "500",
            "0",
            None,
            None,
            None,
            None,
            "USD",
        )
    asset = draw(st.sampled_from([a for a, _, _ in ASSETS]))
    q = _text(draw(st.integers(1, 30)) * Decimal(1))
    p = _text(Decimal(draw(st.integers(100, 20000))) / 100)
    ratio = _text(Decimal(2)) if kind == "split" else None
    if kind == "split":
        q = p = _text(Decimal(0))
    return (tid, pid, asset, None, day.isoformat(), kind, q, p, _text(Decimal(0)), None,
            ratio, None, None, None)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(relievable(), st.data())
def test_the_spliced_lot_ledger_equals_a_whole_match(
    rows: list[tuple[Any, ...]], data: st.DataObject
) -> None:
    old_cols = build(1, PORTFOLIOS, ASSETS, rows)
    old = _match_columns(old_cols)
    what = data.draw(st.sampled_from(["create", "delete", "edit"]))
    if what == "create":
        row = data.draw(new_row(10_000))
        cols, changed = patched(old_cols, 2, add=row, assets=ASSETS), (None, row[0])
    else:
        tid = data.draw(st.sampled_from([r[0] for r in rows]))
        if what == "delete":
            cols, changed = patched(old_cols, 2, drop=tid), (tid, None)
        else:
            row = data.draw(new_row(tid))
            cols, changed = patched(old_cols, 2, drop=tid, add=row, assets=ASSETS), (tid, tid)
    got = spliced(old_cols, old, cols, changed)
    try:
        want = _match_columns(cols)
    except ValidationError:
        assert got is None  # the write's ledger does not relieve: the whole derivation says why
        event("unrelievable")
        return
    if got is None:
        event("derived whole")  # a symbol appeared or vanished, or a spin-off or merger was written
        return
    event("spliced")
    _assert_same(want.whole(), got.whole())
    assert got.yearly_gains() == want.yearly_gains()
    for name in (
        "sym",
        "day",
        "kind",
        "qty",
        "price",
        "fee",
        "lot_ref",
        "ratio",
        "cash",
        "alloc",
        "target",
    ):
        assert np.array_equal(
            getattr(want.ledger.source.encoded, name), getattr(got.ledger.source.encoded, name)
        ), name
    day = START + dt.timedelta(days=150)  # the ledger up to a date, relieved again from the splice
    _assert_same(want.whole().as_of(day), got.whole().as_of(day))


def test_a_buy_in_a_held_symbol_is_spliced() -> None:
    """The usual typed write (a buy of a symbol already held) takes the splice, and a cash
    row leaves the lot ledger as it was."""
    rows = [
        (1, 1, 11, None, "2024-01-02", "buy", "10", "5", "0", None, None, None, None, None),
        (2, 2, 11, None, "2024-01-03", "buy", "4", "6", "0", None, None, None, None, None),
        (3, 1, 12, None, "2024-01-04", "buy", "7", "9", "0", None, None, None, None, None),
        (4, 1, 11, None, "2024-01-20", "sell", "3", "4", "0", None, None, None, None, None),
    ]
    old_cols = build(1, PORTFOLIOS, ASSETS, rows)
    old = _match_columns(old_cols)
    row = (5, 1, 11, None, "2024-02-01", "buy", "2", "4.5", "0", None, None, None, None, None)
    cols = patched(old_cols, 2, add=row, assets=ASSETS)
    got = spliced(old_cols, old, cols, (None, 5))
    assert got is not None
    _assert_same(_match_columns(cols).whole(), got.whole())
    assert got.whole().realized["disallowed"].sum() > 0  # the wash sale across portfolios is re-matched
    cash = (
        6,
        1,
        None,
        None,
        "2024-02-02",
        "deposit",
        "1",
        "100",
        "0",
        None,
        None,
        None,
        None,
        "USD",
    )
    assert spliced(cols, got, patched(cols, 3, add=cash, assets=ASSETS), (None, 6)) is got


def _write(
    cols: LedgerColumns, version: int, data: st.DataObject
) -> tuple[LedgerColumns, tuple[int | None, int | None]]:
    """One create, delete or edit of a row of ``cols`` (a create's id is new)."""
    what = data.draw(st.sampled_from(["create", "create", "delete", "edit"]))
    if what == "create":
        row = data.draw(new_row(10_000 + version))
        return patched(cols, version, add=row, assets=ASSETS), (None, row[0])
    tid = data.draw(st.sampled_from(cols.id.tolist()))
    if what == "delete":
        return patched(cols, version, drop=tid), (tid, None)
    row = data.draw(new_row(tid))
    return patched(cols, version, drop=tid, add=row, assets=ASSETS), (tid, tid)


def _read_lots(cache: DerivationCache, cols: LedgerColumns) -> Any:
    async def derive() -> Any:
        return _match_columns(cols)

    return asyncio.run(cache.get(1, cols.version, "lots", derive))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(relievable(), st.data())
def test_lot_ledgers_carried_across_unread_writes_equal_a_whole_match(
    rows: list[tuple[Any, ...]], data: st.DataObject
) -> None:
    """Writes move the cache's columns along (``advance`` with :func:`lot_hints`), some
    followed by a read of the lot ledger, most not; every read equals a whole match."""
    cache = DerivationCache()
    cols = build(1, PORTFOLIOS, ASSETS, rows)
    cache._entry(1, 1).values["columns"] = cols  # kept as a read keeps them
    _read_lots(cache, cols)
    for _ in range(data.draw(st.integers(1, 8))):
        after, changed = _write(cols, cols.version + 1, data)
        try:
            _match_columns(after)
        except ValidationError:
            continue  # the write is refused: the ledger stays
        assert cache.advance(1, after.version, "columns", lambda _, c=after: c, lot_hints(*changed))
        cols = after
        if data.draw(st.integers(0, 3)) == 0:  # mostly unread: the splice is carried
            hint = cache._users[1].hints.get("lots")
            before = cache.hinted
            got = _read_lots(cache, cols)
            _assert_same(_match_columns(cols).whole(), got.whole())
            if cache.hinted > before:
                event(f"spliced across {hint.writes if isinstance(hint, LotSplice) else 0} writes")
    hint = cache._users[1].hints.get("lots")
    before = cache.hinted
    got = _read_lots(cache, cols)
    want = _match_columns(cols)
    _assert_same(want.whole(), got.whole())
    if isinstance(hint, LotSplice) and cache.hinted > before:
        event(
            f"last read spliced across {min(hint.writes, 3)}{'+' if hint.writes >= 3 else ''} writes"
        )
    day = START + dt.timedelta(days=150)
    _assert_same(want.whole().as_of(day), got.whole().as_of(day))


def test_the_carried_splice_stops_at_its_depth_and_at_a_spin_off() -> None:
    """Past :data:`CHAIN_DEPTH` unread writes, or after a spin-off is written, no hint is
    left: the next read derives the ledger whole."""
    rows = [
        (1, 1, 11, None, "2024-01-02", "buy", "10", "5", "0", None, None, None, None, None),
        (2, 1, 12, None, "2024-01-03", "buy", "7", "9", "0", None, None, None, None, None),
    ]
    cache = DerivationCache()
    cols = build(1, PORTFOLIOS, ASSETS, rows)
    cache._entry(1, 1).values["columns"] = cols
    _read_lots(cache, cols)
    for version in range(2, CHAIN_DEPTH + 3):
        tid = 100 + version
        row = (tid, 1, 11, None, "2024-02-01", "buy", "1", "5", "0", None, None, None, None, None)
        cols = patched(cols, version, add=row, assets=ASSETS)
        cache.advance(1, version, "columns", lambda _, c=cols: c, lot_hints(None, tid))
        hint = cache._users[1].hints.get("lots")
        assert (hint is not None) == (version - 1 <= CHAIN_DEPTH)
    assert cache.hinted == 0
    _assert_same(_match_columns(cols).whole(), _read_lots(cache, cols).whole())  # derived whole, now kept
    spin = (999, 1, 11, 13, "2024-03-01", "spin_off", "0", "0", "0", None, "0.5", "0.2", None, None)
    after = patched(cols, cols.version + 1, add=spin, assets=ASSETS)
    cache.advance(1, after.version, "columns", lambda _: after, lot_hints(None, 999))
    assert "lots" not in cache._users[1].hints
    row = (1000, 1, 12, None, "2024-03-02", "buy", "1", "5", "0", None, None, None, None, None)
    last = patched(after, after.version + 1, add=row, assets=ASSETS)
    cache.advance(1, last.version, "columns", lambda _: last, lot_hints(None, 1000))
    assert "lots" not in cache._users[1].hints  # nothing to carry: the spin-off's was never made
