"""Time to interactive and page weight of the demo user's dashboard, in Debian's Chromium.

Run from the repository root (starts its own server on a free port, demo data, SQLite
in a temp dir, and stops it)::

    python tests/browser/measure_dashboard.py [--runs 7] [--base http://127.0.0.1:8000]

"Interactive" is the moment the dashboard has rendered every section with the API's
figures (the portfolio table, the account overview or its "not available") and its
buttons and links are live: the app sets ``main[data-ready]`` after the last one.
The time is ``performance.now()`` at that moment, from the navigation's start, so it
includes the page, its modules, the session check and every API call. Cold runs use a
fresh browser context (empty cache, signed-in cookie copied); warm runs reload the
same page (modules revalidated with their ETag, 304). Weight is what crossed the wire:
``transferSize`` (headers + compressed bodies) and ``encodedBodySize`` of the page and
each resource (Resource Timing), for the cold load.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["main", "measure"]

_READY = "() => document.getElementById('main').dataset.ready === '#/'"
_WEIGHT = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const all = [nav, ...performance.getEntriesByType('resource')];
  const pick = (e) => ({name: new URL(e.name).pathname, transfer: e.transferSize,
                         encoded: e.encodedBodySize, decoded: e.decodedBodySize});
  return all.map(pick);
}"""


def measure(base: str, runs: int) -> dict[str, Any]:
    """Cold and warm times (ms) and the cold load's resources."""
    import httpx
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, DEMO

    login = httpx.post(
        f"{base}/api/auth/login/", json={"username": DEMO[0], "password": DEMO[1]}, timeout=60
    )
    login.raise_for_status()
    cookies = [
        {"name": k, "value": v, "url": base} for k, v in login.cookies.items()
    ]  # fmt: skip
    cold: list[float] = []
    warm: list[float] = []
    weight: list[dict[str, Any]] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for i in range(runs + 1):  # the first run warms the server (not counted)
            ctx = browser.new_context(viewport={"width": 1280, "height": 900})
            ctx.add_cookies(cookies)  # type: ignore[arg-type]
            page = ctx.new_page()
            page.goto(f"{base}/")
            page.wait_for_function(_READY, timeout=60_000)
            t = float(page.evaluate("() => performance.now()"))
            if i:
                cold.append(t)
                weight = page.evaluate(_WEIGHT)
            page.reload()
            page.wait_for_function(_READY, timeout=60_000)
            if i:
                warm.append(float(page.evaluate("() => performance.now()")))
            ctx.close()
        browser.close()
    return {"cold": cold, "warm": warm, "resources": weight}


def _report(out: dict[str, Any]) -> None:
    for kind in ("cold", "warm"):
        xs = out[kind]
        print(
            f"{kind}: median {statistics.median(xs):.0f} ms, min {min(xs):.0f}, max {max(xs):.0f} ({len(xs)} runs)"
        )
    rows = out["resources"]
    static = [r for r in rows if not r["name"].startswith("/api/")]
    api = [r for r in rows if r["name"].startswith("/api/")]
    for label, group in (("page + modules + css", static), ("API calls", api), ("total", rows)):
        print(
            f"{label}: {len(group)} requests, transferred {sum(r['transfer'] for r in group) / 1024:.1f} KiB, "
            f"bodies {sum(r['encoded'] for r in group) / 1024:.1f} KiB compressed / "
            f"{sum(r['decoded'] for r in group) / 1024:.1f} KiB decoded"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--base", help="a running server (default: start one with the demo data)")
    args = parser.parse_args(argv)
    if args.base:
        _report(measure(args.base.rstrip("/"), args.runs))
        return
    from tests.service.test_realtime import start_server

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        server = start_server(
            data, f"sqlite+aiosqlite:///{data / 'm.db'}", QC_DEMO_DATA="1",
            QC_RATE_LIMIT_AUTHENTICATED="100000/hour",
        )  # fmt: skip
        try:
            _report(measure(server.http, args.runs))
        finally:
            server.stop()


if __name__ == "__main__":
    main()
