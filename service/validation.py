"""What failed validation, found from the schema and the value, never from an error's text.

Litestar reports a failed parameter or body as a ``ValidationException`` whose
``extra`` names the parameter (``key``, msgspec's path style: ``items[0].name``) and
where it came from (``source``). This module walks the handler's signature model
(the msgspec Struct Litestar validates against, or a dependency's) down that path
with :func:`msgspec.inspect.type_info`, looks at the value the client sent there,
and says which declared constraint it breaks: :func:`describe` gives the documented
``(field, code)`` pair. The request's parameters are checked against what the handler
declares (:func:`missing_parameter`, :func:`repeated_parameter`) the same way.

JSON bodies are read with floats as :class:`~decimal.Decimal` (:func:`json_document`),
so that a number beyond float64 (``1e400``) is a value to point at, not a decode
failure without a path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import msgspec
import msgspec.inspect as mi
from litestar import Request
from litestar.enums import ParamType

from service import patterns

__all__ = [
    "Problem",
    "describe",
    "json_document",
    "kwargs_model",
    "missing_parameter",
    "object_problem",
    "repeated_parameter",
]

_document = msgspec.json.Decoder(float_hook=Decimal)
_TOKENS = re.compile(r"[^.\[\]]+|\[\d+\]")


def json_document(body: bytes) -> Any | None:
    """``body`` as JSON with floats as ``Decimal`` (``None`` when it is not JSON)."""
    try:
        return _document.decode(body) if body else None
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None


@dataclass(frozen=True, slots=True)
class Problem:
    """One failure: the field's path, the documented code, and what a declared pattern means.

    ``meaning`` (``service.patterns.MEANINGS``) says in words what a string failing a
    pattern must be, so that the client never reads a regex.
    """

    field: str
    code: str
    meaning: str | None = None

    def sentence(self) -> str | None:
        """``"<field> must be <meaning>."`` (``None`` without a meaning)."""
        return f"{self.field} must be {self.meaning}." if self.meaning else None


def _segments(path: str) -> list[str | int]:
    """``"items[0].name"`` -> ``["items", 0, "name"]`` (a structured path, split)."""
    return [int(t[1:-1]) if t.startswith("[") else t for t in _TOKENS.findall(path)]


def _join(path: Sequence[str | int]) -> str:
    out = ""
    for seg in path:
        out += f"[{seg}]" if isinstance(seg, int) else (f".{seg}" if out else seg)
    return out


def _unwrap(t: mi.Type) -> mi.Type:
    """Past ``Annotated`` metadata, and past ``None`` in an optional (the value is not None)."""
    while True:
        if isinstance(t, mi.Metadata):
            t = t.type
        elif isinstance(t, mi.UnionType):
            rest = [u for u in t.types if not isinstance(u, mi.NoneType)]
            if len(rest) != 1:
                return t
            t = rest[0]
        else:
            return t


def _child(t: mi.Type, seg: str | int) -> mi.Type | None:
    t = _unwrap(t)
    if isinstance(t, (mi.StructType, mi.TypedDictType, mi.DataclassType)):
        return next((f.type for f in t.fields if seg in (f.name, f.encode_name)), None)
    if isinstance(t, (mi.ListType, mi.SetType, mi.FrozenSetType, mi.VarTupleType)):
        return t.item_type
    if isinstance(t, mi.TupleType) and isinstance(seg, int) and seg < len(t.item_types):
        return t.item_types[seg]
    if isinstance(t, mi.DictType):
        return t.value_type
    return None


def _value(doc: Any, seg: str | int) -> tuple[bool, Any]:
    if isinstance(doc, dict) and seg in doc:
        return True, doc[seg]
    if isinstance(doc, list) and isinstance(seg, int) and seg < len(doc):
        return True, doc[seg]
    return False, None


def object_problem(t: mi.Type, doc: Any, at: Sequence[str | int] = ()) -> Problem | None:
    """An unknown or missing field of the object ``doc`` of type ``t`` (what msgspec meets first)."""
    t = _unwrap(t)
    if not isinstance(t, (mi.StructType, mi.TypedDictType, mi.DataclassType)):
        return None
    if not isinstance(doc, dict):
        return Problem(_join(at) or "body", "invalid")
    names = {f.encode_name for f in t.fields}
    if getattr(t, "forbid_unknown_fields", False):
        for key in doc:
            if key not in names:
                return Problem(_join([*at, key]), "unknown_field")
    for f in t.fields:
        if f.required and f.encode_name not in doc:
            return Problem(_join([*at, f.encode_name]), "required")
    return None


def _bounds(t: Any, value: Any) -> str | None:
    """The code of the first ``Meta`` bound ``value`` breaks (``None``: none)."""
    ge, gt, le, lt = (getattr(t, n, None) for n in ("ge", "gt", "le", "lt"))
    if (ge is not None and value < ge) or (gt is not None and value <= gt):
        return "min_value"
    if (le is not None and value > le) or (lt is not None and value >= lt):
        return "max_value"
    return None


def _lengths(t: Any, size: int) -> str | None:
    low, high = getattr(t, "min_length", None), getattr(t, "max_length", None)
    if low is not None and size < low:
        return "min_length"
    if high is not None and size > high:
        return "max_length"
    return None


_KINDS: tuple[tuple[type, tuple[type, ...]], ...] = (
    (bool, (mi.BoolType,)),
    (str, (mi.StrType, mi.EnumType, mi.LiteralType)),
    (int, (mi.IntType, mi.FloatType)),
    (Decimal, (mi.FloatType,)),
    (float, (mi.FloatType,)),
    (list, (mi.ListType, mi.SetType, mi.FrozenSetType, mi.VarTupleType, mi.TupleType)),
    (dict, (mi.StructType, mi.TypedDictType, mi.DataclassType, mi.DictType)),
)


def _member(t: mi.UnionType, value: Any) -> mi.Type | None:
    """The member of a union that a value of this JSON kind is checked against."""
    for kind, types in _KINDS:
        if isinstance(value, kind):
            for member in t.types:
                if isinstance(_unwrap(member), types):
                    return member
            return None
    return None


def _leaf(t: mi.Type, value: Any, field: str) -> Problem:
    """Which constraint of ``t`` the (present) ``value`` breaks."""
    t = _unwrap(t)
    if isinstance(t, mi.UnionType):
        member = _member(t, value)
        return _leaf(member, value, field) if member is not None else Problem(field, "invalid")
    if isinstance(t, (mi.EnumType, mi.LiteralType)):
        return Problem(field, "invalid_choice")
    if isinstance(t, (mi.IntType, mi.FloatType)):
        number = _number(value, float if isinstance(t, mi.FloatType) else int)
        if number is None:
            return Problem(field, "invalid")
        return Problem(field, _bounds(t, number) or "invalid")
    if isinstance(t, mi.StrType):
        if not isinstance(value, str):
            return Problem(field, "invalid")
        code = _lengths(t, len(value))
        if code is not None:
            return Problem(field, code)
        meaning = patterns.MEANINGS.get(t.pattern) if t.pattern else None
        return Problem(field, "invalid", meaning)
    if isinstance(t, (mi.ListType, mi.SetType, mi.FrozenSetType, mi.VarTupleType)):
        if isinstance(value, list):
            return Problem(field, _lengths(t, len(value)) or "invalid")
    if isinstance(t, (mi.StructType, mi.TypedDictType, mi.DataclassType)):
        return object_problem(t, value, _segments(field)) or Problem(field, "invalid")
    return Problem(field, "invalid")


def _number(value: Any, kind: type) -> float | int | Decimal | None:
    """``value`` as the number a query string or JSON gave (``None``: not a number of ``kind``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, Decimal)) or (kind is float and isinstance(value, float)):
        return value if kind is float or isinstance(value, int) else None
    if isinstance(value, str):
        try:
            number: int | float = msgspec.convert(value, kind, strict=False)
            return number
        except msgspec.ValidationError:
            return None
    return None


