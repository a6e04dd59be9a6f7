"""Where the service opens a database session of its own, outside the request's ``session``.

A handler that reads or writes takes the request's session (``service.state.provide_session``,
the one place that commits) and hands it to the services. Every other ``Database.read()`` /
``Database.write()`` is listed here with the reason (``docs/service.md``, "Architecture"):
a new one fails this test until it is justified in both places.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SERVICE = Path(__file__).resolve().parents[2] / "service"

#: (module, function) -> why it opens a session of its own.
EXPECTED: dict[tuple[str, str], str] = {
    ("state", "provide_session"): "the request's session itself",
    ("auth/services", "_lookup"): "the authentication middleware, before routing (cached)",
    ("auth/services", "authenticate"): "the password hash is checked before the write begins",
    ("auth/services", "change_password"): "the password hash is checked before the write begins",
    ("auth/services", "create_user"): "the CLI and the demo data: a unit of work of its own",
    ("auth/services", "create_token"): "the CLI and the demo data: a unit of work of its own",
    ("auth/services", "live_credentials"): "the WebSocket's periodic check, not a request",
    ("backtesting/services", "run_backtest"): "the running mark commits before the run",
    ("ledger/book", "current"): "the book's hot path: a version check without a session (measured)",
    ("tax/services", "analyze"): "a POST that only reads: the request's session would write",
    ("imports/services", "preview_statement"): "a dry run only reads (as analyze above)",
    ("transactions/export", "lines"): "a streamed body outlives the handler's session",
    ("assets/directory", "_reload"): "a cache shared by every request, reloaded in the background",
    ("assets/services", "check_import_currency"): "import-prices (CLI): a unit of work of its own",
    ("assets/services", "upsert_imported_asset"): "import-prices (CLI): a unit of work of its own",
    ("realtime/feed", "held_symbols"): "the price feed's tick, not a request",
    ("realtime/feed", "_revalue"): "the price feed's tick, not a request",
    ("realtime/services", "watch_ledgers"): "the ledger watcher's tick, not a request",
    ("realtime/services", "_subscribe_portfolio"): "the WebSocket: one session per message",
    ("realtime/services", "known_symbols"): "the WebSocket: one session per message",
    ("demo", "sync_assets"): "start-up, before any request",
    ("demo", "seed_demo"): "start-up, before any request",
    ("cli", "run"): "a CLI command (token, import-transactions)",
}


def _opening_sites(path: Path) -> list[str]:
    """Names of the functions of ``path`` that call ``<...db>.read()`` or ``<...db>.write()``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = function
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = child.name
            if (
                isinstance(child, ast.Call)
                and isinstance(child.func, ast.Attribute)
                and child.func.attr in ("read", "write")
                and not child.args
                and ast.unparse(child.func.value).split(".")[-1].lstrip("_") == "db"
            ):
                found.append(function)
            visit(child, name)

    visit(tree, "<module>")
    return found


def _all_sites() -> set[tuple[str, str]]:
    sites = set()
    for path in sorted(SERVICE.rglob("*.py")):
        module = path.relative_to(SERVICE).with_suffix("").as_posix()
        if "migrations" in module:
            continue
        sites.update((module, fn) for fn in _opening_sites(path))
    return sites


def _fresh(expr: str) -> Any:
    """``expr`` evaluated over this module in a fresh interpreter, as JSON.

    CPython 3.11's AST constructor can be left in a bad state by a ``RecursionError``
    earlier in the same process (the deep-JSON tests of a worker), after which it
    refuses to build any tree ("AST constructor recursion depth mismatch")."""
    code = (
        f"import json, runpy; m = runpy.run_path({str(Path(__file__))!r}); "
        f"print(json.dumps(eval({expr!r}, m)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_sessions_are_opened_only_where_documented() -> None:
    sites = {tuple(site) for site in _fresh("sorted(_all_sites())")}
    assert sites - EXPECTED.keys() == set(), "a new session opened outside the request's"
    assert EXPECTED.keys() - sites == set(), "listed here but no longer opening a session"


def test_feature_controllers_open_no_session() -> None:
    """Controllers take the request's ``session``; none opens one."""
    assert {m for m, _ in _fresh("sorted(_all_sites())") if m.endswith("controllers")} == set()


def test_the_scan_finds_a_session(tmp_path: Path) -> None:
    """The scan itself: a handler opening a session is found, by its function's name."""
    source = tmp_path / "x.py"
    source.write_text(
        "async def handler(db, portfolios):\n"
        "    async with db.read() as s:\n"
        "        pass\n"
        "    async with portfolios.db.write() as s:\n"
        "        pass\n"
        "    data = stream.read()\n"
    )
    assert _fresh(f"_opening_sites(Path({str(source)!r}))") == ["handler", "handler"]
