"""The grouped lot ledger of a large statement, in process: match and per-group parts.

    python benchmarks/grouped_match.py --rows 1000000                  # this checkout
    python benchmarks/grouped_match.py --rows 1000000 --tree /tmp/old  # another one

The ledger is ``benchmarks/lot_ledger_columns.py``'s (``benchmarks/ledger_scale.py``'s
statement as the service's columns, one FIFO portfolio, no database), made the table
the service matches (``service.ledger.lots.lot_table``). Timed: ``grouped`` of it, what
the first tax read after a start runs (a tree whose ``grouped`` takes a ``LotLedger``:
``grouped(match_lots(...))``), after one small call has loaded numba's cache. CPU seconds
(``time.process_time``: every thread) and wall seconds of the first call and the median
of ``--repeat`` more; the peak resident memory the first call adds (``VmHWM`` after,
reset before, less ``VmRSS`` before).
"""

from __future__ import annotations

import argparse
import inspect
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _mib(field: str) -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field)) / 1024


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--tree", type=Path, default=HERE.parent, help="the checkout to time")
    args = p.parse_args(argv)
    sys.path[:0] = [str(args.tree), str(args.tree / "benchmarks")]
    from lot_ledger_columns import ledger

    from quantcore.tax import match_lots
    from quantcore.tax.splice import grouped
    from service.ledger.lots import lot_table

    whole_table = "transactions" in inspect.signature(grouped).parameters

    def run(table: Any, bare: Any, by_symbol: Any) -> Any:
        if whole_table:
            return grouped(table, method=by_symbol, substantially_identical=bare)
        return grouped(match_lots(table, method=by_symbol, substantially_identical=bare))

    run(*lot_table(ledger(2_000)))
    table, bare, by_symbol = lot_table(ledger(args.rows))
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the peak from here
    rss = _mib("VmRSS")
    c, w = time.process_time(), time.perf_counter()
    out = run(table, bare, by_symbol)
    first = (time.process_time() - c, time.perf_counter() - w)
    grown = _mib("VmHWM") - rss
    pieces = out.pieces
    del out
    cpu, wall = [], []
    for _ in range(args.repeat):
        c, w = time.process_time(), time.perf_counter()
        run(table, bare, by_symbol)
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    print(
        f"{args.tree}: {args.rows:,} rows, {pieces:,} pieces; first CPU / wall {first[0]:.2f} / {first[1]:.2f} s, "
        f"median {statistics.median(cpu):.2f} / {statistics.median(wall):.2f} s; peak RSS +{grown:,.0f} MiB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
