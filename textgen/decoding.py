"""Decoding request bodies: msgspec into the request Struct, after a check of the JSON nesting depth.

Input items are tagged by ``type``, which a message may leave out: a body with such an item is
decoded to Python values, given the tag, then converted (two steps instead of one).

msgspec decodes recursively and raises ``RecursionError`` near 1,000 levels; the schema
compilers walk free-form fields (``text.format.schema``, ``tools[].parameters``) recursively
too. A body nested deeper than :data:`MAX_JSON_DEPTH` is therefore refused first, with a
400 whose ``param`` is the path of the first value that passes the limit.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

import msgspec
from msgspec import inspect

from textgen.errors import APIError, bad_request, validation_error
from textgen.items import with_message_types

__all__ = ["MAX_JSON_DEPTH", "convert_body", "decode_body", "too_deep"]

T = TypeVar("T")

# Far above any real request (a strict schema of 10 levels is about 25 JSON levels deep) and far
# below the recursion limits of msgspec and of the schema compilers.
MAX_JSON_DEPTH = 128
_ITEM_LISTS = ("input", "items")  # the body fields holding input items
_UNTYPED_ITEM = "Object missing required field `type` - at `$.i"
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{},:]', re.DOTALL)


def _path(keys: list[str | int]) -> str:
    out = ""
    for key in keys:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else key)
    return out


def too_deep(raw: bytes, limit: int = MAX_JSON_DEPTH) -> str | None:
    """The path (``text.format.schema.properties...``) of the first value nested deeper than ``limit``
    containers, or ``None`` when the document stays within it (or is not JSON: msgspec says so)."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return None  # too few containers to nest that deep
    keys: list[str | int] = []  # the path of the current value; one entry per open container
    kinds: list[int] = []  # b"{"[0] or b"["[0]
    last_string = ""
    for match in _TOKENS.finditer(raw):
        token = match.group()
        first = token[0]
        if first == 0x22:  # a string: maybe the next key
            last_string = token[1:-1].decode("utf-8", "replace")
        elif first in (0x7B, 0x5B):  # { or [
            if len(kinds) >= limit:
                return _path(keys) or "$"
            kinds.append(first)
            keys.append(0 if first == 0x5B else "")
        elif first in (0x7D, 0x5D):  # } or ]
            if kinds:
                kinds.pop()
                keys.pop()
        elif first == 0x3A and kinds and kinds[-1] == 0x7B:  # : after a key
            keys[-1] = last_string
        elif first == 0x2C and kinds and kinds[-1] == 0x5B:  # , between array items
            index = keys[-1]
            keys[-1] = index + 1 if isinstance(index, int) else 0
    return None


_STEP = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")


def _json_or_none(raw: bytes) -> Any:
    try:
        return msgspec.json.decode(raw)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None


def _flat(nodes: list[Any]) -> list[Any]:
    """``nodes`` with unions and ``Annotated`` wrappers opened up."""
    out: list[Any] = []
    for node in nodes:
        if isinstance(node, inspect.UnionType):
            out += _flat(list(node.types))
        elif isinstance(node, inspect.Metadata):
            out += _flat([node.type])
        else:
            out.append(node)
    return out


def _choices(kind: Any, param: str | None, body: Any) -> list[str]:
    """The values the field at ``param`` (``input[0].content[1].type``) of ``kind`` takes when it is a
    tag or a ``Literal`` (empty otherwise). ``body`` (the decoded JSON) picks the member of each tagged
    union on the way, so a system message's parts are those of a system message."""
    if not param:
        return []
    steps = [int(index) if index else name for index, name in _STEP.findall(param)]
    nodes, value = [inspect.type_info(kind)], body
    tags: list[str] = []
    for i, step in enumerate(steps):
        found: list[Any] = []
        for node in _flat(nodes):
            if isinstance(step, int) and isinstance(node, inspect.ListType):
                found.append(node.item_type)
            elif isinstance(step, str) and isinstance(node, inspect.StructType):
                if node.tag_field is not None and isinstance(value, dict) and node.tag_field in value \
                        and value[node.tag_field] != node.tag and i < len(steps) - 1:
                    continue  # another member of the union
                found += [f.type for f in node.fields if f.encode_name == step]
                if i == len(steps) - 1 and node.tag_field == step and node.tag is not None:
                    tags.append(str(node.tag))
        nodes = found
        if isinstance(value, dict) and isinstance(step, str):
            value = value.get(step)
        elif isinstance(value, list) and isinstance(step, int) and step < len(value):
            value = value[step]
        else:
            value = None
    values = tags + [str(v) for n in _flat(nodes) if isinstance(n, inspect.LiteralType) for v in n.values]
    return list(dict.fromkeys(values))


def convert_body(value: Any, kind: type[T]) -> T:
    """Decoded JSON ``value`` (a body, or one stored as a job) converted to ``kind``, the ``type`` of
    untyped input items added first.

    Raises:
        msgspec.ValidationError: As :func:`msgspec.convert`.
    """
    if isinstance(value, dict):
        value = {k: with_message_types(v) if k in _ITEM_LISTS else v for k, v in value.items()}
    return msgspec.convert(value, kind)


def decode_body(raw: bytes, kind: type[T]) -> T:
    """``raw`` decoded as ``kind``.

    Raises:
        APIError: 400 naming the field (``invalid_json``, ``unknown_parameter``, ``invalid_value``, ...).
    """
    deep = too_deep(raw)
    if deep is not None:
        raise bad_request(f"The request body nests more than {MAX_JSON_DEPTH} levels of arrays and objects "
                          f"at '{deep}'.", param=deep, code="invalid_value")
    try:
        try:
            return msgspec.json.decode(raw, type=kind)
        except msgspec.ValidationError as exc:
            if not str(exc).startswith(_UNTYPED_ITEM):
                raise
        # an item without "type" is a message (OpenAI's "easy" input message): add the tag, then convert
        return convert_body(msgspec.json.decode(raw), kind)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        error = validation_error(exc)
        choices = _choices(kind, error.param, _json_or_none(raw)) if error.code == "invalid_value" else []
        if choices:  # a wrong tag or enum value: say which ones there are
            error.message = f"{error.message.removesuffix('.')}; expected one of {', '.join(choices)}."
        raise error from exc
    except UnicodeDecodeError as exc:  # msgspec rejects bytes that are not UTF-8 this way
        raise bad_request(f"The request body is not valid UTF-8: {exc.reason} at byte {exc.start}.",
                          code="invalid_json") from exc
    except RecursionError as exc:  # not reached within MAX_JSON_DEPTH; kept so it can never be a 500
        raise APIError(400, "The request body nests too deeply.", code="invalid_value") from exc
