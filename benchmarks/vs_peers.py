"""Print quantcore's time beside its peers' on the same work, and the ratio to the goal.

    python benchmarks/vs_peers.py            # full sizes (the issues' goals)
    python benchmarks/vs_peers.py --quick    # CI: smaller inputs, fewer runs
    python benchmarks/vs_peers.py -k rsi     # only cases whose name contains "rsi"

Results also go to ``bench-results/vs_peers.json``. Goals are reported, never
asserted: the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _harness import Case, Result, fmt_seconds, run_case  # noqa: E402


def discover() -> list[Case]:
    cases: list[Case] = []
    for info in sorted(pkgutil.iter_modules([str(HERE)]), key=lambda m: m.name):
        if info.name.startswith("peers_"):
            cases.extend(importlib.import_module(info.name).CASES)
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small inputs for CI")
    parser.add_argument("-k", default="", help="substring filter on case names")
    parser.add_argument("--budget", type=float, default=None, help="seconds of repeats per side")
    parser.add_argument("--out", default=str(HERE.parent / "bench-results" / "vs_peers.json"))
    args = parser.parse_args(argv)
    budget = args.budget if args.budget is not None else (0.2 if args.quick else 2.0)

    cases = [c for c in discover() if args.k in c.name and (c.quick or not args.quick)]
    header = f"{'case':<52} {'first call':>11} {'quantcore':>11} {'peer':>11} {'peer lib':<22} {'speedup':>8}  goal"
    print(header)
    print("-" * len(header))
    results: list[Result] = []
    started = time.perf_counter()
    for case in cases:
        try:
            res = run_case(case, quick=args.quick, budget=budget)
        except Exception as exc:  # a broken peer must not hide the other rows
            print(f"{case.name:<52} ERROR {type(exc).__name__}: {exc}")
            continue
        results.append(res)
        speed = "-" if res.speedup is None else f"{res.speedup:.1f}x"
        # Goals are stated for the full sizes; quick (CI) sizes only show the code runs.
        met = "" if args.quick else {None: "", True: "met", False: "NOT met"}[res.goal_met]
        goal = f"({case.goal_text} at full size)" if args.quick and case.goal_text else case.goal_text
        print(
            f"{case.name:<52} {fmt_seconds(res.first_call):>11} {fmt_seconds(res.ours):>11} "
            f"{fmt_seconds(res.peer):>11} {case.peer_name:<22} {speed:>8}  {goal} {met}",
            flush=True,
        )
    print(f"\n{len(results)} cases in {time.perf_counter() - started:.1f} s ({'quick' if args.quick else 'full'} sizes)")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            [
                {
                    "case": r.case.name,
                    "first_call_s": r.first_call,
                    "quantcore_s": r.ours,
                    "peer_s": r.peer,
                    "peer": r.case.peer_name,
                    "speedup": r.speedup,
                    "goal": r.case.goal_text,
                    "goal_met": None if args.quick else r.goal_met,
                    "quick": args.quick,
                }
                for r in results
            ],
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
