"""The response object and its streaming events as msgspec Structs; the events are a tagged union on
``"type"``.

Fields are declared in the order they go on the wire. An event encodes as ``{"type", "sequence_number",
...}``. Output items and content parts inside them are their stored JSON form (``dict``), the shapes
:mod:`textgen.inputs` and :mod:`textgen.service` build. Reading a stored response or event converts
it back to these types; every field has a default, so rows of older releases convert too.
"""

from __future__ import annotations

from typing import Any

import msgspec

from textgen.stored_items import Item, Logprob, OutputTextPart

__all__ = [
    "TERMINAL_EVENTS",
    "ContentPartAdded",
    "ContentPartDone",
    "ConversationRef",
    "ErrorEvent",
    "FunctionCallArgumentsDelta",
    "FunctionCallArgumentsDone",
    "FunctionChoice",
    "FunctionTool",
    "IncompleteDetails",
    "InputTokensDetails",
    "JsonObjectFormat",
    "JsonSchemaFormat",
    "OutputItemAdded",
    "OutputItemDone",
    "OutputTextDelta",
    "OutputTextDone",
    "OutputTokensDetails",
    "PlainTextFormat",
    "PromptEcho",
    "ReasoningEcho",
    "ReasoningTextDelta",
    "ReasoningTextDone",
    "ResponseCompleted",
    "ResponseCreated",
    "ResponseError",
    "ResponseEvent",
    "ResponseFailed",
    "ResponseInProgress",
    "ResponseIncomplete",
    "ResponseObject",
    "ResponseQueued",
    "TextConfig",
    "TextFormat",
    "Usage",
]


class ResponseError(msgspec.Struct, kw_only=True):
    """``response.error``."""

    code: str
    message: str


class IncompleteDetails(msgspec.Struct, kw_only=True):
    """``response.incomplete_details``."""

    reason: str


class ReasoningEcho(msgspec.Struct, kw_only=True):
    """``response.reasoning``: the request's settings."""

    effort: str | None = None
    summary: str | None = None


class InputTokensDetails(msgspec.Struct, kw_only=True):
    """``usage.input_tokens_details``."""

    cached_tokens: int = 0
    cache_write_tokens: int = 0


class OutputTokensDetails(msgspec.Struct, kw_only=True):
    """``usage.output_tokens_details``."""

    reasoning_tokens: int = 0


class Usage(msgspec.Struct, kw_only=True):
    """``response.usage``."""

    input_tokens: int
    input_tokens_details: InputTokensDetails = msgspec.field(default_factory=InputTokensDetails)
    output_tokens: int
    output_tokens_details: OutputTokensDetails = msgspec.field(default_factory=OutputTokensDetails)
    total_tokens: int


class ConversationRef(msgspec.Struct, kw_only=True):
    """``response.conversation``."""

    id: str


class FunctionTool(msgspec.Struct, kw_only=True, tag_field="type", tag="function"):
    """A function tool as ``response.tools`` echoes it."""

    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool = True


class FunctionChoice(msgspec.Struct, kw_only=True, tag_field="type", tag="function"):
    """``response.tool_choice`` naming one function (the other choices are strings)."""

    name: str


class PlainTextFormat(msgspec.Struct, kw_only=True, tag_field="type", tag="text"):
    """``text.format``: plain text."""


class JsonObjectFormat(msgspec.Struct, kw_only=True, tag_field="type", tag="json_object"):
    """``text.format``: any JSON object."""


class JsonSchemaFormat(msgspec.Struct, kw_only=True, tag_field="type", tag="json_schema"):
    """``text.format``: JSON that matches ``schema``."""

    name: str
    schema: dict[str, Any]
    strict: bool = False
    description: str | None = None


TextFormat = PlainTextFormat | JsonObjectFormat | JsonSchemaFormat


class TextConfig(msgspec.Struct, kw_only=True):
    """``response.text``."""

    format: TextFormat = msgspec.field(default_factory=PlainTextFormat)
    verbosity: str = "medium"


class PromptEcho(msgspec.Struct, kw_only=True):
    """``response.prompt``: the prompt, its version and the variables used."""

    id: str
    version: str
    variables: dict[str, Any] = {}


