"""The ledger over HTTP: exact decimals, average cost, oversells, filters, and concurrent sells."""

from __future__ import annotations

import datetime as dt
import random
from concurrent.futures import ThreadPoolExecutor
from decimal import ROUND_HALF_EVEN, Decimal

import pandas as pd
from sqlalchemy import func, select

from quantcore.portfolio import ledger_positions
from service.db.models import Position, Transaction
from tests.service.conftest import Api

Q8 = Decimal("1e-8")


def _txn(
    api: Api, h: dict[str, str], pid: int, kind: str, qty: str, price: str = "10", **extra: object
):
    body = {
        "portfolio": pid,
        "asset_symbol": extra.pop("symbol", "SPY"),
        "transaction_type": kind,
        "quantity": qty,
        "price": price,
        "transaction_date": extra.pop("date", "2025-03-03"),
        **extra,
    }
    return api.client.post("/api/transactions/", json=body, headers=h)


def _new_portfolio(api: Api, h: dict[str, str]) -> int:
    return int(api.client.post("/api/portfolios/", json={"name": "L"}, headers=h).json()["id"])


async def _count_txns(db, pid: int) -> int:
    async with db.read() as s:
        return int(
            (
                await s.execute(select(func.count()).where(Transaction.portfolio_id == pid))
            ).scalar_one()
        )


def test_create_fields_and_exact_decimals(api: Api) -> None:
    _, h = api.user()
    pid = _new_portfolio(api, h)
    r = _txn(api, h, pid, "buy", "0.12345678", "12345.6789", fees="0.01")
    assert r.status_code == 201, r.text
    t = r.json()
    assert t["quantity"] == "0.12345678"
    assert t["price"] == "12345.6789"
    assert t["fees"] == "0.01"
    assert t["total_amount"] == str(  # money: rounded to cents
        (Decimal("0.12345678") * Decimal("12345.6789") + Decimal("0.01")).quantize(
            Decimal("0.01"), ROUND_HALF_EVEN
        )
    )
    assert (t["portfolio"], t["asset_symbol"], t["transaction_type"], t["transaction_date"]) == (
        pid,
        "SPY",
        "buy",
        "2025-03-03",
    )
    assert api.client.get(f"/api/transactions/{t['id']}/", headers=h).json() == t


def test_oversell_is_rejected_and_writes_nothing(api: Api) -> None:
    _, h = api.user()
    pid = _new_portfolio(api, h)
    assert _txn(api, h, pid, "buy", "5").status_code == 201
    before = api.call(_count_txns, api.db, pid)
    r = _txn(api, h, pid, "sell", "5.00000001")
    assert r.status_code == 400
    body = r.json()
    assert body["error"] == "validation_error"
    assert body["details"]["field"] == "quantity"
    assert body["details"]["code"] == "insufficient_quantity"
    assert _txn(api, h, pid, "sell", "1", symbol="AAPL").status_code == 400  # never held
    assert api.call(_count_txns, api.db, pid) == before
    pos = api.client.get(f"/api/portfolios/{pid}/positions/", headers=h).json()["results"]
    assert [p["quantity"] for p in pos] == ["5.00000000"]


def test_ledger_positions_equal_quantcore(api: Api) -> None:
    """A seeded random ledger: positions equal ``quantcore.portfolio.ledger_positions`` (FIFO,
    wash sales included) of the test's own copy of the rows, to the cent."""
    _, h = api.user()
    pid = _new_portfolio(api, h)
    rnd = random.Random(20261122)
    held: dict[str, Decimal] = {}
    rows: list[tuple[str, dt.date, str, Decimal, Decimal, Decimal]] = []
    day = dt.date(2024, 1, 2)
    for _ in range(40):
        day += dt.timedelta(days=rnd.randint(1, 20))
        sym = rnd.choice(["SPY", "AAPL", "TLT"])
        qty = held.get(sym, Decimal(0))
        price = Decimal(rnd.randint(100, 99999)) / 100
        fees = Decimal(rnd.randint(0, 500)) / 100
        if qty > 0 and rnd.random() < 0.4:
            kind, q = "sell", min(qty, Decimal(rnd.randint(1, 10**8 * 5)) / 10**8)
        elif qty > 0 and rnd.random() < 0.15:
            kind, q, price, fees = "dividend", qty, Decimal("0.25"), Decimal(0)
        else:
            kind, q = "buy", Decimal(rnd.randint(1, 10**8 * 7)) / 10**8
        r = _txn(
            api, h, pid, kind, str(q), str(price), symbol=sym, fees=str(fees), date=day.isoformat()
        )
        assert r.status_code == 201, r.text
        held[sym] = qty + q if kind == "buy" else qty - q if kind == "sell" else qty
        rows.append((sym, day, kind, q, price, fees))
    table = pd.DataFrame(rows, columns=["symbol", "date", "type", "quantity", "price", "fees"])
    want = {
        s: (
            Decimal(str(p.quantity)).quantize(Q8),
            Decimal(str(p.cost_basis)).quantize(Decimal("0.01")),
        )
        for s, p in ledger_positions(table).iterrows()
    }
    got = {
        p["asset"]["symbol"]: (Decimal(p["quantity"]), Decimal(p["cost_basis"]))
        for p in api.client.get(f"/api/portfolios/{pid}/positions/?limit=100", headers=h).json()[
            "results"
        ]
    }
    assert got == want
    assert {s: q for s, (q, _) in got.items()} == {s: q for s, q in held.items() if q > 0}


