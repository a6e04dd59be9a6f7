"""A JSON schema rewritten so that a grammar built from it nests at most ``limit`` levels.

llama.cpp's schema-to-grammar converter refuses the root reference ``$ref: "#"`` and turns
recursion through ``$defs`` into a recursive grammar, whose output can nest past the 10 levels
OpenAI's Structured Outputs guide allows ("up to 10 levels of nesting"). :func:`bound_nesting`
unrolls the recursion into copies of each definition per depth (``name__3`` is ``name`` met at
depth 3), so the result has no cycle and no ``#`` reference. At each depth it keeps only what can
still end within the limit, the way the project's own constrained decoder takes the shortest way
out: an optional property or an ``anyOf`` branch that needs more levels is left out, and an array
whose items need more levels stays empty. Every value valid against the result is valid against
the input. The input must already be in the subset of :func:`textgen.backends.constrained.compile_schema`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["bound_nesting", "bounded_document", "nesting_depth"]

_SCALARS = ("string", "number", "integer", "boolean", "null")
_CONTAINERS = ("object", "array")


def nesting_depth(value: Any) -> int:
    """Levels of arrays and objects in a JSON value (``0`` for a scalar)."""
    if isinstance(value, dict):
        return 1 + max((nesting_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((nesting_depth(v) for v in value), default=0)
    return 0


class _Bounder:
    def __init__(self, document: Mapping[str, Any], limit: int, prefix: str) -> None:
        self.document = document
        self.limit = limit
        self.prefix = prefix
        self.names: dict[str, str] = {}
        self.defs: dict[str, Any] = {}
        self.memo: dict[tuple[int, int], bool] = {}

    def target(self, ref: str) -> Any:
        node: Any = self.document
        for part in ref[2:].split("/") if ref != "#" else ():
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def fits(self, node: Any, budget: int) -> bool:
        """Whether some value valid against ``node`` nests at most ``budget`` levels."""
        if budget < 0 or not isinstance(node, Mapping):
            return budget >= 0
        key = (id(node), budget)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = False  # a cycle that crosses no container does not end by itself
        result = self._fits(node, budget)
        self.memo[key] = result
        return result

    def _fits(self, node: Mapping[str, Any], budget: int) -> bool:
        if "$ref" in node:
            return self.fits(self.target(node["$ref"]), budget)
        if "anyOf" in node:
            return any(self.fits(option, budget) for option in node["anyOf"])
        if "enum" in node or "const" in node:
            values = node["enum"] if "enum" in node else [node["const"]]
            return min(nesting_depth(v) for v in values) <= budget
        kind = node.get("type")
        if isinstance(kind, list):
            return any(self.fits({**node, "type": k}, budget) for k in kind)
        if kind == "object":
            props = node.get("properties", {})
            return budget >= 1 and all(self.fits(props[r], budget - 1) for r in node.get("required", ()))
        if kind == "array":
            return budget >= 1 and (not node.get("minItems") or self.fits(node.get("items"), budget - 1))
        return True

    def any_value(self, budget: int) -> dict[str, Any]:
        """Any JSON value nesting at most ``budget`` levels."""
        name = f"{self.prefix}any__{budget}"
        if name not in self.defs:
            self.defs[name] = {}
            options: list[dict[str, Any]] = [{"type": k} for k in _SCALARS]
            if budget >= 1:
                inner = self.any_value(budget - 1)
                options += [{"type": "array", "items": inner},
                            {"type": "object", "additionalProperties": inner}]
            self.defs[name] = {"anyOf": options}
        return {"$ref": f"#/$defs/{name}"}

    def ref(self, ref: str, budget: int) -> dict[str, Any]:
        if ref not in self.names:
            base = "root" if ref == "#" else re.sub(r"[^A-Za-z0-9_]", "_", ref.rsplit("/", 1)[-1])
            self.names[ref] = f"{self.prefix}{base}_{len(self.names)}"
        name = f"{self.names[ref]}__{budget}"
        if name not in self.defs:
            self.defs[name] = {}  # reserved while it is built (it may refer to itself at a lower budget)
            self.defs[name] = self.emit(self.target(ref), budget)
        return {"$ref": f"#/$defs/{name}"}

    def emit(self, node: Any, budget: int) -> Any:
        """``node`` with every value nesting at most ``budget`` levels (``fits(node, budget)`` holds)."""
        if not isinstance(node, Mapping):
            return node
        if "$ref" in node:
            return self.ref(node["$ref"], budget)
        if "anyOf" in node:
            options = [self.emit(o, budget) for o in node["anyOf"] if self.fits(o, budget)]
            return options[0] if len(options) == 1 else {"anyOf": options}
        rest = {k: v for k, v in node.items() if k not in ("$defs", "definitions")}
        if "enum" in node or "const" in node:
            return rest
        kind = node.get("type")
        if isinstance(kind, list):
            options = [self.emit({**rest, "type": k}, budget) for k in kind if self.fits({**rest, "type": k}, budget)]
            return options[0] if len(options) == 1 else {"anyOf": options}
        if kind == "object":
            required = list(node.get("required", ()))
            props = {name: self.emit(sub, budget - 1) for name, sub in node.get("properties", {}).items()
                     if name in required or self.fits(sub, budget - 1)}
            out = {**rest, "properties": props}
            if required:
                out["required"] = required
            # Left out, as llama.cpp's converter reads it, no other property is generated.
            extra = node.get("additionalProperties")
            if isinstance(extra, Mapping):
                out["additionalProperties"] = self.emit(extra, budget - 1) if self.fits(extra, budget - 1) else False
            elif extra is True:
                out["additionalProperties"] = self.any_value(budget - 1)
            return out
        if kind == "array":
            items = node.get("items")
            if self.fits(items, budget - 1):
                return {**rest, "items": self.emit(items, budget - 1)}
            return {**rest, "items": {"type": "null"}, "maxItems": 0}  # only the empty array ends in time
        return rest


def bound_nesting(schema: Mapping[str, Any], limit: int = 10, prefix: str = "") -> tuple[Any, dict[str, Any]]:
    """``schema`` unrolled to at most ``limit`` levels of nesting.

    Args:
        schema: A JSON schema in the subset of ``compile_schema`` (local ``$ref``: ``#`` or ``#/$defs/...``).
        limit: The most levels of arrays and objects a valid value may nest.
        prefix: Put before every definition name (to merge several bounded schemas into one document).

    Returns:
        The bounded root schema and the definitions its ``$ref``\\ s name (``#/$defs/<name>``); put
        them under ``$defs`` of the document's root.

    Raises:
        ValueError: No value valid against ``schema`` nests at most ``limit`` levels.
    """
    bounder = _Bounder(schema, limit, prefix)
    if not bounder.fits(schema, limit):
        raise ValueError(f"no value valid against the schema nests at most {limit} levels")
    root = bounder.emit(schema, limit)
    return root, bounder.defs


def bounded_document(schema: Mapping[str, Any], limit: int = 10) -> dict[str, Any]:
    """:func:`bound_nesting` as one self-contained schema (the definitions under the root's ``$defs``)."""
    root, defs = bound_nesting(schema, limit)
    if not defs:
        return dict(root)
    if "$ref" in root:
        return {"anyOf": [root], "$defs": defs}
    return {**root, "$defs": defs}
