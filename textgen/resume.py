"""Where a response stopped, read back from its stored events, so that generation can continue it.

A background response's events reach the store in small batches; after a crash or a hand-back
they are the truth about what clients could have seen. :func:`resume_point` replays them: the
next sequence number, which of the opening events were sent, the finished output items and the
item left open with its text so far. Generation then continues from there, so the stored items
and the event stream stay append-only (a client resuming with ``starting_after`` sees no gap).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import msgspec

from textgen.events import (
    TERMINAL_EVENTS,
    ContentPartAdded,
    FunctionCallArgumentsDelta,
    OutputItemAdded,
    OutputItemDone,
    OutputTextDelta,
    ReasoningTextDelta,
    ResponseCreated,
    ResponseEvent,
    ResponseInProgress,
    ResponseQueued,
)
from textgen.stored_items import Item, Logprob, MessageItem

__all__ = ["CannotResume", "ResumePoint", "resume_point"]

class CannotResume(ValueError):
    """The stored output ends where generation cannot continue it (the message says why)."""


@dataclass(slots=True)
class ResumePoint:
    """The state of a response after its stored events.

    Attributes:
        next_sequence: The sequence number of the next event.
        opened: The opening events (``response.created``...) already sent.
        output: The output items so far; the last one is ``open`` when an item was left open.
        open: The item left open (a ``message``), or ``None``.
        part_added: Whether the open message's ``response.content_part.added`` was sent.
        text: The open message's text so far.
        logprobs: The log-probabilities of that text's tokens (when they were asked for).
    """

    next_sequence: int = 0
    opened: set[str] = field(default_factory=set)
    output: list[Item] = field(default_factory=list)
    open: MessageItem | None = None
    part_added: bool = False
    text: str = ""
    logprobs: list[Logprob] = field(default_factory=list)


def resume_point(events: Sequence[ResponseEvent]) -> ResumePoint:
    """Replay stored events (in sequence order) into a :class:`ResumePoint`.

    Raises:
        CannotResume: The open item is a function call or reasoning (its text would have to be
            continued under a grammar or a reasoning section), or the response already ended.
    """
    point = ResumePoint()
    open_item: Item | None = None
    for event in events:
        point.next_sequence = event.sequence_number + 1
        if isinstance(event, (ResponseCreated, ResponseQueued, ResponseInProgress)):
            point.opened.add(event.type)
        elif isinstance(event, OutputItemAdded):
            open_item = msgspec.structs.replace(event.item)
            point.output.append(open_item)
            point.part_added, point.text, point.logprobs = False, "", []
        elif isinstance(event, ContentPartAdded):
            point.part_added = True
        elif isinstance(event, OutputTextDelta):
            point.text += event.delta
            point.logprobs += event.logprobs
        elif isinstance(event, (FunctionCallArgumentsDelta, ReasoningTextDelta)):
            point.text += event.delta
        elif isinstance(event, OutputItemDone):
            point.output[event.output_index] = msgspec.structs.replace(event.item)
            open_item, point.part_added, point.text, point.logprobs = None, False, "", []
        elif isinstance(event, TERMINAL_EVENTS):
            raise CannotResume("the response already ended")
    if open_item is not None and not isinstance(open_item, MessageItem):
        raise CannotResume(f"generation stopped inside a {open_item.type} item, which cannot be continued")
    point.open = open_item
    return point
