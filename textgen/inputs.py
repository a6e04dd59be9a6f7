"""Checks and normalises the free-form parts of a request: input items, tools, formats.

Every problem is a 400 whose ``param`` points at the offending field
(``input[2].content[0].file_id``), the way OpenAI reports it. Normalised items
get ids and the exact shapes the Responses API returns from
``GET /v1/responses/{id}/input_items``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from textgen.backends.base import FunctionSpec, JsonConstraint
from textgen.backends.constrained import SchemaError, compile_schema
from textgen.errors import bad_request
from textgen.store import new_id

__all__ = [
    "normalize_input",
    "normalize_text_format",
    "normalize_tool_choice",
    "normalize_tools",
]

_ROLES = ("user", "developer", "system", "assistant")
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_DETAILS = ("auto", "low", "high")
# The fields of each item and content part type: what clients send plus what this server emits
# (so every emitted item is accepted back exactly as it was emitted), plus the fields OpenAI's item
# types define that this server accepts and ignores (``phase``, ``namespace``, ``caller``,
# ``prompt_cache_breakpoint``): an SDK object dumped with all its fields is valid input. Anything else is a 400.
_CACHE = "prompt_cache_breakpoint"
_ITEM_FIELDS = {
    "message": frozenset({"id", "type", "role", "status", "content", "phase"}),
    "function_call": frozenset({"id", "type", "status", "call_id", "name", "arguments", "namespace", "caller",
                                "async"}),
    "function_call_output": frozenset({"id", "type", "status", "call_id", "output", "caller"}),
    "reasoning": frozenset({"id", "type", "status", "summary", "content", "encrypted_content"}),
    "item_reference": frozenset({"id", "type"}),
}
_PART_FIELDS = {
    "input_text": frozenset({"type", "text", _CACHE}),
    "output_text": frozenset({"type", "text", "annotations", "logprobs"}),
    "refusal": frozenset({"type", "refusal"}),
    "input_image": frozenset({"type", "detail", "image_url", "file_id", _CACHE}),
    "input_file": frozenset({"type", "file_id", "file_data", "filename", "file_url", "detail", _CACHE}),
    "summary_text": frozenset({"type", "text"}),
    "reasoning_text": frozenset({"type", "text"}),
}


def _known(value: dict[str, Any], allowed: frozenset[str] | None, param: str) -> None:
    """400 ``unknown_parameter`` naming the first field of ``value`` outside ``allowed``."""
    if allowed is None:
        return
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise bad_request(f"Unknown parameter: '{param}.{unknown[0]}'.", param=f"{param}.{unknown[0]}",
                          code="unknown_parameter")


def _str(value: Any, param: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise bad_request(f"Invalid type for '{param}': expected a string.", param=param, code="invalid_type")
    return value


def _part(part: Any, role: str, param: str) -> dict[str, Any]:
    if isinstance(part, str):
        part = {"type": "input_text", "text": part}
    if not isinstance(part, dict):
        raise bad_request(f"Invalid type for '{param}': expected an object.", param=param, code="invalid_type")
    kind = part.get("type")
    _known(part, _PART_FIELDS.get(str(kind)), param)
    if role == "assistant":
        if kind == "refusal":
            return {"type": "refusal", "refusal": _str(part.get("refusal"), f"{param}.refusal")}
        if kind not in ("output_text", "input_text"):
            raise bad_request(f"Invalid content type {kind!r} for an assistant message; expected "
                              "'output_text' or 'refusal'.", param=f"{param}.type", code="invalid_value")
        return {"type": "output_text", "text": _str(part.get("text"), f"{param}.text"), "annotations": []}
    if kind == "input_text":
        return {"type": "input_text", "text": _str(part.get("text"), f"{param}.text")}
    if kind == "input_image":
        detail = part.get("detail", "auto")
        if detail not in _DETAILS:
            raise bad_request(f"Invalid 'detail' {detail!r}; expected auto, low or high.",
                              param=f"{param}.detail", code="invalid_value")
        url = _str(part.get("image_url"), f"{param}.image_url", optional=True)
        file_id = _str(part.get("file_id"), f"{param}.file_id", optional=True)
        if (url is None) == (file_id is None):
            raise bad_request("An input_image needs exactly one of 'image_url' and 'file_id'.", param=param)
        return {"type": "input_image", "detail": detail, "image_url": url, "file_id": file_id}
    if kind == "input_file":
        file_id = _str(part.get("file_id"), f"{param}.file_id", optional=True)
        data = _str(part.get("file_data"), f"{param}.file_data", optional=True)
        name = _str(part.get("filename"), f"{param}.filename", optional=True)
        if part.get("file_url") is not None:
            raise bad_request("'file_url' is not supported (the server fetches nothing); upload the file "
                              "and pass 'file_id'.", param=f"{param}.file_url", code="unsupported_parameter")
        if (file_id is None) == (data is None):
            raise bad_request("An input_file needs exactly one of 'file_id' and 'file_data'.", param=param)
        out = {"type": "input_file", "file_id": file_id, "filename": name}
        if data is not None:
            out["file_data"] = data
        return out
    raise bad_request(f"Invalid content type {kind!r}; expected input_text, input_image or input_file.",
                      param=f"{param}.type", code="invalid_value")


def _message(item: dict[str, Any], param: str) -> dict[str, Any]:
    role = item.get("role")
    if role not in _ROLES:
        raise bad_request(f"Invalid role {role!r}; expected one of {', '.join(_ROLES)}.",
                          param=f"{param}.role", code="invalid_value")
    content = item.get("content")
    if isinstance(content, str):
        content = [content]
    if not isinstance(content, list):
        raise bad_request(f"Invalid type for '{param}.content': expected a string or an array.",
                          param=f"{param}.content", code="invalid_type")
    parts = [_part(p, role, f"{param}.content[{i}]") for i, p in enumerate(content)]
    prefix = "msg_"
    return {"id": item.get("id") or new_id(prefix), "type": "message", "role": role,
            "status": "completed", "content": parts}


def normalize_input(
    value: str | list[dict[str, Any]] | None, prefix: str = "input"
) -> list[dict[str, Any]]:
    """Input items with ids: messages, ``function_call`` and ``function_call_output``.

    Args:
        value: The request's ``input``: a string (one user message) or items.
        prefix: Parameter name used in error messages.

    Returns:
        Normalised items.
    """
    if value is None:
        return []
    if isinstance(value, str):
        return [_message({"role": "user", "content": value}, prefix)]
    items: list[dict[str, Any]] = []
    for i, item in enumerate(value):
        param = f"{prefix}[{i}]"
        kind = item.get("type", "message")
        _known(item, _ITEM_FIELDS.get(str(kind)), param)
        if kind == "message":
            items.append(_message(item, param))
        elif kind == "function_call_output":
            output = item.get("output")
            if isinstance(output, list):
                output = "".join(str(p.get("text", "")) for p in output if isinstance(p, dict))
            items.append({
                "id": item.get("id") or new_id("fco_"), "type": "function_call_output",
                "call_id": _str(item.get("call_id"), f"{param}.call_id"),
                "output": _str(output, f"{param}.output"), "status": "completed",
            })
        elif kind == "function_call":
            items.append({
                "id": item.get("id") or new_id("fc_"), "type": "function_call", "status": "completed",
                "call_id": _str(item.get("call_id"), f"{param}.call_id"),
                "name": _str(item.get("name"), f"{param}.name"),
                "arguments": _str(item.get("arguments"), f"{param}.arguments"),
            })
        elif kind == "reasoning":
            items.append(_reasoning(item, param))
        elif kind == "item_reference":
            items.append({"type": "item_reference", "id": _str(item.get("id"), f"{param}.id")})
        else:
            raise bad_request(f"Invalid input item type {kind!r}; expected message, function_call, "
                              "function_call_output, reasoning or item_reference.", param=f"{param}.type",
                              code="invalid_value")
    return items


def _texts(parts: Any, kind: str, param: str) -> list[dict[str, Any]]:
    if parts is None:
        return []
    if not isinstance(parts, list):
        raise bad_request(f"Invalid type for '{param}': expected an array.", param=param, code="invalid_type")
    out = []
    for j, part in enumerate(parts):
        if not isinstance(part, dict) or part.get("type") != kind:
            raise bad_request(f"Invalid '{param}[{j}]': expected {{'type': '{kind}', 'text': ...}}.",
                              param=f"{param}[{j}]", code="invalid_value")
        _known(part, _PART_FIELDS[kind], f"{param}[{j}]")
        out.append({"type": kind, "text": _str(part.get("text"), f"{param}[{j}].text")})
    return out


def _reasoning(item: dict[str, Any], param: str) -> dict[str, Any]:
    """A reasoning item sent back as input (as the server emitted it)."""
    return {
        "id": _str(item.get("id"), f"{param}.id"), "type": "reasoning",
        "summary": _texts(item.get("summary", []), "summary_text", f"{param}.summary"),
        "content": _texts(item.get("content"), "reasoning_text", f"{param}.content"),
        "encrypted_content": _str(item.get("encrypted_content"), f"{param}.encrypted_content", optional=True),
        "status": "completed",
    }


def normalize_tools(tools: Sequence[dict[str, Any]] | None) -> tuple[list[dict[str, Any]], list[FunctionSpec]]:
    """The tools to echo in the response and the function specs for the backend."""
    echoed: list[dict[str, Any]] = []
    specs: list[FunctionSpec] = []
    names: set[str] = set()
    for i, tool in enumerate(tools or ()):
        param = f"tools[{i}]"
        if tool.get("type") != "function":
            raise bad_request(f"Unsupported tool type {tool.get('type')!r}; only 'function' tools are "
                              "supported.", param=f"{param}.type", code="unsupported_value")
        unknown = set(tool) - {"type", "name", "description", "parameters", "strict"}
        if unknown:
            raise bad_request(f"Unknown parameter: '{param}.{sorted(unknown)[0]}'.",
                              param=f"{param}.{sorted(unknown)[0]}", code="unknown_parameter")
        name = _str(tool.get("name"), f"{param}.name") or ""
        if not _NAME.match(name):
            raise bad_request(f"Invalid function name {name!r}: use 1-64 letters, digits, '_' or '-'.",
                              param=f"{param}.name", code="invalid_value")
        if name in names:
            raise bad_request(f"Duplicate function name {name!r}.", param=f"{param}.name")
        names.add(name)
        description = _str(tool.get("description"), f"{param}.description", optional=True)
        parameters = tool.get("parameters")
        if parameters is not None and not isinstance(parameters, dict):
            raise bad_request("'parameters' must be a JSON Schema object.", param=f"{param}.parameters")
        strict = tool.get("strict")
        if strict is None:  # unset: strict when the schema allows it, else the non-strict fallback
            strict = _strict_compatible(parameters or {"type": "object", "properties": {},
                                                       "additionalProperties": False})
        if not isinstance(strict, bool):
            raise bad_request("'strict' must be a boolean.", param=f"{param}.strict", code="invalid_type")
        echoed.append({"type": "function", "name": name, "description": description,
                       "parameters": parameters, "strict": strict})
        specs.append(FunctionSpec(name, description or "", parameters or {}, strict))
    return echoed, specs


def _strict_compatible(schema: dict[str, Any]) -> bool:
    try:
        compile_schema(schema, strict=True)
    except SchemaError:
        return False
    return True


def normalize_tool_choice(
    value: str | dict[str, Any] | None, specs: Sequence[FunctionSpec]
) -> tuple[str | dict[str, Any], str]:
    """The ``tool_choice`` to echo and the backend's form (mode or function name)."""
    if value is None:
        return "auto", "auto"
    if isinstance(value, str):
        if value not in ("auto", "none", "required"):
            raise bad_request(f"Invalid tool_choice {value!r}; expected auto, none, required or "
                              "{'type': 'function', 'name': ...}.", param="tool_choice", code="invalid_value")
        if value == "required" and not specs:
            raise bad_request("tool_choice 'required' needs at least one tool.", param="tool_choice")
        return value, value
    if value.get("type") != "function" or not isinstance(value.get("name"), str):
        raise bad_request("A tool_choice object must be {'type': 'function', 'name': <name>}.",
                          param="tool_choice", code="invalid_value")
    name = value["name"]
    if name not in {s.name for s in specs}:
        raise bad_request(f"tool_choice names function {name!r}, which is not in 'tools'.",
                          param="tool_choice.name", code="invalid_value")
    return {"type": "function", "name": name}, name


