"""Input items and their content parts as msgspec tagged unions (``"type"`` is the tag).

A request's ``input`` (and a conversation's ``items``) decode into these Structs, so msgspec checks
every field: a wrong type, a missing field or an unknown one is a 400 whose ``param`` is msgspec's
path (``input[0].content[1].bogus``). Each Struct accepts the fields this server emits for its type
(every emitted item is accepted back exactly as it was emitted) plus those OpenAI's item types define
that it accepts and ignores (``phase``, ``namespace``, ``caller``, ``async``,
``prompt_cache_breakpoint``, a file's ``detail``), so an SDK object dumped with all its fields is valid.

A message may leave out ``"type"`` (OpenAI's "easy" input message): :func:`with_message_types` adds
it before conversion.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

__all__ = [
    "ContentPart",
    "FunctionCall",
    "FunctionCallOutput",
    "InputFile",
    "InputImage",
    "InputItem",
    "InputText",
    "ItemReference",
    "Message",
    "OutputText",
    "Reasoning",
    "ReasoningText",
    "Refusal",
    "SummaryText",
    "with_message_types",
]

Role = Literal["user", "developer", "system", "assistant"]


class _Tagged(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, tag_field="type"):
    """A strict Struct tagged by its ``type`` field."""


# --- content parts --------------------------------------------------------------------------------
class InputText(_Tagged, tag="input_text"):
    """Text from the user (or developer, system)."""

    text: str
    prompt_cache_breakpoint: Any = None  # accepted and ignored


class OutputText(_Tagged, tag="output_text"):
    """An assistant's text, as this server emits it."""

    text: str
    annotations: list[Any] = []
    logprobs: list[Any] | None = None


class Refusal(_Tagged, tag="refusal"):
    """An assistant's refusal."""

    refusal: str


class InputImage(_Tagged, tag="input_image"):
    """An image: exactly one of ``image_url`` and ``file_id``."""

    detail: Literal["auto", "low", "high"] = "auto"
    image_url: str | None = None
    file_id: str | None = None
    prompt_cache_breakpoint: Any = None


class InputFile(_Tagged, tag="input_file"):
    """A file: exactly one of ``file_id`` (an upload) and ``file_data`` (inline, with ``filename``)."""

    file_id: str | None = None
    file_data: str | None = None
    filename: str | None = None
    file_url: str | None = None  # refused: the server fetches nothing
    detail: Any = None
    prompt_cache_breakpoint: Any = None


ContentPart = InputText | OutputText | Refusal | InputImage | InputFile


class _TextOf(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A reasoning item's text part; a wrong ``type`` names the part itself (``input[0].summary[0]``)."""

    type: str
    text: str | None = None
    _kind = ""

    def __post_init__(self) -> None:
        if self.type != self._kind or self.text is None:
            raise ValueError(f"expected {{'type': '{self._kind}', 'text': ...}}")


class SummaryText(_TextOf, kw_only=True, forbid_unknown_fields=True):
    """A reasoning summary's text."""

    _kind = "summary_text"


class ReasoningText(_TextOf, kw_only=True, forbid_unknown_fields=True):
    """A reasoning item's text."""

    _kind = "reasoning_text"


# --- items ----------------------------------------------------------------------------------------
class Message(_Tagged, tag="message"):
    """A message; ``content`` is a string or parts (strings among them are ``input_text``)."""

    role: Role
    content: str | list[str | ContentPart]
    id: str | None = None
    status: str | None = None
    phase: Any = None


class FunctionCall(_Tagged, tag="function_call"):
    """A call the model made, sent back by a client that carries its own state."""

    call_id: str
    name: str
    arguments: str
    id: str | None = None
    status: str | None = None
    namespace: Any = None
    caller: Any = None
    async_: Any = msgspec.field(default=None, name="async")


class FunctionCallOutput(_Tagged, tag="function_call_output"):
    """A function's result; ``output`` is a string or parts whose texts are joined."""

    call_id: str
    output: str | list[dict[str, Any]]
    id: str | None = None
    status: str | None = None
    caller: Any = None


class Reasoning(_Tagged, tag="reasoning"):
    """A reasoning item as this server emitted it (``encrypted_content`` restores its text)."""

    id: str
    summary: list[SummaryText] = []
    content: list[ReasoningText] | None = None
    encrypted_content: str | None = None
    status: str | None = None


class ItemReference(_Tagged, tag="item_reference"):
    """A stored item of the caller's project, by id."""

    id: str


InputItem = Message | FunctionCall | FunctionCallOutput | Reasoning | ItemReference


def with_message_types(items: Any) -> Any:
    """``items`` (decoded JSON) with ``"type": "message"`` added to every object that has no ``type``."""
    if isinstance(items, list):
        return [
            {"type": "message", **item} if isinstance(item, dict) and "type" not in item else item
            for item in items
        ]
    return items
