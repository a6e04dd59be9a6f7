"""Reusable prompts: templates with ``{{variables}}``, versions, and their rendering.

A template is either a string (rendered as one ``developer`` message) or a list
of ``{role, content}`` messages. Every ``{{name}}`` placeholder is replaced by
its variable (rule 4 of the document); a missing variable is a 400 naming it, as
is a variable the template does not use. A string value is spliced into the
text; an ``input_text`` object contributes its text; an ``input_file`` or
``input_image`` object becomes its own content part at that place.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec

from textgen.errors import APIError, bad_request, not_found
from textgen.schemas import PromptCreate, PromptMessage, PromptParam, PromptRead
from textgen.store import Conflict, PromptRecord, Store

__all__ = [
    "PLACEHOLDER",
    "PromptService",
    "read_model",
    "render_template",
    "template_variables",
]

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}")
_VALUE_TYPES = ("input_text", "input_image", "input_file")


def _texts(template: str | list[dict[str, Any]]) -> list[str]:
    return [template] if isinstance(template, str) else [str(m["content"]) for m in template]


def template_variables(template: str | list[dict[str, Any]]) -> list[str]:
    """The distinct placeholder names of a template, in order of first use."""
    seen: dict[str, None] = {}
    for text in _texts(template):
        for match in PLACEHOLDER.finditer(text):
            seen.setdefault(match.group(1), None)
    return list(seen)


def _check_value(name: str, value: str | dict[str, Any]) -> None:
    if isinstance(value, str):
        return
    kind = value.get("type")
    if kind not in _VALUE_TYPES:
        raise bad_request(
            f"Prompt variable {name!r} has type {kind!r}; expected a string or one of "
            f"{', '.join(_VALUE_TYPES)}.",
            param=f"prompt.variables.{name}",
            code="invalid_value",
        )
    if kind == "input_text" and not isinstance(value.get("text"), str):
        raise bad_request(f"Prompt variable {name!r} of type input_text needs a string 'text'.",
                          param=f"prompt.variables.{name}.text")


def _render_text(text: str, variables: Mapping[str, str | dict[str, Any]]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    buffer: list[str] = []
    position = 0
    for match in PLACEHOLDER.finditer(text):
        buffer.append(text[position : match.start()])
        value = variables[match.group(1)]
        if isinstance(value, str):
            buffer.append(value)
        elif value["type"] == "input_text":
            buffer.append(value["text"])
        else:
            if "".join(buffer):
                parts.append({"type": "input_text", "text": "".join(buffer)})
            buffer = []
            parts.append(dict(value))
        position = match.end()
    buffer.append(text[position:])
    if "".join(buffer) or not parts:
        parts.append({"type": "input_text", "text": "".join(buffer)})
    return parts


def render_template(
    template: str | list[dict[str, Any]], variables: Mapping[str, str | dict[str, Any]] | None
) -> list[dict[str, Any]]:
    """Replace every placeholder and return the prompt's input messages.

    Args:
        template: A string or a list of ``{role, content}`` messages.
        variables: Values by name (strings or input objects).

    Returns:
        Input messages ``{"type": "message", "role", "content": [parts]}``.

    Raises:
        APIError: 400 naming a missing or unused variable, or a bad value.
    """
    values = dict(variables or {})
    used = template_variables(template)
    missing = [name for name in used if name not in values]
    if missing:
        raise bad_request(
            f"Missing prompt variable: {missing[0]!r}.", param=f"prompt.variables.{missing[0]}",
            code="missing_prompt_variable",
        )
    unused = [name for name in values if name not in used]
    if unused:
        raise bad_request(
            f"Unknown prompt variable: {unused[0]!r}; the prompt uses "
            f"{', '.join(repr(u) for u in used) or 'no variables'}.",
            param=f"prompt.variables.{unused[0]}",
            code="unknown_prompt_variable",
        )
    for name, value in values.items():
        _check_value(name, value)
    messages = [{"role": "developer", "content": template}] if isinstance(template, str) else template
    return [
        {"type": "message", "role": m["role"], "content": _render_text(str(m["content"]), values)}
        for m in messages
    ]


def read_model(record: PromptRecord) -> PromptRead:
    """The API representation of a prompt version."""
    template: str | list[PromptMessage] = (
        record.template if isinstance(record.template, str)
        else [PromptMessage(role=m["role"], content=m["content"]) for m in record.template]
    )
    return PromptRead(
        id=record.id,
        name=record.name,
        version=str(record.version),
        current_version=str(record.current_version),
        template=template,
        instructions=record.instructions,
        variables=template_variables(record.template),
        created_at=record.created_at,
    )


def _template(body: PromptCreate) -> str | list[dict[str, Any]]:
    return body.template if isinstance(body.template, str) else msgspec.to_builtins(body.template)


def _version(version: str | None, param: str) -> int | None:
    if version is None:
        return None
    if not version.isdigit() or int(version) < 1:
        raise bad_request(f"Invalid prompt version {version!r}; versions are '1', '2', ...", param=param)
    return int(version)


class PromptService:
    """Create, version and resolve reusable prompts."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def create(self, project: str, body: PromptCreate) -> PromptRead:
        """A new prompt of ``project`` at version 1 (409 when the name is taken there)."""
        try:
            record = await self.store.create_prompt(project, body.name, _template(body), body.instructions)
        except Conflict as exc:
            raise APIError(409, str(exc), param="name", code="prompt_name_taken") from exc
        return read_model(record)

    async def add_version(self, project: str, prompt_id: str, body: PromptCreate) -> PromptRead:
        """A new immutable version that becomes current."""
        if body.name is not None:
            raise bad_request("A version cannot rename a prompt; omit 'name'.", param="name")
        try:
            record = await self.store.add_prompt_version(project, prompt_id, _template(body), body.instructions)
        except Conflict as exc:
            raise APIError(409, str(exc), code="conflict") from exc
        if record is None:
            raise not_found(f"No such prompt: {prompt_id!r}.", param="prompt_id", code="prompt_not_found")
        return read_model(record)

    async def get(self, project: str, prompt_id: str, version: str | None, param: str = "version") -> PromptRecord:
        """A project's prompt version (current when ``version`` is ``None``; rule 3); 404 if unknown."""
        record = await self.store.get_prompt(project, prompt_id, _version(version, param))
        if record is None:
            what = f"version {version!r} of prompt {prompt_id!r}" if version else f"prompt {prompt_id!r}"
            raise not_found(f"No such {what}.", param=param, code="prompt_not_found")
        return record

    async def list_all(self, project: str) -> list[PromptRead]:
        """Every prompt of ``project`` at its current version."""
        return [read_model(r) for r in await self.store.list_prompts(project)]

    async def resolve(self, project: str, prompt: PromptParam) -> tuple[PromptRecord, list[dict[str, Any]]]:
        """The version a request refers to and its rendered messages."""
        record = await self.get(project, prompt.id, prompt.version, param="prompt.version" if prompt.version else "prompt.id")
        return record, render_template(record.template, prompt.variables)
