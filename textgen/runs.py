"""The lifecycle of a response: created, run in a task of its own, settled, followed, cancelled.

A response's generation runs in an ``asyncio`` task owned by :class:`Runner`,
never by the request that started it:

- a stored response gets its row when it is created (``queued`` in background
  mode, else ``in_progress``) and is settled ``completed``, ``incomplete``,
  ``failed`` or ``cancelled`` before its terminal event is sent;
- a background response's streaming events are written to the store in small
  batches, so ``GET /v1/responses/{id}?stream=true&starting_after=N`` on any
  instance replays them and then follows the live ones (by polling the store);
- a cancel marks the row ``cancelled``; the generating instance (this one or
  another one on the same database) notices it at its next poll and stops;
- a foreground stream whose client disconnects keeps running to the end and is
  stored (``store: true``), so ``GET`` of its id gives the finished response;
  with ``store: false`` nobody could read it, so it is cancelled;
- every stored response being generated carries a **lease** (its instance, an
  expiry renewed while it runs). A response whose lease is free (handed back at
  shutdown, expired because its instance died, or from a release without
  leases) is claimed by exactly one instance (a compare-and-set on the row): a
  background one resumes from its stored events (the model continues the text
  already generated), any other, or one that cannot be continued, ends
  ``failed`` with an error object. None stays ``in_progress`` for good;
- at shutdown (``drain``) an instance stops claiming work at once, stops its
  background generations, flushes their events and releases their leases, so
  the next instance continues them; foreground generations end ``cancelled``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import AsyncIterator

import msgspec

from textgen.decoding import convert_body
from textgen.errors import APIError, bad_request, not_found
from textgen.events import (
    TERMINAL_EVENTS,
    ErrorEvent,
    ResponseCompleted,
    ResponseError,
    ResponseEvent,
    ResponseFailed,
    ResponseIncomplete,
    ResponseObject,
)
from textgen.resume import CannotResume, resume_point
from textgen.schemas import ResponseCreate
from textgen.service import ResponseService, Turn, stored_response
from textgen.store import Lease, LeaseLost, Orphan, Store, new_id

__all__ = ["Run", "Runner"]

log = logging.getLogger("textgen")

FINAL_STATUSES = frozenset({"completed", "incomplete", "failed", "cancelled"})
_FLUSH_SECONDS = 0.1  # events reach the store at most this late
_POLL_SECONDS = 0.1  # how often a follower or a running generation reads the store
_SETTLE_WAIT_SECONDS = 3.0  # a cancel waits this long for the generation to record its partial output


TerminalEvent = ResponseCompleted | ResponseIncomplete | ResponseFailed


class Run:
    """One generation in progress: its events so far and whether it has finished."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        self.events: list[ResponseEvent] = []
        self.finished = False
        self._changed = asyncio.Condition()
        self.task: asyncio.Task[None] | None = None
        self.lost = False  # another instance took the lease over

    async def publish(self, event: ResponseEvent | None) -> None:
        """Append an event (``None`` marks the end) and wake the followers."""
        async with self._changed:
            if event is None:
                self.finished = True
            else:
                self.events.append(event)
            self._changed.notify_all()

    async def follow(self) -> AsyncIterator[ResponseEvent]:
        """Every event from the first, then the live ones, until the run ends."""
        index = 0
        while True:
            async with self._changed:
                while index >= len(self.events) and not self.finished:
                    await self._changed.wait()
                fresh = self.events[index:]
                done = self.finished
            for event in fresh:
                yield event
            index += len(fresh)
            if done and index >= len(self.events):
                return

    @property
    def last(self) -> ResponseEvent:
        """The latest event."""
        return self.events[-1]


