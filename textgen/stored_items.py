"""Items as this server emits, stores and returns them: a tagged union on ``"type"``.

These are the items of a response's ``output`` and of its stream events, the input items a response
or a conversation keeps (in the form ``GET .../input_items`` and ``GET .../items`` return them) and
their content parts. :mod:`textgen.items` holds the looser shapes a request may send; requests are
normalised into these (:mod:`textgen.inputs`). The store keeps their JSON and converts it back to
these types at load (:func:`load_item`).

A field that only some items of a type carry is :data:`msgspec.UNSET` when absent, so it is left out
on the wire as before: ``logprobs`` of an ``output_text`` part (generated text has it, an assistant
message sent as input does not) and ``file_data`` of an inline ``input_file`` in a conversation.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

__all__ = [
    "FunctionCallItem",
    "FunctionCallOutputItem",
    "InputFilePart",
    "InputImagePart",
    "InputTextPart",
    "Item",
    "ItemStatus",
    "Logprob",
    "MessageItem",
    "MessagePart",
    "OutputTextPart",
    "ReasoningItem",
    "ReasoningTextPart",
    "RefusalPart",
    "SummaryTextPart",
    "TopLogprob",
    "load_item",
    "load_items",
]

ItemStatus = Literal["in_progress", "completed", "incomplete"]


class TopLogprob(msgspec.Struct, kw_only=True):
    """One of a token's most likely alternatives (``bytes``: its UTF-8 bytes)."""

    token: str
    logprob: float
    bytes: list[int]


class Logprob(msgspec.Struct, kw_only=True):
    """OpenAI's logprob object of one generated token."""

    token: str
    logprob: float
    bytes: list[int]
    top_logprobs: list[TopLogprob] = []


class _Tagged(msgspec.Struct, kw_only=True, tag_field="type"):
    @property
    def type(self) -> str:
        """The tag."""
        return str(self.__struct_config__.tag)


# --- content parts --------------------------------------------------------------------------------
class InputTextPart(_Tagged, kw_only=True, tag="input_text"):
    """Text of a user, developer or system message."""

    text: str


class OutputTextPart(_Tagged, kw_only=True, tag="output_text"):
    """An assistant's text; ``logprobs`` only on generated text."""

    text: str
    annotations: list[Any] = []
    logprobs: list[Logprob] | UnsetType = UNSET


class RefusalPart(_Tagged, kw_only=True, tag="refusal"):
    """An assistant's refusal."""

    refusal: str


class InputImagePart(_Tagged, kw_only=True, tag="input_image"):
    """An image, by URL or uploaded file."""

    detail: str = "auto"
    image_url: str | None = None
    file_id: str | None = None


class InputFilePart(_Tagged, kw_only=True, tag="input_file"):
    """A file, uploaded (``file_id``) or inline (``file_data``, kept only where it was not read yet)."""

    file_id: str | None = None
    filename: str | None = None
    file_data: str | UnsetType = UNSET


MessagePart = InputTextPart | OutputTextPart | RefusalPart | InputImagePart | InputFilePart


class SummaryTextPart(_Tagged, kw_only=True, tag="summary_text"):
    """A reasoning summary's text."""

    text: str


class ReasoningTextPart(_Tagged, kw_only=True, tag="reasoning_text"):
    """A reasoning item's text."""

    text: str


# --- items ----------------------------------------------------------------------------------------
class MessageItem(_Tagged, kw_only=True, tag="message"):
    """A message: an assistant's output, or an input message of any role."""

    id: str
    role: str
    status: ItemStatus = "completed"
    content: list[MessagePart] = []


class FunctionCallItem(_Tagged, kw_only=True, tag="function_call"):
    """A call of one of the request's functions."""

    id: str
    status: ItemStatus = "completed"
    call_id: str
    name: str
    arguments: str = ""


class FunctionCallOutputItem(_Tagged, kw_only=True, tag="function_call_output"):
    """A function's result, sent by the client."""

    id: str
    call_id: str
    output: str
    status: ItemStatus = "completed"


class ReasoningItem(_Tagged, kw_only=True, tag="reasoning"):
    """The model's reasoning; ``encrypted_content`` is its text sealed for this server, when included."""

    id: str
    summary: list[SummaryTextPart] = []
    content: list[ReasoningTextPart] = []
    encrypted_content: str | None = None
    status: ItemStatus = "completed"


Item = MessageItem | FunctionCallItem | FunctionCallOutputItem | ReasoningItem


def load_item(value: Any) -> Item:
    """A stored item's JSON value as its Struct (an item of an older release without ``type`` is a message)."""
    if isinstance(value, dict) and "type" not in value:
        value = {"type": "message", **value}
    return msgspec.convert(value, Item)


def load_items(values: Any) -> list[Item]:
    """Stored items' JSON values as Structs."""
    return [load_item(v) for v in values or ()]