def describe(t: mi.Type, doc: Any, path: str) -> Problem:
    """The failure at ``path`` of the document ``doc`` validated as ``t``."""
    segs = _segments(path)
    node_t: mi.Type | None = t
    node: Any = doc
    for i, seg in enumerate(segs):
        if node_t is not None and isinstance(_unwrap(node_t), mi.UnionType):
            node_t = _member(_unwrap(node_t), node)  # type: ignore[arg-type]
        present, node = _value(node, seg)
        node_t = _child(node_t, seg) if node_t is not None else None
        if not present:
            return Problem(_join(segs[: i + 1]), "required")
    if node_t is None:
        return Problem(_join(segs) or "body", "invalid")
    return object_problem(node_t, node, segs) or _leaf(node_t, node, _join(segs) or "body")


def kwargs_model(request: Request[Any, Any, Any]) -> Any:
    """Litestar's kwargs model of the request's handler (its dependencies' parameters merged)."""
    paths: Any = dict.fromkeys(request.path_params)  # only the names are read
    return request.route_handler.create_kwargs_model(path_parameters=paths)


def _declared(request: Request[Any, Any, Any]) -> Iterator[Any]:
    """The parameters (``ParameterDefinition``) the handler and its dependencies declare.

    Litestar's kwargs model of the handler (dependencies' parameters merged in), built
    again here: only a request that failed, or repeats a parameter, gets this far.
    """
    model = kwargs_model(request)
    yield from model.expected_query_params
    yield from model.expected_header_params
    yield from model.expected_cookie_params


def missing_parameter(request: Request[Any, Any, Any]) -> str | None:
    """The alias of the first required query, header or cookie parameter the request lacks."""
    sources = {
        ParamType.QUERY: request.query_params,
        ParamType.HEADER: request.headers,
        ParamType.COOKIE: request.cookies,
    }
    for param in _declared(request):
        if param.is_required and param.field_alias not in sources[param.param_type]:
            return str(param.field_alias)
    return None


def repeated_parameter(request: Request[Any, Any, Any]) -> str | None:
    """A query parameter given more than once that the handler does not take as a list."""
    names = [k for k, _ in request.query_params.multi_items()]
    if len(names) == len(set(names)):  # the usual case: nothing more to look at
        return None
    seen: set[str] = set()
    repeated = {n for n in names if n in seen or seen.add(n)}  # type: ignore[func-returns-value]
    for param in _declared(request):
        if param.param_type is ParamType.QUERY and param.field_alias in repeated:
            if not param.is_sequence:
                return str(param.field_alias)
    return None
