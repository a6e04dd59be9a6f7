"""``POST /v1/chat/completions``: OpenAI's Chat Completions API on the same backends as the Responses API.

The same keys, projects, rate limits, models, sampling defaults, context-window check, Structured
Outputs and function tools: ``response_format`` and ``tools`` are translated to their Responses
forms and checked by :mod:`textgen.inputs`, the messages become the backend's
:class:`~textgen.backends.base.ChatMessage` context. Every check runs before the first byte, so a
bad streamed request is a plain 4xx. Chat completions are not stored (OpenAI's default,
``store: false``); ``store: true`` is a 400.

- ``messages``: ``system``, ``developer``, ``user`` (text and ``image_url`` parts), ``assistant``
  (text, ``refusal``, ``tool_calls``) and ``tool`` (``tool_call_id`` of an earlier call);
- ``max_completion_tokens`` (or the older ``max_tokens``), ``temperature``, ``top_p``, ``seed``,
  ``stop`` (up to 4 strings: the answer ends before the first one, which is not returned);
- ``logprobs`` / ``top_logprobs`` (backends that report them), ``stream`` with
  ``stream_options.include_usage``.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import msgspec
from litestar import Controller, Request, post
from litestar.di import NamedDependency
from litestar.response import ServerSentEvent
from litestar.response.sse import ServerSentEventMessage
from msgspec import UNSET

from textgen.backends.base import (
    ArgumentsDelta,
    Backend,
    BackendError,
    ChatMessage,
    Finish,
    FunctionCallStart,
    GenerationRequest,
    Registry,
    RequestRejected,
    Role,
    TextDelta,
)
from textgen.chat_schemas import (
    AssistantMessage,
    ChatCompletion,
    ChatCompletionChunk,
    ChatLogprobs,
    ChatMessageRead,
    ChatUsage,
    Choice,
    ChunkChoice,
    CompletionTokensDetails,
    Delta,
    FunctionCallRead,
    FunctionDelta,
    ImagePart,
    PromptTokensDetails,
    RefusalPart,
    TextPart,
    ToolCallDelta,
    ToolCallRead,
    ToolMessage,
)
from textgen.chat_schemas import ChatMessage as ChatMessageParam
from textgen.decoding import decode_body
from textgen.errors import APIError, bad_request, error_body, not_found
from textgen.generation import logprob_object
from textgen.inputs import normalize_text_format, normalize_tool_choice, normalize_tools
from textgen.openapi import body_operation
from textgen.schemas import ChatCompletionCreate
from textgen.settings import Settings
from textgen.store import new_id
from textgen.stored_items import Logprob
from textgen.turns import sampling_value

__all__ = ["ChatCompletionsController", "ChatService", "ChatTurn", "StopScanner"]

_MESSAGE_OVERHEAD = 3  # tokens of role framing per message, as for responses


@dataclass(slots=True)
class ChatTurn:
    """A validated chat completion request, ready to generate."""

    id: str
    created: int
    body: ChatCompletionCreate
    backend: Backend
    request: GenerationRequest
    input_tokens: int
    stops: tuple[str, ...]
    logprobs: bool
    usage_chunk: bool = False  # stream_options.include_usage (always on inside :meth:`ChatService.complete`)
    tool_calls: list[ToolCallRead] = field(default_factory=list)


class StopScanner:
    """Cuts text at the first stop sequence; holds back a tail that could still begin one."""

    def __init__(self, stops: Sequence[str]) -> None:
        self.stops = tuple(s for s in stops if s)
        self.held = ""
        self.stopped = False

    def feed(self, text: str) -> str:
        """The part of ``held + text`` that can be sent now (everything before a stop, if one appeared)."""
        if self.stopped:
            return ""
        buffer = self.held + text
        hits = [i for i in (buffer.find(s) for s in self.stops) if i >= 0]
        if hits:
            self.stopped, self.held = True, ""
            return buffer[: min(hits)]
        keep = max((k for s in self.stops for k in range(1, len(s)) if buffer.endswith(s[:k])), default=0)
        self.held = buffer[len(buffer) - keep:] if keep else ""
        return buffer[: len(buffer) - keep]

    def flush(self) -> str:
        """The held tail at the end of the answer (no stop sequence came)."""
        tail, self.held = self.held, ""
        return "" if self.stopped else tail


def _text_of(content: str | Sequence[TextPart | ImagePart | RefusalPart] | None, images: list[str]) -> str:
    """The text of a message's ``content``; image URLs go to ``images`` (an image counts as ``[image]``)."""
    if content is None or isinstance(content, str):
        return content or ""
    texts: list[str] = []
    for part in content:
        if isinstance(part, ImagePart):
            images.append(part.image_url.url)
            texts.append("[image]")
        else:
            texts.append(part.text if isinstance(part, TextPart) else part.refusal)
    return "\n".join(texts)


