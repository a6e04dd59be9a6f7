"""Errors in OpenAI's shape: ``{"error": {"message", "type", "param", "code"}}``.

Service code raises :class:`APIError` (or one of the helpers); the exception
handlers below turn it, Litestar's own HTTP exceptions and any unexpected
exception into that body with the right status, so a client never sees a trace.
"""

from __future__ import annotations

import logging
from typing import Any

import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException
from litestar.types import ExceptionHandlersMap

__all__ = [
    "APIError",
    "bad_request",
    "error_body",
    "exception_handlers",
    "not_found",
    "validation_error",
]

log = logging.getLogger("textgen")

_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "invalid_request_error",
    404: "invalid_request_error",
    405: "invalid_request_error",
    409: "invalid_request_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
    429: "rate_limit_error",
    500: "server_error",
}


class APIError(Exception):
    """An error answered to the client.

    Args:
        status: HTTP status.
        message: Human-readable explanation (names the offending field).
        param: The request parameter at fault, e.g. ``"input[0].content"``.
        code: Machine-readable code, e.g. ``"model_not_found"``.
        type: OpenAI error type; derived from ``status`` when omitted.
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        type: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.type = type or _TYPES.get(status, "invalid_request_error")


def bad_request(message: str, param: str | None = None, code: str | None = None) -> APIError:
    """A 400 ``invalid_request_error``."""
    return APIError(400, message, param=param, code=code)


def not_found(message: str, param: str | None = None, code: str | None = None) -> APIError:
    """A 404 ``invalid_request_error``."""
    return APIError(404, message, param=param, code=code)


def validation_error(exc: msgspec.ValidationError | msgspec.DecodeError, prefix: str = "") -> APIError:
    """A 400 from msgspec's message, with ``param`` taken from its ``$.a.b[0]`` path (under ``prefix``
    when what was decoded is that field of the request, e.g. ``prompt.messages``)."""
    text = str(exc)
    param = prefix or None
    if " - at `$" in text:
        text, _, path = text.partition(" - at `$")
        path = path.rstrip("`").replace("[...]", "")
        param = (prefix + path).lstrip(".") or None
    if not isinstance(exc, msgspec.ValidationError):  # ValidationError subclasses DecodeError
        return bad_request(f"The request body is not valid JSON: {text}.", code="invalid_json")
    if text.startswith("Object contains unknown field"):
        field = text.split("`")[1]
        full = f"{param}.{field}" if param else field
        return bad_request(f"Unknown parameter: '{full}'.", param=full, code="unknown_parameter")
    if text.startswith("Object missing required field"):
        field = text.split("`")[1]
        full = f"{param}.{field}" if param else field
        return bad_request(f"Missing required parameter: '{full}'.", param=full, code="missing_required_parameter")
    where = f" for '{param}'" if param else ""
    return bad_request(f"Invalid value{where}: {text}.", param=param, code="invalid_value")


def error_body(status: int, message: str, type_: str, param: str | None, code: str | None) -> dict[str, Any]:
    """The JSON body of an error."""
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def _api_error(_: Request[Any, Any, Any], exc: APIError) -> Response[Any]:
    # The x-ratelimit-* headers and a 429's Retry-After are added by textgen.auth.ratelimit_headers.
    return Response(error_body(exc.status, exc.message, exc.type, exc.param, exc.code), status_code=exc.status)


_HTTP_CODES = {
    401: "invalid_api_key",
    404: "not_found",
    405: "method_not_allowed",
    413: "request_too_large",
    415: "unsupported_media_type",
}


def _parameter_error(extra: Any) -> APIError | None:
    """A 400 naming the first path or query parameter Litestar could not parse, or ``None``."""
    if not isinstance(extra, list) or not extra or not isinstance(extra[0], dict) or "key" not in extra[0]:
        return None
    first = extra[0]
    source = first.get("source")
    where = f"{getattr(source, 'value', source)} parameter" if source is not None else "parameter"
    detail = str(first.get("message") or "invalid value").rstrip(".")
    return bad_request(f"Invalid value for {where} '{first['key']}': {detail}.", param=str(first["key"]),
                       code="invalid_value")


def _http_error(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    status = exc.status_code
    message = exc.detail or "Request failed."
    code = _HTTP_CODES.get(status)
    if status == 404 and message == "Not Found":
        message = f"Unknown path: {request.method} {request.url.path}."
    elif status == 413:  # Litestar's request body limit; an upload over the file limit is the files service's 413
        multipart = request.headers.get("content-type", "").startswith("multipart/form-data")
        code = "file_too_large" if multipart else "request_too_large"
        message = "The uploaded file is too large." if multipart else "The request body is too large."
    elif status == 400:
        parameter = _parameter_error(getattr(exc, "extra", None))
        if parameter is not None:
            return _api_error(request, parameter)
        if getattr(exc, "extra", None):
            message = f"{message}: {exc.extra}"
    return _api_error(request, APIError(status, message, code=code))


def _unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return _api_error(
        request, APIError(500, "The server had an error while processing your request.", code="server_error")
    )


exception_handlers: ExceptionHandlersMap = {
    APIError: _api_error,
    HTTPException: _http_error,
    Exception: _unexpected,
}
