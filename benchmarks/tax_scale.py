"""Tax summary and tax report generation at 10k and 100k ledger rows: this tree beside another.

    python benchmarks/tax_scale.py                       # this tree vs main (a git archive of it)
    python benchmarks/tax_scale.py --before <commit>     # ... vs that commit
    python benchmarks/tax_scale.py --sizes 10000 --repeat 3

The ledger is the one the service hands to ``quantcore.tax``: a transaction table of
``Decimal`` quantities, prices and fees (as stored, ``NUMERIC(38, 8)``), ``datetime.date``
dates, symbols namespaced by portfolio (``"1:S12"``), a per-symbol method mapping, a
``substantially_identical`` map back to the bare symbol and each buy's ``lot_id`` (its
transaction id): ``benchmarks/peers_tax.py``'s history (buys, sells, dividends over
twenty years in 50 symbols), FIFO with wash sales.

Each side runs in its own process with its own tree first on ``PYTHONPATH`` (numba's
cache warm: a first call on 1,000 rows is made before timing). Times are the median of
``--repeat`` runs, wall clock:

* ``summary``: ``match_lots`` of the table, then ``tax_summary`` of the last year;
* ``summary (ledger)``: ``tax_summary`` of the matched ledger alone;
* ``report``: what ``POST /api/tax/reports/generate/`` (``all``) computes and stores after
  the match: before, Form 8949, Schedule D, 1099-DIV and the summary, each rendered as
  JSON and CSV; after, the same figures kept as columns (one JSON document of lists);
* ``csv``/``json download``: after only, the rendering on download from what is stored.

Both sides' figures are compared (Schedule D lines, 1099-DIV boxes, the 8949 CSV text):
the script fails if they differ (``net_capital_gain_loss`` of Schedule D is
``combined_net_gain_loss`` after, and carryovers, deduction and carryforwards carry
Schedule D's signs in the summary after).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def service_table(n: int, n_symbols: int = 50) -> tuple[Any, dict[str, str], dict[str, str]]:
    """The transactions as the service's ledger hands them to ``match_lots``."""
    import pandas as pd

    sys.path.insert(0, str(HERE))
    from peers_tax import make_transactions

    df = make_transactions(n, n_symbols)
    ids = [str(i + 1) for i in range(n)]
    table = pd.DataFrame(
        {
            "symbol": ["1:" + s for s in df["symbol"]],
            "date": pd.to_datetime(df["date"]).dt.date.tolist(),
            "type": df["type"].tolist(),
            "quantity": [Decimal(repr(q)) for q in df["quantity"]],
            "price": [Decimal(repr(p)) for p in df["price"]],
            "fees": [Decimal(repr(f)) for f in df["fees"]],
            "lot_id": [i if t == "buy" else None for i, t in zip(ids, df["type"], strict=True)],
        }
    )
    names = sorted(set(table["symbol"]))
    return table, {s: "fifo" for s in names}, {s: s.split(":")[1] for s in names}


