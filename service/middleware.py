"""The request pipeline around the whole ASGI app: small middlewares, each with one job.

In order, outermost first (:func:`service.pipeline.request_pipeline`):

1. :class:`RequestContextMiddleware` (here): a request id (``X-Request-ID`` response
   header, shown in 500 bodies); ``X-Content-Type-Options: nosniff`` on every
   response and ``Cache-Control: no-store`` on ``/api/auth/`` responses (tokens,
   keys, CSRF tokens must not be cached); it answers an :class:`~service.errors.ApiError`
   raised by the middlewares inside it in the documented error body (and any other
   exception as the documented 500), with the headers they added;
2. :class:`~service.auth.middleware.AuthenticationMiddleware`: ``Authorization: Token
   <key>``, ``X-API-Key: <key>`` or the ``qc_session`` cookie; a presented but invalid
   credential is a 401, deferred until the request is counted;
3. :class:`RateLimitMiddleware` (here, over :mod:`service.ratelimit`): per user, or per client IP
   (anonymous and refused requests); ``X-RateLimit-*`` headers on every API
   response, 429 with ``Retry-After`` beyond the limit;
4. :class:`~service.csrf.CSRFMiddleware`: a session-authenticated unsafe request must
   echo the session's CSRF token in ``X-CSRFToken``.

They wrap Litestar's whole ASGI handler, not each route: route middleware never
sees the 404/405 the router answers, and those API responses need their request id
and rate-limit headers (and count) too. Steps 2-4 apply to ``/api/`` and
``/realtime/`` paths.

The client IP is the TCP peer's, unless ``QC_TRUST_FORWARDED_FOR`` is set and the peer
is one of ``QC_TRUSTED_PROXIES``: then it is the ``QC_FORWARDED_HOPS``-th
``X-Forwarded-For`` entry from the right (the one our outermost proxy appended; the
entries to its left are whatever the client sent, and are never believed).
"""

from __future__ import annotations

import ipaddress
import itertools
import logging
import secrets
from dataclasses import dataclass

from litestar.types import (
    ASGIApp,
    HTTPResponseBodyEvent,
    HTTPResponseStartEvent,
    Message,
    Receive,
    Scope,
    Send,
)

from service.errors import ApiError, RateLimited, error_response_bytes, internal_error
from service.ratelimit import FINANCE_HEADERS, RateLimiter
from service.settings import Settings

__all__ = [
    "CSRF_COOKIE",
    "CSRF_HEADER",
    "SESSION_COOKIE",
    "ProxyTrust",
    "RateLimitMiddleware",
    "RequestContextMiddleware",
    "add_response_headers",
    "api_path",
    "client_ip",
    "defer_error",
    "deferred_error",
    "proxy_trust",
    "request_headers",
    "scope_client_ip",
]

log = logging.getLogger("service")

SESSION_COOKIE = "qc_session"
CSRF_COOKIE = "qc_csrftoken"
CSRF_HEADER = "x-csrftoken"

#: The request headers the pipeline reads (ASGI servers give lower-case names).
_WANTED = frozenset(
    {b"authorization", b"x-api-key", b"cookie", b"x-forwarded-for", CSRF_HEADER.encode()}
)
_HEADERS = "qc_headers"  # scope["state"] keys shared by the middlewares
_RESPONSE_HEADERS = "qc_response_headers"
_DEFERRED = "qc_deferred_error"


def _headers(scope: Scope) -> dict[str, str]:
    """The headers of :data:`_WANTED` only, decoded (the others are not touched).

    Repeated ``X-Forwarded-For`` headers are joined in order (RFC 9110, section 5.3).
    """
    found: dict[str, str] = {}
    for k, v in scope["headers"]:
        name = k.lower()
        if name in _WANTED:
            key, value = name.decode("latin-1"), v.decode("latin-1")
            if key == "x-forwarded-for" and key in found:
                value = f"{found[key]}, {value}"
            found[key] = value
    return found


def request_headers(scope: Scope) -> dict[str, str]:
    """The request headers the pipeline reads, decoded once per request (lower-case names)."""
    state = scope.setdefault("state", {})
    found = state.get(_HEADERS)
    if found is None:
        found = state[_HEADERS] = _headers(scope)
    return found


def api_path(scope: Scope) -> bool:
    """Whether the request is one the pipeline authenticates and counts."""
    return scope["path"].startswith(("/api/", "/realtime/"))


def add_response_headers(scope: Scope, pairs: list[tuple[bytes, bytes]]) -> None:
    """Headers for the response to this request, error responses of the pipeline included."""
    scope.setdefault("state", {}).setdefault(_RESPONSE_HEADERS, []).extend(pairs)


def defer_error(scope: Scope, error: ApiError) -> None:
    """Refuse the request, but only after the rate limiter has counted it."""
    scope.setdefault("state", {})[_DEFERRED] = error


def deferred_error(scope: Scope) -> ApiError | None:
    """The refusal :func:`defer_error` left for this request, if any."""
    return scope.get("state", {}).get(_DEFERRED)


_NOSNIFF = (b"x-content-type-options", b"nosniff")
_NO_STORE = (b"cache-control", b"no-store")


class _RequestIds:
    """Unique request ids: a random 64-bit prefix per process and a counter (32 hex digits)."""

    def __init__(self) -> None:
        self._prefix = secrets.token_hex(8)
        self._count = itertools.count(1)

    def next(self) -> str:
        return f"{self._prefix}{next(self._count):016x}"


_request_ids = _RequestIds()


