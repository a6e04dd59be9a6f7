"""Constrained JSON decoding: text that is valid against a JSON Schema by construction.

:func:`compile_schema` checks a schema against the supported subset (the one
Structured Outputs documents: ``type`` incl. lists, ``properties``,
``required``, ``additionalProperties``, ``items``, ``minItems``/``maxItems``,
``enum``, ``const``, ``anyOf``, ``$ref`` into ``$defs``/``definitions``,
``minimum``/``maximum``/``exclusiveMinimum``/``exclusiveMaximum``,
``minLength``/``maxLength``; annotations such as ``title`` and ``description``
are ignored). Anything else is a :class:`SchemaError` naming the keyword and
its path, never silently invalid output.

:func:`generate` walks the compiled schema and yields the JSON text piece by
piece: the schema fixes every structural token (braces, keys, commas, quotes,
enum values), and a :class:`TextSource` (the language model) fills the free
positions (string contents) under the length limits.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

__all__ = [
    "AnyOfNode",
    "ArrayNode",
    "CompiledSchema",
    "ConstNode",
    "LiteralNode",
    "Node",
    "NumberNode",
    "ObjectNode",
    "RefNode",
    "SchemaError",
    "StringNode",
    "TextSource",
    "compile_schema",
    "generate",
]

_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "$schema", "$id", "$comment",
     "deprecated", "readOnly", "writeOnly"}
)
_KEYWORDS = {
    "object": frozenset({"type", "properties", "required", "additionalProperties"}),
    "array": frozenset({"type", "items", "minItems", "maxItems"}),
    "string": frozenset({"type", "minLength", "maxLength", "enum", "const"}),
    "number": frozenset({"type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                         "enum", "const"}),
    "boolean": frozenset({"type", "enum", "const"}),
    "null": frozenset({"type", "enum", "const"}),
}
_KEYWORDS["integer"] = _KEYWORDS["number"]
_SAFE_INTEGER = 2.0**53
_WANDER_DEPTH = 8  # below this depth the walk takes the shortest way out (recursive schemas)
# OpenAI's Structured Outputs guide, "Objects have limitations on nesting depth and size":
# "A schema may have up to 5000 object properties total, with up to 10 levels of nesting."
MAX_NESTING = 10
MAX_PROPERTIES = 5000


class SchemaError(ValueError):
    """A schema outside the supported subset; ``path`` is a JSON pointer into it."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(f"{message} (at '{path or '/'}')")
        self.path = path


@dataclass(frozen=True, slots=True)
class ObjectNode:
    properties: tuple[tuple[str, Node], ...]
    optional: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class ArrayNode:
    items: Node
    min_items: int
    max_items: int | None


@dataclass(frozen=True, slots=True)
class StringNode:
    min_length: int
    max_length: int | None


@dataclass(frozen=True, slots=True)
class NumberNode:
    integer: bool
    low: float | None
    high: float | None
    low_exclusive: bool
    high_exclusive: bool


@dataclass(frozen=True, slots=True)
class LiteralNode:
    """``boolean`` or ``null``: a choice among the literal texts."""

    texts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ConstNode:
    """``enum`` / ``const``: one of the given JSON values."""

    values: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class AnyOfNode:
    options: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class RefNode:
    name: str


Node = ObjectNode | ArrayNode | StringNode | NumberNode | LiteralNode | ConstNode | AnyOfNode | RefNode


@dataclass(frozen=True, slots=True)
class CompiledSchema:
    """The root node, the named definitions ``$ref`` points to, and each node's way out.

    ``heights`` maps ``id(node)`` to the fewest levels a valid value of that node
    needs (0 for a scalar); a node that cannot end has no entry.
    """

    root: Node
    defs: Mapping[str, Node]
    heights: Mapping[int, int] = field(default_factory=dict)


def _int(schema: Mapping[str, Any], key: str, path: str, default: int | None) -> int | None:
    value = schema.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SchemaError(f"'{key}' must be a non-negative integer", f"{path}/{key}")
    return value


def _num(schema: Mapping[str, Any], key: str, path: str) -> float | None:
    value = schema.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise SchemaError(f"'{key}' must be a finite number", f"{path}/{key}")
    return float(value)


