"""One error shape for every failure: ``{"error": code, "message": text, "details": {...}}``.

Services raise :class:`ApiError` subclasses; :data:`exception_handlers` turns those,
Litestar's own HTTP exceptions and msgspec validation failures into that shape.
Unexpected exceptions become a 500 whose body shows only a request id, which is
also logged with the traceback.

Bad input that fails deep inside a library is traced back to the request here, in
one place, instead of in every schema:

* a body that is not JSON (truncated, not UTF-8, nested too deeply, empty where one
  is required): 400 ``validation_error``, ``field: "body"``, ``code: "invalid_json"``
  (``"required"`` when empty);
* a number too large to store (an integer beyond the 64-bit range, a decimal of
  10^20 or more; ``OverflowError`` from the driver, numba or NumPy, the database's
  out-of-range error, ``decimal.InvalidOperation`` on binding): a path id is a 404
  (no such row can exist), a query parameter or body field a 400 naming it with
  ``code: "out_of_range"``. Only when the failure happened: values are not
  scanned on the way in.

Field paths use msgspec's style everywhere: ``items[0].name``.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

import msgspec
from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.types import Scope
from litestar.utils.scope.state import ScopeState
from sqlalchemy.exc import StatementError

from service.validation import (
    Problem,
    describe,
    json_document,
    kwargs_model,
    missing_parameter,
    repeated_parameter,
)

__all__ = [
    "ApiError",
    "AuthenticationRequired",
    "NotFoundError",
    "PermissionDenied",
    "RateLimited",
    "ServerError",
    "UnsupportedMediaType",
    "ValidationError",
    "check_request",
    "error_response_bytes",
    "exception_handlers",
    "internal_error",
    "malformed_body",
    "out_of_range",
    "request_id_of",
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


class UnsupportedMediaType(ApiError):
    """415 ``unsupported_media_type``: a JSON endpoint sent a body of another type."""

    status_code = 415
    error = "unsupported_media_type"


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


_INT64 = range(-(2**63), 2**63)
_INT32 = range(-(2**31), 2**31)
_DIGITS = re.compile(r"^[+-]?\d+$")  # an integer query value (a value, not a message)


def _body(request: Request[Any, Any, Any]) -> bytes:
    """The request body as far as Litestar has read it (``b""`` when it has not)."""
    body = ScopeState.from_scope(request.scope).body
    return body if isinstance(body, bytes) else b""


def malformed_body(body: bytes) -> ValidationError | None:
    """Why ``body`` is not JSON (``None`` when it is)."""
    try:
        msgspec.json.decode(body)
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        reason = "not valid UTF-8" if isinstance(exc, UnicodeDecodeError) else str(exc)
        return ValidationError("body", "invalid_json", f"The body is not valid JSON: {reason}.")
    except RecursionError:
        return ValidationError("body", "invalid_json", "The body is JSON nested too deeply.")
    return None


#: Magnitude of the largest number the ledger's NUMERIC(38, 8) stores through Python's
#: 28-digit decimal context (20 integer digits + 8 fractional).
_DECIMAL_LIMIT = Decimal(10) ** 20


def _too_large(value: Any, ints: range) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value not in ints
    if isinstance(value, Decimal):  # a JSON float, read exactly (service.validation.json_document)
        return not value.is_finite() or abs(value) >= _DECIMAL_LIMIT
    if isinstance(value, (str, float)):
        try:
            number = Decimal(value.strip() if isinstance(value, str) else repr(value))
        except (InvalidOperation, ValueError):
            return False
        return not number.is_finite() or abs(number) >= _DECIMAL_LIMIT
    return False


def _big_int_path(value: Any, ints: range, path: str = "") -> str | None:
    """The msgspec-style path of the first number in ``value`` too large to store."""
    if _too_large(value, ints):
        return path or "body"
    if isinstance(value, dict):
        items: Any = ((f"{path}.{k}" if path else str(k), v) for k, v in value.items())
    elif isinstance(value, list):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    for sub_path, item in items:
        found = _big_int_path(item, ints, sub_path)
        if found is not None:
            return found
    return None


def out_of_range(request: Request[Any, Any, Any]) -> ApiError | None:
    """The error a client should see when a number it sent overflowed (``None``: none did).

    Ids are BIGINT in some tables and INTEGER (32-bit on PostgreSQL) in others: the
    culprit is the first number beyond 64 bits, else the first beyond 32 bits.
    """
    document = json_document(_body(request))
    for ints in (_INT64, _INT32):
        for name, value in request.path_params.items():
            if isinstance(value, int) and value not in ints:
                return NotFoundError(f"No {name.removesuffix('_id')} has the id {value}.")
        for name, text in request.query_params.multi_items():
            if _DIGITS.match(text) and int(text) not in ints:
                return _out_of_range_error(name)
        field = _big_int_path(document, ints) if document is not None else None
        if field is not None:
            return _out_of_range_error(field)
    return None


def _out_of_range_error(field: str) -> ValidationError:
    return ValidationError(field, "out_of_range", f"{field} is too large to be stored.")


def _api_error(request: Request[Any, Any, Any], exc: ApiError) -> Response[Any]:
    return _response(exc.status_code, exc.error, exc.message, exc.details, exc.headers)


def _signature_type(request: Request[Any, Any, Any], name: str) -> Any:
    """msgspec's view of the signature model (handler's, else a dependency's) that has ``name``."""
    handler = request.route_handler
    models = [handler.signature_model]
    models += [p.signature_model for p in handler.resolve_dependencies().values()]
    for model in models:
        if name in model._fields:
            return msgspec.inspect.type_info(model)
    return None


