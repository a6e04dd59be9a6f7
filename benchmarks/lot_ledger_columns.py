"""The tax figures' lot ledger at scale: built from the ledger columns as columns, beside the
row-by-row build it replaced, on the same ledger in one process.

    python benchmarks/lot_ledger_columns.py                 # 10,000 and 100,000 rows
    python benchmarks/lot_ledger_columns.py --rows 1000000

The ledger is ``benchmarks/ledger_scale.py``'s statement (one deposit, then buys, sells and
dividends in 40 symbols over 2016-2025) as :class:`service.ledger.columns.LedgerColumns`
(what the service reads), no database. Each side is timed after one warm call (numba's
cache warm): CPU milliseconds (``time.process_time``, every thread of the process: the
honest figure on a shared machine) and wall milliseconds, medians of ``--repeat``.

* ``row by row``: ``columns_rows`` (a tuple of ``Decimal`` per row) then ``match_rows``
  (a table built from those records);
* ``columns``: ``_match_columns`` (``lot_table``: categorical symbols, Arrow decimals).

Both results are compared array for array; the script fails if they differ.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

from ledger_scale import statement  # noqa: E402

from service.ledger.columns import LedgerColumns, build  # noqa: E402
from service.ledger.lots import _match_columns, columns_rows, match_rows  # noqa: E402

SYMBOLS = [f"S{i:02d}" for i in range(40)]


def ledger(n: int) -> LedgerColumns:
    """The ``n``-row statement as the columns of one user with one FIFO portfolio."""
    assets = [(100 + i, s, "USD") for i, s in enumerate(SYMBOLS)]
    asset_id = {s: a for a, s, _ in assets}
    rows: list[tuple[Any, ...]] = []
    for k, line in enumerate(statement(n, SYMBOLS)[1:], start=1):
        day, kind, sym, qty, price, fees, amount, _ = line.split(",")
        if kind == "deposit":
            rows.append((k, 1, None, None, day, kind, "1", amount, "0", None, None, None, None, "USD"))
        else:
            rows.append((k, 1, asset_id[sym], None, day, kind, qty, price, fees, None, None, None, None, None))
    return build(1, [(1, "fifo", "USD", "track")], assets, rows)


def _timed(fn: Any, repeat: int) -> tuple[float, float, Any]:
    out = fn()
    cpu, wall = [], []
    for _ in range(repeat):
        c, w = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return statistics.median(cpu) * 1000, statistics.median(wall) * 1000, out


def _same(a: Any, b: Any) -> None:
    for name, want in vars(a).items():
        got = getattr(b, name)
        if isinstance(want, np.ndarray):
            if want.shape != got.shape or not (want == got).all():
                raise SystemExit(f"the two builds differ in {name}")
        elif name != "source" and want != got:
            raise SystemExit(f"the two builds differ in {name}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, action="append")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    print("| rows | row by row CPU / wall (ms) | columns CPU / wall (ms) | CPU ratio |")
    print("|---|---|---|---|")
    for n in args.rows or [10_000, 100_000]:
        cols = ledger(n)
        methods = dict(zip(cols.portfolios.ids, cols.portfolios.lot_method, strict=True))

        def by_rows(cols: LedgerColumns = cols, methods: dict[int, str] = methods) -> Any:
            rows, actions = columns_rows(cols)
            return match_rows(rows, methods, actions)

        rc, rw, want = _timed(by_rows, args.repeat)
        cc, cw, got = _timed(lambda cols=cols: _match_columns(cols), args.repeat)
        _same(want, got.whole())
        print(f"| {n:,} | {rc:,.0f} / {rw:,.0f} | {cc:,.0f} / {cw:,.0f} | {rc / cc:.1f}x |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
