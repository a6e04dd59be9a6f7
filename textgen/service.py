"""The Responses service: what the controllers and the runner call.

A request becomes a :class:`~textgen.turns.Turn` (:mod:`textgen.turns`: every check, the context),
the turn runs as stream events (:mod:`textgen.generation`), and stored responses are read and
deleted here; :mod:`textgen.runs` owns the lifecycle in between.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import msgspec

from textgen.context import output_entries
from textgen.errors import not_found
from textgen.events import ResponseEvent, ResponseObject
from textgen.generation import cancelled_response, initial_response, response_events
from textgen.includes import ENCRYPTED_REASONING, LOGPROBS, shape_item
from textgen.pagination import Page, page_body, paginate
from textgen.schemas import Deleted, InputTokensCreate, InputTokensRead, ListPage, ResponseCreate
from textgen.store import StoredResponse
from textgen.stored_items import Item
from textgen.turns import Turn, TurnBuilder

__all__ = ["ResponseService", "stored_response"]


class ResponseService:
    """Creates, streams, reads and deletes responses."""

    def __init__(self, turns: TurnBuilder) -> None:
        self.turns = turns
        self.conversations = turns.conversations
        self.sealer = turns.sealer
        self.store = turns.store

    # --- creating ---------------------------------------------------------------------
    async def prepare(self, body: ResponseCreate, project: str, *, counting: bool = False) -> Turn:
        """Validate ``body`` and build its turn in ``project`` (:meth:`TurnBuilder.prepare`)."""
        return await self.turns.prepare(body, project, counting=counting)

    async def count_input_tokens(self, body: InputTokensCreate, project: str) -> InputTokensRead:
        """The input tokens a response with these fields would use."""
        return await self.turns.count_input_tokens(body, project)

    def initial(self, turn: Turn) -> ResponseObject:
        """The response as created: ``queued`` in background mode, else ``in_progress``."""
        return initial_response(turn)

    def cancelled(self, turn: Turn) -> ResponseObject:
        """The response after a cancel: the output produced so far, status ``cancelled``."""
        return cancelled_response(turn)

    def events(self, turn: Turn) -> AsyncIterator[ResponseEvent]:
        """Run the backend and yield the streaming events, the terminal one last."""
        return response_events(turn, self.sealer)

    def conversation_entries(self, turn: Turn, output: list[Item]) -> list[dict[str, Any]]:
        """The context entries this turn adds to its conversation: its input, then its output."""
        return [*turn.entries, *output_entries(output)]

    # --- reading ----------------------------------------------------------------------
    async def get(
        self, response_id: str, project: str, include: frozenset[str] = frozenset()
    ) -> ResponseObject:
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

    async def input_items(
        self, response_id: str, project: str, page: Page, include: frozenset[str] = frozenset()
    ) -> ListPage:
        """One page of a response's input items (``order`` ``desc`` puts the latest first), shaped by ``include``."""
        stored = await self.store.get_response(response_id, project)
        if stored is None:
            raise not_found(f"Response with id {response_id!r} not found.", param="response_id")
        items, more = paginate(stored.input_items, page, lambda i: i.id, "an item of this response")
        return page_body([shape_item(i, include, self.sealer) for i in items], has_more=more)


def stored_response(stored: StoredResponse) -> ResponseObject:
    """A stored response's row as the response object, with the row's status (a cancel sets only that)."""
    return msgspec.structs.replace(stored.body, status=stored.status)