def _parameter_value(request: Request[Any, Any, Any], name: str) -> dict[str, Any]:
    """``{name: value sent}`` of the parameter whose field is ``name`` (``{}``: not sent)."""
    model = kwargs_model(request)
    sources: dict[Any, Any] = {
        "query": request.query_params,
        "header": request.headers,
        "cookie": request.cookies,
        "path": request.path_params,
    }
    params = [
        *model.expected_query_params,
        *model.expected_header_params,
        *model.expected_cookie_params,
        *model.expected_path_params,
    ]
    for param in params:
        if param.field_name == name and param.field_alias in sources[param.param_type.value]:
            return {name: sources[param.param_type.value][param.field_alias]}
    return {}


def _problem(request: Request[Any, Any, Any], key: str, source: Any) -> Problem:
    """What failed at Litestar's ``key`` (a field path), from the schema and the value sent."""
    if source == "body" or key == "data":  # Litestar strips the ``data.`` of a body path
        path = "data" if key == "data" else f"data.{key}"
        t = _signature_type(request, "data")
        doc = {"data": json_document(_body(request))}
        found = describe(t, doc, path) if t is not None else Problem(key, "invalid")
        field = found.field.removeprefix("data").lstrip(".") or "body"
        return Problem(field, found.code, found.meaning)
    t = _signature_type(request, key)
    if t is None:
        return Problem(key or "body", "invalid")
    return describe(t, _parameter_value(request, key), key)


def _validation(request: Request[Any, Any, Any], exc: ValidationException) -> Response[Any]:
    """Litestar's ``ValidationException``: its ``extra`` names the parameter; the schema says why."""
    extra = exc.extra if isinstance(exc.extra, list) else []
    first = extra[0] if extra and isinstance(extra[0], dict) else {}
    if not first:  # Litestar names nothing when a declared parameter is absent
        missing = missing_parameter(request)
        field = missing or "body"
        code = "required" if missing else "invalid"
        return _api_error(request, ValidationError(field, code, str(exc.detail)))
    key = str(first.get("key", ""))
    source = first.get("source")
    if source == "body" and request.method not in ("GET", "HEAD") and not _body(request):
        return _api_error(request, ValidationError("body", "required", "A JSON body is required."))
    found = _problem(request, key, source)
    message = found.sentence() or str(first.get("message", exc.detail))
    return _api_error(request, ValidationError(found.field, found.code, message))