def _median(fn: Any, repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def _side(n: int, repeat: int) -> dict[str, Any]:
    """One tree's timings and figures (run in a child process)."""
    import dataclasses

    from quantcore import tax

    table, methods, same = service_table(n)
    small, m_small, s_small = service_table(1000)
    tax.tax_summary(tax.match_lots(small, method=m_small, substantially_identical=s_small), 2020)  # compiled
    year = int(max(table["date"]).year)
    new = hasattr(tax.Form8949, "from_columns")

    def match() -> Any:
        return tax.match_lots(table, method=methods, substantially_identical=same)

    def summary() -> Any:
        return tax.tax_summary(match(), year)

    out: dict[str, Any] = {"n": n, "tree": tax.__file__}
    out["summary"], _ = _median(summary, repeat)
    ledger = match()
    out["summary (ledger)"], s = _median(lambda: tax.tax_summary(ledger, year), repeat)
    led = dataclasses.replace(ledger, symbols=tuple(x.split(":")[1] for x in ledger.symbols))

    def report_before() -> Any:
        f, d, v = tax.form_8949(led, year), tax.schedule_d(led, year), tax.form_1099_div(led, year)
        doc = {
            "form_8949": json.loads(f.to_json()), "schedule_d": json.loads(d.to_json()),
            "form_1099_div": json.loads(v.to_json()),
            "summary": {k: str(x) for k, x in tax.tax_summary(led, year).__dict__.items()},
        }
        csv = f"{f.to_csv()}\n{d.to_csv()}\n{v.to_csv()}"
        return json.dumps(doc, indent=2), csv, f, d, v

    def report_after() -> Any:
        f = tax.form_8949(led, year)
        d, v = tax.schedule_d(led, year, form=f), tax.form_1099_div(led, year)
        stored = {
            "form_8949": f.columns(), "schedule_d": d.to_dict(), "form_1099_div": v.to_dict(),
            "summary": tax.tax_summary(led, year).__dict__,
        }
        return json.dumps(stored, default=str), None, f, d, v

    out["report"], (text, _, form, sched, div) = _median(report_after if new else report_before, repeat)
    out["stored bytes"] = len(text.encode())
    if new:
        data = json.loads(text)["form_8949"]
        out["csv download"], csv = _median(lambda: tax.Form8949.from_columns(data).to_csv(), repeat)
        out["json download"], _ = _median(lambda: tax.Form8949.from_columns(data).json_text(indent=2), repeat)
    else:
        csv = form.to_csv()
    sd = sched.to_dict()
    line16 = sd.pop("combined_net_gain_loss", None) or sd.pop("net_capital_gain_loss")
    for k in ("short_term_carryforward", "long_term_carryforward"):
        sd[k] = abs(Decimal(str(sd[k])))  # after: negative (Schedule D's signs)
    out["figures"] = {
        "schedule_d": {k: str(v) for k, v in sd.items()} | {"line_16": str(line16)},
        "form_1099_div": [str(div.box_1a_total_ordinary_dividends), str(div.box_1b_qualified_dividends)],
        "summary_net": str(s.net_capital_gain_loss),
        "8949_csv_sha256": hashlib.sha256(csv.encode()).hexdigest(),
        "8949_rows": len(form.part_i) + len(form.part_ii),
    }
    return out


def _run_side(tree: Path, n: int, repeat: int) -> dict[str, Any]:
    code = (
        f"import sys, json; sys.path.insert(0, {str(HERE)!r}); import tax_scale; "
        f"print(json.dumps(tax_scale._side({n}, {repeat})))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(tree)}, cwd=str(tree),
        capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"side {tree} failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default="main", help="commit or branch of the other side (default: main)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        before = Path(tmp) / "before"
        before.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(before)], input=archive.stdout, check=True)
        rows = []
        for n in args.sizes:
            b = _run_side(before, n, args.repeat)
            a = _run_side(ROOT, n, args.repeat)
            same = a["figures"] == b["figures"]
            rows.append((n, b, a, same))
            if not same:
                print(json.dumps({"before": b["figures"], "after": a["figures"]}, indent=2))
    print(f"before = {args.before} (git archive), after = this tree; median of {args.repeat}, seconds\n")
    print("| rows | step | before | after | speed-up |")
    print("|---|---|---|---|---|")
    for n, b, a, _ in rows:
        for step in ("summary", "summary (ledger)", "report"):
            print(f"| {n:,} | {step} | {b[step]:.3f} | {a[step]:.3f} | {b[step] / a[step]:.1f}x |")
        for step in ("csv download", "json download"):
            print(f"| {n:,} | {step} | {b.get(step, 0):.3f} (stored text) | {a[step]:.3f} | |")
        print(f"| {n:,} | stored report, bytes | {b['stored bytes']:,} (JSON doc; + CSV) | {a['stored bytes']:,} | |")
    for n, b, a, _ in rows:
        print(f"\n{n:,} rows: before {b['tree']}, after {a['tree']}")
    for n, _, a, same in rows:
        print(f"\n{n:,} rows: {a['figures']['8949_rows']:,} Form 8949 rows; figures identical: {same}")
    if not all(r[3] for r in rows):
        raise SystemExit("figures differ")


if __name__ == "__main__":
    main()