def normalize_text_format(fmt: dict[str, Any] | None) -> tuple[dict[str, Any], JsonConstraint | None]:
    """The ``text.format`` to echo and the JSON constraint it implies."""
    if fmt is None:
        return {"type": "text"}, None
    kind = fmt.get("type")
    if kind == "text":
        return {"type": "text"}, None
    if kind == "json_object":
        return {"type": "json_object"}, JsonConstraint(
            {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"],
             "additionalProperties": False}, True, "json_object")
    if kind != "json_schema":
        raise bad_request(f"Invalid text.format type {kind!r}; expected text, json_object or json_schema.",
                          param="text.format.type", code="invalid_value")
    unknown = set(fmt) - {"type", "name", "schema", "strict", "description"}
    if unknown:
        raise bad_request(f"Unknown parameter: 'text.format.{sorted(unknown)[0]}'.",
                          param=f"text.format.{sorted(unknown)[0]}", code="unknown_parameter")
    name = fmt.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise bad_request("text.format.name is required: 1-64 letters, digits, '_' or '-'.",
                          param="text.format.name", code="invalid_value")
    schema = fmt.get("schema")
    if not isinstance(schema, dict):
        raise bad_request("text.format.schema must be a JSON Schema object.", param="text.format.schema")
    strict = fmt.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise bad_request("text.format.strict must be a boolean.", param="text.format.strict")
    echoed = {"type": "json_schema", "name": name, "schema": schema, "strict": bool(strict),
              "description": fmt.get("description")}
    return echoed, JsonConstraint(schema, bool(strict), name)
