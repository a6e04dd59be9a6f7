"""Print quantcore's time beside its peers' on the same work, and the ratio to the goal.

    python benchmarks/vs_peers.py            # full sizes (the issues' goals)
    python benchmarks/vs_peers.py --quick    # CI: smaller inputs, fewer runs
    python benchmarks/vs_peers.py -k rsi     # only cases whose name contains "rsi"
    python benchmarks/vs_peers.py -k rsi -k macd   # ... or "macd"
    python benchmarks/vs_peers.py --tree /tmp/old --repeat 2   # before/after, one run

Results also go to ``bench-results/vs_peers.json``. Goals are reported, never
asserted: the machines are shared and noisy.

``--tree OLD`` compares this tree's quantcore with another checkout's (a ``git
worktree`` or ``git archive`` of an older commit) on this tree's cases: every case
runs in a fresh process per tree, the trees alternating case by case and, from one
repeat to the next, in which goes first, each tree with its own numba cache (empty at
the start: a tree's first call of a case is a compile unless an earlier case compiled
the same kernels, in the same order for both trees). The speedup is the peer's time
over quantcore's in the same process, so the load of the moment divides out; the
table gives its median per tree and the ratio of the two (``> 1``: this tree is
faster against the peer), the 1-minute load average at the start of each case.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _harness import Case, Result, fmt_seconds, run_case  # noqa: E402


def discover() -> list[Case]:
    return list(_modules())


def _modules() -> dict[Case, str]:
    """Every case, with the ``peers_<domain>`` module that defines it."""
    cases: dict[Case, str] = {}
    for info in sorted(pkgutil.iter_modules([str(HERE)]), key=lambda m: m.name):
        if info.name.startswith("peers_"):
            cases.update(dict.fromkeys(importlib.import_module(info.name).CASES, info.name))
    return cases


_CHILD = """
import importlib, json, sys
sys.path.insert(0, sys.argv[1])
from _harness import run_case
case = next(c for c in importlib.import_module(sys.argv[5]).CASES if c.name == sys.argv[2])
res = run_case(case, quick=sys.argv[3] == "1", budget=float(sys.argv[4]))
print(json.dumps({"first_call": res.first_call, "ours": res.ours, "peer": res.peer}))
"""


def _in_tree(
    tree: Path, cache: str, case: str, module: str, quick: bool, budget: float
) -> dict[str, Any] | str:
    """One case run in a fresh process on ``tree``'s quantcore: its timings, or the error."""
    env = {**os.environ, "PYTHONPATH": str(tree), "NUMBA_CACHE_DIR": cache}
    quick_flag = "1" if quick else "0"
    args = [sys.executable, "-c", _CHILD, str(HERE), case, quick_flag, str(budget), module]
    proc = subprocess.run(args, capture_output=True, text=True, check=False, env=env, cwd=tree)
    if proc.returncode != 0:
        return (proc.stderr.strip().splitlines() or ["exit status " + str(proc.returncode)])[-1]
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def compare_trees(cases: list[Case], other: Path, repeat: int, quick: bool, budget: float) -> int:
    """Each case on ``other``'s quantcore and on this tree's, interleaved (see the docstring)."""
    trees = {"other": other, "this": HERE.parent}
    print(f"other: {other}\nthis:  {HERE.parent}\n")
    header = (
        f"{'case':<52} {'load':>5} {'1st call other':>14} {'this':>9} "
        f"{'speedup other':>13} {'this':>6} {'this/other':>10}"
    )
    print(header)
    print("-" * len(header))
    ratios = []
    modules = {c.name: m for c, m in _modules().items()}
    with tempfile.TemporaryDirectory() as c1, tempfile.TemporaryDirectory() as c2:
        caches = {"other": c1, "this": c2}
        for case in cases:
            load = os.getloadavg()[0]
            runs: dict[str, list[dict[str, Any]]] = {"other": [], "this": []}
            error = ""
            for r in range(repeat):
                for label in list(trees)[:: 1 if r % 2 == 0 else -1]:
                    got = _in_tree(
                        trees[label], caches[label], case.name, modules[case.name], quick, budget
                    )
                    if isinstance(got, str):
                        error = f"{label}: {got}"
                    else:
                        runs[label].append(got)
            if error or case.peer is None:
                print(f"{case.name:<52} {load:>5.1f} {error or 'no peer'}", flush=True)
                continue
            first = {lb: fmt_seconds(runs[lb][0]["first_call"]) for lb in trees}
            speed = {lb: statistics.median(x["peer"] / x["ours"] for x in runs[lb]) for lb in trees}
            ratios.append(speed["this"] / speed["other"])
            print(
                f"{case.name:<52} {load:>5.1f} {first['other']:>14} {first['this']:>9} "
                f"{speed['other']:>12.2f}x {speed['this']:>5.2f}x {ratios[-1]:>10.2f}",
                flush=True,
            )
    if ratios:
        geo = statistics.geometric_mean(ratios)
        print(f"\nthis/other speedup over {len(ratios)} cases: geometric mean {geo:.3f}, "
              f"min {min(ratios):.2f}, max {max(ratios):.2f}")  # fmt: skip
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small inputs for CI")
    parser.add_argument(
        "-k", action="append", default=[], help="substring filter on case names (repeat: any of them)"
    )
    parser.add_argument("--budget", type=float, default=None, help="seconds of repeats per side")
    parser.add_argument("--out", default=str(HERE.parent / "bench-results" / "vs_peers.json"))
    parser.add_argument("--tree", default=None, help="another checkout to compare with (see above)")
    parser.add_argument("--repeat", type=int, default=2, help="with --tree: runs per case and tree")
    args = parser.parse_args(argv)
    budget = args.budget if args.budget is not None else (0.2 if args.quick else 2.0)

    wanted = args.k or [""]
    cases = [
        c for c in discover() if any(k in c.name for k in wanted) and (c.quick or not args.quick)
    ]
    if args.tree:
        return compare_trees(cases, Path(args.tree).resolve(), args.repeat, args.quick, budget)
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
