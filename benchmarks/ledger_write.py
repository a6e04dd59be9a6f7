"""Ledger write and re-derivation costs (reported, never asserted).

    python benchmarks/ledger_write.py            # 5,000-row portfolio, 100,000-row ledger

1. One transaction written into a portfolio that already holds 5,000 ledger rows,
   SQLite under a temporary directory, through ``service.transactions.services.record``
   (lock, one read of the symbol's rows in all the user's portfolios, whole-symbol
   ledger check, insert, that symbol's positions re-derived from the same rows):
   p50 and p90 of 60 writes (buys and sells alternating, dated after the ledger), and
   the median CPU time of a write (all threads: the event loop's and aiosqlite's),
   which a shared machine's load moves far less than the wall time.
   Then the same with a 2-for-1 split of the symbol in its ledger: a corporate action
   among the rows makes the write check the whole ledger with ``quantcore`` itself.
2. Positions of a 100,000-row ledger re-derived by ``quantcore.portfolio.ledger_positions``
   (the engine of the tax lots: FIFO, wash sales) beside the old incremental path
   (average cost updated row by row in Decimal, as the service did per write).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import statistics
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from quantcore.portfolio import ledger_positions  # noqa: E402
from service.db import Database, migrate  # noqa: E402
from service.db.models import Asset, Portfolio, Transaction, User  # noqa: E402
from service.ledger import positions as derive  # noqa: E402
from service.transactions.services import LedgerEntry, record  # noqa: E402

SYMBOLS = ["AAPL", "MSFT", "SPY", "KO", "TLT"]


def _ledger(n: int, seed: int = 7) -> list[tuple[str, dt.date, str, Decimal, Decimal, Decimal]]:
    """A valid date-ordered ledger of ``n`` rows over a few symbols (sells within holdings)."""
    rng = np.random.default_rng(seed)
    held = dict.fromkeys(SYMBOLS, Decimal(0))
    day = dt.date(2005, 1, 3)
    rows = []
    for i in range(n):
        if i % 5 == 0:
            day += dt.timedelta(days=1)
        sym = SYMBOLS[int(rng.integers(len(SYMBOLS)))]
        price = Decimal(int(rng.integers(1_000, 50_000))) / 100
        if held[sym] > 10 and rng.random() < 0.4:
            q = Decimal(int(rng.integers(1, 10)))
            held[sym] -= q
            rows.append((sym, day, "sell", q, price, Decimal("1")))
        else:
            q = Decimal(int(rng.integers(1, 20)))
            held[sym] += q
            rows.append((sym, day, "buy", q, price, Decimal("1")))
    return rows


async def _write_p50(
    n_rows: int, writes: int, *, split: bool = False
) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite+aiosqlite:///{tmp}/bench.db")
        await migrate(db)
        async with db.write() as s:
            user = User(username="bench", password_hash="x")
            s.add(user)
            await s.flush()
            portfolio = Portfolio(user_id=user.id, name="big")
            s.add(portfolio)
            ids = {}
            for sym in SYMBOLS:
                found = (await s.execute(Asset.__table__.select().where(Asset.symbol == sym))).first()
                if found is None:
                    asset = Asset(symbol=sym, name=sym, asset_type="stock", sector="")
                    s.add(asset)
                    await s.flush()
                    ids[sym] = asset.id
                else:
                    ids[sym] = found.id
            await s.flush()
            s.add_all(
                Transaction(portfolio_id=portfolio.id, asset_id=ids[sym], transaction_type=k,
                            quantity=q, price=p, fees=f, transaction_date=d)
                for sym, d, k, q, p, f in _ledger(n_rows)
            )  # fmt: skip
            if split:
                s.add(Transaction(portfolio_id=portfolio.id, asset_id=ids["SPY"], transaction_type="split",
                                  quantity=Decimal(0), price=Decimal(0), fees=Decimal(0),
                                  transaction_date=dt.date(2025, 12, 31), ratio=Decimal(2)))  # fmt: skip
            await s.flush()
            await derive.sync_positions(s, user.id)
        day = dt.date(2026, 1, 5)
        times, cpu = [], []
        for i in range(writes):
            kind = "buy" if i % 2 == 0 else "sell"
            entry = LedgerEntry("SPY", kind, Decimal(1), Decimal("400.5"), Decimal(0), day)
            t0, c0 = time.perf_counter(), time.process_time()
            async with db.write() as s:
                await record(s, user.id, portfolio.id, entry)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        await db.dispose()
    times, cpu = times[5:], cpu[5:]  # warm-up (first numba calls, statement caches)
    return (
        statistics.median(times) * 1e3,
        float(np.percentile(times, 90)) * 1e3,
        statistics.median(cpu) * 1e3,
    )


def _incremental(rows) -> dict[str, tuple[Decimal, Decimal]]:
    """The old path: average cost kept per write (buy adds cost, sell removes pro rata)."""
    pos: dict[str, tuple[Decimal, Decimal]] = {}
    q8 = Decimal("1e-8")
    for sym, _, kind, q, p, f in rows:
        held, basis = pos.get(sym, (Decimal(0), Decimal(0)))
        if kind == "buy":
            pos[sym] = (held + q, (basis + q * p + f).quantize(q8))
        else:
            rest = held - q
            pos[sym] = (rest, (basis * rest / held).quantize(q8) if rest else Decimal(0))
    return pos


def main() -> None:
    load = os.getloadavg()[0]
    p50, p90, cpu = asyncio.run(_write_p50(5_000, 65))
    print(
        f"one write into a 5,000-row portfolio (SQLite, load {load:.1f}): "
        f"p50 {p50:.1f} ms, p90 {p90:.1f} ms, CPU p50 {cpu:.1f} ms"
    )
    p50, p90, cpu = asyncio.run(_write_p50(5_000, 65, split=True))
    print(
        f"the same, the symbol's ledger holding a split: "
        f"p50 {p50:.1f} ms, p90 {p90:.1f} ms, CPU p50 {cpu:.1f} ms"
    )
    rows = _ledger(100_000)
    table = pd.DataFrame(rows, columns=["symbol", "date", "type", "quantity", "price", "fees"])
    ledger_positions(table.head(100))  # compile
    t0 = time.perf_counter()
    ledger_positions(table)
    derive_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    _incremental(rows)
    incr_s = time.perf_counter() - t0
    print(
        f"100,000-row ledger: re-derived (quantcore, Decimal table) {derive_s * 1e3:.0f} ms; "
        f"old incremental replay {incr_s * 1e3:.0f} ms ({incr_s / 100_000 * 1e6:.1f} us per write)"
    )


if __name__ == "__main__":
    main()
