"""Sells naming a tax lot (``lot_id``) over HTTP, on SQLite and PostgreSQL.

The oracle for "enough of the lot left" is ``quantcore.tax.match_lots`` itself, run
with ``method="specific"`` on the test's own copy of the ledger: the service accepts a
sell naming a lot exactly when that call accepts the ledger with the sell in it.
"""

from __future__ import annotations

import datetime as dt
import random
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import pandas as pd
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError

from quantcore import tax
from service.db.models import Transaction
from service.ledger.checks import LotRow, first_shortfall, ledger_key
from tests.service.conftest import Api


def _txn(api: Api, h: dict[str, str], pid: int, kind: str, qty: str, date: str, **extra: object):
    body = {
        "portfolio": pid,
        "asset_symbol": extra.pop("symbol", "SPY"),
        "transaction_type": kind,
        "quantity": qty,
        "price": extra.pop("price", "10"),
        "transaction_date": date,
        **extra,
    }
    return api.client.post("/api/transactions/", json=body, headers=h)


def _ok(r) -> dict:
    assert r.status_code == 201, r.text
    return r.json()


def _portfolio(api: Api, h: dict[str, str]) -> int:
    return int(api.client.post("/api/portfolios/", json={"name": "lots"}, headers=h).json()["id"])


async def _count(db, pid: int) -> int:
    async with db.read() as s:
        q = select(func.count()).where(Transaction.portfolio_id == pid)
        return int((await s.execute(q)).scalar_one())


def _refused(api: Api, r, pid: int, before: int, field: str, code: str) -> dict:
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["error"] == "validation_error"
    assert (body["details"]["field"], body["details"]["code"]) == (field, code), body
    assert api.call(_count, api.db, pid) == before  # nothing written
    return body