def _context(messages: Sequence[ChatMessageParam], accepts_images: bool, model: str) -> list[ChatMessage]:
    """The backend's context from ``messages`` (decoded and checked by msgspec); a ``tool`` message must
    answer an earlier call, and an image needs a model that reads them."""
    context: list[ChatMessage] = []
    call_ids: set[str] = set()
    for i, message in enumerate(messages):
        param = f"messages[{i}]"
        images: list[str] = []
        text = _text_of(message.content, images)
        if images and not accepts_images:
            raise bad_request(f"The model {model!r} is text-only and cannot read images.",
                              param=f"{param}.content", code="invalid_value")
        if isinstance(message, AssistantMessage):
            if message.refusal is not None and not text:
                text = message.refusal
            for call in message.tool_calls or ():
                call_ids.add(call.id)
                text += ("\n" if text else "") + f"[call {call.function.name} {call.function.arguments}]"
        if isinstance(message, ToolMessage) and message.tool_call_id not in call_ids:
            raise bad_request(f"No tool call found for tool message with tool_call_id {message.tool_call_id!r}.",
                              param=f"{param}.tool_call_id", code="invalid_value")
        context.append(ChatMessage(cast("Role", type(message).__struct_config__.tag), text, tuple(images)))
    return context


_PARAM_MAP = ((re.compile(r"^tools\[(\d+)\]\.(?!function)"), r"tools[\1].function."),
              (re.compile(r"^text\.format\."), "response_format.json_schema."),
              (re.compile(r"^tool_choice\.name"), "tool_choice.function.name"))


def _chat_param(param: str | None) -> str | None:
    """A Responses parameter path as the Chat Completions request names it."""
    if param is None:
        return None
    for pattern, replacement in _PARAM_MAP:
        param = pattern.sub(replacement, param)
    return param


def _renamed(exc: APIError) -> APIError:
    return APIError(exc.status, exc.message, param=_chat_param(exc.param), code=exc.code, type=exc.type)


def _tools(body: ChatCompletionCreate) -> tuple[list[dict[str, Any]], str | dict[str, Any] | None]:
    """``tools`` and ``tool_choice`` in their Responses forms."""
    tools: list[dict[str, Any]] = []
    for i, tool in enumerate(body.tools or ()):
        unknown = sorted(set(tool) - {"type", "function"})
        if unknown:
            raise bad_request(f"Unknown parameter: 'tools[{i}].{unknown[0]}'.", param=f"tools[{i}].{unknown[0]}",
                              code="unknown_parameter")
        function = tool.get("function")
        if tool.get("type") != "function" or not isinstance(function, dict):
            raise bad_request("Only {'type': 'function', 'function': {...}} tools are supported.",
                              param=f"tools[{i}]", code="unsupported_value")
        tools.append({"type": "function", **function})
    choice = body.tool_choice
    if isinstance(choice, dict):
        function = choice.get("function")
        if choice.get("type") != "function" or not isinstance(function, dict):
            raise bad_request("A tool_choice object must be {'type': 'function', 'function': {'name': ...}}.",
                              param="tool_choice", code="invalid_value")
        choice = {"type": "function", "name": function.get("name")}
    return tools, choice


