"""One error shape for every failure: ``{"error": code, "message": text, "details": {...}}``.

Services raise :class:`ApiError` subclasses; :data:`exception_handlers` turns those,
Litestar's own HTTP exceptions and msgspec validation failures into that shape.
Unexpected exceptions become a 500 whose body shows only a request id, which is
also logged with the traceback.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Mapping
from typing import Any

import msgspec
from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.types import Scope

__all__ = [
    "ApiError",
    "AuthenticationRequired",
    "NotFoundError",
    "PermissionDenied",
    "RateLimited",
    "ServerError",
    "ValidationError",
    "error_response_bytes",
    "exception_handlers",
    "internal_error",
    "request_id_of",
    "validation_from_message",
]

log = logging.getLogger("service")

WWW_AUTHENTICATE = 'Token realm="api", ApiKey header="X-API-Key"'


class ApiError(Exception):
    """An error with an HTTP status, a stable ``error`` code and ``details``."""

    status_code: int = 400
    error: str = "bad_request"

    def __init__(
        self,
        message: str,
        *,
        details: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details = dict(details or {})
        self.headers = dict(headers or {})


class ValidationError(ApiError):
    """400 ``validation_error`` naming the offending ``field`` and a ``code``."""

    status_code = 400
    error = "validation_error"

    def __init__(self, field: str, code: str, message: str, **extra: Any) -> None:
        super().__init__(message, details={"field": field, "code": code, **extra})
        self.field = field
        self.code = code


class NotFoundError(ApiError):
    status_code = 404
    error = "not_found"


class AuthenticationRequired(ApiError):
    status_code = 401
    error = "authentication_required"

    def __init__(
        self, message: str = "Authentication credentials were not provided or are invalid."
    ) -> None:
        super().__init__(message, headers={"WWW-Authenticate": WWW_AUTHENTICATE})


class PermissionDenied(ApiError):
    status_code = 403
    error = "permission_denied"


class RateLimited(ApiError):
    status_code = 429
    error = "rate_limited"


class ServerError(ApiError):
    """500 ``server_error``, for code that answers outside Litestar's exception handlers."""

    status_code = 500
    error = "server_error"


_STATUS_CODES = {
    400: "bad_request",
    401: "authentication_required",
    403: "permission_denied",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "request_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
    500: "server_error",
    503: "service_unavailable",
}

_encoder = msgspec.json.Encoder()


def error_response_bytes(
    error: str, message: str, details: Mapping[str, Any] | None = None
) -> bytes:
    """The JSON error body, for code that writes raw ASGI responses (middleware)."""
    return _encoder.encode({"error": error, "message": message, "details": dict(details or {})})


def request_id_of(scope: Scope) -> str:
    """The request id set by the request middleware (a fresh one if none)."""
    state = scope.setdefault("state", {})
    rid = state.get("request_id")
    if rid is None:
        rid = state["request_id"] = uuid.uuid4().hex
    return str(rid)


def _response(
    status: int,
    error: str,
    message: str,
    details: Mapping[str, Any],
    headers: Mapping[str, str] | None = None,
) -> Response[Any]:
    return Response(
        {"error": error, "message": message, "details": dict(details)},
        status_code=status,
        media_type=MediaType.JSON,
        headers=dict(headers or {}),
    )


_FIELD_IN_MSG = re.compile(r"field `([^`]+)`")
_AT_PATH = re.compile(r" - at `\$\.?([^`]*)`$")
_CODES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"missing required field"), "required"),
    (re.compile(r"unknown field"), "unknown_field"),
    (re.compile(r"Invalid enum value"), "invalid_choice"),
    (re.compile(r">= |> "), "min_value"),
    (re.compile(r"<= |< "), "max_value"),
    (re.compile(r"length >="), "min_length"),
    (re.compile(r"length <="), "max_length"),
]


#: Litestar's message for an absent required query/header/cookie/path parameter.
_MISSING_PARAM = re.compile(r"Missing required \w+ parameter '([^']+)'")


def validation_from_message(message: str, key: str | None = None) -> ValidationError:
    """Map a msgspec validation message (and Litestar's ``key``) to field + code.

    ``Object missing required field `name``` -> (``name``, ``required``);
    ``Expected `int` >= 1`` -> (key, ``min_value``); ``Invalid enum value 'x'`` ->
    ``invalid_choice``; anything else is ``invalid``.
    """
    missing = _MISSING_PARAM.search(message)
    if missing:
        return ValidationError(missing.group(1), "required", message)
    path = ""
    at = _AT_PATH.search(message)
    if at:
        path = at.group(1)
        message = message[: at.start()]
    field = key if key and key != "data" else ""
    named = _FIELD_IN_MSG.search(message)
    if named and ("required" in message or "unknown" in message):
        field = f"{path}.{named.group(1)}" if path else named.group(1)
    elif path:
        field = f"{field}.{path}" if field and not path.startswith(field) else path
    code = "invalid"
    for pattern, candidate in _CODES:
        if pattern.search(message):
            code = candidate
            break
    if code in ("min_value", "max_value") and "length" in message:
        code = "min_length" if code == "min_value" else "max_length"
    return ValidationError(field or "body", code, message)


def _api_error(request: Request[Any, Any, Any], exc: ApiError) -> Response[Any]:
    return _response(exc.status_code, exc.error, exc.message, exc.details, exc.headers)


def _validation(request: Request[Any, Any, Any], exc: ValidationException) -> Response[Any]:
    extra = exc.extra if isinstance(exc.extra, list) else []
    first = extra[0] if extra and isinstance(extra[0], dict) else {}
    err = validation_from_message(str(first.get("message", exc.detail)), first.get("key"))
    return _api_error(request, err)


def _http(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    status = exc.status_code
    if status >= 500:
        return _internal(request, exc)
    detail = str(exc.detail)
    if status == 400 and detail.startswith("JSON is malformed"):
        return _response(400, "validation_error", detail, {"field": "body", "code": "invalid_json"})
    headers = dict(exc.headers or {})
    if status == 401:
        headers.setdefault("WWW-Authenticate", WWW_AUTHENTICATE)
    return _response(status, _STATUS_CODES.get(status, "error"), detail, {}, headers)


def internal_error(rid: str) -> ServerError:
    """The 500 a client sees for an unexpected failure: only the request id, no detail."""
    return ServerError(
        f"An internal error occurred; quote request id {rid} when reporting it.",
        details={"request_id": rid},
    )


def _internal(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    rid = request_id_of(request.scope)
    log.error(
        "unhandled error request_id=%s %s %s", rid, request.method, request.url.path, exc_info=exc
    )
    return _api_error(request, internal_error(rid))


exception_handlers: dict[type[Exception] | int, Callable[..., Response[Any]]] = {
    ApiError: _api_error,
    ValidationException: _validation,
    HTTPException: _http,
    Exception: _internal,
}
