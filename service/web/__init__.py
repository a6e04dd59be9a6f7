"""The web interface: a small single-page app at ``/`` over the same ``/api/`` endpoints.

The pages are static files shipped in this package (``service/web/static/``): one HTML
page, plain ES modules and one stylesheet, no build step and no third-party code (the
charts are our own SVG). The server holds them in memory with their gzip form and an
ETag, answers ``/`` with the page and ``/static/web/<file>`` with the rest. All data
comes from the browser calling ``/api/`` with the session cookie and the CSRF header,
exactly as any API client would: this module reads no data. See docs/web.md.
"""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
from dataclasses import dataclass
from pathlib import Path

from litestar import Request, Router, get
from litestar.exceptions import NotFoundException
from litestar.params import FromPath
from litestar.response import Response

__all__ = ["ASSETS_PATH", "STATIC_DIR", "Asset", "load_assets", "web_router"]

#: Where the files of the interface are served.
ASSETS_PATH = "/static/web"
#: The files, inside the package (``service/web/static/**`` is package data).
STATIC_DIR = Path(__file__).parent / "static"

#: Everything the page loads comes from this server; the WebSocket is same-origin too.
_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)
_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}


@dataclass(frozen=True, slots=True)
class Asset:
    """One file: its bytes, the gzip of them, the media type and a strong ETag."""

    body: bytes
    gzipped: bytes
    media_type: str
    etag: str


def load_assets(root: Path = STATIC_DIR) -> dict[str, Asset]:
    """Every file under ``root`` by its relative POSIX path (read once, at app build)."""
    assets: dict[str, Asset] = {}
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        body = path.read_bytes()
        media = _TYPES.get(path.suffix) or mimetypes.guess_type(path.name)[0]
        if path.suffix == ".html":
            media = "text/html; charset=utf-8"
        assets[path.relative_to(root).as_posix()] = Asset(
            body=body,
            gzipped=gzip.compress(body, compresslevel=9, mtime=0),
            media_type=media or "application/octet-stream",
            etag='"' + hashlib.sha256(body).hexdigest()[:20] + '"',
        )
    return assets


def _answer(request: Request, asset: Asset, cache: str) -> Response[bytes]:
    headers = {"ETag": asset.etag, "Cache-Control": cache, "Vary": "Accept-Encoding"}
    if request.headers.get("if-none-match") == asset.etag:
        return Response(b"", status_code=304, headers=headers)
    body = asset.body
    if "gzip" in request.headers.get("accept-encoding", "") and len(asset.gzipped) < len(body):
        body = asset.gzipped
        headers["Content-Encoding"] = "gzip"
    return Response(body, media_type=asset.media_type, headers=headers)


def web_router(root: Path = STATIC_DIR) -> Router:
    """``GET /`` (the page) and ``GET /static/web/{file}`` (its scripts and styles)."""
    assets = load_assets(root)
    index = assets["index.html"]

    @get("/", include_in_schema=False, name="web-index")
    async def page(request: Request) -> Response[bytes]:
        response = _answer(request, index, "no-cache")
        response.headers["Content-Security-Policy"] = _CSP
        response.headers["Referrer-Policy"] = "same-origin"
        return response

    @get(f"{ASSETS_PATH}/{{name:path}}", include_in_schema=False, name="web-assets")
    async def asset(request: Request, name: FromPath[str]) -> Response[bytes]:
        found = assets.get(name.lstrip("/"))
        if found is None or name.lstrip("/") == "index.html":
            raise NotFoundException(f"No file {name!r} in the web interface.")
        # Modules change with the package: revalidate (cheap 304) rather than pin for a day.
        return _answer(request, found, "no-cache")

    return Router(path="/", route_handlers=[page, asset], include_in_schema=False)
