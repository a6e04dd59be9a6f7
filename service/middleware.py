"""The request pipeline every API call goes through, as one raw ASGI middleware.

1. a request id (``X-Request-ID`` response header, shown in 500 bodies);
2. authentication: ``Authorization: Token <key>``, ``X-API-Key: <key>`` or the
   ``qc_session`` cookie; a presented but invalid token or key is a 401;
3. rate limiting per user (authenticated) or per client IP (anonymous, and every
   request whose credential is refused, so guessing tokens is limited too); real-time
   endpoints have their own budget; ``X-RateLimit-*`` headers on every API response,
   401s included, and 429 with ``Retry-After`` beyond the limit;
4. CSRF: a session-authenticated unsafe request must echo the session's CSRF token
   in ``X-CSRFToken`` (token and API-key requests are not cookie-borne, so exempt);
5. ``X-Content-Type-Options: nosniff`` on every response, ``Cache-Control: no-store``
   on ``/api/auth/`` responses (tokens, keys, CSRF tokens must not be cached).

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
from http.cookies import SimpleCookie

from litestar.types import (
    ASGIApp,
    HTTPResponseBodyEvent,
    HTTPResponseStartEvent,
    Message,
    Receive,
    Scope,
    Send,
)

from service.auth.identity import AuthMethod, Identity
from service.auth.services import identify
from service.errors import (
    ApiError,
    AuthenticationRequired,
    PermissionDenied,
    RateLimited,
    error_response_bytes,
    internal_error,
)
from service.ratelimit import Hit, rate_limit_header_pairs, rate_limit_headers
from service.settings import Settings
from service.state import Resources, resources_of

__all__ = [
    "CSRF_HEADER",
    "SESSION_COOKIE",
    "ProxyTrust",
    "RequestMiddleware",
    "client_ip",
    "proxy_trust",
    "scope_client_ip",
]

log = logging.getLogger("service")

SESSION_COOKIE = "qc_session"
CSRF_COOKIE = "qc_csrftoken"
CSRF_HEADER = "x-csrftoken"
_SAFE = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
_CSRF_EXEMPT = frozenset({"/api/auth/login/"})  # a stale cookie must not block logging in again


#: The request headers the pipeline reads (ASGI servers give lower-case names).
_WANTED = frozenset(
    {b"authorization", b"x-api-key", b"cookie", b"x-forwarded-for", CSRF_HEADER.encode()}
)


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
    return client_ip(scope, _headers(scope), trust)


def _credentials(headers: dict[str, str]) -> tuple[str | None, str | None, str | None]:
    token = api_key = session = None
    auth = headers.get("authorization")
    if auth is not None:
        scheme, _, value = auth.partition(" ")
        if scheme.lower() != "token" or not value.strip():
            raise _BadScheme("Use `Authorization: Token <key>`.")
        token = value.strip()
    if "x-api-key" in headers:
        api_key = headers["x-api-key"].strip()
    if "cookie" in headers:
        cookie: SimpleCookie = SimpleCookie()
        try:
            cookie.load(headers["cookie"])
        except Exception:  # malformed cookie header: treat as absent
            cookie = SimpleCookie()
        if SESSION_COOKIE in cookie:
            session = cookie[SESSION_COOKIE].value
    return token, api_key, session


class _BadScheme(AuthenticationRequired):
    """A malformed ``Authorization`` header."""


class RequestMiddleware:
    """See the module docstring. Applies to ``/api/`` and ``/realtime/`` paths."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._resources: Resources | None = None
        self._trust: ProxyTrust | None = None

    def _res(self, scope: Scope) -> Resources:
        if self._resources is None:
            self._resources = res = resources_of(scope["app"])
            self._trust = proxy_trust(res.settings)
        return self._resources

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = _request_ids.next()
        scope.setdefault("state", {})["request_id"] = rid
        path: str = scope["path"]
        api = path.startswith(("/api/", "/realtime/"))
        extra: list[tuple[bytes, bytes]] = [(b"x-request-id", rid.encode()), _NOSNIFF]
        if path.startswith("/api/auth/"):
            extra.append(_NO_STORE)
        scope["user"] = None
        scope["auth"] = None
        if api:
            try:
                hit = await self._admit(scope)
            except ApiError as exc:
                await _send_error(send, exc, extra)
                return
            except Exception:  # outside Litestar's exception handlers: answer like them
                log.exception(
                    "unhandled error request_id=%s %s %s", rid, scope.get("method", ""), path
                )
                await _send_error(send, internal_error(rid), extra)
                return
            if hit is not None:
                extra += rate_limit_header_pairs(hit)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)

    async def _admit(self, scope: Scope) -> Hit | None:
        res = self._res(scope)
        headers = _headers(scope)
        try:
            token, api_key, session = _credentials(headers)
            identity = await identify(
                res.db, token=token, api_key=api_key, session_key=session, cache=res.identities
            )
        except AuthenticationRequired as refused:
            # Counted against the caller's IP like an anonymous request, headers included.
            hit = await self._rate_limit(scope, headers, None)
            if hit is not None:
                refused.headers.update(rate_limit_headers(hit))
            raise
        scope["user"] = identity
        scope["auth"] = identity.method if identity else None
        hit = await self._rate_limit(scope, headers, identity)
        if (
            identity is not None
            and identity.method is AuthMethod.SESSION
            and scope.get("method", "GET") not in _SAFE
            and scope["path"] not in _CSRF_EXEMPT
        ):
            if headers.get(CSRF_HEADER, "") != identity.csrf_token:
                err = PermissionDenied(
                    "CSRF check failed: send the session's CSRF token in the X-CSRFToken header.",
                    details={"code": "csrf_failed"},
                )
                if hit is not None:
                    err.headers.update(rate_limit_headers(hit))
                raise err
        return hit

    async def _rate_limit(
        self, scope: Scope, headers: dict[str, str], identity: Identity | None
    ) -> Hit | None:
        res = self._res(scope)
        if not res.settings.rate_limit_enabled:
            return None
        path: str = scope["path"]
        who = f"u{identity.id}" if identity else f"ip{client_ip(scope, headers, self._trust)}"
        if path.startswith(("/realtime/", "/api/realtime/")):
            rate, key = res.settings.realtime_rate, f"rt:{who}"
        elif identity is not None:
            rate, key = res.settings.authenticated_rate, who
        else:
            rate, key = res.settings.anonymous_rate, who
        hit = await res.limiter.hit(key, rate)
        if not hit.allowed:
            raise RateLimited(
                f"Rate limit of {rate.limit} requests per {rate.period} s exceeded; retry in {hit.reset} s.",
                details={
                    "limit": rate.limit,
                    "period_seconds": rate.period,
                    "retry_after": hit.reset,
                },
                headers=rate_limit_headers(hit),
            )
        return hit


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
