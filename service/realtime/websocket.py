"""``/ws/realtime/``: authenticate the upgrade, then read client messages until closed.

Authentication (first match wins): ``?token=<API token>``, ``Authorization: Token
<key>``, ``X-API-Key: <key>``, the ``qc_session`` cookie. A presented credential that
is not valid ends the connection (an ``error`` then close 1008); no credential is an
anonymous connection. A session cookie is honoured only when the ``Origin`` (if any)
is this host or one of ``QC_CORS_ORIGINS``, so another site cannot ride a user's
browser session (cross-site WebSocket hijacking).

A worker holds at most ``QC_REALTIME_MAX_CONNECTIONS_PER_IP`` connections per client
IP (an ``error`` ``too_many_connections``, close 1008) and
``QC_REALTIME_MAX_CONNECTIONS`` in all (``server_busy``, close 1013, try again later).
A connection whose credential is revoked or expires is closed with 1008 within
``QC_REALTIME_AUTH_CHECK_SECONDS`` (see :meth:`Realtime.watch_credentials`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import urlsplit

from litestar import WebSocket, websocket
from litestar.exceptions import WebSocketDisconnect

from service.auth.identity import Identity
from service.auth.services import identify
from service.errors import AuthenticationRequired
from service.middleware import SESSION_COOKIE, proxy_trust, scope_client_ip
from service.realtime.registry import Connection
from service.realtime.services import WS_PATH, CloseCode, Realtime, error_text
from service.state import resources_of

__all__ = ["authenticate", "realtime_socket"]

log = logging.getLogger("service.realtime")


class _Refused(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _origin_allowed(socket: WebSocket[Any, Any, Any], allowed: str) -> bool:
    origin = socket.headers.get("origin")
    if origin is None:
        return True  # not a browser
    if origin in {o.strip() for o in allowed.split(",") if o.strip()}:
        return True
    return urlsplit(origin).netloc == socket.headers.get("host", "")


async def authenticate(socket: WebSocket[Any, Any, Any]) -> Identity | None:
    """The identity of the upgrade request (see the module docstring).

    Raises:
        _Refused: a credential was presented and is not valid, or the session cookie
            came from a foreign origin.
    """
    res = resources_of(socket.app)
    token = socket.query_params.get("token")
    api_key = socket.headers.get("x-api-key")
    session = None
    auth = socket.headers.get("authorization")
    if token is None and auth is not None:
        scheme, _, value = auth.partition(" ")
        if scheme.lower() != "token" or not value.strip():
            raise _Refused("authentication_failed", "Use `Authorization: Token <key>`.")
        token = value.strip()
    if token is None and api_key is None and "cookie" in socket.headers:
        cookie: SimpleCookie = SimpleCookie()
        with contextlib.suppress(CookieError):
            cookie.load(socket.headers["cookie"])
        if SESSION_COOKIE in cookie:
            session = cookie[SESSION_COOKIE].value
            if not _origin_allowed(socket, res.settings.cors_origins):
                raise _Refused(
                    "origin_not_allowed", "Session cookies are accepted from this site only."
                )
    try:
        return await identify(
            res.db, token=token, api_key=api_key.strip() if api_key else None, session_key=session
        )
    except AuthenticationRequired as exc:
        raise _Refused("authentication_failed", exc.message) from None


async def _refuse(
    socket: WebSocket[Any, Any, Any],
    code: str,
    message: str,
    close_code: int = CloseCode.POLICY_VIOLATION,
) -> None:
    await socket.accept()
    await socket.send_text(error_text(code, message))
    await socket.close(code=close_code, reason=code)


def _over_capacity(realtime: Realtime, ip: str) -> tuple[str, str, int] | None:
    """Why a new connection from ``ip`` is refused (error code, message, close code)."""
    settings = realtime.settings
    if realtime.registry.connections_from(ip) >= settings.realtime_max_connections_per_ip:
        return (
            "too_many_connections",
            f"At most {settings.realtime_max_connections_per_ip} connections per client.",
            CloseCode.POLICY_VIOLATION,
        )
    if len(realtime.registry.connections) >= settings.realtime_max_connections:
        return ("server_busy", "Too many connections; try again later.", CloseCode.TRY_AGAIN_LATER)
    return None


@websocket(WS_PATH, name="realtime-websocket")
async def realtime_socket(socket: WebSocket[Any, Any, Any]) -> None:
    """The real-time channel: subscribe to asset prices and (signed in) portfolio values."""
    realtime: Realtime = socket.app.state.realtime
    try:
        identity = await authenticate(socket)
    except _Refused as exc:
        await _refuse(socket, exc.code, exc.message)
        return
    ip = scope_client_ip(socket.scope, proxy_trust(realtime.settings))
    refusal = _over_capacity(realtime, ip)
    if refusal is not None:
        await _refuse(socket, *refusal)
        return
    await socket.accept()
    conn = realtime.registry.open(
        identity.id if identity else None,
        credential=(str(identity.method), identity.credential_id) if identity else None,
        ip=ip,
    )
    writer = asyncio.create_task(conn.write(socket.send_text), name=f"rt:conn{conn.id}")
    close_code: int | None = None
    try:
        close_code = await _read_until_kicked(socket, realtime, conn, writer)
    except Exception:
        log.exception("realtime: connection %d failed", conn.id)
        close_code = 1011
    finally:
        try:
            await realtime.registry.close(conn)
        except Exception:  # e.g. Redis gone while unsubscribing: the connection ends anyway
            log.exception("realtime: cleanup of connection %d failed", conn.id)
        if close_code is not None and not writer.done():
            # Flush what is queued (the final error) for a moment, then close.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(writer), 1.0)
        writer.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await writer
        if close_code is not None:
            with contextlib.suppress(Exception):
                await socket.close(code=close_code)


async def _read_until_kicked(
    socket: WebSocket[Any, Any, Any],
    realtime: Realtime,
    conn: Connection,
    writer: asyncio.Task[None],
) -> int | None:
    """:func:`_read`, cut short when the service kicks the connection (revoked credential)."""
    reader = asyncio.ensure_future(_read(socket, realtime, conn, writer))
    kicked = asyncio.ensure_future(conn.kicked.wait())
    try:
        await asyncio.wait({reader, kicked}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (reader, kicked):
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
    if conn.kick_code is not None:
        return conn.kick_code
    return reader.result()


async def _read(
    socket: WebSocket[Any, Any, Any],
    realtime: Realtime,
    conn: Connection,
    writer: asyncio.Task[None],
) -> int | None:
    """Handle messages until the client leaves (``None``) or must be closed (a code)."""
    while True:
        try:
            event = await socket.receive()
        except WebSocketDisconnect:
            return None
        if event["type"] == "websocket.disconnect":
            return None
        if writer.done():  # the client stopped accepting what we send
            return None
        text: str | None = event.get("text")  # type: ignore[assignment]
        data: str | bytes = text if text is not None else (event.get("bytes") or b"")  # type: ignore[assignment]
        code = await realtime.handle(conn, data)
        if code is not None:
            return code
