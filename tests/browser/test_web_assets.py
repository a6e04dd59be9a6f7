"""The web interface's files as the server sends them (no browser needed)."""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from service.web import ASSETS_PATH, STATIC_DIR, load_assets, web_router


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient[Litestar]]:
    with TestClient(Litestar(route_handlers=[web_router()])) as c:
        yield c


def test_the_page_is_served_at_root_with_a_self_only_policy(client: TestClient[Litestar]) -> None:
    r = client.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    csp = r.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "connect-src 'self'" in csp and "unsafe" not in csp
    assert f'src="{ASSETS_PATH}/js/app.js"' in r.text


def test_assets_gzip_etag_and_revalidation(client: TestClient[Litestar]) -> None:
    plain = client.get(f"{ASSETS_PATH}/js/app.js", headers={"Accept-Encoding": "identity"})
    assert plain.status_code == 200 and plain.headers["content-type"].startswith("text/javascript")
    assert "content-encoding" not in plain.headers
    assert plain.content == (STATIC_DIR / "js" / "app.js").read_bytes()
    zipped = client.get(f"{ASSETS_PATH}/js/app.js", headers={"Accept-Encoding": "gzip"})
    assert zipped.headers["content-encoding"] == "gzip"
    assert zipped.content == plain.content  # httpx decodes it: the same bytes
    again = client.get(f"{ASSETS_PATH}/js/app.js", headers={"If-None-Match": plain.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    assert client.get(f"{ASSETS_PATH}/js/nope.js").status_code == 404
    assert client.get(f"{ASSETS_PATH}/index.html").status_code == 404
    assert client.get(f"{ASSETS_PATH}/../__init__.py").status_code == 404


def test_every_file_loaded_and_compressed_losslessly() -> None:
    assets = load_assets()
    on_disk = {p.relative_to(STATIC_DIR).as_posix() for p in STATIC_DIR.rglob("*") if p.is_file()}
    assert set(assets) == on_disk
    for a in assets.values():
        assert gzip.decompress(a.gzipped) == a.body


def _text_files() -> list[Path]:
    return [p for p in STATIC_DIR.rglob("*") if p.suffix in (".html", ".js", ".css")]


def test_nothing_is_loaded_from_another_host() -> None:
    for path in _text_files():
        # The SVG namespace is a name, never fetched.
        text = path.read_text(encoding="utf-8").replace('"http://www.w3.org/2000/svg"', "")
        assert not re.search(r"(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/", text), path
        assert "@import" not in text and "url(http" not in text, path


def test_every_module_import_resolves() -> None:
    """Each ``import ... from "./x.js"`` and ``import("./x.js")`` names a shipped file."""
    pattern = re.compile(r"""(?:from\s+|import\s*\(\s*)["'](\.{1,2}/[^"']+)["']""")
    for path in STATIC_DIR.rglob("*.js"):
        for target in pattern.findall(path.read_text(encoding="utf-8")):
            assert (path.parent / target).resolve().is_file(), f"{path.name}: {target}"
    index = (STATIC_DIR / "index.html").read_text(encoding="utf-8")
    for ref in re.findall(r'(?:src|href)="(/static/web/[^"]+)"', index):
        assert (STATIC_DIR / ref.removeprefix("/static/web/")).is_file(), ref