class ResponseObject(msgspec.Struct, kw_only=True):
    """A response object, as created, streamed, stored and read."""

    id: str
    object: str = "response"
    created_at: int
    status: str
    background: bool = False
    completed_at: int | None = None
    error: ResponseError | None = None
    incomplete_details: IncompleteDetails | None = None
    instructions: str | None = None
    max_output_tokens: int | None = None
    max_tool_calls: int | None = None
    model: str = ""
    output: list[Item] = []
    parallel_tool_calls: bool = True
    previous_response_id: str | None = None
    prompt: PromptEcho | None = None
    prompt_cache_key: str | None = None
    reasoning: ReasoningEcho = msgspec.field(default_factory=ReasoningEcho)
    safety_identifier: str | None = None
    service_tier: str = "default"
    store: bool = True
    temperature: float = 1.0
    text: TextConfig = msgspec.field(default_factory=TextConfig)
    tool_choice: str | FunctionChoice = "auto"
    tools: list[FunctionTool] = []
    top_logprobs: int = 0
    top_p: float = 1.0
    truncation: str = "disabled"
    usage: Usage | None = None
    user: str | None = None
    metadata: dict[str, str] = {}
    conversation: ConversationRef | None = None


class _Event(msgspec.Struct, kw_only=True, tag_field="type"):
    sequence_number: int

    @property
    def type(self) -> str:
        """The event's type (its tag)."""
        return str(self.__struct_config__.tag)


class _ResponseEvent(_Event, kw_only=True):
    response: ResponseObject


class ResponseCreated(_ResponseEvent, kw_only=True, tag="response.created"):
    """The response exists (its id can be read at once)."""


class ResponseQueued(_ResponseEvent, kw_only=True, tag="response.queued"):
    """A background response waits for the model."""


class ResponseInProgress(_ResponseEvent, kw_only=True, tag="response.in_progress"):
    """Generation started."""


class ResponseCompleted(_ResponseEvent, kw_only=True, tag="response.completed"):
    """The final event of a completed response."""


class ResponseIncomplete(_ResponseEvent, kw_only=True, tag="response.incomplete"):
    """The final event of a response cut short (``max_output_tokens``)."""


class ResponseFailed(_ResponseEvent, kw_only=True, tag="response.failed"):
    """The final event of a failed response."""


class OutputItemAdded(_Event, kw_only=True, tag="response.output_item.added"):
    """An output item opens."""

    output_index: int
    item: Item


class OutputItemDone(_Event, kw_only=True, tag="response.output_item.done"):
    """An output item is finished."""

    output_index: int
    item: Item


class ContentPartAdded(_Event, kw_only=True, tag="response.content_part.added"):
    """A message's content part opens."""

    item_id: str
    output_index: int
    content_index: int
    part: OutputTextPart


class ContentPartDone(_Event, kw_only=True, tag="response.content_part.done"):
    """A message's content part is finished."""

    item_id: str
    output_index: int
    content_index: int
    part: OutputTextPart


class OutputTextDelta(_Event, kw_only=True, tag="response.output_text.delta"):
    """A piece of a message's text (with its tokens' log-probabilities when asked for)."""

    item_id: str
    output_index: int
    content_index: int
    delta: str
    logprobs: list[Logprob] = []


class OutputTextDone(_Event, kw_only=True, tag="response.output_text.done"):
    """A message's whole text."""

    item_id: str
    output_index: int
    content_index: int
    text: str
    logprobs: list[Logprob] = []


class ReasoningTextDelta(_Event, kw_only=True, tag="response.reasoning_text.delta"):
    """A piece of a reasoning item's text."""

    item_id: str
    output_index: int
    content_index: int
    delta: str


class ReasoningTextDone(_Event, kw_only=True, tag="response.reasoning_text.done"):
    """A reasoning item's whole text."""

    item_id: str
    output_index: int
    content_index: int
    text: str


class FunctionCallArgumentsDelta(
    _Event, kw_only=True, tag="response.function_call_arguments.delta"
):
    """A piece of a function call's arguments."""

    item_id: str
    output_index: int
    delta: str


class FunctionCallArgumentsDone(_Event, kw_only=True, tag="response.function_call_arguments.done"):
    """A function call's whole arguments."""

    item_id: str
    output_index: int
    name: str
    arguments: str


class ErrorEvent(_Event, kw_only=True, tag="error"):
    """The model failed while streaming (``response.failed`` follows)."""

    code: str | None
    message: str
    param: str | None = None


ResponseEvent = (
    ResponseCreated
    | ResponseQueued
    | ResponseInProgress
    | ResponseCompleted
    | ResponseIncomplete
    | ResponseFailed
    | OutputItemAdded
    | OutputItemDone
    | ContentPartAdded
    | ContentPartDone
    | OutputTextDelta
    | OutputTextDone
    | ReasoningTextDelta
    | ReasoningTextDone
    | FunctionCallArgumentsDelta
    | FunctionCallArgumentsDone
    | ErrorEvent
)
TERMINAL_EVENTS = (ResponseCompleted, ResponseIncomplete, ResponseFailed)
