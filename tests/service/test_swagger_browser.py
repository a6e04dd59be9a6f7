"""The OpenAPI UI works offline: a real headless Chromium renders ``/schema/swagger``.

The browser (Debian's ``chromium``, installed by ``make browser``, which ``make test``
runs) may resolve nothing but 127.0.0.1, so a page that still needed a CDN would
stay blank. It loads the page from a real ``python -m service serve`` process, runs
Swagger UI's scripts and dumps the DOM, which must list the operations.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import skip_or_fail
from tests.service.test_realtime import Server, start_server

pytestmark = pytest.mark.slow


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    skip_or_fail("no headless Chromium on this machine (`make browser` installs Debian's)")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("swagger")
    srv = start_server(data, f"sqlite+aiosqlite:///{data / 'ui.db'}")
    yield srv
    srv.stop()


def test_swagger_page_loads_only_local_assets(server: Server) -> None:
    page = httpx.get(f"{server.http}/schema/swagger").text
    assert "swagger-ui-bundle.js" in page
    assert "https://" not in page.split("<body>")[0]  # no remote script, style or icon
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css", "swagger-ui-standalone-preset.js"):
        r = httpx.get(f"{server.http}/static/swagger-ui/{asset}")
        assert r.status_code == 200 and len(r.content) > 10_000, asset


def test_headless_chromium_lists_the_operations(server: Server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    chromium = _chromium()
    out = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            f"--user-data-dir={tmp_path / 'profile'}",
            # Nothing but this server resolves: a CDN reference would fail to load.
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--virtual-time-budget=15000",
            "--dump-dom",
            f"{server.http}/schema/swagger",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    dom = out.stdout
    assert out.returncode == 0, out.stderr[-2000:]
    assert 'class="swagger-ui' in dom, dom[:2000]
    # Operations rendered by Swagger UI from the embedded document.
    assert dom.count("opblock-summary-path") >= 40, dom[:2000]
    for path in ("/api/portfolios/{portfolio_id}", "/api/auth/tokens", "/realtime/status"):
        assert f'data-path="{path}"' in dom, path