class _Compiler:
    def __init__(self, document: Mapping[str, Any], strict: bool) -> None:
        self.document = document
        self.strict = strict
        self.defs: dict[str, Node] = {}
        self.pending: set[str] = set()
        self.nesting = 0
        self.properties = 0

    def ref(self, ref: Any, path: str) -> Node:
        if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
            raise SchemaError("only local '$ref' ('#' or '#/$defs/...') is supported", path)
        if ref in self.defs or ref in self.pending:
            return RefNode(ref)
        target: Any = self.document
        for part in ref[2:].split("/") if ref != "#" else ():
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, Mapping) or part not in target:
                raise SchemaError(f"'$ref' target {ref!r} does not exist", path)
            target = target[part]
        self.pending.add(ref)
        self.defs[ref] = self.node(target, ref[1:])
        self.pending.discard(ref)
        return RefNode(ref)

    def node(self, schema: Any, path: str) -> Node:
        if not isinstance(schema, Mapping):
            raise SchemaError("a schema must be an object", path)
        keys = set(schema) - _ANNOTATIONS - {"$defs", "definitions"}
        if "$ref" in schema:
            if keys - {"$ref"}:
                raise SchemaError("'$ref' cannot be combined with other keywords", path)
            return self.ref(schema["$ref"], f"{path}/$ref")
        if "anyOf" in schema:
            if keys - {"anyOf"}:
                raise SchemaError("'anyOf' cannot be combined with other keywords", path)
            options = schema["anyOf"]
            if not isinstance(options, list) or not options:
                raise SchemaError("'anyOf' must be a non-empty array", f"{path}/anyOf")
            return AnyOfNode(tuple(self.node(o, f"{path}/anyOf/{i}") for i, o in enumerate(options)))
        if "enum" in schema or "const" in schema:
            values = schema["enum"] if "enum" in schema else [schema["const"]]
            if not isinstance(values, list) or not values:
                raise SchemaError("'enum' must be a non-empty array", f"{path}/enum")
            unsupported = keys - {"enum", "const", "type"}
            if unsupported:
                raise SchemaError(f"unsupported keyword {sorted(unsupported)[0]!r} beside 'enum'", path)
            return ConstNode(tuple(values))
        kind = schema.get("type")
        if isinstance(kind, list):
            if not kind or not all(isinstance(k, str) for k in kind):
                raise SchemaError("'type' must be a string or a non-empty list of strings", f"{path}/type")
            rest = {k: v for k, v in schema.items() if k != "type"}
            return AnyOfNode(tuple(self.node({**rest, "type": k}, path) for k in kind))
        if kind not in _KEYWORDS:
            raise SchemaError(f"unsupported or missing 'type' {kind!r}", f"{path}/type")
        unsupported = keys - _KEYWORDS[kind]
        if unsupported:
            raise SchemaError(f"unsupported keyword {sorted(unsupported)[0]!r} for type {kind!r}", path)
        if kind in ("object", "array"):
            self.nesting += 1
            try:
                if self.nesting > MAX_NESTING:
                    raise SchemaError(f"the schema nests more than {MAX_NESTING} levels of objects and arrays", path)
                return self.object(schema, path) if kind == "object" else self.array(schema, path)
            finally:
                self.nesting -= 1
        if kind == "string":
            low = _int(schema, "minLength", path, 0) or 0
            high = _int(schema, "maxLength", path, None)
            if high is not None and high < low:
                raise SchemaError("'maxLength' is below 'minLength'", path)
            return StringNode(low, high)
        if kind in ("number", "integer"):
            return self.number(schema, path, kind == "integer")
        return LiteralNode(("true", "false") if kind == "boolean" else ("null",))

    def array(self, schema: Mapping[str, Any], path: str) -> ArrayNode:
        items = schema.get("items")
        if items is None:
            raise SchemaError("an array needs 'items'", path)
        low = _int(schema, "minItems", path, 0) or 0
        high = _int(schema, "maxItems", path, None)
        if high is not None and high < low:
            raise SchemaError("'maxItems' is below 'minItems'", path)
        return ArrayNode(self.node(items, f"{path}/items"), low, high)

    def object(self, schema: Mapping[str, Any], path: str) -> ObjectNode:
        props = schema.get("properties", {})
        if not isinstance(props, Mapping):
            raise SchemaError("'properties' must be an object", f"{path}/properties")
        self.properties += len(props)
        if self.properties > MAX_PROPERTIES:
            raise SchemaError(f"the schema has more than {MAX_PROPERTIES} object properties", path)
        required = schema.get("required", [])
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            raise SchemaError("'required' must be an array of strings", f"{path}/required")
        missing = [r for r in required if r not in props]
        if missing:
            raise SchemaError(f"required property {missing[0]!r} is not in 'properties'", path)
        extra = schema.get("additionalProperties", True)
        if self.strict:
            if extra is not False:
                raise SchemaError("strict mode needs 'additionalProperties': false", path)
            optional = [p for p in props if p not in required]
            if optional:
                raise SchemaError(
                    f"strict mode needs every property in 'required'; {optional[0]!r} is not", path
                )
        elif not isinstance(extra, bool | Mapping):
            raise SchemaError("'additionalProperties' must be a boolean or a schema", path)
        return ObjectNode(
            tuple((name, self.node(sub, f"{path}/properties/{name}")) for name, sub in props.items()),
            frozenset(p for p in props if p not in required),
        )

    def number(self, schema: Mapping[str, Any], path: str, integer: bool) -> NumberNode:
        low, high = _num(schema, "minimum", path), _num(schema, "maximum", path)
        xlow, xhigh = _num(schema, "exclusiveMinimum", path), _num(schema, "exclusiveMaximum", path)
        low_excl = xlow is not None and (low is None or xlow >= low)
        high_excl = xhigh is not None and (high is None or xhigh <= high)
        low = xlow if low_excl else low
        high = xhigh if high_excl else high
        node = NumberNode(integer, low, high, low_excl, high_excl)
        a, b = _number_range(node)
        if a > b:
            raise SchemaError("the numeric bounds leave no valid value", path)
        return node


