"""Tax-lot matching with wash-sale detection: quantcore vs the plain-Python Decimal reference.

    python benchmarks/vs_peers.py -k tax           # times (1,000,000 transactions, 1,000 symbols)
    python benchmarks/peers_tax.py --memory        # one run of each side in a child process:
                                                   # wall and CPU time, peak memory
    python benchmarks/peers_tax.py --side ours     # our side only (NUMBA_NUM_THREADS=1: one thread)

The peer is the test suite's reference implementation (``tests/reference/tax_reference.py``),
which gives the same results to the 1e-8 unit. Our side includes validation,
encoding of the DataFrame, the kernel, dividend qualification and the records.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "reference"))

from _harness import Case  # noqa: E402

FULL = (1_000_000, 1_000)
QUICK = (10_000, 50)


def make_transactions(n: int, n_symbols: int, seed: int = 20261122) -> pd.DataFrame:
    """A valid history over twenty years (a trade per symbol every ~7 days on average):
    ~45% buys, ~35% sells of 10-60% of the position, ~20% dividends; prices a per-symbol
    random walk in cents, quantities with 2 decimals."""
    rng = np.random.default_rng(seed)
    sym = rng.integers(0, n_symbols, n)
    day = (np.arange(n) * 7300) // n + 12_000  # non-decreasing day numbers
    steps = pd.Series(rng.normal(0.0, 0.02, n)).groupby(sym).cumsum().to_numpy()
    price = np.round(50.0 * np.exp(steps), 2)
    u = rng.random(n)
    buy_qty = rng.integers(100, 10_000, n) / 100
    frac = rng.uniform(0.1, 0.6, n)
    kind = np.empty(n, dtype=object)
    qty = np.empty(n)
    held = np.zeros(n_symbols)
    for i in range(n):  # sequential: a sell never exceeds the position
        s = sym[i]
        if u[i] < 0.35 and held[s] >= 0.02:
            q = np.floor(held[s] * frac[i] * 100) / 100
            kind[i], qty[i] = "sell", q
            held[s] = round(held[s] - q, 2)
        elif u[i] < 0.55 and held[s] > 0:
            kind[i], qty[i] = "dividend", held[s]
        else:
            kind[i], qty[i] = "buy", buy_qty[i]
            held[s] = round(held[s] + buy_qty[i], 2)
    is_div = kind == "dividend"
    price = np.where(is_div, np.round(price * 0.004, 4), price)
    fees = np.where((rng.random(n) < 0.3) & ~is_div, 0.99, 0.0)
    return pd.DataFrame(
        {
            "symbol": np.char.add("S", sym.astype(str)),
            "date": np.datetime64("1970-01-01", "D") + day.astype("timedelta64[D]"),
            "type": kind.astype(str),
            "quantity": qty,
            "price": price,
            "fees": fees,
        }
    )


def reference_rows(df: pd.DataFrame) -> list[dict[str, Any]]:
    """The same transactions as Decimal rows for the reference."""
    dates = pd.to_datetime(df["date"]).dt.date.tolist()
    return [
        {"symbol": s, "date": d, "type": t, "quantity": Decimal(repr(q)), "price": Decimal(repr(p)), "fees": Decimal(repr(f))}
        for s, d, t, q, p, f in zip(
            df["symbol"].tolist(), dates, df["type"].tolist(), df["quantity"].tolist(), df["price"].tolist(), df["fees"].tolist(), strict=True
        )
    ]


def _setup(quick: bool) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    n, k = QUICK if quick else FULL
    df = make_transactions(n, k)
    return df, reference_rows(df)


def _ours(data: tuple[pd.DataFrame, list[dict[str, Any]]]) -> Any:
    from quantcore.tax import match_lots

    return match_lots(data[0])


def _peer(data: tuple[pd.DataFrame, list[dict[str, Any]]]) -> Any:
    from tax_reference import reference_match_lots

    return reference_match_lots(data[1])


CASES: list[Case] = [
    Case(
        name="tax.match_lots fifo+wash 1M tx / 1k symbols",
        setup=_setup,
        ours=_ours,
        peer=_peer,
        peer_name="Decimal reference",
        goal=50.0,
        goal_text=">= 50x",
        notes="quick: 10,000 transactions over 50 symbols",
    )
]


def _peak_rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return -1


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def _measure(side: str, quick: bool) -> None:
    data = _setup(quick)
    fn = _ours if side == "ours" else _peer
    if side == "ours":
        _ours((data[0].head(1000), data[1][:1000]))  # load the compiled kernel first
    Path("/proc/self/clear_refs").write_text("5")  # reset the peak RSS to the current RSS
    before = _rss_kib()
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn(data)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    threads = ""
    if side == "ours":
        import numba

        threads = f" ({numba.get_num_threads()} numba threads)"
    print(
        f"{side}: one run {wall:.2f} s wall, {cpu:.2f} s CPU{threads}; peak {(_peak_rss_kib() - before) / 1024:.0f} MiB "
        f"above the {before / 1024:.0f} MiB after setup",
        flush=True,
    )
    del result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memory", action="store_true", help="time and peak memory of one run of each side, in child processes")
    parser.add_argument("--side", choices=["ours", "peer"])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.side:
        _measure(args.side, args.quick)
    elif args.memory:
        for side in ("ours", "peer"):
            extra = ["--quick"] if args.quick else []
            subprocess.run([sys.executable, __file__, "--side", side, *extra], check=True)
    else:
        parser.print_help()


if __name__ == "__main__":
    main()
