"""The portfolio list with cash and three currencies against the single-currency list.

    python benchmarks/portfolio_list_cash.py            # 2,000 requests per case
    python benchmarks/portfolio_list_cash.py -n 500
    python benchmarks/portfolio_list_cash.py --cases single   # also runs on code without cash

Two users in one process, one app, SQLite under a temporary directory, the same
shape of book: 20 portfolios of 10 positions each.

* **single**: USD portfolios of USD assets, no cash rows (the list before cash and
  currencies; it still derives a, negative, cash balance from the buys).
* **cash + 3 currencies**: base currencies USD, EUR and GBP in turn; each portfolio
  holds EUR, GBP and JPY listings beside USD ones, and has a deposit in each of USD,
  EUR and GBP: every value goes through exchange rates and three cash balances.

Each case is timed twice, in-process (ASGI, no server):

* ``steady``: ``GET /api/portfolios/`` with the book kept (the common request);
* ``after a write``: the same GET right after the user's ledger version moved, so
  the book is read again (positions, recent buys and the cash rows) and revalued.

Numbers are reported, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.service_inprocess import _cli  # noqa: E402

USD_SYMBOLS = ("SPY", "AAPL", "MSFT", "GOOGL", "AMZN", "JPM", "XOM", "JNJ", "PG", "TLT")
MIXED_SYMBOLS = ("SPY", "AAPL", "MSFT", "GOOGL", "SAP.DE", "SIE.DE", "HSBA.L", "AZN.L", "JPM", "TLT")
BASES = ("USD", "EUR", "GBP")


async def _seed(c: Any, token: str, *, mixed: bool) -> None:
    h = {"Authorization": f"Token {token}"}
    assets = {a["symbol"]: a for a in (await c.get("/api/assets/?limit=100")).json()["results"]}
    symbols = list(MIXED_SYMBOLS if mixed else USD_SYMBOLS)
    if mixed:  # a JPY listing in place of the last USD one
        symbols[-1] = next(s for s, a in assets.items() if a.get("currency") == "JPY")
    for i in range(20):
        body: dict[str, Any] = {"name": f"p{i:02d}"}
        if mixed:
            body["base_currency"] = BASES[i % 3]
        pid = (await c.post("/api/portfolios/", json=body, headers=h)).json()["id"]
        if mixed:
            for code in BASES:
                cash = {"portfolio": pid, "transaction_type": "deposit", "price": "50000",
                        "currency": code, "transaction_date": "2025-01-02"}  # fmt: skip
                r = await c.post("/api/transactions/", json=cash, headers=h)
                assert r.status_code == 201, r.text
        for j, symbol in enumerate(symbols):
            buy = {"asset_symbol": symbol, "quantity": f"{1 + i + j}.5",
                   "purchase_price": "100.00", "purchase_date": "2025-01-02"}  # fmt: skip
            r = await c.post(f"/api/portfolios/{pid}/positions/", json=buy, headers=h)
            assert r.status_code == 201, r.text


def _scope(token: str) -> dict[str, Any]:
    return {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
        "scheme": "http", "path": "/api/portfolios/", "raw_path": b"/api/portfolios/",
        "query_string": b"", "root_path": "", "client": ("127.0.0.1", 5555),
        "server": ("127.0.0.1", 8000),
        "headers": [(b"host", b"127.0.0.1"), (b"authorization", f"Token {token}".encode())],
    }  # fmt: skip


async def _get(app: Any, scope: dict[str, Any]) -> None:
    sent: list[Any] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    await app(dict(scope), receive, send)
    assert sent[0]["status"] == 200, sent


async def _steady(app: Any, token: str, n: int) -> float:
    scope = _scope(token)
    for _ in range(100):
        await _get(app, scope)
    start = time.perf_counter()
    for _ in range(n):
        await _get(app, scope)
    return (time.perf_counter() - start) / n


async def _after_write(app: Any, token: str, user_id: int, n: int) -> float:
    from sqlalchemy import update

    from service.db.models import LedgerVersion

    db = app.state.resources.db
    scope = _scope(token)
    spent = 0.0
    for _ in range(n):
        async with db.write() as s:  # what every ledger write does, alone
            await s.execute(
                update(LedgerVersion)
                .where(LedgerVersion.user_id == user_id)
                .values(version=LedgerVersion.version + 1)
            )
        start = time.perf_counter()
        await _get(app, scope)
        spent += time.perf_counter() - start
    return spent / n


async def _user_id(app: Any, name: str) -> int:
    from sqlalchemy import select

    from service.db.models import User

    async with app.state.resources.db.read() as s:
        return int((await s.execute(select(User.id).where(User.username == name))).scalar_one())


CASES = {"single": "single currency, no cash rows", "mixed": "cash + 3 currencies"}


async def _main(n: int, tokens: dict[str, str]) -> None:
    from litestar.testing import AsyncTestClient

    from service.app import app_from_env

    app = app_from_env()
    async with AsyncTestClient(app) as client:
        for case in tokens:
            await _seed(client, tokens[case], mixed=case == "mixed")
        print(f"{'GET /api/portfolios/ (20 x 10)':<44}{'steady':>12}{'after a write':>16}")
        for case in tokens:
            label = CASES[case]
            steady = await _steady(app, tokens[case], n)
            fresh = await _after_write(app, tokens[case], await _user_id(app, case), max(n // 10, 50))
            print(f"{label:<44}{steady * 1e3:>9.3f} ms{fresh * 1e3:>13.3f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=2000, help="steady requests per case")
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=list(CASES))
    args = parser.parse_args(argv)
    env = {
        **os.environ,
        "QC_DATA_DIR": tempfile.mkdtemp(prefix="qc-cashlist-"),
        "QC_RATE_LIMIT_AUTHENTICATED": "1000000000/hour",
        "QC_RATE_LIMIT_ANONYMOUS": "1000000000/hour",
    }
    env.pop("QC_DATABASE_URL", None)
    _cli(env, "migrate")
    tokens = {}
    for name in args.cases:
        _cli(env, "createuser", name, "--password-stdin", stdin=b"benchmark-password\n")
        tokens[name] = _cli(env, "token", name)
    os.environ.update({k: v for k, v in env.items() if k.startswith("QC_")})
    asyncio.run(_main(args.n, tokens))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
