"""Route guards."""

from __future__ import annotations

from typing import Any

from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from service.errors import AuthenticationRequired

__all__ = ["requires_user"]


async def requires_user(
    connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler
) -> None:
    """401 (with ``WWW-Authenticate``) unless the request carries valid credentials.

    A coroutine on purpose: Litestar runs a synchronous guard in a worker thread,
    a thread hand-off on every authenticated request.
    """
    if connection.scope.get("user") is None:
        raise AuthenticationRequired()
