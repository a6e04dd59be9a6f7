"""Request and reply bodies (msgspec Structs).

Requests forbid unknown fields, so a typo is a 400 naming it. Input items and
their content parts are the tagged unions of :mod:`textgen.items`, checked by
msgspec the same way (``input[1].content[0].bogus``); tools and ``text.format``
arrive as JSON objects and are checked in :mod:`textgen.inputs`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from textgen.chat_schemas import ChatMessage
from textgen.items import InputItem

__all__ = [
    "ChatCompletionCreate",
    "ConversationCreate",
    "ConversationItemsCreate",
    "ConversationRead",
    "ConversationUpdate",
    "DataList",
    "Deleted",
    "FileRead",
    "InputTokensCreate",
    "InputTokensRead",
    "ListPage",
    "ModelRead",
    "PromptCreate",
    "PromptMessage",
    "PromptParam",
    "PromptRead",
    "ReasoningParam",
    "ResponseCreate",
    "SamplingDefaults",
    "StreamOptions",
    "TextParam",
]

Metadata = Annotated[
    dict[Annotated[str, Meta(max_length=64)], Annotated[str, Meta(max_length=512)]],
    Meta(max_length=16),
]


class ReasoningParam(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``reasoning``: ``effort`` is validated; ``summary`` is accepted and echoed."""

    effort: Literal["low", "medium", "high"] | None = None
    summary: Literal["auto", "concise", "detailed"] | None = None


