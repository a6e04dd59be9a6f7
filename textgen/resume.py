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
from typing import Any

__all__ = ["CannotResume", "ResumePoint", "resume_point"]

_OPENING = ("response.created", "response.queued", "response.in_progress")


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
    output: list[dict[str, Any]] = field(default_factory=list)
    open: dict[str, Any] | None = None
    part_added: bool = False
    text: str = ""
    logprobs: list[dict[str, Any]] = field(default_factory=list)


def resume_point(events: Sequence[dict[str, Any]]) -> ResumePoint:
    """Replay stored events (in sequence order) into a :class:`ResumePoint`.

    Raises:
        CannotResume: The open item is a function call or reasoning (its text would have to be
            continued under a grammar or a reasoning section), or the response already ended.
    """
    point = ResumePoint()
    for event in events:
        kind = event["type"]
        point.next_sequence = int(event["sequence_number"]) + 1
        if kind in _OPENING:
            point.opened.add(kind)
        elif kind == "response.output_item.added":
            point.open = dict(event["item"])
            point.output.append(point.open)
            point.part_added, point.text, point.logprobs = False, "", []
        elif kind == "response.content_part.added":
            point.part_added = True
        elif kind in ("response.output_text.delta", "response.function_call_arguments.delta",
                      "response.reasoning_text.delta"):
            point.text += event["delta"]
            point.logprobs += event.get("logprobs") or []
        elif kind == "response.output_item.done":
            point.output[event["output_index"]] = dict(event["item"])
            point.open, point.part_added, point.text, point.logprobs = None, False, "", []
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            raise CannotResume("the response already ended")
    if point.open is not None and point.open["type"] != "message":
        raise CannotResume(f"generation stopped inside a {point.open['type']} item, which cannot be continued")
    return point
