"""Constrained JSON decoding: any supported schema, any seed -> JSON valid under ``jsonschema``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from textgen.backends.builtin import NgramBackend
from textgen.backends.constrained import SchemaError, compile_schema, generate

NAMES = st.text(alphabet="abcdefghij_", min_size=1, max_size=8)


def _bounds(draw: st.DrawFn, integer: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "integer" if integer else "number"}
    number = st.integers(-50, 50) if integer else st.floats(-50, 50, allow_nan=False)
    low = draw(st.none() | number)
    high = draw(st.none() | number)
    if low is not None and high is not None and low > high:
        low, high = high, low
    if low is not None:
        out["exclusiveMinimum" if draw(st.booleans()) and high != low else "minimum"] = low
    if high is not None:
        if "exclusiveMinimum" in out and integer and high - low < 2:
            high = low + 2
        out["maximum" if "exclusiveMinimum" in out or draw(st.booleans()) else "exclusiveMaximum"] = high
        if "exclusiveMaximum" in out and low is not None and (high - low < 2 if integer else high == low):
            out["exclusiveMaximum"] = low + 2
    return out


@st.composite
def leaf(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["string", "integer", "number", "boolean", "null", "enum", "const"]))
    if kind == "string":
        low = draw(st.integers(0, 10))
        schema: dict[str, Any] = {"type": "string", "minLength": low}
        if draw(st.booleans()):
            schema["maxLength"] = low + draw(st.integers(0, 20))
        return schema
    if kind in ("integer", "number"):
        return _bounds(draw, kind == "integer")
    if kind == "enum":
        return {"enum": draw(st.lists(st.one_of(st.text(max_size=5), st.integers(), st.none()),
                                      min_size=1, max_size=4))}
    if kind == "const":
        return {"const": draw(st.text(max_size=5))}
    return {"type": kind}


def _extend(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    def obj(props: dict[str, dict[str, Any]]) -> dict[str, Any]:
        return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}

    def arr(args: tuple[dict[str, Any], int, int]) -> dict[str, Any]:
        items, low, extra = args
        return {"type": "array", "items": items, "minItems": low, "maxItems": low + extra}

    return st.one_of(
        st.dictionaries(NAMES, children, max_size=4).map(obj),
        st.tuples(children, st.integers(0, 2), st.integers(0, 3)).map(arr),
        st.lists(children, min_size=1, max_size=3).map(lambda options: {"anyOf": options}),
    )


SCHEMAS = st.recursive(leaf(), _extend, max_leaves=12).map(
    lambda s: s if s.get("type") == "object" else
    {"type": "object", "properties": {"value": s}, "required": ["value"], "additionalProperties": False}
)


@pytest.fixture(scope="module")
def backend() -> NgramBackend:
    return NgramBackend()


@given(schema=SCHEMAS, seed=st.integers(0, 2**32 - 1))
@settings(max_examples=100, deadline=None)
def test_generated_json_validates(backend: NgramBackend, schema: dict[str, Any], seed: int) -> None:
    from textgen.backends.base import ChatMessage, GenerationRequest
    from textgen.backends.builtin import _Sampler

    try:
        compiled = compile_schema(schema, strict=True)
    except SchemaError as exc:  # only OpenAI's nesting limit may refuse a generated schema
        assert "levels of objects and arrays" in str(exc)
        assume(False)
    sampler = _Sampler(backend, GenerationRequest([ChatMessage("user", "a recipe")], 100, seed=seed))
    text = "".join(generate(compiled, sampler, np.random.default_rng(seed)))
    jsonschema.validate(json.loads(text), schema)


class Words:
    """A minimal text source: repeats one word, to test the decoder alone."""

    def phrase(self, hint: str, rng: np.random.Generator, min_chars: int, max_chars: int | None) -> Iterator[str]:
        text = ("word " * 10)[: max(min_chars, 4)]
        yield text if max_chars is None else text[:max_chars]


def test_refs_defs_and_recursion_terminate() -> None:
    schema = {
        "$defs": {"node": {"type": "object", "properties": {
            "label": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
        }, "required": ["label", "children"], "additionalProperties": False}},
        "$ref": "#/$defs/node",
    }
    compiled = compile_schema(schema, strict=False)
    for seed in range(20):
        text = "".join(generate(compiled, Words(), np.random.default_rng(seed)))
        jsonschema.validate(json.loads(text), schema)


def test_type_lists_and_quotes_are_escaped() -> None:
    schema = {"type": "object", "properties": {"a": {"type": ["string", "null"]}, "b": {"const": 'say "hi"\n'}},
              "required": ["a", "b"], "additionalProperties": False}

    class Quotes:
        def phrase(self, hint: str, rng: np.random.Generator, lo: int, hi: int | None) -> Iterator[str]:
            yield 'he said "no" \\ '

    for seed in range(10):
        value = json.loads("".join(generate(compile_schema(schema, strict=True), Quotes(), np.random.default_rng(seed))))
        jsonschema.validate(value, schema)


@pytest.mark.parametrize(
    ("schema", "strict", "message"),
    [
        ({"type": "string", "pattern": "a"}, False, "unsupported keyword 'pattern'"),
        ({"type": "string", "format": "email"}, False, "unsupported keyword 'format'"),
        ({"oneOf": [{"type": "string"}]}, False, "unsupported or missing 'type'"),
        ({"type": "string"}, True, "object at the root"),
        ({"type": "object", "properties": {"a": {"type": "string"}}}, True, "additionalProperties"),
        ({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False}, True,
         "every property in 'required'"),
        ({"type": "object", "properties": {}, "required": ["x"]}, False, "'x' is not in 'properties'"),
        ({"type": "array"}, False, "needs 'items'"),
        ({"type": "integer", "minimum": 3, "maximum": 2}, False, "no valid value"),
        ({"type": "integer", "exclusiveMinimum": 1, "exclusiveMaximum": 2}, False, "no valid value"),
        ({"type": "string", "minLength": 5, "maxLength": 2}, False, "'maxLength' is below"),
        ({"$ref": "#/$defs/missing"}, False, "does not exist"),
        ({"$ref": "http://example.com/s.json"}, False, "only local"),
        ({"enum": []}, False, "non-empty"),
    ],
)
def test_unsupported_or_invalid_schemas_are_rejected(schema: dict[str, Any], strict: bool, message: str) -> None:
    with pytest.raises(SchemaError, match=message.replace("(", r"\(")):
        compile_schema(schema, strict=strict)


def test_huge_integer_bounds() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 1e30},
                                               "m": {"type": "integer", "minimum": -1e30, "maximum": -1e25}},
              "required": ["n", "m"], "additionalProperties": False}
    for seed in range(10):
        text = "".join(generate(compile_schema(schema, strict=True), Words(), np.random.default_rng(seed)))
        jsonschema.validate(json.loads(text), schema)
