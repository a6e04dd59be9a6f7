"""A generic-CSV statement of N rows imported through the import service: rows/s, wall and CPU.

    python benchmarks/imports_csv.py                        # 100,000 rows, SQLite
    python benchmarks/imports_csv.py --rows 20000 --database-url postgresql+asyncpg://127.0.0.1/test
    python benchmarks/imports_csv.py --tree /tmp/old        # also the same on another checkout

The statement is ``benchmarks/ledger_scale.py``'s (``date,type,symbol,quantity,price,fees,
amount,id``: one deposit, then buys, sells and dividends over 2016-2025 in 40 symbols).
Each tree runs in a fresh subprocess (``benchmarks/_import_child.py``, shared with
``imports_ofx.py``: the tree's ``service`` first on ``PYTHONPATH``) on a fresh database
(SQLite in a temporary directory, or a scratch PostgreSQL database created and dropped):
the import service as ``POST /api/portfolios/{id}/import/`` runs it, after a warm-up
import of a few rows into another portfolio, as a dry run, the import, and the same file
again (every row a duplicate), into a portfolio with the strict cash policy. Wall and
CPU seconds of the process (the machine may be shared: CPU is the steadier figure):
rows/s by wall and by CPU seconds; on PostgreSQL the CPU seconds of the server's
backends on the database follow ``+`` (the server must run on this machine). With
``--repeat``, the run of least CPU (the process's and the server's) of each tree, the
trees alternating. Reported, never asserted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _harness import child_json

HERE = Path(__file__).resolve().parent.parent


def _symbols() -> list[str]:
    sys.path.insert(0, str(HERE / "benchmarks"))
    import ledger_scale

    return ledger_scale._symbols(HERE)


def _run(tree: Path, n: int, url: str, symbols: list[str], profile: str) -> dict[str, object]:
    child = [str(HERE / "benchmarks" / "_import_child.py"), "csv", str(n), url]
    extra = ["--symbols", " ".join(symbols), *(["--profile", profile] if profile else [])]
    return child_json([*child, *extra], tree)  # that tree's service, this tree's child


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument(
        "--database-url", default="sqlite", help="postgresql+asyncpg://... (default: SQLite)"
    )
    parser.add_argument("--tree", action="append", default=[], help="another checkout to time too")
    parser.add_argument("--repeat", type=int, default=1, help="runs per tree; the one of least CPU")
    parser.add_argument("--profile", default="", help="write cProfile stats of the import here")
    args = parser.parse_args(argv)
    symbols = _symbols()
    backend = "SQLite" if args.database_url == "sqlite" else "PostgreSQL"
    print(f"generic CSV, {args.rows:,} rows, {backend}, strict cash policy")
    print(
        "| tree | dry run rows/s wall / CPU (s) | import rows/s wall / CPU (s) "
        "| same file again rows/s wall / CPU (s) |"
    )
    print("|---|---|---|---|")
    trees = [*map(Path, args.tree), HERE]
    best: dict[Path, dict[str, tuple[float, float, float]]] = {t: {} for t in trees}
    for _ in range(args.repeat):  # trees alternate: a change of load hits each alike
        for tree in trees:
            res = _run(
                tree, args.rows, args.database_url, symbols, args.profile if tree == HERE else ""
            )
            for label in ("dry_run", "import", "again"):
                wall, cpu = res[label]  # type: ignore[misc]
                server = float(res.get(label + "_server_cpu", 0.0))  # type: ignore[arg-type]
                if label not in best[tree] or cpu + server < sum(best[tree][label][1:]):
                    best[tree][label] = (wall, cpu, server)
    for tree in trees:
        cells = []
        for label in ("dry_run", "import", "again"):
            wall, cpu, server = best[tree][label]
            cell = f"{args.rows / wall:,.0f} / {args.rows / cpu:,.0f} ({wall:.2f} / {cpu:.2f}"
            cells.append(cell + (f" + {server:.2f})" if backend == "PostgreSQL" else ")"))
        name = "this tree" if tree == HERE else str(tree)
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