class Runner:
    """Starts generations as tasks and serves their events, on one store shared by instances."""

    def __init__(self, service: ResponseService, store: Store, lease_seconds: float = 10.0) -> None:
        self.service = service
        self.store = store
        self.runs: dict[str, Run] = {}
        self.owner = new_id("inst_")[:40]  # this instance, in the lease columns
        self.lease_seconds = lease_seconds
        self.draining = False
        self._recovery: asyncio.Task[None] | None = None

    def _owner(self, turn: Turn) -> str | None:
        return self.owner if turn.body.store else None

    def _lease(self) -> Lease:
        return Lease(self.owner, time.time() + self.lease_seconds)

    async def start(self, turn: Turn) -> Run:
        """Write the response's row (when stored) and start generating in a task of its own."""
        if self.draining:
            raise APIError(503, "The server is shutting down; retry on another instance.", code="server_shutting_down")
        if turn.body.store:
            job = {"body": msgspec.to_builtins(turn.body)} if turn.body.background else None
            await self.store.create_response(turn.project, self.service.initial(turn), turn.input_items,
                                             turn.body.previous_response_id, job=job, lease=self._lease())
        return self._launch(turn)

    def _launch(self, turn: Turn) -> Run:
        run = Run(turn)
        self.runs[turn.id] = run
        run.task = asyncio.create_task(self._drive(run), name=f"textgen-{turn.id}")
        return run

    async def _watch(self, run: Run) -> None:
        renewed = time.monotonic()
        while not run.finished:
            await asyncio.sleep(_POLL_SECONDS)
            if await self.store.response_status(run.turn.id) in ("cancelled", None):
                run.turn.cancelled = True  # cancelled or deleted, maybe from another instance
                return
            if time.monotonic() - renewed >= self.lease_seconds / 3:
                if not await self.store.renew_lease(run.turn.id, self._lease()) and not run.finished:
                    log.warning("response %s: lease lost; another instance continues it", run.turn.id)
                    run.turn.cancelled = run.turn.handback = True  # stop writing: it is not ours any more
                    run.lost = True
                    return
                renewed = time.monotonic()

    async def _drive(self, run: Run) -> None:
        turn, stored = run.turn, run.turn.body.store
        pending: list[ResponseEvent] = []
        flushed = time.monotonic()
        watcher = asyncio.create_task(self._watch(run)) if stored else None

        async def flush() -> None:
            nonlocal flushed
            if stored and turn.body.background and pending:  # only background streams can be replayed
                batch = pending[:]
                pending.clear()
                await self.store.add_events(turn.id, batch, self._owner(turn))
            flushed = time.monotonic()

        try:
            if stored and turn.body.background:
                started = msgspec.structs.replace(self.service.initial(turn), status="in_progress")
                await self.store.settle_response(started, only_from=("queued",), owner=self.owner)
            async for event in self.service.events(turn):
                if isinstance(event, TERMINAL_EVENTS) and (stored or turn.conversation_id):
                    event = await self._settle(run, event, pending)
                pending.append(event)
                await run.publish(event)
                if isinstance(event, ErrorEvent):
                    continue
                if time.monotonic() - flushed >= _FLUSH_SECONDS or isinstance(event, TERMINAL_EVENTS):
                    await flush()
            if turn.handback and stored:  # shutdown or a lost lease: leave the rest to the next instance
                if not run.lost:
                    await flush()
                    await self.store.release_lease(turn.id, self.owner)
            elif turn.cancelled and stored:
                await flush()
                await self.store.settle_response(self.service.cancelled(turn),
                                                 only_from=("queued", "in_progress", "cancelled"), owner=self.owner)
        except LeaseLost:  # taken over after this instance failed to renew in time: the other one goes on
            log.warning("response %s: lease lost; another instance continues it", turn.id)
            turn.cancelled = turn.handback = run.lost = True
        except Exception as exc:  # the store failed: the run must still end for its followers
            log.exception("response %s could not be recorded", turn.id, exc_info=exc)
        finally:
            if watcher is not None:
                watcher.cancel()
            await run.publish(None)
            self.runs.pop(turn.id, None)

    async def _settle(self, run: Run, event: TerminalEvent, pending: list[ResponseEvent]) -> ResponseEvent:
        """Store the final response before its event goes out; a store failure fails the response."""
        turn, final = run.turn, event.response
        entries = self.service.conversation_entries(turn, final.output) if final.status != "failed" else []
        try:
            if turn.conversation_id and final.status != "failed":
                await self.service.conversations.append(turn.conversation_id, turn.project,
                                                        [*turn.input_items, *final.output])
            if turn.body.store:
                if turn.body.background:
                    await self.store.add_events(turn.id, pending, self.owner)
                pending.clear()
                await self.store.settle_response(final, entries, owner=self.owner)
            return event
        except LeaseLost:
            raise
        except Exception as exc:
            log.exception("storing response %s failed", turn.id, exc_info=exc)
            message = "The response could not be stored."
            await run.publish(ErrorEvent(sequence_number=event.sequence_number, code="server_error",
                                         message=message, param=None))
            failed = msgspec.structs.replace(final, status="failed", usage=None, completed_at=None,
                                             incomplete_details=None,
                                             error=ResponseError(code="server_error", message=message))
            return ResponseFailed(sequence_number=event.sequence_number + 1, response=failed)

    async def create(self, turn: Turn) -> ResponseObject:
        """Run a foreground turn to its end and return the response (the backend's status if it failed)."""
        run = await self.start(turn)
        async for _ in run.follow():
            pass
        last = run.last
        if not isinstance(last, TERMINAL_EVENTS):  # a run ends with its terminal event unless cancelled
            raise APIError(500, "The response ended without a result.", code="server_error")
        if isinstance(last, ResponseFailed):
            error = last.response.error
            raise APIError(turn.failure_status, error.message if error else "The response failed.",
                           code=error.code if error else "server_error")
        return last.response

    async def stream(self, run: Run) -> AsyncIterator[ResponseEvent]:
        """The events of a run for its own client; an unstored run is cancelled if the client leaves."""
        try:
            async for event in run.follow():
                yield event
        finally:
            if not run.finished and not run.turn.body.store:
                run.turn.cancelled = True

    async def replay(self, response_id: str, project: str, after: int) -> AsyncIterator[ResponseEvent]:
        """Stored events after sequence number ``after``, then the live ones until the response ends.

        Raises:
            APIError: 404 for an unknown response (checked before the first event).
        """
        stored = await self.store.get_response(response_id, project)
        if stored is None:
            raise not_found(f"Response with id {response_id!r} not found.", param="response_id")
        if not stored.body.background:
            raise bad_request("Only responses created with 'background': true can be streamed again.",
                              param="stream", code="invalid_value")
        return self._replay(response_id, after)

    async def _replay(self, response_id: str, after: int) -> AsyncIterator[ResponseEvent]:
        while True:
            status = await self.store.response_status(response_id)
            events = await self.store.events_after(response_id, after)
            for event in events:
                yield event
                after = event.sequence_number
                if isinstance(event, TERMINAL_EVENTS):
                    return
            if status is None or (status in FINAL_STATUSES and not events):
                return
            await asyncio.sleep(_POLL_SECONDS)

    async def cancel(self, response_id: str, project: str) -> ResponseObject:
        """Cancel a background response; a finished one is returned as it is (cancelling is idempotent)."""
        stored = await self.store.get_response(response_id, project)
        if stored is None:
            raise not_found(f"Response with id {response_id!r} not found.", param="response_id")
        if not stored.body.background:
            raise bad_request("Only responses created with 'background': true can be cancelled.",
                              param="response_id", code="invalid_value")
        stored = await self.store.cancel_response(response_id, project) or stored
        run = self.runs.get(response_id)
        if run is not None and stored.status == "cancelled":
            run.turn.cancelled = True
        deadline = time.monotonic() + _SETTLE_WAIT_SECONDS
        while stored.body.status not in FINAL_STATUSES and time.monotonic() < deadline:
            await asyncio.sleep(_POLL_SECONDS)  # the generating instance writes the output so far
            stored = await self.store.get_response(response_id, project) or stored
        return stored_response(stored)

    def drain(self) -> None:
        """Stop taking work (called from the SIGTERM handler): no new generation starts, no orphan is
        claimed, and every background generation stops and is handed back (its lease released by
        :meth:`_drive`); foreground ones end ``cancelled``."""
        self.draining = True
        if self._recovery is not None:
            self._recovery.cancel()
        for run in list(self.runs.values()):
            run.turn.cancelled = True
            run.turn.handback = run.turn.body.background and run.turn.body.store

    async def close(self) -> None:
        """At shutdown: :meth:`drain`, then wait (at most 5 s) for the runs to record where they stopped."""
        self.drain()
        tasks = [run.task for run in self.runs.values() if run.task is not None]
        if self._recovery is not None:
            tasks.append(self._recovery)
        if tasks:
            await asyncio.wait(tasks, timeout=5)

    # --- durable work -----------------------------------------------------------------
    def start_recovery(self) -> None:
        """Start claiming orphaned responses (at startup), every ``lease_seconds / 4`` seconds."""
        self._recovery = asyncio.create_task(self._recover(), name="textgen-recovery")

    async def _recover(self) -> None:
        while not self.draining:
            try:
                orphan = await self.store.claim_orphan(self._lease(), time.time())
                if orphan is not None:
                    await self._adopt(orphan)
                    continue  # maybe more
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the store is down: try again later
                log.exception("claiming orphaned responses failed", exc_info=exc)
            await asyncio.sleep(min(self.lease_seconds / 4, 2.0))

    async def _adopt(self, orphan: Orphan) -> None:
        """Resume a claimed response, or settle it ``failed`` when it cannot be resumed."""
        if orphan.job is None:
            await self._fail(orphan, "The server generating this response stopped before it finished; only "
                                     "responses created with 'background': true are resumed.")
            return
        try:
            body = convert_body(orphan.job["body"], ResponseCreate)
            turn = await self.service.prepare(body, orphan.project)
            events = await self.store.events_after(orphan.id, -1)
            point = resume_point(events)
            if point.text and not turn.backend.info.continues:
                raise CannotResume(f"the model {turn.backend.info.id!r} cannot continue a partial answer")
            if point.text and (turn.request.constraint is not None or turn.request.tool_choice not in ("auto", "none")):
                raise CannotResume("a structured or required answer cannot be continued")
        except (APIError, CannotResume, msgspec.ValidationError) as exc:
            await self._fail(orphan, f"The response could not be resumed after a restart: {exc}")
            return
        stored = await self.store.get_response(orphan.id, orphan.project)
        turn.id, turn.created_at, turn.resume = orphan.id, orphan.body.created_at, point
        if stored is not None:
            turn.input_items = stored.input_items
        if point.text:
            earlier = turn.backend.count_tokens(point.text)
            budget = max(turn.request.max_output_tokens - earlier, 1)
            turn.request = dataclasses.replace(turn.request, continuation=point.text, max_output_tokens=budget)
        log.info("resuming response %s after %d stored events", orphan.id, point.next_sequence)
        self._launch(turn)

    async def _fail(self, orphan: Orphan, message: str) -> None:
        failed = msgspec.structs.replace(orphan.body, status="failed",
                                         error=ResponseError(code="server_error", message=message), usage=None,
                                         completed_at=None)
        if orphan.job is not None:
            events = await self.store.events_after(orphan.id, -1)
            following = events[-1].sequence_number + 1 if events else 0
            with contextlib.suppress(Exception):  # a follower then ends; the row is what matters
                await self.store.add_events(orphan.id, [ResponseFailed(sequence_number=following, response=failed)],
                                            self.owner)
        await self.store.settle_response(failed, [], owner=self.owner)
        log.warning("response %s failed: %s", orphan.id, message)