def test_sell_with_lot_id_is_recorded_and_read(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    b1 = _ok(_txn(api, h, pid, "buy", "10", "2025-01-06"))
    b2 = _ok(_txn(api, h, pid, "buy", "10", "2025-02-03", price="12"))
    sell = _ok(_txn(api, h, pid, "sell", "4", "2025-03-03", lot_id=b2["id"]))
    assert sell["lot_id"] == b2["id"] and b1["lot_id"] is None and b2["lot_id"] is None
    assert api.client.get(f"/api/transactions/{sell['id']}/", headers=h).json() == sell
    listed = api.client.get(f"/api/transactions/?portfolio_id={pid}", headers=h).json()
    assert [(t["id"], t["lot_id"]) for t in listed["results"]] == [
        (sell["id"], b2["id"]),
        (b2["id"], None),
        (b1["id"], None),
    ]
    # the position is the open lots under the portfolio's method (FIFO, which ignores
    # lot_id): 6 @ 10 and 10 @ 12 = 180 over 16 shares
    (pos,) = api.client.get(f"/api/portfolios/{pid}/positions/", headers=h).json()["results"]
    assert (pos["quantity"], Decimal(pos["average_cost"])) == ("16.00000000", Decimal("11.2500"))
    # the same day as the buy is allowed; the whole rest of the lot too
    _ok(_txn(api, h, pid, "sell", "6", "2025-02-03", lot_id=b2["id"]))
    r = _txn(api, h, pid, "sell", "0.00000001", "2025-12-01", lot_id=b2["id"])
    body = _refused(api, r, pid, api.call(_count, api.db, pid), "quantity", "insufficient_quantity")
    # the lot used up: the message says the symbol, the date and the lot_id the sale gave
    assert body["details"]["lot_id"] == b2["id"] and body["details"]["held"] == "0.00000000"
    assert body["message"] == (
        f"Cannot sell 0.00000001 SPY on 2025-12-01: its lot (lot_id {b2['id']}) held 0.00000000."
    )


def test_lot_id_errors(api: Api) -> None:
    _, h = api.user()
    pid, other_pid = _portfolio(api, h), _portfolio(api, h)
    buy = _ok(_txn(api, h, pid, "buy", "10", "2025-01-06"))
    aapl = _ok(_txn(api, h, pid, "buy", "10", "2025-01-06", symbol="AAPL"))
    elsewhere = _ok(_txn(api, h, other_pid, "buy", "10", "2025-01-06"))
    sold = _ok(_txn(api, h, pid, "sell", "1", "2025-01-07"))
    div = _ok(_txn(api, h, pid, "dividend", "9", "2025-02-01", price="0.5"))
    late = _ok(_txn(api, h, pid, "buy", "10", "2025-06-02"))
    _, stranger = api.user()
    theirs = _ok(_txn(api, stranger, _portfolio(api, stranger), "buy", "10", "2025-01-06"))
    before = api.call(_count, api.db, pid)
    cases: list[tuple[dict, str, str]] = [
        ({"kind": "buy", "lot_id": buy["id"]}, "lot_id", "invalid"),  # only sells name lots
        ({"kind": "dividend", "lot_id": buy["id"]}, "lot_id", "invalid"),
        ({"lot_id": sold["id"]}, "lot_id", "invalid"),  # not a buy
        ({"lot_id": div["id"]}, "lot_id", "invalid"),
        ({"lot_id": elsewhere["id"]}, "lot_id", "invalid"),  # another portfolio
        ({"lot_id": aapl["id"]}, "lot_id", "invalid"),  # another asset
        ({"lot_id": late["id"]}, "lot_id", "invalid"),  # bought after the sale
        ({"lot_id": theirs["id"]}, "lot_id", "not_found"),  # another user's
        ({"lot_id": 10**9}, "lot_id", "not_found"),
        ({"lot_id": buy["id"], "qty": "9.00000001"}, "quantity", "insufficient_quantity"),
        ({"lot_id": "x"}, "lot_id", "invalid"),  # not an int
    ]
    for case, field, code in cases:
        kind = case.get("kind", "sell")
        r = _txn(api, h, pid, kind, case.get("qty", "1"), "2025-03-03", lot_id=case["lot_id"])
        body = _refused(api, r, pid, before, field, code)
        assert "secret" not in r.text
        if code == "insufficient_quantity":
            assert body["details"]["held"] == "9.00000000"  # 10 bought, 1 sold first in
            assert body["details"]["lot_id"] == buy["id"]
    # the stranger's ledger is untouched and the message does not describe their buy
    r = _txn(api, h, pid, "sell", "1", "2025-03-03", lot_id=theirs["id"])
    assert "AAPL" not in r.json()["message"] and "buy" not in r.json()["message"]


def test_an_unnamed_sell_relieves_first_in(api: Api) -> None:
    """A sell without a lot takes the earliest lot, which leaves less for a sell naming it."""
    _, h = api.user()
    pid = _portfolio(api, h)
    first = _ok(_txn(api, h, pid, "buy", "10", "2025-01-06"))
    _ok(_txn(api, h, pid, "buy", "10", "2025-02-03"))
    _ok(_txn(api, h, pid, "sell", "8", "2025-03-03"))  # 8 of the first lot
    before = api.call(_count, api.db, pid)
    r = _txn(api, h, pid, "sell", "3", "2025-04-01", lot_id=first["id"])
    body = _refused(api, r, pid, before, "quantity", "insufficient_quantity")
    assert body["details"]["held"] == "2.00000000"
    _ok(_txn(api, h, pid, "sell", "2", "2025-04-01", lot_id=first["id"]))


def test_a_sell_that_would_leave_a_later_named_sell_short(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    first = _ok(_txn(api, h, pid, "buy", "10", "2025-01-06"))
    _ok(_txn(api, h, pid, "buy", "10", "2025-02-03"))
    named = _ok(_txn(api, h, pid, "sell", "10", "2025-05-01", lot_id=first["id"]))
    before = api.call(_count, api.db, pid)
    # backdated, unnamed: first in, it would take shares of the lot sold in May
    r = _txn(api, h, pid, "sell", "5", "2025-02-10")
    body = _refused(api, r, pid, before, "quantity", "insufficient_quantity")
    assert body["details"]["transaction_id"] == named["id"]
    # backdated and naming the same lot
    r = _txn(api, h, pid, "sell", "1", "2025-03-01", lot_id=first["id"])
    assert _refused(api, r, pid, before, "quantity", "insufficient_quantity")
    # after May the first lot is gone, so first in means the second lot: fine
    _ok(_txn(api, h, pid, "sell", "5", "2025-06-02"))


def _specific_ok(rows: list[tuple]) -> bool:
    """Whether ``quantcore.tax.match_lots(method="specific")`` accepts the ledger."""
    df = pd.DataFrame(
        [
            (
                "SPY",
                day,
                kind,
                qty,
                Decimal(10),
                str(tid) if kind == "buy" else (None if lot is None else str(lot)),
            )
            for tid, kind, qty, day, lot in sorted(rows, key=lambda r: (r[3], r[0]))
        ],
        columns=["symbol", "date", "type", "quantity", "price", "lot_id"],
    )
    try:
        tax.match_lots(df, method="specific")
    except ValueError:
        return False
    return True


def test_a_backdated_sell_is_checked_on_its_own_date(api: Api) -> None:
    """No lot named anywhere: the holding on the sale's date decides, not today's position."""
    _, h = api.user()
    pid = _portfolio(api, h)
    _ok(_txn(api, h, pid, "buy", "10", "2025-03-01"))
    sale = _ok(_txn(api, h, pid, "sell", "6", "2025-04-01"))
    _ok(_txn(api, h, pid, "buy", "10", "2025-05-01"))  # 14 held today
    before = api.call(_count, api.db, pid)
    early = _txn(api, h, pid, "sell", "1", "2025-02-01")  # nothing held on that day
    body = _refused(api, early, pid, before, "quantity", "insufficient_quantity")
    assert body["details"]["held"] == "0.00000000"
    # 10 held on 2025-03-15, but selling 5 leaves 5 for the sale of 6 on 2025-04-01
    short = _txn(api, h, pid, "sell", "5", "2025-03-15")
    body = _refused(api, short, pid, before, "quantity", "insufficient_quantity")
    assert body["details"]["transaction_id"] == sale["id"]
    _ok(_txn(api, h, pid, "sell", "4", "2025-03-15"))  # exactly what the later sale leaves
    # the ledger stays one quantcore can relieve, so the tax endpoints keep working
    r = api.client.get(f"/api/tax/analytics/summary/?year=2025&portfolio_id={pid}", headers=h)
    assert r.status_code == 200, r.text


def test_lot_check_equals_quantcore_specific(api: Api) -> None:
    """A seeded random ledger: each sell is accepted iff ``match_lots`` (specific) accepts it."""
    _, h = api.user()
    pid = _portfolio(api, h)
    rnd = random.Random(20261123)
    start = dt.date(2025, 1, 6)
    rows: list[tuple] = []  # (id, kind, quantity, date, lot_id) as recorded
    outcomes = {True: 0, False: 0}
    for step in range(60):
        day = start + dt.timedelta(days=rnd.randint(0, 120))
        buys = [r for r in rows if r[1] == "buy"]
        if not buys or rnd.random() < 0.35:
            qty = Decimal(rnd.randint(1, 20))
            t = _ok(_txn(api, h, pid, "buy", str(qty), day.isoformat()))
            rows.append((t["id"], "buy", qty, day, None))
            continue
        lot = rnd.choice(buys) if step > 3 and rnd.random() < 0.7 else None
        if lot is not None:
            day = max(day, lot[3])  # the lot is bought by then (that error is tested apart)
        checked = lot is not None or any(r[4] is not None for r in rows)
        if not checked:  # only the position is checked then: keep the ledger in date order
            day = max(day, *(r[3] for r in rows))
        qty = Decimal(rnd.randint(1, 12))
        held = sum(r[2] if r[1] == "buy" else -r[2] for r in rows)
        candidate = (10**12, "sell", qty, day, None if lot is None else lot[0])
        expect = _specific_ok([*rows, candidate]) if checked else qty <= held
        expect = expect and qty <= held  # the position (held now) is checked first
        extra = {} if lot is None else {"lot_id": lot[0]}
        r = _txn(api, h, pid, "sell", str(qty), day.isoformat(), **extra)
        assert (r.status_code == 201) is expect, (step, r.text)
        outcomes[expect] += 1
        if expect:
            rows.append((r.json()["id"], "sell", qty, day, candidate[4]))
        else:
            assert r.json()["details"]["code"] == "insufficient_quantity"
    assert outcomes[True] >= 10 and outcomes[False] >= 5  # both branches exercised
    assert _specific_ok(rows)


def test_first_shortfall_plain_cases() -> None:
    d1, d2 = dt.date(2025, 1, 2), dt.date(2025, 2, 3)
    buy = [LotRow(1, "buy", Decimal(5), d1), LotRow(2, "buy", Decimal(5), d2)]
    assert first_shortfall([*buy, LotRow(3, "sell", Decimal(10), d2)]) is None
    short = first_shortfall([*buy, LotRow(3, "sell", Decimal("10.00000001"), d2)])
    assert short is not None and short.held == Decimal(10) and short.row.id == 3
    # a lot named before it is bought holds nothing
    short = first_shortfall([buy[0], LotRow(3, "sell", Decimal(1), d1, lot_id=2), buy[1]])
    assert short is not None and short.held == 0


_DAY0 = dt.date(2025, 1, 2)
_rows = st.lists(
    st.tuples(
        st.sampled_from(["buy", "buy", "sell", "sell", "dividend"]),
        st.integers(1, 9),  # shares
        st.integers(0, 20),  # day
        st.integers(0, 12),  # the buy a sell names (an index; none if not a buy)
    ),
    max_size=30,
)


@given(_rows, st.integers(1, 9), st.integers(0, 20))
def test_an_added_buy_never_leaves_a_row_short(spec: list, shares: int, day: int) -> None:
    """Why a typed buy skips the check: on any ledger that relieves, adding a buy anywhere
    leaves it relieving (named sells, unnamed sells and dividends alike)."""
    rows: list[LotRow] = []
    for i, (kind, q, d, named) in enumerate(spec):
        lot = None
        if kind == "sell" and named < len(rows) and rows[named].kind == "buy" and named % 2:
            lot = rows[named].id
        rows.append(LotRow(i + 1, kind, Decimal(q), _DAY0 + dt.timedelta(days=d), lot_id=lot))

    def order(rs: list[LotRow]) -> list[LotRow]:
        return sorted(rs, key=lambda r: ledger_key(r.date, r.kind, r.price, r.quantity, r.fees, r.id))

    assume(first_shortfall(order(rows)) is None)  # only ledgers the service can hold
    added = LotRow(None, "buy", Decimal(shares), _DAY0 + dt.timedelta(days=day))
    assert first_shortfall(order([*rows, added])) is None


def test_concurrent_sells_of_one_lot(api: Api) -> None:
    """20 parallel sells of 1 share naming a lot of 5 (20 held): exactly 5 succeed."""
    _, h = api.user()
    pid = _portfolio(api, h)
    lot = _ok(_txn(api, h, pid, "buy", "5", "2025-01-06"))
    _ok(_txn(api, h, pid, "buy", "15", "2025-01-07"))
    with ThreadPoolExecutor(max_workers=20) as pool:
        statuses = list(
            pool.map(
                lambda _: (
                    _txn(api, h, pid, "sell", "1", "2025-03-03", lot_id=lot["id"]).status_code
                ),
                range(20),
            )
        )
    assert (statuses.count(201), statuses.count(400)) == (5, 15)
    named = api.client.get(
        f"/api/transactions/?portfolio_id={pid}&transaction_type=sell", headers=h
    )
    assert {t["lot_id"] for t in named.json()["results"]} == {lot["id"]}
    assert named.json()["count"] == 5


async def _delete_txn(db, txn_id: int) -> None:
    async with db.write() as s:
        await s.execute(delete(Transaction).where(Transaction.id == txn_id))


def test_a_named_buy_cannot_be_deleted_but_its_portfolio_can(api: Api) -> None:
    _, h = api.user()
    pid = _portfolio(api, h)
    lot = _ok(_txn(api, h, pid, "buy", "5", "2025-01-06"))
    free = _ok(_txn(api, h, pid, "buy", "5", "2025-01-06"))
    _ok(_txn(api, h, pid, "sell", "2", "2025-03-03", lot_id=lot["id"]))
    with pytest.raises(IntegrityError):
        api.call(_delete_txn, api.db, lot["id"])
    api.call(_delete_txn, api.db, free["id"])  # nothing names it
    assert api.client.delete(f"/api/portfolios/{pid}/", headers=h).status_code == 204
    assert api.call(_count, api.db, pid) == 0
