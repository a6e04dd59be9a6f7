"""A real finance server (demo data, SQLite in a temp dir) and Debian's Chromium via Playwright.

The server is ``python -m service serve`` on a free port, started once for the browser tests and
stopped at its end (``Server.stop``: terminate, then kill). Chromium is
``/usr/bin/chromium`` (``make browser`` installs it); without it the tests skip, except
in CI (``CI=true``) where they fail. Every page records the requests it makes and the
console errors it logs, so that each test can assert that nothing left 127.0.0.1.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.conftest import skip_or_fail
from tests.service.test_realtime import Server, start_server

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
DEMO = ("demo", "walkthrough-2026")
HERE = Path(__file__).parent
AXE = HERE / "node_modules" / "axe-core" / "axe.min.js"
#: Where ``QC_WEB_SCREENSHOTS=1`` writes the pages' screenshots (docs/img).
SCREENSHOTS = HERE.parent.parent / "docs" / "img"


def _need(what: str) -> None:
    skip_or_fail(f"{what} is missing on this machine")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium, for one test module: Playwright's sync API keeps an event loop running in
    this thread while it is open, and a later test of this worker may need asyncio.run."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _need("the playwright package")
    path = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    if not path:
        _need("Chromium (`make browser` installs Debian's)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("web")
    srv = start_server(
        data,
        f"sqlite+aiosqlite:///{data / 'web.db'}",
        QC_DEMO_DATA="1",
        QC_RATE_LIMIT_AUTHENTICATED="100000/hour",
        QC_BACKTEST_WORKERS="0",
    )
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="session")
def token(server: Server) -> str:
    """An API token of the demo user, to check through the API what the pages did."""
    r = httpx.post(
        f"{server.http}/api/auth/token/",
        json=dict(zip(("username", "password"), DEMO, strict=True)),
    )
    r.raise_for_status()
    return str(r.json()["token"])


@dataclass
class Watch:
    """What one page did: every request URL and every console error / uncaught exception."""

    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def foreign(self) -> list[str]:
        """Requests to anything but 127.0.0.1 (``data:`` URLs never leave the page)."""
        return [
            u for u in self.requests
            if not u.startswith("data:") and urlsplit(u).hostname != "127.0.0.1"
        ]  # fmt: skip

    def unexpected_errors(self, allowed: tuple[str, ...] = ()) -> list[str]:
        return [e for e in self.errors if not any(a in e for a in allowed)]


@pytest.fixture()
def page_and_watch(browser: Any) -> Iterator[tuple[Any, Watch]]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    watch = Watch()
    page.on("request", lambda r: watch.requests.append(r.url))
    page.on("websocket", lambda ws: watch.requests.append(ws.url))
    page.on(
        "console",
        lambda m: (
            watch.errors.append(f"{m.text} @ {m.location.get('url', '')}")
            if m.type == "error"
            else None
        ),
    )
    page.on("pageerror", lambda e: watch.errors.append(f"uncaught: {e}"))
    page.set_default_timeout(60_000)
    try:
        yield page, watch
    finally:
        ctx.close()


def sign_in(page: Any, base: str, user: tuple[str, str] = DEMO) -> None:
    page.goto(f"{base}/")
    page.get_by_label("Username").fill(user[0])
    page.get_by_label("Password").fill(user[1])
    page.get_by_role("button", name="Sign in").click()
    page.locator("#nav:not([hidden])").wait_for()
    wait_ready(page)


def wait_ready(page: Any) -> None:
    """Until the router has rendered the page of the current hash (``main[data-ready]``)."""
    page.wait_for_function(
        "() => document.getElementById('main').dataset.ready === (location.hash || '#/')"
    )
    # Sections load in parallel after the shell: wait until none says "Loading…".
    page.wait_for_function(
        "() => ![...document.querySelectorAll('main p.muted')].some(p => p.textContent === 'Loading…')"
    )


def api_get(server: Server, token: str, path: str) -> Any:
    """``GET path`` as the demo user, through the API (what the pages must agree with)."""
    r = httpx.get(f"{server.http}{path}", headers={"Authorization": f"Token {token}"}, timeout=60)
    r.raise_for_status()
    return r.json()


def portfolio_id(server: Server, token: str) -> int:
    """The demo user's (first) portfolio."""
    return int(api_get(server, token, "/api/portfolios/")["results"][0]["id"])


def open_page(page: Any, base: str, hash_: str) -> None:
    """Load the app at ``hash_`` and wait until it has rendered."""
    page.goto(f"{base}/{hash_}")
    wait_ready(page)
