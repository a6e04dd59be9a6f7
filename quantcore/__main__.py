"""Command line: ``python -m quantcore backtest|sweep|report PRICES ...``.

Bad files or parameters print one ``quantcore: error: ...`` line and exit with code 2.
Subcommands register themselves in :data:`COMMANDS` (``report`` can be added the
same way).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from quantcore._price_files import UsageError, read_prices

__all__ = ["COMMANDS", "build_parser", "main", "parse_grid_value", "parse_value"]


def parse_value(text: str) -> Any:
    """``"10"`` -> 10, ``"0.5"`` -> 0.5, anything else stays a string."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_grid_value(text: str) -> list[Any]:
    """``"5:105"`` / ``"10:200:5"`` -> an integer range; ``"a,b,c"`` -> a list."""
    if ":" in text:
        parts = text.split(":")
        if len(parts) not in (2, 3) or not all(p.strip().lstrip("-").isdigit() for p in parts):
            raise UsageError(f"grid range must be START:STOP[:STEP] in integers, got {text!r}")
        start, stop, *step = (int(p) for p in parts)
        if step and step[0] <= 0:
            raise UsageError(f"grid range step must be > 0, got {text!r}")
        values = list(range(start, stop, *step))
        if not values:
            raise UsageError(f"grid range {text!r} is empty")
        return values
    return [parse_value(v) for v in text.split(",") if v != ""]


def _pairs(items: Sequence[str], flag: str) -> list[tuple[str, str]]:
    out = []
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise UsageError(f"{flag} must look like NAME=VALUE, got {item!r}")
        out.append((name.strip(), value.strip()))
    return out


def _engine_options(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "initial_capital": args.initial_capital,
        "fees": args.fees,
        "slippage": args.slippage,
        "size": args.max_position_size,  # size_type "percent": a fraction of equity
        "fill": args.fill,
        "direction": args.direction,
        "integer_shares": args.integer_shares,
        "periods_per_year": args.periods_per_year,
    }


def _cmd_backtest(args: argparse.Namespace) -> int:
    from quantcore.backtest import run_strategy

    prices = read_prices(args.prices)
    params = {name: parse_value(v) for name, v in _pairs(args.param, "--param")}
    res = run_strategy(prices, args.strategy, **params, **_engine_options(args))
    width = max(len(k) for k in res.metrics())
    for name, value in res.metrics().items():
        if name in ("benchmark_return", "alpha", "beta"):
            continue
        text = str(value) if name == "total_trades" else f"{value:.6f}"
        print(f"{name:<{width}}  {text}")
    return 0


def _is_ohlc(prices: Any) -> bool:
    """Whether ``prices`` is one asset's OHLC bars (a ``Close`` column), as ``read_prices`` reads it."""
    return any(str(c).lower() == "close" for c in prices.columns)


def _cmd_sweep(args: argparse.Namespace) -> int:
    from quantcore.backtest import sweep

    prices = read_prices(args.prices)
    grid: dict[str, Any] = {}
    for name, v in _pairs(args.grid, "--grid"):
        grid[name] = parse_grid_value(v)
    for name, v in _pairs(args.param, "--param"):
        grid[name] = [parse_value(v)]
    client = None
    if args.scheduler:
        from dask.distributed import Client

        client = Client(args.scheduler)
    try:
        table = sweep(
            prices, args.strategy, grid, progress=not args.no_progress, client=client,
            **_engine_options(args),
        )  # fmt: skip
    finally:
        if client is not None:
            client.close()
    if _is_ohlc(prices):  # one asset's bars: it is the file's asset, not its "Close" column
        table["asset"] = table["asset"].cat.rename_categories([Path(args.prices).stem])
    if args.out:
        out = Path(args.out)
        if out.suffix.lower() == ".csv":
            table.to_csv(out, index=False)
        else:
            table.to_parquet(out, index=False)
        print(f"wrote {len(table)} rows to {out}")
    else:
        best = table.sort_values("sharpe_ratio", ascending=False, na_position="last").head(args.top)
        print(best.to_string(index=False))
    return 0


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("prices", help="price file: .csv (first column dates) or .parquet")
    p.add_argument(
        "--strategy", required=True, help="buy_hold, moving_average, momentum, mean_reversion, rsi"
    )
    p.add_argument(
        "--param", action="append", default=[], metavar="NAME=VALUE", help="strategy parameter"
    )
    p.add_argument("--initial-capital", type=float, default=100_000.0)
    p.add_argument("--fees", type=float, default=0.0, help="fraction of traded value")
    p.add_argument("--slippage", type=float, default=0.0, help="fraction of the fill price")
    p.add_argument("--max-position-size", type=float, default=1.0)
    p.add_argument("--fill", choices=("close", "next_open"), default="close")
    p.add_argument("--direction", choices=("long", "short", "both"), default="long")
    p.add_argument("--integer-shares", action="store_true")
    p.add_argument("--periods-per-year", type=float, default=252.0)


def _setup_backtest(sub: Any) -> None:
    p = sub.add_parser("backtest", help="backtest one strategy and print its metrics")
    _add_common(p)
    p.set_defaults(handler=_cmd_backtest)


def _setup_sweep(sub: Any) -> None:
    p = sub.add_parser("sweep", help="sweep a strategy's parameter grid")
    _add_common(p)
    p.add_argument("--grid", action="append", default=[], metavar="NAME=START:STOP[:STEP]|A,B,..")
    p.add_argument("--out", help="write the table (.parquet, or .csv)")
    p.add_argument("--top", type=int, default=10, help="rows to print without --out")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--scheduler", help="Dask scheduler address (tcp://host:8786)")
    p.set_defaults(handler=_cmd_sweep)


def _cmd_warm(args: argparse.Namespace) -> int:
    from quantcore.warmup import warm

    report = warm(progress=sys.stderr.isatty() and not args.no_progress, only=args.only or None)
    total = sum(seconds for _, seconds in report)
    print("compiled and cached: " + ", ".join(f"{name} {s:.1f}s" for name, s in report)
          + f" (total {total:.1f}s)")  # fmt: skip
    return 0


def _setup_warm(sub: Any) -> None:
    from quantcore.warmup import GROUPS

    p = sub.add_parser("warm", help="compile the numba kernels once into the on-disk cache")
    p.add_argument("--only", action="append", choices=sorted(GROUPS), help="a group (repeatable)")
    p.add_argument("--no-progress", action="store_true", help="no bar (none off a terminal)")
    p.set_defaults(handler=_cmd_warm)


def _setup_report(sub: Any) -> None:
    from quantcore.report import add_cli_parser

    add_cli_parser(sub)


#: Subcommand name -> function adding its parser to the subparsers.
COMMANDS: dict[str, Callable[[Any], None]] = {
    "backtest": _setup_backtest,
    "report": _setup_report,
    "sweep": _setup_sweep,
    "warm": _setup_warm,
}


def build_parser() -> argparse.ArgumentParser:
    """The ``python -m quantcore`` parser, one subparser per :data:`COMMANDS` entry."""
    parser = argparse.ArgumentParser(prog="quantcore", description="quantcore command line")
    sub = parser.add_subparsers(dest="command", required=True)
    for setup in COMMANDS.values():
        setup(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (2 for bad input)."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except (UsageError, ValueError) as exc:
        print(f"quantcore: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