def _decode_cause(exc: BaseException) -> msgspec.DecodeError | None:
    cause = exc.__cause__
    while cause is not None:
        if isinstance(cause, msgspec.DecodeError):
            return cause
        cause = cause.__cause__
    return None


def _http(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    status = exc.status_code
    if status >= 500:
        return _internal(request, exc)
    detail = str(exc.detail)
    if status == 400 and (decode := _decode_cause(exc)) is not None:
        if isinstance(decode, msgspec.ValidationError):  # JSON, but a number beyond float64
            err = out_of_range(request)
            return _api_error(request, err or _invalid_json("a number is out of range"))
        return _api_error(request, malformed_body(_body(request)) or _invalid_json(detail))
    if status == 400 and detail.startswith("Invalid multipart"):
        return _api_error(request, _NOT_MULTIPART)
    headers = dict(exc.headers or {})
    if status == 401:
        headers.setdefault("WWW-Authenticate", WWW_AUTHENTICATE)
    return _response(status, _STATUS_CODES.get(status, "error"), detail, {}, headers)


#: Litestar refuses a form body that is not ``multipart/form-data`` before any handler runs.
_NOT_MULTIPART = ValidationError(
    "body", "invalid_multipart", "The body must be multipart/form-data (a file upload form)."
)


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


def _invalid_json(reason: str) -> ValidationError:
    return ValidationError("body", "invalid_json", f"The body is not valid JSON: {reason}.")


def _undecodable(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """``UnicodeDecodeError`` / ``RecursionError``: the body's fault if it does not decode."""
    body = _body(request)
    err = malformed_body(body) if body else None
    return _api_error(request, err) if err is not None else _internal(request, exc)


def _overflow(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """A number too large for the database or a kernel: the client's, if it sent one."""
    err = out_of_range(request)
    return _api_error(request, err) if err is not None else _internal(request, exc)


_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


def _json_media_type(value: str) -> bool:
    kind = value.split(";", 1)[0].strip().lower()
    return kind == "application/json" or (kind.startswith("application/") and kind.endswith("+json"))


def _takes_json(request: Request[Any, Any, Any]) -> bool:
    """Whether the handler reads its ``data`` as JSON (not a multipart form)."""
    data = request.route_handler.parsed_fn_signature.parameters.get("data")
    if data is None:
        return False
    media = getattr(data.kwarg_definition, "media_type", None)
    return media is None or media == "application/json"


async def check_request(request: Request[Any, Any, Any]) -> None:
    """The app's ``before_request``: refuse what the handler's declaration rules out.

    A coroutine, on purpose: Litestar runs a synchronous hook in a worker thread.

    * a body with a ``Content-Type`` other than JSON (``application/json`` or
      ``application/*+json``) on an endpoint that reads JSON: 415
      ``unsupported_media_type`` (a body without the header is read as JSON);
    * a query parameter given twice that is not a list (``?period=1m&period=2y``):
      400 naming it, instead of silently keeping one of the values.

    Raises:
        UnsupportedMediaType: see above.
        ValidationError: see above.
    """
    if request.method in _BODY_METHODS:
        sent = request.headers.get("content-type")
        if sent is not None and not _json_media_type(sent) and _takes_json(request):
            raise UnsupportedMediaType(
                f"The body must be JSON (Content-Type: application/json), not {sent.split(';')[0]}.",
                details={"content_type": sent.split(";", 1)[0].strip(), "expected": "application/json"},
            )
    if request.scope.get("query_string"):
        repeated = repeated_parameter(request)
        if repeated is not None:
            raise ValidationError(
                repeated, "invalid", f"{repeated} was given more than once; give it once."
            )


exception_handlers: dict[type[Exception] | int, Callable[..., Response[Any]]] = {
    ApiError: _api_error,
    ValidationException: _validation,
    HTTPException: _http,
    UnicodeDecodeError: _undecodable,
    RecursionError: _undecodable,
    OverflowError: _overflow,
    StatementError: _overflow,  # the driver's out-of-range errors, InvalidOperation on binding
    Exception: _internal,
}
