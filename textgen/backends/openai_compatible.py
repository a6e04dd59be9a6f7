"""An upstream OpenAI-compatible server as a :class:`~textgen.backends.base.Backend`.

Forwards each generation to vLLM, llama.cpp's server, Ollama, OpenAI or another
textgen server, by its ``/chat/completions`` or ``/responses`` endpoint, always
streaming and always stateless (``store: false``): this server keeps the
conversation, prompts and files, renders the whole context and sends it every
turn, so ``previous_response_id`` works with upstreams that remember nothing.

Translation:

- **Roles**: ``developer`` is sent as the configured ``developer_role``
  (``system`` by default, which every server knows); ``tool`` results, which
  lost their call ids in the rendered context, are sent as user messages
  ``Tool result: ...``.
- **Content**: text, plus ``image_url`` parts for the images of a message
  (files are already inlined as text).
- **Options**: ``max_output_tokens`` (``max_tokens`` for chat completions),
  ``temperature``, ``top_p``, ``seed`` (when ``send_seed``), Structured Outputs
  (``response_format`` / ``text.format`` ``json_schema``), function tools and
  ``tool_choice``.
- **Streaming**: text, reasoning (``reasoning_content``/``reasoning`` deltas,
  ``response.reasoning_text.delta`` events or ``<think>`` sections) and
  function-call deltas become the matching :data:`~textgen.backends.base.Delta`.
- **Usage**: the upstream's prompt, cached, completion and reasoning token counts
  replace the local estimate.
- **Errors**: an upstream 400 (e.g. ``context_length_exceeded``) is a 400 with
  the upstream's message and code, a 429 a 429; anything else (bad key, unknown
  upstream model, 5xx, unreachable, timeout) is a 500 ``upstream_error``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any, Literal

import httpx

from textgen.backends.base import (
    ArgumentsDelta,
    BackendError,
    ChatMessage,
    Delta,
    Finish,
    FunctionCallStart,
    GenerationRequest,
    ModelInfo,
    ReasoningDelta,
    ReasoningSplitter,
    RequestRejected,
    TextDelta,
)
from textgen.backends.tokenizer import count_tokens

__all__ = ["OpenAICompatibleBackend", "sse_events", "upstream_error"]

Endpoint = Literal["chat_completions", "responses"]


async def sse_events(lines: AsyncIterator[str]) -> AsyncIterator[dict[str, Any]]:
    """Decode server-sent events: each ``data:`` payload as JSON; stops at ``[DONE]``."""
    data: list[str] = []
    async for line in lines:
        if line.startswith("data:"):
            data.append(line[5:].lstrip())
        elif not line.strip() and data:
            payload = "\n".join(data)
            data = []
            if payload == "[DONE]":
                return
            yield json.loads(payload)
    if data and "\n".join(data) != "[DONE]":
        yield json.loads("\n".join(data))


def upstream_error(status: int, body: bytes) -> BackendError:
    """The :class:`BackendError` a client sees for an upstream HTTP error."""
    message, code = body.decode("utf-8", "replace")[:500], None
    try:
        error = json.loads(body).get("error")
        if isinstance(error, Mapping):
            message, code = str(error.get("message") or message), error.get("code")
        elif isinstance(error, str):  # llama.cpp / Ollama style
            message = error
    except (ValueError, AttributeError):
        pass
    if status in (400, 413, 422):
        return BackendError(f"Upstream rejected the request: {message}", 400, str(code or "invalid_request"))
    if status == 429:
        return BackendError(f"Upstream rate limit: {message}", 429, "rate_limit_exceeded")
    return BackendError(f"Upstream error (HTTP {status}): {message}", 500, "upstream_error")


class OpenAICompatibleBackend:
    """Forwards generations to an upstream server.

    Args:
        info: Identity and limits of this model on our server.
        base_url: The upstream's API root, e.g. ``http://127.0.0.1:8000/v1``.
        upstream_model: The model name the upstream knows.
        api_key: Sent as ``Authorization: Bearer``; none when ``None``.
        endpoint: ``"chat_completions"`` or ``"responses"``.
        timeout: Seconds to connect and between streamed chunks.
        developer_role: Role sent for ``developer`` messages.
        send_seed: Forward ``seed`` (OpenAI's Responses API rejects it).
        reasoning_tags: Markers of reasoning sections inside the text.
        transport: An httpx transport (tests inject one, as with httpx itself).
    """

    def __init__(
        self,
        info: ModelInfo,
        *,
        base_url: str,
        upstream_model: str,
        api_key: str | None = None,
        endpoint: Endpoint = "chat_completions",
        timeout: float = 120.0,
        developer_role: Literal["system", "developer"] = "system",
        send_seed: bool = True,
        reasoning_tags: tuple[str, str] = ("<think>", "</think>"),
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._info = info
        self.base_url = base_url.rstrip("/")
        self.upstream_model = upstream_model
        self.endpoint = endpoint
        self.developer_role = developer_role
        self.send_seed = send_seed
        self.reasoning_tags = reasoning_tags
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = httpx.Timeout(timeout)
        self._transport = transport

    @property
    def info(self) -> ModelInfo:
        """Identity and limits."""
        return self._info

    def count_tokens(self, text: str) -> int:
        """An estimate (words and punctuation marks) for the context-window check.

        The upstream's own count replaces it in ``usage`` after generation.
        """
        return count_tokens(text)

    def validate(self, request: GenerationRequest) -> None:
        """Schemas must be objects; everything else the upstream checks itself."""
        if request.constraint is not None and not isinstance(request.constraint.schema, Mapping):
            raise RequestRejected("The schema must be a JSON object.", "text.format.schema")

    # --- payloads ---------------------------------------------------------------------
    def _role(self, message: ChatMessage) -> tuple[str, str]:
        if message.role == "tool":
            return "user", f"Tool result:\n{message.text}"
        if message.role == "developer":
            return self.developer_role, message.text
        return message.role, message.text

    def chat_payload(self, request: GenerationRequest) -> dict[str, Any]:
        """The ``/chat/completions`` body for ``request``."""
        messages: list[dict[str, Any]] = []
        for m in request.messages:
            role, text = self._role(m)
            content: Any = text
            if m.images and role == "user":
                content = [{"type": "text", "text": text},
                           *({"type": "image_url", "image_url": {"url": url}} for url in m.images)]
            messages.append({"role": role, "content": content})
        body: dict[str, Any] = {
            "model": self.upstream_model, "messages": messages, "stream": True,
            "stream_options": {"include_usage": True}, "max_tokens": request.max_output_tokens,
            "temperature": request.temperature, "top_p": request.top_p,
        }
        if self.send_seed and request.seed is not None:
            body["seed"] = request.seed
        if request.constraint is not None:
            c = request.constraint
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": c.name, "schema": dict(c.schema), "strict": c.strict}}
        if request.tools:
            body["tools"] = [{"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": dict(t.parameters) or
                {"type": "object", "properties": {}}, "strict": t.strict}} for t in request.tools]
            choice = request.tool_choice
            body["tool_choice"] = choice if choice in ("auto", "none", "required") else {
                "type": "function", "function": {"name": choice}}
        return body

    def responses_payload(self, request: GenerationRequest) -> dict[str, Any]:
        """The ``/responses`` body for ``request`` (stateless: ``store`` false)."""
        items: list[dict[str, Any]] = []
        for m in request.messages:
            role, text = self._role(m)
            content: Any = text
            if m.images and role == "user":
                content = [{"type": "input_text", "text": text},
                           *({"type": "input_image", "image_url": url} for url in m.images)]
            items.append({"type": "message", "role": role, "content": content})
        body: dict[str, Any] = {
            "model": self.upstream_model, "input": items, "stream": True, "store": False,
            "max_output_tokens": request.max_output_tokens, "temperature": request.temperature,
            "top_p": request.top_p,
        }
        if self.send_seed and request.seed is not None:
            body["seed"] = request.seed
        if request.constraint is not None:
            c = request.constraint
            body["text"] = {"format": {"type": "json_schema", "name": c.name, "schema": dict(c.schema),
                                       "strict": c.strict}}
        if request.tools:
            body["tools"] = [{"type": "function", "name": t.name, "description": t.description,
                              "parameters": dict(t.parameters) or {"type": "object", "properties": {}},
                              "strict": t.strict} for t in request.tools]
            choice = request.tool_choice
            body["tool_choice"] = choice if choice in ("auto", "none", "required") else {
                "type": "function", "name": choice}
        return body

    # --- streaming --------------------------------------------------------------------
    async def _stream(self, path: str, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        try:
            async with httpx.AsyncClient(timeout=self._timeout, transport=self._transport) as client:
                async with client.stream("POST", f"{self.base_url}/{path}", json=body,
                                         headers=self._headers) as response:
                    if response.status_code >= 400:
                        raise upstream_error(response.status_code, await response.aread())
                    async for event in sse_events(response.aiter_lines()):
                        yield event
        except httpx.TimeoutException as exc:
            raise BackendError(f"Upstream {self.base_url} timed out.", 500, "upstream_error") from exc
        except httpx.TransportError as exc:
            raise BackendError(f"Upstream {self.base_url} is unreachable: {exc}", 500, "upstream_error") from exc
        except ValueError as exc:  # json.JSONDecodeError
            raise BackendError(f"Upstream sent an invalid event: {exc}", 500, "upstream_error") from exc

    async def _chat(self, request: GenerationRequest) -> AsyncIterator[Delta]:
        splitter = ReasoningSplitter(*self.reasoning_tags)
        calls: dict[int, str] = {}
        usage: Mapping[str, Any] = {}
        reason: Literal["stop", "length"] = "stop"
        async for chunk in self._stream("chat/completions", self.chat_payload(request)):
            if chunk.get("error"):
                raise upstream_error(500, json.dumps(chunk).encode())
            usage = chunk.get("usage") or usage
            for choice in chunk.get("choices") or ():
                delta = choice.get("delta") or {}
                thinking = delta.get("reasoning_content") or delta.get("reasoning")
                if thinking:
                    yield ReasoningDelta(thinking)
                if delta.get("content"):
                    for piece in splitter.feed(delta["content"]):
                        yield piece
                for call in delta.get("tool_calls") or ():
                    index, function = call.get("index", 0), call.get("function") or {}
                    if index not in calls:
                        calls[index] = function.get("name", "")
                        yield FunctionCallStart(calls[index])
                    if function.get("arguments"):
                        yield ArgumentsDelta(function["arguments"])
                if choice.get("finish_reason") == "length":
                    reason = "length"
        for piece in splitter.flush():
            yield piece
        details = usage.get("prompt_tokens_details") or {}
        out_details = usage.get("completion_tokens_details") or {}
        yield Finish(reason, int(usage.get("completion_tokens", 0)),
                     input_tokens=usage.get("prompt_tokens"), cached_tokens=int(details.get("cached_tokens") or 0),
                     reasoning_tokens=int(out_details.get("reasoning_tokens") or 0))

    async def _responses(self, request: GenerationRequest) -> AsyncIterator[Delta]:
        async for event in self._stream("responses", self.responses_payload(request)):
            kind = event.get("type")
            if kind == "response.output_item.added" and event["item"].get("type") == "function_call":
                yield FunctionCallStart(event["item"]["name"])
            elif kind == "response.output_text.delta":
                yield TextDelta(event["delta"])
            elif kind in ("response.reasoning_text.delta", "response.reasoning_summary_text.delta"):
                yield ReasoningDelta(event["delta"])
            elif kind == "response.function_call_arguments.delta":
                yield ArgumentsDelta(event["delta"])
            elif kind in ("response.completed", "response.incomplete"):
                response = event["response"]
                usage = response.get("usage") or {}
                details = usage.get("input_tokens_details") or {}
                out_details = usage.get("output_tokens_details") or {}
                yield Finish("length" if kind == "response.incomplete" else "stop",
                             int(usage.get("output_tokens", 0)), input_tokens=usage.get("input_tokens"),
                             cached_tokens=int(details.get("cached_tokens") or 0),
                             reasoning_tokens=int(out_details.get("reasoning_tokens") or 0))
                return
            elif kind in ("response.failed", "error"):
                error = (event.get("response") or {}).get("error") or event
                raise BackendError(f"Upstream failed: {error.get('message', 'unknown error')}", 500,
                                   "upstream_error")
        raise BackendError("Upstream stream ended without a final response event.", 500, "upstream_error")

    async def generate(self, request: GenerationRequest) -> AsyncIterator[Delta]:
        """Stream the upstream's output, translated."""
        stream = self._chat(request) if self.endpoint == "chat_completions" else self._responses(request)
        async for delta in stream:
            yield delta
