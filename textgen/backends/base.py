"""The model-backend Protocol, the values that cross it, and the model registry.

The server renders a request into a :class:`GenerationRequest` (plain role-tagged
text messages, sampling options, an optional :class:`JsonConstraint` and the
function tools) and consumes the backend's async stream of :data:`Delta` values.
A backend never sees HTTP, the database or the wire format; the built-in n-gram
model, a local Hugging Face model or an upstream server all fit behind it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = [
    "ArgumentsDelta",
    "Backend",
    "BackendError",
    "ChatMessage",
    "Delta",
    "Finish",
    "FunctionCallStart",
    "FunctionSpec",
    "GenerationRequest",
    "JsonConstraint",
    "ModelInfo",
    "ReasoningDelta",
    "ReasoningSplitter",
    "Registry",
    "RequestRejected",
    "TextDelta",
    "TokenLogprob",
    "chat_turns",
    "relay_from_thread",
]

Role = Literal["system", "developer", "user", "assistant", "tool"]


class RequestRejected(ValueError):
    """A backend cannot serve a request as asked; ``param`` names the request field."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


class BackendError(RuntimeError):
    """A backend failed in a way the caller should see (e.g. an upstream server's 4xx/429).

    Args:
        message: Shown to the client as ``error.message``.
        status: HTTP status of a non-streamed request (400, 429 or 500).
        code: ``error.code``.
    """

    def __init__(self, message: str, status: int = 500, code: str = "server_error") -> None:
        super().__init__(message)
        self.status = status
        self.code = code


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What the server needs to know about a model.

    Attributes:
        id: The pinned snapshot identifier, echoed in ``response.model``.
        aliases: Other names that resolve to this snapshot (e.g. the family name).
        context_window: Maximum input plus output tokens of one request.
        max_output_tokens: Default and ceiling for ``max_output_tokens``.
        owned_by: Shown by ``GET /v1/models``.
        created: Unix time of the snapshot.
        accepts_images: ``False`` for a text-only model: an ``input_image`` is a 400.
        logprobs: ``True`` when its text deltas carry :class:`TokenLogprob` values
            (``include: ["message.output_text.logprobs"]`` is a 400 otherwise).
        temperature: The model's recommended sampling temperature, used when a request sets none
            (``None``: 1.0).
        top_p: The model's recommended nucleus mass, used when a request sets none (``None``: 1.0).
        sampling_source: Where ``temperature`` and ``top_p`` come from (a model card or a
            ``generation_config.json``), shown by ``GET /v1/models/{id}``.
    """

    id: str
    context_window: int
    max_output_tokens: int
    owned_by: str = "quantcore"
    created: int = 0
    aliases: tuple[str, ...] = ()
    accepts_images: bool = True
    logprobs: bool = False  # whether its TextDeltas carry token log-probabilities
    temperature: float | None = None
    top_p: float | None = None
    sampling_source: str | None = None
    continues: bool = False  # honours GenerationRequest.continuation (a background response can resume)


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One rendered context entry; files and variables are already text.

    ``images`` holds the ``image_url`` of each ``input_image`` part (their place in
    ``text`` is marked ``[image]``) for backends that can forward them.
    """

    role: Role
    text: str
    images: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class JsonConstraint:
    """Decode only JSON valid against ``schema`` (Structured Outputs, tool arguments)."""

    schema: Mapping[str, Any]
    strict: bool
    name: str = "response"