def compile_schema(schema: Mapping[str, Any], *, strict: bool) -> CompiledSchema:
    """Check a JSON Schema against the supported subset and compile it.

    Args:
        schema: The JSON Schema (a decoded JSON object).
        strict: Apply OpenAI's strict-mode rules: the root is an object, and
            every object lists all its properties in ``required`` and sets
            ``additionalProperties: false``.

    Returns:
        The compiled schema for :func:`generate`.

    Raises:
        SchemaError: The schema uses an unsupported keyword or breaks a rule.
    """
    compiler = _Compiler(schema, strict)
    root = compiler.node(schema, "")
    if strict and not isinstance(root, ObjectNode):
        raise SchemaError("strict mode needs an object at the root ('type': 'object')", "")
    heights = _heights(root, compiler.defs)
    if id(root) not in heights:
        raise SchemaError("the schema's required recursion never ends: no finite value is valid", "")
    return CompiledSchema(root, compiler.defs, heights)


def _children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, ObjectNode):
        return tuple(sub for _, sub in node.properties)
    if isinstance(node, ArrayNode):
        return (node.items,)
    if isinstance(node, AnyOfNode):
        return node.options
    return ()


def _heights(root: Node, defs: Mapping[str, Node]) -> dict[int, int]:
    """The fewest levels a valid value of each node needs; nodes that never end are left out."""
    nodes: list[Node] = []
    seen: set[int] = set()
    stack = [root, *defs.values()]
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen.add(id(node))
            nodes.append(node)
            stack.extend(_children(node))
    heights: dict[int, int] = {}
    inf = math.inf

    def height(node: Node) -> float:
        if isinstance(node, RefNode):
            return heights.get(id(defs[node.name]), inf) + 1
        if isinstance(node, ObjectNode):
            needed = [heights.get(id(sub), inf) for name, sub in node.properties if name not in node.optional]
            return 1 + max(needed, default=0)
        if isinstance(node, ArrayNode):
            return 1 if node.min_items == 0 else 1 + heights.get(id(node.items), inf)
        if isinstance(node, AnyOfNode):
            return 1 + min(heights.get(id(o), inf) for o in node.options)
        return 0

    changed = True
    while changed:  # heights only fall, from infinity, so this settles
        changed = False
        for node in nodes:
            h = height(node)
            if h < heights.get(id(node), inf):
                heights[id(node)] = int(h)
                changed = True
    return heights


