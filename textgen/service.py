"""The Responses service: validate a request, build its context, run the backend, store it.

:meth:`ResponseService.prepare` does every check before a byte is sent (so a bad
request is a plain 400/404, streamed or not) and builds the context:

1. ``instructions`` (or the prompt's) as the leading ``system`` entry: they rank
   above every input message (rule 1) and apply to this request only;
2. the conversation of ``previous_response_id`` (its inputs and outputs, never
   its instructions: rule 2);
3. the reusable prompt's messages at the requested or current version (rule 3)
   with variables substituted (rule 4);
4. this request's ``input`` items.

:meth:`ResponseService.events` runs the backend and yields the streaming events;
the non-streaming path consumes the very same events, so both agree exactly.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import msgspec

from textgen.backends.base import (
    ArgumentsDelta,
    Backend,
    BackendError,
    ChatMessage,
    Finish,
    FunctionCallStart,
    GenerationRequest,
    ReasoningDelta,
    Registry,
    RequestRejected,
    TextDelta,
    TokenLogprob,
)
from textgen.conversations import ConversationService, conversation_id_of
from textgen.errors import APIError, bad_request, not_found
from textgen.events import (
    ContentPartAdded,
    ContentPartDone,
    ConversationRef,
    ErrorEvent,
    FunctionCallArgumentsDelta,
    FunctionCallArgumentsDone,
    IncompleteDetails,
    InputTokensDetails,
    OutputItemAdded,
    OutputItemDone,
    OutputTextDelta,
    OutputTextDone,
    OutputTokensDetails,
    ReasoningEcho,
    ReasoningTextDelta,
    ReasoningTextDone,
    ResponseCompleted,
    ResponseCreated,
    ResponseError,
    ResponseEvent,
    ResponseFailed,
    ResponseIncomplete,
    ResponseInProgress,
    ResponseObject,
    ResponseQueued,
    Usage,
)
from textgen.files import FileService, inline_text
from textgen.includes import ENCRYPTED_REASONING, INCLUDABLE, LOGPROBS, check_include, shape_item
from textgen.inputs import (
    convert_items,
    normalize_input,
    normalize_text_format,
    normalize_tool_choice,
    normalize_tools,
)
from textgen.pagination import Page, page_body, paginate
from textgen.prompts import PromptService
from textgen.resume import ResumePoint
from textgen.schemas import Deleted, InputTokensCreate, InputTokensRead, ListPage, ResponseCreate
from textgen.sealing import Sealer
from textgen.settings import Settings
from textgen.store import Store, StoredResponse, new_id

__all__ = ["ResponseService", "Turn", "logprob_object", "sampling_value", "stored_response"]

log = logging.getLogger("textgen")
_MESSAGE_OVERHEAD = 3  # tokens of role framing per context entry


@dataclass(slots=True)
class Turn:
    """A validated request, ready to generate."""

    id: str
    created_at: int
    body: ResponseCreate
    backend: Backend
    echo: dict[str, Any]
    input_items: list[dict[str, Any]]
    history: list[dict[str, Any]]
    entries: list[dict[str, Any]]
    request: GenerationRequest
    input_tokens: int
    project: str = ""
    conversation_id: str | None = None
    failure_status: int = 500
    cancelled: bool = False
    handback: bool = False  # stopping to hand the work back (shutdown): no closing events
    resume: ResumePoint | None = None  # where a resumed background response continues
    output: list[dict[str, Any]] = field(default_factory=list)


def sampling_value(requested: float | None, recommended: float | None) -> float:
    """A sampling setting: the request's, else the model's recommended one, else 1.0."""
    if requested is not None:
        return requested
    return 1.0 if recommended is None else recommended


def _usage(input_tokens: int, finish: Finish) -> Usage:
    if finish.input_tokens is not None:
        input_tokens = finish.input_tokens
    return Usage(input_tokens=input_tokens, input_tokens_details=InputTokensDetails(cached_tokens=finish.cached_tokens),
                 output_tokens=finish.output_tokens,
                 output_tokens_details=OutputTokensDetails(reasoning_tokens=finish.reasoning_tokens),
                 total_tokens=input_tokens + finish.output_tokens)


def _empty_text_part() -> dict[str, Any]:
    return {"type": "output_text", "text": "", "annotations": [], "logprobs": []}


def logprob_object(value: TokenLogprob) -> dict[str, Any]:
    """OpenAI's logprob object (``bytes`` are the token's UTF-8 bytes)."""
    return {"token": value.token, "logprob": value.logprob, "bytes": list(value.token.encode()),
            "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in value.top]}


def _output_entries(output: list[dict[str, Any]]) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for item in output:
        if item["type"] == "reasoning":
            continue  # reasoning does not carry over to the next turn
        if item["type"] == "message":
            entries.append({"role": "assistant", "text": "".join(p["text"] for p in item["content"])})
        else:
            entries.append({"role": "assistant", "call_id": item["call_id"],
                            "text": f"[call {item['name']} {item['arguments']}]"})
    return entries


class ResponseService:
    """Creates, streams, reads and deletes responses."""

    def __init__(
        self, store: Store, files: FileService, prompts: PromptService, registry: Registry, settings: Settings,
        conversations: ConversationService, sealer: Sealer,
    ) -> None:
        self.conversations = conversations
        self.sealer = sealer
        self.store = store
        self.files = files
        self.prompts = prompts
        self.registry = registry
        self.settings = settings

    # --- preparing --------------------------------------------------------------------
    async def _entry(
        self, project: str, item: dict[str, Any], param: str, call_ids: set[str]
    ) -> dict[str, Any] | None:
        """Render one normalised input item as a context entry ``{role, text[, call_id]}``.

        A reasoning item gives none: reasoning is not carried into the next turn's context.
        """
        if item["type"] == "reasoning":
            if item.get("encrypted_content") is not None:
                try:
                    sealed = self.sealer.open(item["encrypted_content"])
                except ValueError as exc:
                    raise bad_request(f"The encrypted_content of reasoning item {item['id']!r} could not be "
                                      f"read: {exc}.", param=f"{param}.encrypted_content",
                                      code="invalid_encrypted_content") from exc
                item["content"] = item["content"] or sealed["content"]
            return None
        if item["type"] == "function_call":
            call_ids.add(item["call_id"])
            return {"role": "assistant", "call_id": item["call_id"],
                    "text": f"[call {item['name']} {item['arguments']}]"}
        if item["type"] == "function_call_output":
            if item["call_id"] not in call_ids:
                raise bad_request(f"No tool call found for function call output with call_id "
                                  f"{item['call_id']!r}.", param=f"{param}.call_id", code="invalid_value")
            return {"role": "tool", "call_id": item["call_id"], "text": item["output"]}
        texts: list[str] = []
        images: list[str] = []
        for j, part in enumerate(item["content"]):
            where = f"{param}.content[{j}]"
            if part["type"] in ("input_text", "output_text"):
                texts.append(part["text"])
            elif part["type"] == "refusal":
                texts.append(part["refusal"])
            elif part["type"] == "input_image":
                texts.append("[image]")
                if part.get("image_url"):
                    images.append(part["image_url"])
                else:  # an uploaded image must exist in this project
                    await self.files.get(project, part["file_id"], f"{where}.file_id")
            elif part.get("file_data") is not None:
                name, text = inline_text(part.pop("file_data"), part.get("filename"), where,
                                         self.settings.max_file_bytes)
                texts.append(f"[file {name}]\n{text}")
            else:
                name, text = await self.files.text(project, part["file_id"], f"{where}.file_id")
                part["filename"] = name
                texts.append(f"[file {name}]\n{text}")
        entry = {"role": item["role"], "text": "\n".join(texts)}
        return {**entry, "images": images} if images else entry

    async def _check_variable_files(self, project: str, variables: dict[str, str | dict[str, Any]]) -> None:
        """A file a prompt variable names must exist in ``project``: else a 404 naming the variable."""
        for name, value in variables.items():
            if not isinstance(value, dict) or not isinstance(value.get("file_id"), str):
                continue
            param = f"prompt.variables.{name}.file_id"
            if await self.files.store.get_file(value["file_id"], project) is None:
                raise not_found(f"Prompt variable {name!r} names file {value['file_id']!r}, which does not exist.",
                                param=param, code="file_not_found")

    async def count_input_tokens(self, body: InputTokensCreate, project: str) -> InputTokensRead:
        """The input tokens a response with these fields would use (its context, no generation)."""
        model = body.model or next(iter(self.registry)).info.id
        fields = {f: getattr(body, f) for f in body.__struct_fields__ if f != "model"}
        if fields["input"] is None:
            fields["input"] = []
        turn = await self.prepare(ResponseCreate(model=model, store=False, **fields), project, counting=True)
        exact = getattr(turn.backend, "prompt_tokens", None)  # a local backend counts its rendered prompt
        tokens = turn.input_tokens if exact is None else await asyncio.to_thread(exact, turn.request)
        return InputTokensRead(input_tokens=tokens)

    async def prepare(self, body: ResponseCreate, project: str, *, counting: bool = False) -> Turn:
        """Validate ``body`` and build its context in ``project``; raises :class:`APIError` on any problem.

        Every id the request names (previous response, prompt, files) is looked up
        in ``project`` only: another project's id is a 404 like an unknown one.
        """
        backend = self.registry.get(body.model)
        if backend is None:
            raise not_found(f"The model {body.model!r} does not exist; see GET /v1/models.",
                            param="model", code="model_not_found")
        if body.input is None and body.prompt is None:
            raise bad_request("Missing required parameter: 'input' (or 'prompt').", param="input",
                              code="missing_required_parameter")
        info = backend.info
        if body.max_output_tokens is not None and body.max_output_tokens > info.max_output_tokens:
            raise bad_request(f"max_output_tokens is {body.max_output_tokens}, above {info.max_output_tokens}, "
                              f"the limit of model {info.id!r}.", param="max_output_tokens", code="invalid_value")
        tools, specs = normalize_tools(body.tools)
        tool_choice, choice = normalize_tool_choice(body.tool_choice, specs)
        text_format, constraint = normalize_text_format(body.text.format if body.text else None)

        for i, value in enumerate(body.include or ()):
            if value not in INCLUDABLE:
                check_include([value], param=f"include[{i}]")
            if value == LOGPROBS and not info.logprobs:
                raise bad_request(f"The model {info.id!r} does not report token log-probabilities.",
                                  param=f"include[{i}]", code="unsupported_value")
        if body.top_logprobs and not info.logprobs:  # never silently ignored
            raise bad_request(f"The model {info.id!r} does not report token log-probabilities.",
                              param="top_logprobs", code="unsupported_value")
        if body.background and not body.store:
            raise bad_request("Background mode requires 'store': true.", param="background",
                              code="invalid_value")
        history: list[dict[str, Any]] = []
        conversation_id = conversation_id_of(body.conversation)
        if conversation_id is not None and body.previous_response_id is not None:
            # OpenAI's reference on previous_response_id: "Cannot be used in conjunction with conversation."
            raise bad_request("'previous_response_id' cannot be used together with 'conversation'.",
                              param="conversation", code="invalid_value")
        if conversation_id is not None:
            stored_items = await self.conversations.all_items(conversation_id, project)
            seen: set[str] = set()
            for i, item in enumerate(stored_items):
                entry = await self._entry(project, item, f"conversation.items[{i}]", seen)
                if entry is not None:
                    history.append(entry)
        if body.previous_response_id is not None:
            found = await self.store.history(body.previous_response_id, project)
            if found is None:
                raise not_found(f"Previous response with id {body.previous_response_id!r} not found.",
                                param="previous_response_id", code="previous_response_not_found")
            history = found
        call_ids = {e["call_id"] for e in history if e.get("call_id") and e["role"] == "assistant"}

        instructions = body.instructions
        prompt_echo = None
        items: list[dict[str, Any]] = []
        if body.prompt is not None:
            record, messages = await self.prompts.resolve(project, body.prompt)
            await self._check_variable_files(project, body.prompt.variables or {})
            items += normalize_input(convert_items(messages, "prompt.messages"), prefix="prompt.messages")
            instructions = instructions if instructions is not None else record.instructions
            variables = {k: ({"detail": "auto", **v} if isinstance(v, dict) and v.get("type") == "input_image"
                             else v) for k, v in (body.prompt.variables or {}).items()}
            prompt_echo = {"id": record.id, "version": str(record.version), "variables": variables}
        params = [f"prompt.messages[{i}]" for i in range(len(items))]
        own = normalize_input(body.input)
        for i, item in enumerate(own):
            if item["type"] == "item_reference":  # any stored item of this project, by id
                referenced = await self.store.find_item(item["id"], project)
                if referenced is None:
                    raise not_found(f"Item with id {item['id']!r} not found.", param=f"input[{i}].id",
                                    code="item_not_found")
                own[i] = referenced
        items += own
        params += [f"input[{i}]" for i in range(len(own))]
        if not info.accepts_images:
            for item, param in zip(items, params, strict=True):
                for j, part in enumerate(item.get("content") or ()):
                    if part["type"] == "input_image":
                        raise bad_request(f"The model {info.id!r} is text-only and cannot read images; "
                                          "remove the input_image part.", param=f"{param}.content[{j}]",
                                          code="invalid_value")
        rendered = [await self._entry(project, item, param, call_ids) for item, param in zip(items, params, strict=True)]
        entries = [e for e in rendered if e is not None]

        max_output = body.max_output_tokens or min(self.settings.default_max_output_tokens,
                                                   info.max_output_tokens)
        lead = [{"role": "system", "text": instructions}] if instructions else []
        history, input_tokens = self._fit(backend, lead, history, entries, 0 if counting else max_output,
                                          body.truncation)
        context = [ChatMessage(e["role"], e["text"], tuple(e.get("images", ())))
                   for e in (*lead, *history, *entries)]
        request = GenerationRequest(
            messages=context, max_output_tokens=max_output,
            temperature=sampling_value(body.temperature, info.temperature), top_p=sampling_value(body.top_p, info.top_p),
            seed=body.seed,
            constraint=constraint, tools=specs, tool_choice=choice,
            logprobs=LOGPROBS in (body.include or ()) or bool(body.top_logprobs),
            top_logprobs=body.top_logprobs or 0,
        )
        try:
            backend.validate(request)
        except RequestRejected as exc:
            about_schema = exc.param is not None and exc.param.endswith(("schema", "parameters"))
            raise bad_request(str(exc), param=exc.param,
                              code="invalid_schema" if about_schema else "unsupported_value") from exc
        except BackendError as exc:  # the backend's exact context-window count, before any output
            if not counting:  # counting input tokens reserves no room for an output
                raise APIError(exc.status, str(exc), param="input" if exc.status == 400 else None,
                               code=exc.code) from exc
        echo = {
            "instructions": instructions, "prompt": prompt_echo, "tools": tools, "tool_choice": tool_choice,
            "text": {"format": text_format, "verbosity": body.text.verbosity if body.text and
                     body.text.verbosity else "medium"},
        }
        return Turn(new_id("resp_"), int(time.time()), body, backend, echo, items, history, entries,
                    request, input_tokens, project, conversation_id)

    def _fit(
        self, backend: Backend, lead: list[dict[str, Any]], history: list[dict[str, Any]],
        entries: list[dict[str, Any]], max_output: int, truncation: str | None,
    ) -> tuple[list[dict[str, Any]], int]:
        """Check the context window; with ``truncation='auto'`` drop the oldest history first."""
        def cost(es: list[dict[str, Any]]) -> int:
            return sum(backend.count_tokens(e["text"]) + _MESSAGE_OVERHEAD for e in es)

        window = backend.info.context_window
        fixed = cost(lead) + cost(entries)
        costs = [backend.count_tokens(e["text"]) + _MESSAGE_OVERHEAD for e in history]
        total = fixed + sum(costs)
        start = 0
        while truncation == "auto" and total + max_output > window and start < len(history):
            total -= costs[start]
            start += 1
        if total + max_output > window:
            raise bad_request(
                f"This model's maximum context length is {window} tokens. However, you requested "
                f"{total + max_output} tokens ({total} in the input, {max_output} for the output). "
                "Shorten the input or lower max_output_tokens.",
                param="input", code="context_length_exceeded",
            )
        return history[start:], total

    # --- generating -------------------------------------------------------------------
    def _response(self, turn: Turn, status: str, output: list[dict[str, Any]],
                  usage: Usage | None, **extra: Any) -> ResponseObject:
        body = turn.body
        return ResponseObject(
            id=turn.id, created_at=turn.created_at, status=status, background=body.background,
            completed_at=extra.get("completed_at"), error=extra.get("error"),
            incomplete_details=extra.get("incomplete_details"), instructions=turn.echo["instructions"],
            max_output_tokens=body.max_output_tokens, model=turn.backend.info.id, output=output,
            parallel_tool_calls=True if body.parallel_tool_calls is None else body.parallel_tool_calls,
            previous_response_id=body.previous_response_id, prompt=turn.echo["prompt"],
            reasoning=ReasoningEcho(effort=body.reasoning.effort if body.reasoning else None,
                                    summary=body.reasoning.summary if body.reasoning else None),
            store=body.store, temperature=turn.request.temperature, text=turn.echo["text"],
            tool_choice=turn.echo["tool_choice"], tools=turn.echo["tools"], top_logprobs=body.top_logprobs or 0,
            top_p=turn.request.top_p, truncation=body.truncation or "disabled", usage=usage, user=body.user,
            metadata=body.metadata or {},
            conversation=ConversationRef(id=turn.conversation_id) if turn.conversation_id else None,
        )

    def initial(self, turn: Turn) -> ResponseObject:
        """The response as created: ``queued`` in background mode, else ``in_progress``."""
        return self._response(turn, "queued" if turn.body.background else "in_progress", [], None)

    def cancelled(self, turn: Turn) -> ResponseObject:
        """The response after a cancel: the output produced so far, status ``cancelled``."""
        return self._response(turn, "cancelled", turn.output, None)

    async def events(self, turn: Turn) -> AsyncIterator[ResponseEvent]:
        """Run the backend and yield the streaming events, the terminal one last.

        When ``turn.cancelled`` becomes true the backend is closed, the open item
        ends ``incomplete`` and no terminal event follows (see :meth:`cancelled`).
        """
        point = turn.resume
        seq = itertools.count(point.next_sequence if point is not None else 0)
        started = self.initial(turn)
        sent = point.opened if point is not None else set()
        if "response.created" not in sent:
            yield ResponseCreated(sequence_number=next(seq), response=started)
        if turn.body.background and "response.queued" not in sent:
            yield ResponseQueued(sequence_number=next(seq), response=started)
        if "response.in_progress" not in sent:
            yield ResponseInProgress(sequence_number=next(seq),
                                     response=msgspec.structs.replace(started, status="in_progress"))
        output = turn.output
        item: dict[str, Any] | None = None
        chunks: list[str] = []
        logprobs: list[dict[str, Any]] = []  # of the open message's text
        if point is not None:  # continue the stored output: same items, same open message
            output[:] = point.output
            item, chunks, logprobs = point.open, [point.text], list(point.logprobs)
            if item is not None and not point.part_added:
                yield ContentPartAdded(sequence_number=next(seq), item_id=item["id"], output_index=len(output) - 1,
                                       content_index=0, part=_empty_text_part())
        finish = Finish("stop", 0)

        def close(status: str) -> list[ResponseEvent]:
            assert item is not None
            index, text, item_id = len(output) - 1, "".join(chunks), item["id"]
            item["status"] = status
            if item["type"] == "reasoning":
                item["content"] = [{"type": "reasoning_text", "text": text}]
                if ENCRYPTED_REASONING in (turn.body.include or ()):
                    item["encrypted_content"] = self.sealer.seal({"content": item["content"]})
                return [
                    ReasoningTextDone(sequence_number=next(seq), item_id=item_id, output_index=index,
                                      content_index=0, text=text),
                    OutputItemDone(sequence_number=next(seq), output_index=index, item=item),
                ]
            if item["type"] == "message":
                part = {"type": "output_text", "text": text, "annotations": [], "logprobs": list(logprobs)}
                item["content"] = [part]
                return [
                    OutputTextDone(sequence_number=next(seq), item_id=item_id, output_index=index,
                                   content_index=0, text=text, logprobs=list(logprobs)),
                    ContentPartDone(sequence_number=next(seq), item_id=item_id, output_index=index,
                                    content_index=0, part=part),
                    OutputItemDone(sequence_number=next(seq), output_index=index, item=item),
                ]
            item["arguments"] = text
            return [
                FunctionCallArgumentsDone(sequence_number=next(seq), item_id=item_id, output_index=index,
                                          name=item["name"], arguments=text),
                OutputItemDone(sequence_number=next(seq), output_index=index, item=item),
            ]

        deltas = turn.backend.generate(turn.request)
        try:
            async for delta in deltas:
                if turn.cancelled:
                    break
                if isinstance(delta, Finish):
                    finish = delta
                    break
                opens_message = isinstance(delta, TextDelta) and (item is None or item["type"] != "message")
                opens_reasoning = isinstance(delta, ReasoningDelta) and (item is None or item["type"] != "reasoning")
                if opens_message or opens_reasoning or isinstance(delta, FunctionCallStart):
                    for done in close("completed") if item is not None else ():
                        yield done
                    chunks, logprobs = [], []
                    if isinstance(delta, FunctionCallStart):
                        item = {"id": new_id("fc_"), "type": "function_call", "status": "in_progress",
                                "call_id": new_id("call_"), "name": delta.name, "arguments": ""}
                    elif opens_reasoning:
                        item = {"id": new_id("rs_"), "type": "reasoning", "summary": [], "content": [],
                                "encrypted_content": None, "status": "in_progress"}
                    else:
                        item = {"id": new_id("msg_"), "type": "message", "role": "assistant",
                                "status": "in_progress", "content": []}
                    output.append(item)
                    yield OutputItemAdded(sequence_number=next(seq), output_index=len(output) - 1, item=dict(item))
                    if item["type"] == "message":
                        yield ContentPartAdded(sequence_number=next(seq), item_id=item["id"],
                                               output_index=len(output) - 1, content_index=0,
                                               part=_empty_text_part())
                if isinstance(delta, TextDelta) and item is not None:
                    chunks.append(delta.text)
                    fresh = [logprob_object(lp) for lp in delta.logprobs]
                    logprobs += fresh
                    yield OutputTextDelta(sequence_number=next(seq), item_id=item["id"], output_index=len(output) - 1,
                                          content_index=0, delta=delta.text, logprobs=fresh)
                elif isinstance(delta, ReasoningDelta) and item is not None:
                    chunks.append(delta.text)
                    yield ReasoningTextDelta(sequence_number=next(seq), item_id=item["id"],
                                             output_index=len(output) - 1, content_index=0, delta=delta.text)
                elif isinstance(delta, ArgumentsDelta) and item is not None:
                    chunks.append(delta.text)
                    yield FunctionCallArgumentsDelta(sequence_number=next(seq), item_id=item["id"],
                                                     output_index=len(output) - 1, delta=delta.text)
        except Exception as exc:
            log.exception("backend %s failed", turn.backend.info.id, exc_info=exc)
            message, code = "The model failed while generating the response.", "server_error"
            if isinstance(exc, BackendError):
                message, code, turn.failure_status = str(exc), exc.code, exc.status
            yield ErrorEvent(sequence_number=next(seq), code=code, message=message, param=None)
            error = ResponseError(code=code, message=message)
            yield ResponseFailed(sequence_number=next(seq),
                                 response=self._response(turn, "failed", output, None, error=error))
            return
        finally:
            closer = getattr(deltas, "aclose", None)  # stops the backend's generation
            if closer is not None:
                await closer()
        if turn.cancelled:
            if turn.handback:  # the next instance continues the open item: nothing is closed
                return
            for done in close("incomplete") if item is not None else ():
                yield done
            return
        if point is not None and turn.request.continuation:  # the backend counted the earlier text as input
            earlier = turn.backend.count_tokens(turn.request.continuation)
            finish = Finish(finish.reason, finish.output_tokens + earlier, reasoning_tokens=finish.reasoning_tokens,
                            input_tokens=None if finish.input_tokens is None else max(finish.input_tokens - earlier, 0),
                            cached_tokens=finish.cached_tokens)
        usage = _usage(turn.input_tokens, finish)
        if finish.reason == "length":
            for done in close("incomplete") if item is not None else ():
                yield done
            yield ResponseIncomplete(sequence_number=next(seq), response=self._response(
                turn, "incomplete", output, usage, incomplete_details=IncompleteDetails(reason="max_output_tokens")))
            return
        for done in close("completed") if item is not None else ():
            yield done
        yield ResponseCompleted(sequence_number=next(seq), response=self._response(
            turn, "completed", output, usage, completed_at=int(time.time())))

    def conversation_entries(self, turn: Turn, output: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The context entries this turn adds to its conversation: its input, then its output."""
        return [*turn.entries, *_output_entries(output)]

    # --- reading ----------------------------------------------------------------------
    async def get(self, response_id: str, project: str, include: frozenset[str] = frozenset()) -> ResponseObject:
        """A stored response of ``project``; 404 if unknown, deleted or another project's.

        Its output is as created (with the create request's ``include``); ``include`` on the read
        can add ``reasoning.encrypted_content`` (log-probabilities cannot be computed afterwards).
        """
        stored = await self.store.get_response(response_id, project)
        if stored is None:
            raise not_found(f"Response with id {response_id!r} not found.", param="response_id")
        body = stored_response(stored)
        if ENCRYPTED_REASONING in include and body.output:
            body.output = [shape_item(o, include | {LOGPROBS}, self.sealer) for o in body.output]
        return body

    async def delete(self, response_id: str, project: str) -> Deleted:
        """Delete a stored response with its text and events; 404 if unknown."""
        if not await self.store.delete_response(response_id, project):
            raise not_found(f"Response with id {response_id!r} not found.", param="response_id")
        return Deleted(id=response_id, object="response.deleted")

    async def input_items(self, response_id: str, project: str, page: Page,
                          include: frozenset[str] = frozenset()) -> ListPage:
        """One page of a response's input items (``order`` ``desc`` puts the latest first), shaped by ``include``."""
        stored = await self.store.get_response(response_id, project)
        if stored is None:
            raise not_found(f"Response with id {response_id!r} not found.", param="response_id")
        items, more = paginate(stored.input_items, page, lambda i: str(i["id"]), "an item of this response")
        return page_body([shape_item(i, include, self.sealer) for i in items], has_more=more)


def stored_response(stored: StoredResponse) -> ResponseObject:
    """A stored response's row as the response object, with the row's status (a cancel sets only that)."""
    body = msgspec.convert(stored.body, ResponseObject)
    body.status = stored.status
    return body
