"""Checks and normalises the parts of a request msgspec cannot check alone: items, tools, formats.

Input items arrive decoded (:mod:`textgen.items`: msgspec checked their fields); here they get ids
and the exact shapes the Responses API returns from ``GET /v1/responses/{id}/input_items``, and
the rules across fields are checked (a part's type for the message's role, exactly one of
``file_id`` and ``file_data``). Every problem is a 400 whose ``param`` points at the offending
field (``input[2].content[0].file_id``), the way OpenAI reports it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import msgspec
from msgspec import UNSET

from textgen.backends.base import FunctionSpec, JsonConstraint
from textgen.backends.constrained import SchemaError, compile_schema
from textgen.errors import bad_request, not_found, validation_error
from textgen.events import (
    FunctionChoice,
    FunctionTool,
    JsonObjectFormat,
    JsonSchemaFormat,
    PlainTextFormat,
    TextFormat,
)
from textgen.items import (
    ContentPart,
    FunctionCall,
    FunctionCallOutput,
    InputFile,
    InputImage,
    InputItem,
    InputText,
    ItemReference,
    Message,
    OutputText,
    Reasoning,
    Refusal,
    with_message_types,
)
from textgen.store import Store, new_id
from textgen.stored_items import (
    FunctionCallItem,
    FunctionCallOutputItem,
    InputFilePart,
    InputImagePart,
    InputTextPart,
    Item,
    MessageItem,
    MessagePart,
    OutputTextPart,
    ReasoningItem,
    ReasoningTextPart,
    RefusalPart,
    SummaryTextPart,
)

__all__ = [
    "convert_items",
    "normalize_input",
    "normalize_text_format",
    "normalize_tool_choice",
    "normalize_tools",
    "resolve_references",
]

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
def _str(value: Any, param: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise bad_request(f"Invalid type for '{param}': expected a string.", param=param, code="invalid_type")
    return value


_PARTS_OF = {  # the content part types each role's messages take
    "assistant": (OutputText, InputText, Refusal),
    "user": (InputText, InputImage, InputFile),
}


def _part(part: str | ContentPart, role: str, param: str) -> MessagePart:
    """A content part in the form this server stores and returns."""
    if isinstance(part, str):
        part = InputText(text=part)
    if not isinstance(part, _PARTS_OF["assistant" if role == "assistant" else "user"]):
        kind = type(part).__struct_config__.tag
        expected = "'output_text' or 'refusal'" if role == "assistant" else "input_text, input_image or input_file"
        raise bad_request(f"Invalid content type {kind!r} for a {role} message; expected {expected}.",
                          param=f"{param}.type", code="invalid_value")
    if isinstance(part, Refusal):
        return RefusalPart(refusal=part.refusal)
    if isinstance(part, (OutputText, InputText)):
        if role == "assistant":
            return OutputTextPart(text=part.text)
        return InputTextPart(text=part.text)
    if isinstance(part, InputImage):
        if (part.image_url is None) == (part.file_id is None):
            raise bad_request("An input_image needs exactly one of 'image_url' and 'file_id'.", param=param)
        return InputImagePart(detail=part.detail, image_url=part.image_url, file_id=part.file_id)
    if part.file_url is not None:
        raise bad_request("'file_url' is not supported (the server fetches nothing); upload the file "
                          "and pass 'file_id'.", param=f"{param}.file_url", code="unsupported_parameter")
    if (part.file_id is None) == (part.file_data is None):
        raise bad_request("An input_file needs exactly one of 'file_id' and 'file_data'.", param=param)
    return InputFilePart(file_id=part.file_id, filename=part.filename,
                         file_data=UNSET if part.file_data is None else part.file_data)


def _item(item: InputItem, param: str) -> Item | ItemReference:
    """An input item in the form this server stores and returns (with an id); a reference as it came."""
    if isinstance(item, Message):
        content = [item.content] if isinstance(item.content, str) else item.content
        parts = [_part(p, item.role, f"{param}.content[{i}]") for i, p in enumerate(content)]
        return MessageItem(id=item.id or new_id("msg_"), role=item.role, status="completed", content=parts)
    if isinstance(item, FunctionCallOutput):
        output = item.output if isinstance(item.output, str) else "".join(
            str(p.get("text", "")) for p in item.output)
        return FunctionCallOutputItem(id=item.id or new_id("fco_"), call_id=item.call_id, output=output,
                                      status="completed")
    if isinstance(item, FunctionCall):
        return FunctionCallItem(id=item.id or new_id("fc_"), status="completed", call_id=item.call_id,
                                name=item.name, arguments=item.arguments)
    if isinstance(item, Reasoning):
        return ReasoningItem(id=item.id, summary=[SummaryTextPart(text=p.text or "") for p in item.summary],
                             content=[ReasoningTextPart(text=p.text or "") for p in item.content or ()],
                             encrypted_content=item.encrypted_content, status="completed")
    return item


def normalize_input(value: str | Sequence[InputItem] | None, prefix: str = "input") -> list[Item | ItemReference]:
    """Input items (decoded by msgspec) in the form this server stores and returns, with ids.

    Args:
        value: The request's ``input``: a string (one user message) or items.
        prefix: Parameter name used in error messages.

    Returns:
        Normalised items; an ``item_reference`` is left for the caller to resolve.
    """
    if value is None:
        return []
    if isinstance(value, str):
        return [_item(Message(role="user", content=value), prefix)]
    return [_item(item, f"{prefix}[{i}]") for i, item in enumerate(value)]


async def resolve_references(store: Store, items: list[Item | ItemReference], prefix: str,
                             project: str) -> list[Item]:
    """``items`` with each ``item_reference`` replaced by the stored item of ``project`` it names (else a
    404 naming ``prefix[i].id``)."""
    out: list[Item] = []
    for i, item in enumerate(items):
        if isinstance(item, ItemReference):
            referenced = await store.find_item(item.id, project)
            if referenced is None:
                raise not_found(f"Item with id {item.id!r} not found.", param=f"{prefix}[{i}].id",
                                code="item_not_found")
            item = referenced
        out.append(item)
    return out


def convert_items(value: list[dict[str, Any]], prefix: str) -> list[InputItem]:
    """Items built by the server (a rendered prompt's messages) as :data:`InputItem` Structs; a bad
    one (e.g. a prompt variable's part with an unknown field) is a 400 naming ``prefix[i]...``."""
    try:
        return msgspec.convert(with_message_types(value), list[InputItem])
    except msgspec.ValidationError as exc:
        raise validation_error(exc, prefix) from exc


def normalize_tools(tools: Sequence[dict[str, Any]] | None) -> tuple[list[FunctionTool], list[FunctionSpec]]:
    """The tools to echo in the response and the function specs for the backend."""
    echoed: list[FunctionTool] = []
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
        echoed.append(FunctionTool(name=name, description=description, parameters=parameters, strict=strict))
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
) -> tuple[str | FunctionChoice, str]:
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
    return FunctionChoice(name=name), name


def normalize_text_format(fmt: dict[str, Any] | None) -> tuple[TextFormat, JsonConstraint | None]:
    """The ``text.format`` to echo and the JSON constraint it implies."""
    if fmt is None:
        return PlainTextFormat(), None
    kind = fmt.get("type")
    if kind == "text":
        return PlainTextFormat(), None
    if kind == "json_object":
        return JsonObjectFormat(), JsonConstraint(
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
    echoed = JsonSchemaFormat(name=name, schema=schema, strict=bool(strict),
                              description=_str(fmt.get("description"), "text.format.description", optional=True))
    return echoed, JsonConstraint(schema, bool(strict), name)