class TextSource(Protocol):
    """Fills free text positions; the language model implements it."""

    def phrase(
        self, hint: str, rng: np.random.Generator, min_chars: int, max_chars: int | None
    ) -> Iterator[str]:
        """Yield pieces of a phrase about ``hint`` whose total length is in bounds."""
        ...


def _number_range(node: NumberNode) -> tuple[float, float]:
    low = node.low if node.low is not None else (0.0 if node.high is None or node.high > 0 else node.high - 100)
    high = node.high if node.high is not None else low + 100.0
    if node.integer:
        a = math.floor(low) + 1 if node.low_exclusive and float(low).is_integer() else math.ceil(low)
        b = math.ceil(high) - 1 if node.high_exclusive and float(high).is_integer() else math.floor(high)
        return float(a), float(b)
    if node.low_exclusive:
        low = math.nextafter(low, math.inf)
    if node.high_exclusive:
        high = math.nextafter(high, -math.inf)
    return low, high


def _number_text(node: NumberNode, rng: np.random.Generator) -> str:
    a, b = _number_range(node)
    if node.integer:  # draw within the exactly representable integers
        low, high = int(max(a, -_SAFE_INTEGER)), int(min(b, _SAFE_INTEGER))
        return str(int(rng.integers(low, high + 1)) if low <= high else int(a))
    value = float(rng.uniform(a, b))
    rounded = round(value, 2)
    return json.dumps(rounded if a <= rounded <= b else value)


def _shortest(options: tuple[Node, ...], heights: Mapping[int, int]) -> Node:
    return min(options, key=lambda o: heights.get(id(o), math.inf))


def generate(
    schema: CompiledSchema, source: TextSource, rng: np.random.Generator
) -> Iterator[str]:
    """Yield JSON text valid against ``schema``, piece by piece.

    Args:
        schema: From :func:`compile_schema`.
        source: Fills string contents (the hint is the enclosing property name).
        rng: Chooses array lengths, enum members, numbers and ``anyOf`` branches.

    Yields:
        Pieces whose concatenation is one JSON document.
    """
    yield from _walk(schema.root, schema, source, rng, "value", 0)


def _walk(
    node: Node, schema: CompiledSchema, source: TextSource, rng: np.random.Generator, hint: str, depth: int
) -> Iterator[str]:
    deep = depth >= _WANDER_DEPTH  # from here on, every step lowers the node's height: the walk ends
    if isinstance(node, RefNode):
        yield from _walk(schema.defs[node.name], schema, source, rng, hint, depth + 1)
    elif isinstance(node, ObjectNode):
        yield "{"
        written = 0
        for name, sub in node.properties:
            if name in node.optional and (deep or id(sub) not in schema.heights):
                continue
            yield ("" if written == 0 else ", ") + json.dumps(name) + ": "
            written += 1
            yield from _walk(sub, schema, source, rng, name, depth + 1)
        yield "}"
    elif isinstance(node, ArrayNode):
        high = node.max_items if node.max_items is not None else node.min_items + 2
        count = node.min_items if deep or id(node.items) not in schema.heights else int(
            rng.integers(node.min_items, high + 1))
        yield "["
        for i in range(count):
            if i:
                yield ", "
            yield from _walk(node.items, schema, source, rng, hint, depth + 1)
        yield "]"
    elif isinstance(node, StringNode):
        yield '"'
        for piece in source.phrase(hint, rng, node.min_length, node.max_length):
            yield json.dumps(piece, ensure_ascii=False)[1:-1]
        yield '"'
    elif isinstance(node, NumberNode):
        yield _number_text(node, rng)
    elif isinstance(node, LiteralNode):
        yield node.texts[int(rng.integers(len(node.texts)))]
    elif isinstance(node, ConstNode):
        yield json.dumps(node.values[int(rng.integers(len(node.values)))], ensure_ascii=False)
    else:
        live = [o for o in node.options if id(o) in schema.heights]  # a branch that cannot end is never taken
        option = _shortest(node.options, schema.heights) if deep else live[int(rng.integers(len(live)))]
        yield from _walk(option, schema, source, rng, hint, depth + 1)
