"""The install's warm-up on an empty numba cache: CPU seconds per group, tree beside tree.

    python benchmarks/warm_groups.py                         # this tree
    python benchmarks/warm_groups.py --tree /tmp/old         # ... and another checkout

Each tree runs ``quantcore.warmup.warm(only=[group])`` group after group in one fresh
process with its own empty ``NUMBA_CACHE_DIR`` (the tree's ``quantcore`` first on the
path), timing each group's CPU seconds (``time.process_time``: the steadier figure on a
shared machine). The trees run one after the other. Reported, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

_CHILD = """
import json, time
from quantcore.warmup import GROUPS, warm
out = {}
for group in GROUPS:
    start = time.process_time()
    warm(progress=False, only=[group])
    out[group] = time.process_time() - start
print(json.dumps(out))
"""


def run(tree: Path) -> dict[str, float]:
    """CPU seconds of each warm-up group of ``tree`` on an empty cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(tree))
        done = subprocess.run(
            [sys.executable, "-c", _CHILD], cwd=tree, env=env, capture_output=True, text=True, check=True
        )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", action="append", default=[], help="another checkout to time too")
    args = parser.parse_args(argv)
    trees = [HERE, *(Path(t).resolve() for t in args.tree)]
    results = [run(tree) for tree in trees]
    print("| group | " + " | ".join(str(t) for t in trees) + " |")
    print("|---|" + "---|" * len(trees))
    for group in results[0]:
        print(f"| {group} | " + " | ".join(f"{r.get(group, float('nan')):.1f}" for r in results) + " |")
    print("| **total** | " + " | ".join(f"**{sum(r.values()):.1f}**" for r in results) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
