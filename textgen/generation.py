"""Generation: a prepared :class:`~textgen.turns.Turn` run through its backend as the stream events.

:func:`response_events` yields the streaming events of one response, the terminal one last; the
non-streaming path consumes the very same events, so both agree exactly. Output items are the
Structs of :mod:`textgen.stored_items`; an item is changed in place while it is open, so every event
that shows it carries a copy.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import msgspec

from textgen.backends.base import (
    ArgumentsDelta,
    BackendError,
    Finish,
    FunctionCallStart,
    ReasoningDelta,
    TextDelta,
    TokenLogprob,
)
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
from textgen.includes import ENCRYPTED_REASONING
from textgen.sealing import Sealer
from textgen.store import new_id
from textgen.stored_items import (
    FunctionCallItem,
    Item,
    ItemStatus,
    Logprob,
    MessageItem,
    OutputTextPart,
    ReasoningItem,
    ReasoningTextPart,
    TopLogprob,
)
from textgen.turns import Turn

__all__ = [
    "cancelled_response",
    "initial_response",
    "logprob_object",
    "response_events",
    "response_object",
]

log = logging.getLogger("textgen")


def logprob_object(value: TokenLogprob) -> Logprob:
    """OpenAI's logprob object (``bytes`` are the token's UTF-8 bytes)."""
    return Logprob(
        token=value.token,
        logprob=value.logprob,
        bytes=list(value.token.encode()),
        top_logprobs=[
            TopLogprob(token=t, logprob=lp, bytes=list(t.encode())) for t, lp in value.top
        ],
    )


def _usage(input_tokens: int, finish: Finish) -> Usage:
    if finish.input_tokens is not None:
        input_tokens = finish.input_tokens
    return Usage(
        input_tokens=input_tokens,
        input_tokens_details=InputTokensDetails(cached_tokens=finish.cached_tokens),
        output_tokens=finish.output_tokens,
        output_tokens_details=OutputTokensDetails(reasoning_tokens=finish.reasoning_tokens),
        total_tokens=input_tokens + finish.output_tokens,
    )


def _empty_text_part() -> OutputTextPart:
    return OutputTextPart(text="", annotations=[], logprobs=[])


def response_object(
    turn: Turn, status: str, output: list[Item], usage: Usage | None, **extra: Any
) -> ResponseObject:
    """The response object of ``turn`` with this status, output and usage (``extra``: ``completed_at``,
    ``error``, ``incomplete_details``)."""
    body = turn.body
    return ResponseObject(
        id=turn.id,
        created_at=turn.created_at,
        status=status,
        background=body.background,
        completed_at=extra.get("completed_at"),
        error=extra.get("error"),
        incomplete_details=extra.get("incomplete_details"),
        instructions=turn.echo.instructions,
        max_output_tokens=body.max_output_tokens,
        model=turn.backend.info.id,
        output=output,
        parallel_tool_calls=True if body.parallel_tool_calls is None else body.parallel_tool_calls,
        previous_response_id=body.previous_response_id,
        prompt=turn.echo.prompt,
        reasoning=ReasoningEcho(
            effort=body.reasoning.effort if body.reasoning else None,
            summary=body.reasoning.summary if body.reasoning else None,
        ),
        store=body.store,
        temperature=turn.request.temperature,
        text=turn.echo.text,
        tool_choice=turn.echo.tool_choice,
        tools=turn.echo.tools,
        top_logprobs=body.top_logprobs or 0,
        top_p=turn.request.top_p,
        truncation=body.truncation or "disabled",
        usage=usage,
        user=body.user,
        metadata=body.metadata or {},
        conversation=ConversationRef(id=turn.conversation_id) if turn.conversation_id else None,
    )


def initial_response(turn: Turn) -> ResponseObject:
    """The response as created: ``queued`` in background mode, else ``in_progress``."""
    return response_object(turn, "queued" if turn.body.background else "in_progress", [], None)


def cancelled_response(turn: Turn) -> ResponseObject:
    """The response after a cancel: the output produced so far, status ``cancelled``."""
    return response_object(turn, "cancelled", turn.output, None)


def _opened(delta: FunctionCallStart | TextDelta | ReasoningDelta) -> Item:
    """The item a delta opens, ``in_progress``."""
    if isinstance(delta, FunctionCallStart):
        return FunctionCallItem(
            id=new_id("fc_"),
            status="in_progress",
            call_id=new_id("call_"),
            name=delta.name,
            arguments="",
        )
    if isinstance(delta, ReasoningDelta):
        return ReasoningItem(
            id=new_id("rs_"), summary=[], content=[], encrypted_content=None, status="in_progress"
        )
    return MessageItem(id=new_id("msg_"), role="assistant", status="in_progress", content=[])


async def response_events(turn: Turn, sealer: Sealer) -> AsyncIterator[ResponseEvent]:
    """Run the backend and yield the streaming events, the terminal one last.

    When ``turn.cancelled`` becomes true the backend is closed, the open item
    ends ``incomplete`` and no terminal event follows (see :func:`cancelled_response`).
    A resumed turn (``turn.resume``) continues its stored events: same items, same open message.
    """
    point = turn.resume
    seq = itertools.count(point.next_sequence if point is not None else 0)
    started = initial_response(turn)
    sent = point.opened if point is not None else set()
    if "response.created" not in sent:
        yield ResponseCreated(sequence_number=next(seq), response=started)
    if turn.body.background and "response.queued" not in sent:
        yield ResponseQueued(sequence_number=next(seq), response=started)
    if "response.in_progress" not in sent:
        yield ResponseInProgress(
            sequence_number=next(seq),
            response=msgspec.structs.replace(started, status="in_progress"),
        )
    output = turn.output
    item: Item | None = None
    chunks: list[str] = []
    logprobs: list[Logprob] = []  # of the open message's text
    if point is not None:
        output[:] = point.output
        item, chunks, logprobs = point.open, [point.text], list(point.logprobs)
        if item is not None and not point.part_added:
            yield ContentPartAdded(
                sequence_number=next(seq),
                item_id=item.id,
                output_index=len(output) - 1,
                content_index=0,
                part=_empty_text_part(),
            )
    finish = Finish("stop", 0)

    def close(status: ItemStatus) -> list[ResponseEvent]:
        assert item is not None
        index, text, item_id = len(output) - 1, "".join(chunks), item.id
        item.status = status
        if isinstance(item, ReasoningItem):
            item.content = [ReasoningTextPart(text=text)]
            if ENCRYPTED_REASONING in (turn.body.include or ()):
                item.encrypted_content = sealer.seal({"content": item.content})
            return [
                ReasoningTextDone(
                    sequence_number=next(seq),
                    item_id=item_id,
                    output_index=index,
                    content_index=0,
                    text=text,
                ),
                OutputItemDone(sequence_number=next(seq), output_index=index, item=item),
            ]
        if isinstance(item, MessageItem):
            part = OutputTextPart(text=text, annotations=[], logprobs=list(logprobs))
            item.content = [part]
            return [
                OutputTextDone(
                    sequence_number=next(seq),
                    item_id=item_id,
                    output_index=index,
                    content_index=0,
                    text=text,
                    logprobs=list(logprobs),
                ),
                ContentPartDone(
                    sequence_number=next(seq),
                    item_id=item_id,
                    output_index=index,
                    content_index=0,
                    part=part,
                ),
                OutputItemDone(sequence_number=next(seq), output_index=index, item=item),
            ]
        assert isinstance(item, FunctionCallItem)
        item.arguments = text
        return [
            FunctionCallArgumentsDone(
                sequence_number=next(seq),
                item_id=item_id,
                output_index=index,
                name=item.name,
                arguments=text,
            ),
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
            opens_message = isinstance(delta, TextDelta) and not isinstance(item, MessageItem)
            opens_reasoning = isinstance(delta, ReasoningDelta) and not isinstance(
                item, ReasoningItem
            )
            if opens_message or opens_reasoning or isinstance(delta, FunctionCallStart):
                assert isinstance(delta, (TextDelta, ReasoningDelta, FunctionCallStart))
                for done in close("completed") if item is not None else ():
                    yield done
                chunks, logprobs = [], []
                item = _opened(delta)
                output.append(item)
                yield OutputItemAdded(
                    sequence_number=next(seq),
                    output_index=len(output) - 1,
                    item=msgspec.structs.replace(item),
                )
                if isinstance(item, MessageItem):
                    yield ContentPartAdded(
                        sequence_number=next(seq),
                        item_id=item.id,
                        output_index=len(output) - 1,
                        content_index=0,
                        part=_empty_text_part(),
                    )
            if isinstance(delta, TextDelta) and item is not None:
                chunks.append(delta.text)
                fresh = [logprob_object(lp) for lp in delta.logprobs]
                logprobs += fresh
                yield OutputTextDelta(
                    sequence_number=next(seq),
                    item_id=item.id,
                    output_index=len(output) - 1,
                    content_index=0,
                    delta=delta.text,
                    logprobs=fresh,
                )
            elif isinstance(delta, ReasoningDelta) and item is not None:
                chunks.append(delta.text)
                yield ReasoningTextDelta(
                    sequence_number=next(seq),
                    item_id=item.id,
                    output_index=len(output) - 1,
                    content_index=0,
                    delta=delta.text,
                )
            elif isinstance(delta, ArgumentsDelta) and item is not None:
                chunks.append(delta.text)
                yield FunctionCallArgumentsDelta(
                    sequence_number=next(seq),
                    item_id=item.id,
                    output_index=len(output) - 1,
                    delta=delta.text,
                )
    except Exception as exc:
        log.exception("backend %s failed", turn.backend.info.id, exc_info=exc)
        message, code = "The model failed while generating the response.", "server_error"
        if isinstance(exc, BackendError):
            message, code, turn.failure_status = str(exc), exc.code, exc.status
        yield ErrorEvent(sequence_number=next(seq), code=code, message=message, param=None)
        error = ResponseError(code=code, message=message)
        yield ResponseFailed(
            sequence_number=next(seq),
            response=response_object(turn, "failed", output, None, error=error),
        )
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
    if (
        point is not None and turn.request.continuation
    ):  # the backend counted the earlier text as input
        earlier = turn.backend.count_tokens(turn.request.continuation)
        finish = Finish(
            finish.reason,
            finish.output_tokens + earlier,
            reasoning_tokens=finish.reasoning_tokens,
            input_tokens=None
            if finish.input_tokens is None
            else max(finish.input_tokens - earlier, 0),
            cached_tokens=finish.cached_tokens,
        )
    usage = _usage(turn.input_tokens, finish)
    if finish.reason == "length":
        for done in close("incomplete") if item is not None else ():
            yield done
        yield ResponseIncomplete(
            sequence_number=next(seq),
            response=response_object(
                turn,
                "incomplete",
                output,
                usage,
                incomplete_details=IncompleteDetails(reason="max_output_tokens"),
            ),
        )
        return
    for done in close("completed") if item is not None else ():
        yield done
    yield ResponseCompleted(
        sequence_number=next(seq),
        response=response_object(turn, "completed", output, usage, completed_at=int(time.time())),
    )