@dataclass(frozen=True, slots=True)
class FunctionSpec:
    """A function tool the model may call."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    strict: bool


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    """Everything a backend needs for one generation.

    Attributes:
        messages: The context in priority order (instructions first).
        max_output_tokens: Hard budget; stopping on it finishes with ``"length"``.
        temperature: ``0`` is greedy; larger is more random.
        top_p: Nucleus mass in (0, 1].
        seed: Makes sampling reproducible when set.
        constraint: When set, the text output must be JSON valid against it.
        tools: Function tools offered to the model.
        tool_choice: ``"auto"``, ``"none"``, ``"required"`` or a function name.
        logprobs: Report each text token's log-probability (backends with ``info.logprobs``).
        top_logprobs: How many most likely alternatives to report with each token (0-20).
        continuation: Text of the assistant's answer generated before a restart: the backend
            continues it (it is not output again). Only sent to backends with ``info.continues``,
            and only for plain text answers.
    """

    messages: Sequence[ChatMessage]
    max_output_tokens: int
    temperature: float = 1.0
    top_p: float = 1.0
    seed: int | None = None
    constraint: JsonConstraint | None = None
    tools: Sequence[FunctionSpec] = field(default_factory=tuple)
    tool_choice: str = "auto"
    logprobs: bool = False
    top_logprobs: int = 0
    continuation: str = ""


@dataclass(frozen=True, slots=True)
class TokenLogprob:
    """One generated token, its natural-log probability, and the most likely alternatives."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, slots=True)
class TextDelta:
    """More text of the assistant message (with its tokens' log-probabilities when asked for)."""

    text: str
    logprobs: tuple[TokenLogprob, ...] = ()


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """More reasoning text (e.g. a ``<think>`` section); returned as a ``reasoning`` item."""

    text: str


@dataclass(frozen=True, slots=True)
class FunctionCallStart:
    """The model starts calling ``name``; its arguments follow as :class:`ArgumentsDelta`."""

    name: str


@dataclass(frozen=True, slots=True)
class ArgumentsDelta:
    """More JSON text of the current function call's arguments."""

    text: str


@dataclass(frozen=True, slots=True)
class Finish:
    """The end of the stream: ``"length"`` when ``max_output_tokens`` stopped it.

    Attributes:
        reason: ``"stop"`` or ``"length"``.
        output_tokens: Tokens generated, reasoning included.
        input_tokens: The exact prompt length when the backend knows it (chat
            template included); ``None`` keeps the server's estimate.
        cached_tokens: Leading prompt tokens served from a prompt cache.
        reasoning_tokens: Output tokens spent on reasoning.
    """

    reason: Literal["stop", "length"]
    output_tokens: int
    input_tokens: int | None = None
    cached_tokens: int = 0
    reasoning_tokens: int = 0


Delta = TextDelta | ReasoningDelta | FunctionCallStart | ArgumentsDelta | Finish