@dataclass(frozen=True, slots=True)
class ProxyTrust:
    """Whose ``X-Forwarded-For`` to believe, and how many hops of it.

    Args:
        networks: The proxies' addresses (``QC_TRUSTED_PROXIES``).
        hops: How many proxies of ours append to the header (``QC_FORWARDED_HOPS``).
    """

    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]
    hops: int = 1

    def trusts(self, peer: str) -> bool:
        try:
            address = ipaddress.ip_address(peer)
        except ValueError:
            return False
        return any(address in net for net in self.networks)


def proxy_trust(settings: Settings) -> ProxyTrust | None:
    """The :class:`ProxyTrust` of the settings; ``None`` unless ``QC_TRUST_FORWARDED_FOR``."""
    if not settings.trust_forwarded_for:
        return None
    return ProxyTrust(settings.proxy_networks, settings.forwarded_hops)


def client_ip(scope: Scope, headers: dict[str, str], trust: ProxyTrust | None) -> str:
    """The caller's IP: the peer, or the trusted hop of ``X-Forwarded-For`` (module docstring).

    ``trust`` is ``None`` when forwarded headers are not trusted at all.
    """
    client = scope.get("client")
    peer = client[0] if client else "unknown"
    forwarded = headers.get("x-forwarded-for")
    if trust is None or forwarded is None or not trust.trusts(peer):
        return peer
    chain = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
    if not chain:
        return peer
    candidate = chain[-trust.hops] if len(chain) >= trust.hops else chain[0]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:  # garbage where our proxy writes an address: do not key on it
        return peer


def scope_client_ip(scope: Scope, trust: ProxyTrust | None) -> str:
    """:func:`client_ip` of an HTTP or WebSocket scope (reads its headers)."""
    return client_ip(scope, request_headers(scope), trust)


class RequestContextMiddleware:
    """Request id, security headers, and the pipeline's errors (module docstring, step 1)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = _request_ids.next()
        state = scope.setdefault("state", {})
        state["request_id"] = rid
        path: str = scope["path"]
        extra: list[tuple[bytes, bytes]] = [(b"x-request-id", rid.encode()), _NOSNIFF]
        if path.startswith("/api/auth/"):
            extra.append(_NO_STORE)
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message["headers"] = [
                    *message.get("headers", []),
                    *extra,
                    *state.get(_RESPONSE_HEADERS, ()),
                ]
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except ApiError as exc:
            if started:
                raise
            await _send_error(send, exc, [*extra, *state.get(_RESPONSE_HEADERS, ())])
        except Exception:  # outside Litestar's exception handlers: answer like them
            if started:
                raise
            log.exception("unhandled error request_id=%s %s %s", rid, scope.get("method", ""), path)
            await _send_error(send, internal_error(rid), extra)


async def _send_error(send: Send, exc: ApiError, extra: list[tuple[bytes, bytes]]) -> None:
    body = error_response_bytes(exc.error, exc.message, exc.details)
    headers: list[tuple[bytes, bytes]] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *extra,
        *((k.lower().encode(), v.encode()) for k, v in exc.headers.items()),
    ]
    start: HTTPResponseStartEvent = {
        "type": "http.response.start",
        "status": exc.status_code,
        "headers": headers,
    }
    await send(start)
    end: HTTPResponseBodyEvent = {"type": "http.response.body", "body": body, "more_body": False}
    await send(end)


class RateLimitMiddleware:
    """Count every ``/api/`` and ``/realtime/`` request against its caller's budget.

    The caller is the authenticated user (``scope["user"]``, set by
    :class:`~service.auth.middleware.AuthenticationMiddleware`), else the client IP
    (:func:`client_ip`: anonymous requests, and those whose credential was
    refused). Real-time endpoints have their own budget. ``X-RateLimit-*`` headers
    go on every such response (errors included); beyond the limit the answer is a
    429 with ``Retry-After``. A refusal deferred by an earlier middleware (a bad
    credential) is raised once the request is counted.

    Args:
        app: the next ASGI app.
        limiter: the counters (a fixed window).
        settings: limits (``QC_RATE_LIMIT_*``) and proxy trust.
    """

    def __init__(self, app: ASGIApp, limiter: RateLimiter, settings: Settings) -> None:
        self.app = app
        self.limiter = limiter
        self.settings = settings
        self.trust = proxy_trust(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and api_path(scope) and self.settings.rate_limit_enabled:
            identity = scope.get("user")
            path: str = scope["path"]
            who = f"u{identity.id}" if identity else f"ip{scope_client_ip(scope, self.trust)}"
            if path.startswith(("/realtime/", "/api/realtime/")):
                rate, key = self.settings.realtime_rate, f"rt:{who}"
            elif identity is not None:
                rate, key = self.settings.authenticated_rate, who
            else:
                rate, key = self.settings.anonymous_rate, who
            hit = await self.limiter.hit(key, rate)
            if not hit.allowed:
                headers = FINANCE_HEADERS.headers(hit)
                wait = headers["Retry-After"]
                raise RateLimited(
                    f"Rate limit of {rate.limit} requests per {rate.period} s exceeded; retry in {wait} s.",
                    details={
                        "limit": rate.limit,
                        "period_seconds": rate.period,
                        "retry_after": int(wait),
                    },
                    headers=headers,
                )
            add_response_headers(scope, FINANCE_HEADERS.pairs(hit))
        if (refused := deferred_error(scope)) is not None:
            raise refused
        await self.app(scope, receive, send)
