"""``GET /realtime/websocket-info/``, ``GET /realtime/status/``, ``POST /api/realtime/force_price_update/``.

All three count against the real-time rate limit (``QC_RATE_LIMIT_REALTIME``,
10/minute by default, per user or per anonymous IP).
"""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get, post
from litestar.params import JSONBody

from service.auth import requires_user
from service.middleware import ProxyTrust
from service.realtime.schemas import (
    ForcePriceUpdate,
    ForcePriceUpdateRead,
    StatusRead,
    WebSocketInfoRead,
)
from service.realtime.services import Realtime

__all__ = ["RealtimeController", "request_scheme"]


def _realtime(request: Request[Any, Any, Any]) -> Realtime:
    return request.app.state.realtime


def request_scheme(
    request: Request[Any, Any, Any], proxies: ProxyTrust, *, trust_host: bool
) -> tuple[str, str]:
    """The scheme and host the client used.

    The scope's scheme, or ``X-Forwarded-Proto`` when the peer is one of the trusted
    proxies (``QC_TRUSTED_PROXIES``, as uvicorn's ``--forwarded-allow-ips`` did; its
    own proxy-header handling is off). The ``Host`` header, or ``X-Forwarded-Host``
    from a trusted proxy when ``QC_TRUST_FORWARDED_FOR`` is set (``trust_host``).
    """
    scheme = request.url.scheme
    host = request.headers.get("host") or request.url.netloc
    client = request.scope.get("client")
    if client and proxies.trusts(client[0]):
        if trust_host and "x-forwarded-host" in request.headers:
            host = request.headers["x-forwarded-host"].split(",")[-1].strip()
        if "x-forwarded-proto" in request.headers:
            proto = request.headers["x-forwarded-proto"].split(",")[-1].strip().lower()
            scheme = proto if proto in ("http", "https", "ws", "wss") else scheme
    return scheme, host


class RealtimeController(Controller):
    path = "/"
    tags = ["realtime"]  # noqa: RUF012

    @get("/realtime/websocket-info/", summary="How to connect to the real-time WebSocket")
    async def websocket_info(self, request: Request[Any, Any, Any]) -> WebSocketInfoRead:
        realtime = _realtime(request)
        settings = realtime.settings
        scheme, host = request_scheme(
            request,
            ProxyTrust(settings.proxy_networks, settings.forwarded_hops),
            trust_host=settings.trust_forwarded_for,
        )
        return realtime.websocket_info(scheme, host)

    @get("/realtime/status/", summary="Real-time service status and the caller's subscriptions")
    async def status(self, request: Request[Any, Any, Any]) -> StatusRead:
        user = request.scope.get("user")
        return await _realtime(request).status(user.id if user is not None else None)

    @post(
        "/api/realtime/force_price_update/",
        summary="Tick the given symbols now and push their updates",
        guards=[requires_user],
        status_code=200,
    )
    async def force_price_update(
        self, request: Request[Any, Any, Any], data: JSONBody[ForcePriceUpdate]
    ) -> ForcePriceUpdateRead:
        return await _realtime(request).force(data.symbols)
