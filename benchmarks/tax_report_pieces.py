"""The tax report and summary after the lot ledger is ready, in process, on ``ledger_scale``'s
statement: CPU and wall milliseconds of each part, this tree beside others.

    python benchmarks/tax_report_pieces.py --rows 100000 --rows 1000000
    python benchmarks/tax_report_pieces.py --rows 100000 --against <other checkout>

The statement of ``benchmarks/ledger_scale.py`` (same seed and symbols) is matched in
process (``quantcore.tax.splice.grouped``, or ``match_lots`` on a tree before it; FIFO,
symbols namespaced ``"1:SYM"`` as the service does), then,
best of ``--repeat``:

* ``figures``: what ``POST /api/tax/reports/generate/`` (``all``, 2025) computes after
  loading the ledger (``service.tax.services._figures``: Form 8949, Schedule D, 1099-DIV,
  the summary, the stored content);
* ``size + insert``: ``size_bytes`` and the row's insert into a SQLite file through the
  service's ``Database`` (the ORM encodes the content again);
* ``summary``: ``tax_summary`` of 2025 (the tax summary's work once the ledger is ready:
  on a tree that keeps the pieces per processing group, as the service does, from the
  parts' yearly gains);
* ``splice``: one typed buy of the first symbol on 2025-12-30: the match of that
  symbol's rows and ``splice_ledger`` (what the summary after a write waits for first).

Each tree runs in its own process with its tree first on ``PYTHONPATH`` (numba's cache
warm after the first call). The pieces of the year and of the ledger are printed beside.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent


def _best(fn: Any, repeat: int) -> tuple[float, float]:
    cpu = wall = float("inf")
    for _ in range(repeat):
        c, w = time.process_time(), time.perf_counter()
        fn()
        cpu, wall = min(cpu, time.process_time() - c), min(wall, time.perf_counter() - w)
    return cpu * 1000, wall * 1000


async def _measure(n: int, repeat: int) -> dict[str, Any]:
    import msgspec
    import numpy as np
    import pandas as pd

    from benchmarks.ledger_scale import _symbols, statement
    from quantcore.tax import TaxRates, match_lots, tax_summary
    from quantcore.tax.dividends import year_bounds
    from quantcore.tax.splice import splice_ledger

    try:
        from quantcore.tax.splice import grouped
    except ImportError:
        grouped = None
    from service.db import Database
    from service.db.models import Base, TaxReport, User, utcnow
    from service.tax.services import _figures

    symbols = _symbols(HERE)
    df = pd.read_csv(io.StringIO("\n".join(statement(n, symbols))))
    df = df[df["type"].isin(["buy", "sell", "dividend"])].reset_index(drop=True)
    df = df.assign(symbol="1:" + df["symbol"], price=df["price"].astype(str), fees=df["fees"].astype(str))
    df = df[["symbol", "date", "type", "quantity", "price", "fees"]]
    rates = TaxRates()
    first, last = year_bounds(2025)
    out: dict[str, Any] = {}
    if grouped is None:  # a tree before the ledger kept per processing group
        ledger: Any = match_lots(df)
        realized = ledger.realized
        out["summary"] = _best(lambda: tax_summary(ledger, 2025, rates=rates), repeat)
    else:  # as the service keeps it: the summary reads the parts' yearly gains
        ledger = grouped(df)
        realized = ledger.whole().realized
        out["summary"] = _best(
            lambda: tax_summary(ledger.ledger, 2025, rates=rates, gains=ledger.yearly_gains()), repeat
        )
    out["pieces"] = realized.size
    out["pieces of 2025"] = int(np.count_nonzero((realized["sold"] >= first) & (realized["sold"] <= last)))
    del realized
    out["figures"] = _best(lambda: _figures(ledger, 2025, "all", rates), repeat)
    content = {"portfolio_id": 1, **_figures(ledger, 2025, "all", rates)}
    out["stored MB"] = len(msgspec.json.encode(content)) / 1e6

    with tempfile.TemporaryDirectory() as d:
        db = Database(f"sqlite+aiosqlite:///{d}/t.db")
        async with db.engine.begin() as c:
            await c.run_sync(Base.metadata.create_all)
        async with db.write() as s:
            s.add(User(id=1, username="u", username_key="u", password_hash="x"))
        cpu = wall = float("inf")
        for _ in range(repeat):
            c0, w0 = time.process_time(), time.perf_counter()
            async with db.write() as s:
                size = len(msgspec.json.encode(content))
                s.add(TaxReport(user_id=1, tax_year=2025, report_type="all", content=content,
                                size_bytes=size, created_at=utcnow()))  # fmt: skip
            cpu, wall = min(cpu, time.process_time() - c0), min(wall, time.perf_counter() - w0)
        out["size + insert"] = (cpu * 1000, wall * 1000)
        await db.engine.dispose()

    sym = "1:" + symbols[0]
    at = int(np.searchsorted(df["date"].to_numpy(), "2025-12-30", side="right"))
    buy = pd.DataFrame([{"symbol": sym, "date": "2025-12-30", "type": "buy", "quantity": 1, "price": "100", "fees": "0"}])
    new = pd.concat([df.iloc[:at], buy, df.iloc[at:]], ignore_index=True)
    old_to_new = np.arange(len(df), dtype=np.int64)
    old_to_new[at:] += 1
    old_to_new[(df["symbol"] == sym).to_numpy()] = -1
    part_rows = np.flatnonzero((new["symbol"] == sym).to_numpy())
    part = match_lots(new.iloc[part_rows].reset_index(drop=True))
    out["splice"] = _best(lambda: splice_ledger(ledger, part, [sym], old_to_new, part_rows), repeat)
    return out


def _child(n: int, repeat: int) -> None:
    r = asyncio.run(_measure(n, repeat))
    parts = ", ".join(f"{k} {v[0]:.0f} / {v[1]:.0f}" for k, v in r.items() if isinstance(v, tuple))
    print(f"{n:,} rows ({r['pieces']:,} pieces, {r['pieces of 2025']:,} in 2025; stored {r['stored MB']:.1f} MB), "
          f"ms CPU / wall: {parts}", flush=True)  # fmt: skip


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, action="append")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--against", type=Path, action="append", default=[], metavar="TREE")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    rows = args.rows or [100_000]
    if args.child:
        for n in rows:
            _child(n, args.repeat)
        return 0
    for tree in [HERE, *(t.resolve() for t in args.against)]:
        print(f"# {tree}", flush=True)
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--repeat", str(args.repeat)]
        cmd += [a for n in rows for a in ("--rows", str(n))]
        subprocess.run(cmd, env={**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{HERE}"}, check=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