def _format(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """``response_format`` as a Responses ``text.format``."""
    if value is None:
        return None
    kind = value.get("type")
    if kind == "json_schema":
        spec = value.get("json_schema")
        if not isinstance(spec, dict):
            raise bad_request("response_format.json_schema is required.", param="response_format.json_schema")
        return {"type": "json_schema", **spec}
    if kind in ("text", "json_object") and set(value) == {"type"}:
        return {"type": kind}
    raise bad_request(f"Invalid response_format {kind!r}; expected text, json_object or json_schema.",
                      param="response_format.type", code="invalid_value")


class ChatService:
    """Validates, runs and shapes chat completions."""

    def __init__(self, registry: Registry, settings: Settings) -> None:
        self.registry = registry
        self.settings = settings

    def prepare(self, body: ChatCompletionCreate) -> ChatTurn:
        """Check everything and build the generation request; raises :class:`APIError` before any output."""
        backend = self.registry.get(body.model)
        if backend is None:
            raise not_found(f"The model {body.model!r} does not exist; see GET /v1/models.", param="model",
                            code="model_not_found")
        info = backend.info
        if body.store:
            raise bad_request("This server does not store chat completions; use the Responses API to store "
                              "answers.", param="store", code="unsupported_value")
        asked = body.max_completion_tokens or body.max_tokens
        if asked is not None and asked > info.max_output_tokens:
            name = "max_completion_tokens" if body.max_completion_tokens else "max_tokens"
            raise bad_request(f"{name} is {asked}, above {info.max_output_tokens}, the limit of model {info.id!r}.",
                              param=name, code="invalid_value")
        wants_logprobs = bool(body.logprobs)
        if body.top_logprobs and not wants_logprobs:
            raise bad_request("'top_logprobs' needs 'logprobs': true.", param="top_logprobs", code="invalid_value")
        if wants_logprobs and not info.logprobs:
            raise bad_request(f"The model {info.id!r} does not report token log-probabilities.", param="logprobs",
                              code="unsupported_value")
        try:
            tools, choice = _tools(body)
            _, specs = normalize_tools(tools)
            _, tool_choice = normalize_tool_choice(choice, specs)
            _, constraint = normalize_text_format(_format(body.response_format))
        except APIError as exc:
            raise _renamed(exc) from exc
        context = _context(body.messages, info.accepts_images, info.id)
        max_output = asked or min(self.settings.default_max_output_tokens, info.max_output_tokens)
        input_tokens = sum(backend.count_tokens(m.text) + _MESSAGE_OVERHEAD for m in context)
        if input_tokens + max_output > info.context_window:
            raise bad_request(
                f"This model's maximum context length is {info.context_window} tokens. However, you requested "
                f"{input_tokens + max_output} tokens ({input_tokens} in the messages, {max_output} for the "
                "completion). Shorten the messages or lower max_completion_tokens.",
                param="messages", code="context_length_exceeded")
        request = GenerationRequest(
            messages=context, max_output_tokens=max_output,
            temperature=sampling_value(body.temperature, info.temperature),
            top_p=sampling_value(body.top_p, info.top_p), seed=body.seed, constraint=constraint, tools=specs,
            tool_choice=tool_choice, logprobs=wants_logprobs, top_logprobs=body.top_logprobs or 0)
        try:
            backend.validate(request)
        except RequestRejected as exc:
            about_schema = exc.param is not None and exc.param.endswith(("schema", "parameters"))
            raise bad_request(str(exc), param=_chat_param(exc.param),
                              code="invalid_schema" if about_schema else "unsupported_value") from exc
        except BackendError as exc:
            raise APIError(exc.status, str(exc), param="messages" if exc.status == 400 else None,
                           code=exc.code) from exc
        stops = (body.stop,) if isinstance(body.stop, str) else tuple(body.stop or ())
        return ChatTurn(f"chatcmpl-{new_id('')[:29]}", int(time.time()), body, backend, request, input_tokens,
                        stops, wants_logprobs, body.stream_options is not None and body.stream_options.include_usage)

    # --- generating -------------------------------------------------------------------
    def _chunk(self, turn: ChatTurn, delta: Delta, finish: str | None = None,
               logprobs: list[Logprob] | None = None) -> ChatCompletionChunk:
        choice = ChunkChoice(delta=delta, finish_reason=finish,
                             logprobs=ChatLogprobs(content=logprobs) if logprobs is not None else None)
        return ChatCompletionChunk(id=turn.id, created=turn.created, model=turn.backend.info.id, choices=[choice],
                                   usage=None if turn.usage_chunk else UNSET)

    async def chunks(self, turn: ChatTurn) -> AsyncIterator[ChatCompletionChunk]:
        """The streamed chunks: the role first, then content or tool-call deltas, then the finish reason,
        and with ``stream_options.include_usage`` a last chunk with ``usage`` and no choices."""
        yield self._chunk(turn, Delta(role="assistant", content="", refusal=None))
        scanner = StopScanner(turn.stops)
        finish = Finish("stop", 0)
        deltas = turn.backend.generate(turn.request)
        try:
            async for delta in deltas:
                if isinstance(delta, Finish):
                    finish = delta
                    break
                if isinstance(delta, TextDelta):
                    text = scanner.feed(delta.text)
                    lps = [logprob_object(lp) for lp in delta.logprobs] if turn.logprobs else None
                    if text or lps:
                        yield self._chunk(turn, Delta(content=text), logprobs=lps)
                    if scanner.stopped:
                        break
                elif isinstance(delta, FunctionCallStart):
                    call = ToolCallRead(id=new_id("call_")[:29], function=FunctionCallRead(name=delta.name,
                                                                                          arguments=""))
                    turn.tool_calls.append(call)
                    yield self._chunk(turn, Delta(tool_calls=[ToolCallDelta(
                        index=len(turn.tool_calls) - 1, id=call.id, type="function",
                        function=FunctionDelta(name=delta.name, arguments=""))]))
                elif isinstance(delta, ArgumentsDelta) and turn.tool_calls:
                    turn.tool_calls[-1].function.arguments += delta.text
                    yield self._chunk(turn, Delta(tool_calls=[ToolCallDelta(
                        index=len(turn.tool_calls) - 1, function=FunctionDelta(arguments=delta.text))]))
        finally:
            closer = getattr(deltas, "aclose", None)
            if closer is not None:
                await closer()
        tail = scanner.flush()
        if tail:
            yield self._chunk(turn, Delta(content=tail))
        reason: Literal["stop", "length", "tool_calls"] = (
            "tool_calls" if turn.tool_calls else "stop" if scanner.stopped else finish.reason)
        yield self._chunk(turn, Delta(), reason)
        if turn.usage_chunk:
            last = self._chunk(turn, Delta())
            last.choices = []
            last.usage = self._usage(turn, finish)
            yield last

    def _usage(self, turn: ChatTurn, finish: Finish) -> ChatUsage:
        prompt = finish.input_tokens if finish.input_tokens is not None else turn.input_tokens
        return ChatUsage(prompt_tokens=prompt, completion_tokens=finish.output_tokens,
                         total_tokens=prompt + finish.output_tokens,
                         prompt_tokens_details=PromptTokensDetails(cached_tokens=finish.cached_tokens),
                         completion_tokens_details=CompletionTokensDetails(reasoning_tokens=finish.reasoning_tokens))

    async def complete(self, turn: ChatTurn) -> ChatCompletion:
        """The whole completion (built from the same chunks as the stream, so both agree)."""
        text: list[str] = []
        logprobs: list[Logprob] = []
        reason: str = "stop"
        usage: ChatUsage | None = None
        finish = Finish("stop", 0)
        turn.usage_chunk = True
        try:
            async for chunk in self.chunks(turn):
                if not chunk.choices:
                    usage = chunk.usage or None
                    continue
                choice = chunk.choices[0]
                text.append(choice.delta.content or "")
                if choice.logprobs is not None:
                    logprobs += choice.logprobs.content or []
                if choice.finish_reason is not None:
                    reason = choice.finish_reason
        except Exception as exc:
            raise _failure(exc) from exc
        message = ChatMessageRead(content="".join(text) or None, tool_calls=turn.tool_calls or UNSET)
        return ChatCompletion(
            id=turn.id, created=turn.created, model=turn.backend.info.id,
            choices=[Choice(message=message, finish_reason=reason,
                            logprobs=ChatLogprobs(content=logprobs) if turn.logprobs else None)],
            usage=usage or self._usage(turn, finish),
        )


def _failure(exc: Exception) -> APIError:
    if isinstance(exc, BackendError):
        return APIError(exc.status, str(exc), code=exc.code)
    return APIError(500, "The model failed while generating the completion.", code="server_error")


async def _sse(chunks: AsyncIterator[ChatCompletionChunk]) -> AsyncIterator[ServerSentEventMessage]:
    """Chat Completions framing: ``data: <chunk>`` lines, an error object if the model fails, then ``[DONE]``."""
    try:
        async for chunk in chunks:
            yield ServerSentEventMessage(data=msgspec.json.encode(chunk).decode(), sep="\n")
    except Exception as exc:  # after the first byte a status cannot change: the error goes in the stream
        error = _failure(exc)
        body = error_body(error.status, error.message, error.type, None, error.code)
        yield ServerSentEventMessage(data=msgspec.json.encode(body).decode(), sep="\n")
    yield ServerSentEventMessage(data="[DONE]", sep="\n")


class ChatCompletionsController(Controller):
    """``/v1/chat/completions``."""

    path = "/chat/completions"

    @post("/", status_code=200, operation_class=body_operation(ChatCompletionCreate))
    async def create(self, request: Request[Any, Any, Any],
                     chat: NamedDependency[ChatService]) -> ChatCompletion | ServerSentEvent:
        """Create a chat completion (``stream: true`` answers with server-sent events)."""
        from textgen.api import event_stream

        turn = chat.prepare(decode_body(await request.body(), ChatCompletionCreate))
        if turn.body.stream:
            return event_stream(_sse(chat.chunks(turn)))
        return await chat.complete(turn)
