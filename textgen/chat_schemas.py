"""Chat Completions messages, replies and streamed chunks as msgspec Structs.

A request's ``messages`` are a tagged union on ``"role"`` and their content parts one on ``"type"``,
strict like the request (an unknown field is a 400 naming ``messages[0].content[1].bogus``). Reply
fields are declared in wire order; a field that OpenAI's objects leave out when they do not apply
(a chunk's ``usage`` unless ``stream_options.include_usage``, a delta's unused keys, ``tool_calls``
of a message without calls) defaults to ``UNSET`` and is not sent.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from textgen.stored_items import Logprob

__all__ = [
    "AssistantMessage",
    "ChatCompletion",
    "ChatCompletionChunk",
    "ChatLogprobs",
    "ChatMessage",
    "ChatMessageRead",
    "ChatUsage",
    "Choice",
    "ChunkChoice",
    "CompletionTokensDetails",
    "Delta",
    "DeveloperMessage",
    "FunctionCallRead",
    "FunctionDelta",
    "ImagePart",
    "PromptTokensDetails",
    "RefusalPart",
    "SystemMessage",
    "TextPart",
    "ToolCallDelta",
    "ToolCallParam",
    "ToolCallRead",
    "ToolMessage",
    "UserMessage",
]


# --- request messages ------------------------------------------------------------------------------
class _Part(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, tag_field="type"):
    """A content part, tagged by its ``type``."""


class TextPart(_Part, kw_only=True, tag="text"):
    """Text."""

    text: str


class ImageUrl(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """An image's URL (``data:`` URLs included)."""

    url: str
    detail: Literal["auto", "low", "high"] | None = None


class ImagePart(_Part, kw_only=True, tag="image_url"):
    """An image (user messages only)."""

    image_url: ImageUrl


class RefusalPart(_Part, kw_only=True, tag="refusal"):
    """An assistant's refusal."""

    refusal: str


class _Message(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, tag_field="role"):
    """A message, tagged by its ``role``."""


class SystemMessage(_Message, kw_only=True, tag="system"):
    """Instructions."""

    content: str | list[TextPart] | None = None
    name: str | None = None


class DeveloperMessage(_Message, kw_only=True, tag="developer"):
    """Instructions (the newer name of ``system``)."""

    content: str | list[TextPart] | None = None
    name: str | None = None


class UserMessage(_Message, kw_only=True, tag="user"):
    """The user's text and images."""

    content: str | list[TextPart | ImagePart] | None = None
    name: str | None = None


class FunctionParam(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The function of an earlier tool call."""

    name: str
    arguments: str


class ToolCallParam(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """An earlier tool call of the assistant."""

    id: str
    type: Literal["function"] = "function"
    function: FunctionParam


class AssistantMessage(_Message, kw_only=True, tag="assistant"):
    """An earlier answer: text, a refusal, tool calls (``audio``, ``function_call`` and ``annotations``
    are accepted and ignored)."""

    content: str | list[TextPart | RefusalPart] | None = None
    name: str | None = None
    tool_calls: list[ToolCallParam] | None = None
    refusal: str | None = None
    audio: Any = None
    function_call: Any = None
    annotations: Any = None


class ToolMessage(_Message, kw_only=True, tag="tool"):
    """A tool call's result; ``tool_call_id`` names an earlier call."""

    content: str | list[TextPart] | None = None
    tool_call_id: str


ChatMessage = SystemMessage | DeveloperMessage | UserMessage | AssistantMessage | ToolMessage


class ChatLogprobs(msgspec.Struct, kw_only=True):
    """``choices[0].logprobs``: one logprob object per token."""

    content: list[Logprob] | None
    refusal: None = None


class FunctionDelta(msgspec.Struct, kw_only=True):
    """A streamed function call's name (first chunk) or a piece of its arguments."""

    name: str | UnsetType = UNSET
    arguments: str


class ToolCallDelta(msgspec.Struct, kw_only=True):
    """A streamed tool call: its first chunk has ``id``, ``type`` and the name."""

    index: int
    id: str | UnsetType = UNSET
    type: Literal["function"] | UnsetType = UNSET
    function: FunctionDelta


class Delta(msgspec.Struct, kw_only=True):
    """A chunk's ``delta``: only the keys that changed."""

    role: Literal["assistant"] | UnsetType = UNSET
    content: str | UnsetType = UNSET
    refusal: str | UnsetType | None = UNSET
    tool_calls: list[ToolCallDelta] | UnsetType = UNSET


class ChunkChoice(msgspec.Struct, kw_only=True):
    """The one choice of a chunk."""

    index: int = 0
    delta: Delta
    finish_reason: str | None = None
    logprobs: ChatLogprobs | None = None


class PromptTokensDetails(msgspec.Struct, kw_only=True):
    """``usage.prompt_tokens_details``."""

    cached_tokens: int = 0
    audio_tokens: int = 0


class CompletionTokensDetails(msgspec.Struct, kw_only=True):
    """``usage.completion_tokens_details``."""

    reasoning_tokens: int = 0
    audio_tokens: int = 0
    accepted_prediction_tokens: int = 0
    rejected_prediction_tokens: int = 0


class ChatUsage(msgspec.Struct, kw_only=True):
    """A completion's ``usage``."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    prompt_tokens_details: PromptTokensDetails
    completion_tokens_details: CompletionTokensDetails


class ChatCompletionChunk(msgspec.Struct, kw_only=True):
    """One ``data:`` line of a streamed completion."""

    id: str
    object: Literal["chat.completion.chunk"] = "chat.completion.chunk"
    created: int
    model: str
    system_fingerprint: str | None = None
    service_tier: str = "default"
    choices: list[ChunkChoice]
    usage: ChatUsage | UnsetType | None = UNSET


class FunctionCallRead(msgspec.Struct, kw_only=True):
    """A tool call's function and its arguments."""

    name: str
    arguments: str


class ToolCallRead(msgspec.Struct, kw_only=True):
    """A tool call of the answer."""

    id: str
    type: Literal["function"] = "function"
    function: FunctionCallRead


class ChatMessageRead(msgspec.Struct, kw_only=True):
    """The answer's message."""

    role: Literal["assistant"] = "assistant"
    content: str | None
    refusal: str | None = None
    annotations: list[Any] = []
    tool_calls: list[ToolCallRead] | UnsetType = UNSET


class Choice(msgspec.Struct, kw_only=True):
    """The one choice of a completion."""

    index: int = 0
    message: ChatMessageRead
    finish_reason: str
    logprobs: ChatLogprobs | None = None


class ChatCompletion(msgspec.Struct, kw_only=True):
    """A whole (non-streamed) completion."""

    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    system_fingerprint: str | None = None
    service_tier: str = "default"
    choices: list[Choice]
    usage: ChatUsage
