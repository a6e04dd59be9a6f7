"""The OpenAPI UI served without a CDN: Swagger UI's assets from an installed package.

Litestar's :class:`~litestar.openapi.plugins.SwaggerRenderPlugin` loads Swagger UI
from jsDelivr by default, a blank page without internet. The PyPI package
``swagger-ui-bundle-v2`` (Apache-2.0; the import name is ``swagger_ui_bundle``)
ships the ``swagger-ui-dist`` files; they are served under :data:`ASSETS_PATH` and
the page points at them (and has no remote favicon).
"""

from __future__ import annotations

from pathlib import Path

from litestar import Router
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.static_files import create_static_files_router

__all__ = ["ASSETS_PATH", "swagger_assets_router", "swagger_plugin", "swagger_ui_dir"]

#: Where the Swagger UI files are served.
ASSETS_PATH = "/static/swagger-ui"


def swagger_ui_dir() -> Path:
    """The directory of ``swagger-ui-bundle.js`` and friends in the installed package."""
    from swagger_ui_bundle import swagger_ui_path

    return Path(str(swagger_ui_path))


def swagger_plugin(path: str = "/swagger") -> SwaggerRenderPlugin:
    """Swagger UI at ``/schema{path}``, loading its scripts and styles from this server."""
    return SwaggerRenderPlugin(
        path=path,
        js_url=f"{ASSETS_PATH}/swagger-ui-bundle.js",
        css_url=f"{ASSETS_PATH}/swagger-ui.css",
        standalone_preset_js_url=f"{ASSETS_PATH}/swagger-ui-standalone-preset.js",
        favicon="",
    )


def swagger_assets_router() -> Router:
    """Serves :func:`swagger_ui_dir` at :data:`ASSETS_PATH` (cached for a day, no schema entry)."""
    return create_static_files_router(
        path=ASSETS_PATH,
        directories=[swagger_ui_dir()],
        include_in_schema=False,
        cache_control=None,
        name="swagger-ui-assets",
    )