async def relay_from_thread(
    executor: Executor,
    produce: Callable[[threading.Event], Iterator[Delta]],
    *,
    release: Callable[[], None] | None = None,
) -> AsyncGenerator[Delta, None]:
    """Stream ``produce(stop)``, run in a worker thread of ``executor``, on the event loop.

    Deltas cross to the loop one by one; an exception of the worker is raised here.
    Closing this generator (a cancelled request, a client gone) sets ``stop``, which
    the worker checks at each delta. ``release`` runs on the loop once the worker has
    finished (or at once if it could not be started): a local model's context goes
    back to its pool there.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    stop = threading.Event()
    done = object()

    def put(value: Any) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, value)
        except RuntimeError:  # the loop closed: nobody is listening any more
            stop.set()

    def work() -> None:
        try:
            for delta in produce(stop):
                if stop.is_set():
                    return
                put(delta)
        except BaseException as exc:  # re-raised on the event loop
            put(exc)
        finally:
            if release is not None:
                try:
                    loop.call_soon_threadsafe(release)
                except RuntimeError:
                    pass  # the loop closed, and whatever ``release`` returns to with it
            put(done)

    try:
        loop.run_in_executor(executor, work)
    except BaseException:
        if release is not None:
            release()
        raise
    try:
        while (value := await queue.get()) is not done:
            if isinstance(value, BaseException):
                raise value
            yield value
    finally:
        stop.set()


class ReasoningSplitter:
    """Splits streamed text into reasoning (between the tags) and answer text.

    Args:
        start: The opening tag, e.g. ``"<think>"``.
        end: The closing tag.
        inside: Whether the text starts inside a reasoning section.
    """

    def __init__(self, start: str, end: str, *, inside: bool = False) -> None:
        self.start, self.end, self.inside = start, end, inside
        self._buffer = ""
        self._answered = False

    def feed(self, text: str) -> list[TextDelta | ReasoningDelta]:
        """The deltas that ``text`` completes; a possible partial tag is held back."""
        self._buffer += text
        out: list[TextDelta | ReasoningDelta] = []
        while self._buffer:
            tag = self.end if self.inside else self.start
            at = self._buffer.find(tag)
            if at < 0:
                keep = next((k for k in range(min(len(tag) - 1, len(self._buffer)), 0, -1)
                             if tag.startswith(self._buffer[-k:])), 0)
                self._emit(out, self._buffer[: len(self._buffer) - keep])
                self._buffer = self._buffer[len(self._buffer) - keep :]
                break
            self._emit(out, self._buffer[:at])
            self._buffer = self._buffer[at + len(tag) :]
            self.inside = not self.inside
        return out

    def flush(self) -> list[TextDelta | ReasoningDelta]:
        """Whatever is held back, at the end of the stream."""
        out: list[TextDelta | ReasoningDelta] = []
        self._emit(out, self._buffer)
        self._buffer = ""
        return out

    def _emit(self, out: list[TextDelta | ReasoningDelta], text: str) -> None:
        if not self.inside and not self._answered:
            text = text.lstrip()  # the newline after ``</think>`` is not part of the answer
        if text:
            self._answered = self._answered or not self.inside
            out.append(ReasoningDelta(text) if self.inside else TextDelta(text))


def chat_turns(messages: Sequence[ChatMessage], *, system_role: bool = True) -> list[dict[str, str]]:
    """The context as chat-template turns ``{role, content}``.

    ``developer`` becomes ``system``; tool results become user turns
    ``Tool result: ...``; consecutive turns of one role are merged (many templates
    require alternation). With ``system_role=False`` (a template that rejects the
    system role) system text is folded into the next user turn.
    """
    turns: list[dict[str, str]] = []
    pending: list[str] = []
    for m in messages:
        role = {"developer": "system", "tool": "user"}.get(m.role, m.role)
        text = f"Tool result:\n{m.text}" if m.role == "tool" else m.text
        if role == "system" and not system_role:
            pending.append(text)
            continue
        if pending and role == "user":
            text = "\n\n".join([*pending, text])
            pending = []
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += "\n\n" + text
        else:
            turns.append({"role": role, "content": text})
    if pending:
        turns.append({"role": "user", "content": "\n\n".join(pending)})
    return turns


@runtime_checkable
class Backend(Protocol):
    """A language model the server can route requests to."""

    @property
    def info(self) -> ModelInfo:
        """Identity, context window and output ceiling."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens ``text`` occupies in this model's context window."""
        ...

    def validate(self, request: GenerationRequest) -> None:
        """Raise :class:`RequestRejected` if the request cannot run as asked.

        Called before any output is sent, e.g. to reject an unsupported schema.
        """
        ...

    def generate(self, request: GenerationRequest) -> AsyncIterator[Delta]:
        """Stream the output; the last value is always a :class:`Finish`."""
        ...


class Registry:
    """Model ids and aliases to backend instances."""

    def __init__(self, backends: Iterable[Backend] = ()) -> None:
        self._by_name: dict[str, Backend] = {}
        self._backends: list[Backend] = []
        for backend in backends:
            self.add(backend)

    def add(self, backend: Backend) -> None:
        """Register ``backend`` under its snapshot id and aliases (last wins)."""
        self._backends.append(backend)
        for name in (backend.info.id, *backend.info.aliases):
            self._by_name[name] = backend

    def get(self, name: str) -> Backend | None:
        """The backend for a model id or alias, ``None`` if unknown."""
        return self._by_name.get(name)

    def __iter__(self) -> Any:
        return iter(self._backends)

    def names(self) -> list[str]:
        """Every id and alias, sorted."""
        return sorted(self._by_name)