def test_filters(api: Api) -> None:
    _, h = api.user()
    p1, p2 = _new_portfolio(api, h), _new_portfolio(api, h)
    _txn(api, h, p1, "buy", "2", symbol="SPY", date="2025-01-10")
    _txn(api, h, p1, "sell", "1", symbol="SPY", date="2025-02-10")
    _txn(api, h, p1, "buy", "2", symbol="AAPL", date="2025-03-10")
    _txn(api, h, p2, "buy", "2", symbol="TLT", date="2024-12-02")  # held at the ex-date
    _txn(api, h, p2, "dividend", "2", "0.5", symbol="TLT", date="2025-04-10")

    def ids(query: str) -> list[tuple[str, str]]:
        r = api.client.get(f"/api/transactions/?{query}", headers=h)
        assert r.status_code == 200, r.text
        return [(t["asset_symbol"], t["transaction_date"]) for t in r.json()["results"]]

    assert len(ids("")) == 5
    assert ids(f"portfolio_id={p1}") == [
        ("AAPL", "2025-03-10"),
        ("SPY", "2025-02-10"),
        ("SPY", "2025-01-10"),
    ]
    assert ids("asset_symbol=spy") == [("SPY", "2025-02-10"), ("SPY", "2025-01-10")]
    assert ids("transaction_type=dividend") == [("TLT", "2025-04-10")]
    assert ids("date_from=2025-02-01&date_to=2025-03-31") == [
        ("AAPL", "2025-03-10"),
        ("SPY", "2025-02-10"),
    ]
    r = api.client.get("/api/transactions/?date_from=2025-05-01&date_to=2025-01-01", headers=h)
    assert r.json()["details"] == {"field": "date_from", "code": "invalid"}
    r = api.client.get("/api/transactions/?date_from=yesterday", headers=h)
    assert r.json()["details"]["field"] == "date_from"


def test_dividend_leaves_position(api: Api) -> None:
    _, h = api.user()
    pid = _new_portfolio(api, h)
    _txn(api, h, pid, "buy", "4", "25", date="2025-03-03")
    assert _txn(api, h, pid, "dividend", "4", "0.5", date="2025-03-04").status_code == 201
    (pos,) = api.client.get(f"/api/portfolios/{pid}/positions/", headers=h).json()["results"]
    assert (pos["quantity"], pos["cost_basis"]) == ("4.00000000", "100.00")


async def _position_rows(db, pid: int) -> list[tuple[Decimal, Decimal]]:
    async with db.read() as s:
        return [
            (p.quantity, p.cost_basis)
            for p in (
                await s.execute(select(Position).where(Position.portfolio_id == pid))
            ).scalars()
        ]


def test_fifty_concurrent_sells_of_twenty_held(api: Api) -> None:
    """50 parallel sells of 1 share against 20 held: exactly 20 succeed, final quantity 0."""
    _, h = api.user()
    pid = _new_portfolio(api, h)
    assert _txn(api, h, pid, "buy", "20", "100").status_code == 201
    with ThreadPoolExecutor(max_workers=50) as pool:
        statuses = list(
            pool.map(lambda _: _txn(api, h, pid, "sell", "1", "101").status_code, range(50))
        )
    assert statuses.count(201) == 20
    assert statuses.count(400) == 30
    assert api.client.get(f"/api/portfolios/{pid}/positions/", headers=h).json()["count"] == 0
    assert api.call(_position_rows, api.db, pid) == []
    assert api.call(_count_txns, api.db, pid) == 21