class PromptParam(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``prompt``: a stored prompt, its version (default: current) and variables."""

    id: Annotated[str, Meta(min_length=1)]
    version: str | None = None
    variables: dict[str, str | dict[str, Any]] | None = None


class TextParam(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``text``: the output ``format`` (text, json_object, json_schema) and ``verbosity``."""

    format: dict[str, Any] | None = None
    verbosity: Literal["low", "medium", "high"] | None = None


class ResponseCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Body of ``POST /v1/responses``. ``seed`` is an extension (send it via ``extra_body``)."""

    model: Annotated[str, Meta(min_length=1)]
    input: str | list[InputItem] | None = None
    instructions: str | None = None
    reasoning: ReasoningParam | None = None
    prompt: PromptParam | None = None
    previous_response_id: str | None = None
    store: bool = True
    stream: bool = False
    background: bool = False
    max_output_tokens: Annotated[int, Meta(ge=1)] | None = None
    temperature: Annotated[float, Meta(ge=0.0, le=2.0)] | None = None
    top_p: Annotated[float, Meta(gt=0.0, le=1.0)] | None = None
    seed: int | None = None
    metadata: Metadata | None = None
    text: TextParam | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    truncation: Literal["auto", "disabled"] | None = None
    user: str | None = None
    conversation: str | dict[str, Any] | None = None
    include: list[str] | None = None
    top_logprobs: Annotated[int, Meta(ge=0, le=20)] | None = None


class InputTokensCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Body of ``POST /v1/responses/input_tokens``: the context-building fields of a response.

    ``model`` defaults to the first served model.
    """

    model: Annotated[str, Meta(min_length=1)] | None = None
    input: str | list[InputItem] | None = None
    instructions: str | None = None
    reasoning: ReasoningParam | None = None
    previous_response_id: str | None = None
    conversation: str | dict[str, Any] | None = None
    text: TextParam | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    truncation: Literal["auto", "disabled"] | None = None


class ConversationCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Body of ``POST /v1/conversations``."""

    items: list[InputItem] | None = None
    metadata: Metadata | None = None


class ConversationUpdate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Body of ``POST /v1/conversations/{id}``."""

    metadata: Metadata


class ConversationItemsCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Body of ``POST /v1/conversations/{id}/items``."""

    items: Annotated[list[InputItem], Meta(min_length=1)]


class PromptMessage(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One message of a prompt template; ``content`` may hold ``{{variables}}``."""

    role: Literal["developer", "system", "user", "assistant"]
    content: str


class PromptCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Body of ``POST /v1/prompts`` and ``POST /v1/prompts/{id}/versions``."""

    template: Annotated[str, Meta(min_length=1)] | Annotated[list[PromptMessage], Meta(min_length=1)]
    name: Annotated[str, Meta(min_length=1, max_length=200)] | None = None
    instructions: str | None = None


class PromptRead(msgspec.Struct, kw_only=True):
    """A prompt version as returned by the API."""

    id: str
    object: Literal["prompt"] = "prompt"
    name: str | None
    version: str
    current_version: str
    template: str | list[PromptMessage]
    instructions: str | None
    variables: list[str]
    created_at: int


class FileRead(msgspec.Struct, kw_only=True):
    """A file object (OpenAI's ``FileObject``)."""

    id: str
    object: Literal["file"] = "file"
    bytes: int
    created_at: int
    filename: str
    purpose: str
    status: Literal["processed"] = "processed"
    expires_at: int | None = None
    status_details: str | None = None


class SamplingDefaults(msgspec.Struct, kw_only=True):
    """The sampling settings a request without ``temperature``/``top_p`` gets, and their source."""

    temperature: float
    top_p: float
    source: str | None


class ModelRead(msgspec.Struct, kw_only=True):
    """A model object (OpenAI's ``Model``) plus its context window and default sampling."""

    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str
    context_window: int
    max_output_tokens: int
    sampling_defaults: SamplingDefaults


class InputTokensRead(msgspec.Struct, kw_only=True):
    """The answer of ``POST /v1/responses/input_tokens``."""

    object: Literal["response.input_tokens"] = "response.input_tokens"
    input_tokens: int


class Deleted(msgspec.Struct, kw_only=True):
    """The answer of a delete (``object`` is ``response.deleted``, ``conversation.deleted``, ``file``)."""

    id: str
    object: str
    deleted: bool = True


class ListPage(msgspec.Struct, kw_only=True):
    """OpenAI's list object (``first_id``/``last_id`` of an empty page are ``null`` or ``""``)."""

    object: Literal["list"] = "list"
    data: list[Any]
    has_more: bool
    first_id: str | None
    last_id: str | None


class DataList(msgspec.Struct, kw_only=True):
    """A list object without pagination (models, prompts)."""

    object: Literal["list"] = "list"
    data: list[Any]


class ConversationRead(msgspec.Struct, kw_only=True):
    """A conversation object."""

    id: str
    object: Literal["conversation"] = "conversation"
    created_at: int
    metadata: dict[str, str]


class StreamOptions(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``stream_options`` of a chat completion: ``include_usage`` adds a last chunk with ``usage``."""

    include_usage: bool = False


class ChatCompletionCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Body of ``POST /v1/chat/completions``. Messages are the role-tagged Structs of
    :mod:`textgen.chat_schemas`; tools and ``response_format`` are checked in :mod:`textgen.chat`."""

    model: Annotated[str, Meta(min_length=1)]
    messages: Annotated[list[ChatMessage], Meta(min_length=1)]
    stream: bool = False
    stream_options: StreamOptions | None = None
    max_tokens: Annotated[int, Meta(ge=1)] | None = None
    max_completion_tokens: Annotated[int, Meta(ge=1)] | None = None
    temperature: Annotated[float, Meta(ge=0.0, le=2.0)] | None = None
    top_p: Annotated[float, Meta(gt=0.0, le=1.0)] | None = None
    stop: str | Annotated[list[Annotated[str, Meta(min_length=1)]], Meta(max_length=4)] | None = None
    seed: int | None = None
    response_format: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    logprobs: bool | None = None
    top_logprobs: Annotated[int, Meta(ge=0, le=20)] | None = None
    n: Annotated[int, Meta(ge=1, le=1)] | None = None
    user: str | None = None
    metadata: Metadata | None = None
    store: bool | None = None
    frequency_penalty: Annotated[float, Meta(ge=0.0, le=0.0)] | None = None
    presence_penalty: Annotated[float, Meta(ge=0.0, le=0.0)] | None = None
