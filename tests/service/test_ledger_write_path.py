"""A write re-derives only the symbol it touches; the result equals the whole-ledger derivation.

Every transaction write (create, PUT, DELETE) reads the symbol's rows once, checks
them and re-derives that symbol's positions in every portfolio of the user
(``service.ledger.positions``). The oracle here is one ``quantcore.tax.match_lots``
call over the user's *whole* ledger (all symbols, all portfolios, each with its lot
method, wash sales joined across portfolios by bare symbol), built from the rows
in the database after each write. Splits and spin-offs are among the random writes:
a spin-off links two symbols, whose positions a write then derives together.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pandas as pd
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.orm import aliased

from quantcore import tax
from service.db.models import Asset, Portfolio, Position, Transaction
from service.ledger.checks import ledger_key
from tests.service.conftest import Api

Snapshot = dict[tuple[int, str], tuple[Decimal, Decimal]]


async def _snapshot(db, pids: list[int]) -> tuple[Snapshot, Snapshot]:  # type: ignore[no-untyped-def]
    """(positions stored, positions of one match_lots call over the whole ledger)."""
    target = aliased(Asset)
    async with db.read() as s:
        rows = (
            await s.execute(
                select(
                    Transaction.id, Transaction.portfolio_id, Asset.symbol,
                    Transaction.transaction_date, Transaction.transaction_type,
                    Transaction.quantity, Transaction.price, Transaction.fees,
                    Portfolio.lot_method, Transaction.ratio, target.symbol,
                    Transaction.basis_allocation, Transaction.cash,
                )
                .join(Asset, Asset.id == Transaction.asset_id)
                .join(Portfolio, Portfolio.id == Transaction.portfolio_id)
                .outerjoin(target, target.id == Transaction.target_asset_id)
                .where(Transaction.portfolio_id.in_(pids))
            )
        ).tuples().all()
        stored = (
            await s.execute(
                select(Position.portfolio_id, Asset.symbol, Position.quantity, Position.cost_basis)
                .join(Asset, Asset.id == Position.asset_id)
                .where(Position.portfolio_id.in_(pids))
            )
        ).tuples().all()
    have = {(pid, sym): (q, b) for pid, sym, q, b in stored}
    if not rows:
        return have, {}
    # the documented ledger order: date, dividends/buys/sells, amounts, id
    ordered = sorted(rows, key=lambda r: ledger_key(r[3], r[4], r[6], r[5], r[7], r[0]))
    table = pd.DataFrame(
        [
            (f"{r[1]}:{r[2]}", r[3], r[4], r[5], r[6], r[7], r[9],
             f"{r[1]}:{r[10]}" if r[10] else None, r[11], r[12])
            for r in ordered
        ],
        columns=["symbol", "date", "type", "quantity", "price", "fees", "ratio", "target_symbol",
                 "basis_allocation", "cash"],
    )
    methods = {f"{r[1]}:{r[2]}": r[8] for r in rows}
    methods |= {f"{r[1]}:{r[10]}": r[8] for r in rows if r[10]}
    lots = tax.match_lots(
        table, method=methods, substantially_identical={n: n.split(":")[1] for n in methods}
    )
    want = {}
    for i, q, b in zip(*lots.position_totals(), strict=True):
        pid, sym = lots.symbols[i].split(":")
        want[int(pid), sym] = (tax.lots.from_fixed(int(q)), tax.lots.from_fixed(int(b)))
    return have, want


def _portfolio(api: Api, h: dict[str, str], method: str) -> int:
    r = api.client.post("/api/portfolios/", json={"name": "P"}, headers=h)
    assert r.status_code == 201, r.text
    pid = int(r.json()["id"])
    if method != "fifo":
        r = api.client.put(
            f"/api/tax/portfolios/{pid}/settings/", json={"lot_method": method}, headers=h
        )
        assert r.status_code == 200, r.text
    return pid


def _body(pid: int, sym: str, kind: str, q: int, price: str, day: dt.date) -> dict[str, object]:
    base = {"portfolio": pid, "asset_symbol": sym, "transaction_type": kind, "transaction_date": day.isoformat()}
    if kind == "split":
        return {**base, "split_ratio": "2"}
    if kind == "spin_off":
        other = "SPY" if sym == "AAPL" else "AAPL"
        return {**base, "target_symbol": other, "ratio": "0.5", "basis_allocation": "0.25"}
    return {**base, "quantity": str(q), "price": price}


def test_a_write_in_one_portfolio_moves_a_wash_sale_basis_in_another(api: Api) -> None:
    """A loss sale in B within 30 days of a purchase in A is a wash sale; the disallowed
    loss is added to the basis of A's replacement shares (IRC 1091(a), (d); IRS
    Publication 550, "Wash Sales"). The write touches B's ledger; A's position moves."""
    _, h = api.user()
    a, b = _portfolio(api, h, "fifo"), _portfolio(api, h, "hifo")
    day = dt.date(2025, 1, 2)
    for body in (
        _body(a, "SPY", "buy", 10, "15", day + dt.timedelta(days=67)),  # 2025-03-10
        _body(b, "SPY", "buy", 10, "20", day),
    ):
        assert api.client.post("/api/transactions/", json=body, headers=h).status_code == 201
    have, want = api.call(_snapshot, api.db, [a, b])
    assert have == want
    assert have[a, "SPY"] == (Decimal(10), Decimal(150))

    sale = _body(b, "SPY", "sell", 10, "15", day + dt.timedelta(days=60))  # loss of 50
    r = api.client.post("/api/transactions/", json=sale, headers=h)
    assert r.status_code == 201, r.text
    have, want = api.call(_snapshot, api.db, [a, b])
    assert have == want
    assert have == {(a, "SPY"): (Decimal(10), Decimal(200))}  # 150 + the disallowed 50

    # deleting the sale takes the adjustment back out of A
    assert api.client.delete(f"/api/transactions/{r.json()['id']}/", headers=h).status_code == 204
    have, want = api.call(_snapshot, api.db, [a, b])
    assert have == want
    assert have[a, "SPY"] == (Decimal(10), Decimal(150))


_DAYS = [dt.date(2025, 1, 2) + dt.timedelta(days=d) for d in (0, 5, 20, 31, 45, 70)]
_ROW = st.tuples(
    st.integers(0, 1),  # portfolio
    st.sampled_from(["AAPL", "SPY"]),
    st.sampled_from(["buy", "buy", "buy", "sell", "sell", "dividend", "split", "spin_off"]),
    st.integers(1, 9),
    st.sampled_from(["8", "10", "12.5"]),
    st.sampled_from(_DAYS),
)
_OP = st.one_of(
    st.tuples(st.just("create"), st.integers(0, 99), _ROW),
    st.tuples(st.just("edit"), st.integers(0, 99), _ROW),
    st.tuples(st.just("delete"), st.integers(0, 99), _ROW),
)


@settings(
    max_examples=8,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # shrinking over HTTP takes minutes
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.lists(_ROW, min_size=3, max_size=10),
    ops=st.lists(_OP, min_size=2, max_size=5),
    method=st.sampled_from(["hifo", "lifo", "average"]),
)
def test_each_write_equals_the_whole_ledger_derivation(  # type: ignore[no-untyped-def]
    api: Api, seed, ops, method
) -> None:
    """Random ledgers in two portfolios (FIFO and another method) sharing symbols, then
    random creates, edits and deletes (refused ones included): after every write the
    positions table equals the derivation of the whole ledger."""
    _, h = api.user()
    pids = [_portfolio(api, h, "fifo"), _portfolio(api, h, method)]
    ids: list[int] = []
    for p, sym, kind, q, price, day in sorted(seed, key=lambda r: (r[5], r[2] != "buy", r[2])):
        r = api.client.post(
            "/api/transactions/", json=_body(pids[p], sym, kind, q, price, day), headers=h
        )
        assert r.status_code in (201, 400), r.text  # a sell beyond holdings is refused
        if r.status_code == 201:
            ids.append(int(r.json()["id"]))
            if kind in ("split", "spin_off"):
                event(f"a {kind} in the seed ledger")
    for op, pick, (p, sym, kind, q, price, day) in ops:
        body = _body(pids[p], sym, kind, q, price, day)
        gone = None
        if op == "create" or not ids:
            r = api.client.post("/api/transactions/", json=body, headers=h)
        elif op == "edit":
            r = api.client.put(f"/api/transactions/{ids[pick % len(ids)]}/", json=body, headers=h)
        else:
            gone = ids.pop(pick % len(ids))
            r = api.client.delete(f"/api/transactions/{gone}/", headers=h)
        if r.status_code == 400:
            assert (r.json()["details"]["field"], r.json()["details"]["code"]) in (
                ("quantity", "insufficient_quantity"), ("asset_symbol", "not_held"),
            ), r.text  # fmt: skip
            if gone is not None:
                ids.append(gone)  # refused: still there
        else:
            assert r.status_code in (200, 201, 204), r.text
            if r.status_code == 201:
                ids.append(int(r.json()["id"]))
            if kind in ("split", "spin_off") and op != "delete":
                event(f"a {kind} written by {op}")
        have, want = api.call(_snapshot, api.db, pids)
        assert have == want
