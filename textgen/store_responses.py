"""Stored responses: their rows, their input and output items, and their streaming events.

A response row holds its wire object, this turn's context entries and a link to its
``previous_response_id``; its items live in ``textgen_items`` (so an ``item_reference`` can name any
of them) and a background response's events in ``textgen_response_events``. Reached through
:class:`textgen.store.Store`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from textgen.events import ResponseEvent, ResponseObject
from textgen.store_leases import UNSETTLED, Lease, fence
from textgen.store_tables import dumps, items, load_response, loads, response_events, responses
from textgen.stored_items import Item, load_item, load_items

__all__ = ["ResponseQueries", "StoredResponse"]

_EVENT: msgspec.json.Decoder[ResponseEvent] = msgspec.json.Decoder(ResponseEvent)


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """A stored response: the wire object, this turn's input items and context entries."""

    body: ResponseObject
    input_items: list[Item]
    entries: list[dict[str, Any]]
    status: str
    previous_id: str | None


_OUTPUT_POSITION = 1_000_000  # output items sort after every input item of their response


async def _add_items(
    conn: Any,
    response_id: str,
    project: str,
    values: Sequence[Item],
    start: int,
    *,
    is_output: bool,
) -> None:
    rows = [
        {
            "response_id": response_id,
            "position": start + i,
            "item_id": item.id,
            "project": project,
            "is_output": is_output,
            "item": dumps(item),
        }
        for i, item in enumerate(values)
    ]
    if rows:
        await conn.execute(items.insert(), rows)


class ResponseQueries:
    """The response, item and event queries of :class:`textgen.store.Store`."""

    engine: AsyncEngine

    async def create_response(
        self,
        project: str,
        body: ResponseObject,
        input_items: Sequence[Item],
        previous_id: str | None,
        *,
        job: dict[str, Any] | None = None,
        lease: Lease | None = None,
    ) -> None:
        """Insert a response when it is created (status ``queued`` or ``in_progress``) and its input items.

        ``job`` is what resuming it needs (background responses); ``lease`` names the generating instance.
        """
        async with self.engine.begin() as conn:
            await conn.execute(
                responses.insert().values(
                    id=body.id,
                    project=project,
                    created_at=body.created_at,
                    body=dumps(body),
                    status=body.status,
                    previous_id=previous_id,
                    entries="[]",
                    input_items="[]",
                    job=None if job is None else dumps(job),
                    lease_owner=None if lease is None else lease.owner,
                    lease_expires=None if lease is None else lease.expires,
                )
            )
            await _add_items(conn, body.id, project, input_items, 0, is_output=False)

    async def settle_response(
        self,
        body: ResponseObject,
        entries: Sequence[dict[str, Any]] | None = None,
        *,
        only_from: Sequence[str] = ("queued", "in_progress"),
        owner: str | None = None,
    ) -> bool:
        """Move a response to ``body.status`` unless it already left ``only_from`` (or, with ``owner``,
        unless another instance holds its lease).

        Returns:
            Whether the row changed (``False`` if, e.g., it was cancelled meanwhile).
        """
        values: dict[str, Any] = {"body": dumps(body), "status": body.status}
        if entries is not None:
            values["entries"] = dumps(list(entries))
        async with self.engine.begin() as conn:
            fenced = [responses.c.lease_owner == owner] if owner is not None else []
            result = await conn.execute(
                responses.update()
                .where(
                    responses.c.id == body.id, responses.c.status.in_(list(only_from)), *fenced
                )
                .values(**values)
                .returning(responses.c.project)
            )
            project = result.scalar()
            if project is not None and body.output and body.status != "in_progress":
                await _add_items(
                    conn, body.id, project, body.output, _OUTPUT_POSITION, is_output=True
                )
        return project is not None

    async def get_response(self, response_id: str, project: str) -> StoredResponse | None:
        """A stored response of ``project``, or ``None``."""
        query = sa.select(responses).where(
            responses.c.id == response_id, responses.c.project == project
        )
        inputs = (
            sa.select(items.c.item)
            .where(items.c.response_id == response_id, items.c.is_output.is_(False))
            .order_by(items.c.position)
        )
        async with self.engine.connect() as conn:
            row = (await conn.execute(query)).first()
            if row is None:
                return None
            # rows of an older release kept their input items in the response row itself
            input_items = [load_item(loads(r.item)) for r in (await conn.execute(inputs)).all()]
            input_items = input_items or load_items(loads(row.input_items))
        return StoredResponse(
            load_response(row), input_items, loads(row.entries), row.status, row.previous_id
        )

    async def find_item(self, item_id: str, project: str) -> Item | None:
        """The latest stored input or output item of ``project`` with this id (for ``item_reference``)."""
        query = (
            sa.select(items.c.item)
            .join(responses, responses.c.id == items.c.response_id)
            .where(items.c.item_id == item_id, items.c.project == project)
            .order_by(responses.c.created_at.desc(), items.c.is_output.desc())
            .limit(1)
        )
        async with self.engine.connect() as conn:
            row = (await conn.execute(query)).first()
        return None if row is None else load_item(loads(row.item))

    async def response_status(self, response_id: str) -> str | None:
        """The status column alone (polled by a running generation to notice a cancel)."""
        async with self.engine.connect() as conn:
            return (
                await conn.execute(
                    sa.select(responses.c.status).where(responses.c.id == response_id)
                )
            ).scalar()

    async def history(self, response_id: str, project: str) -> list[dict[str, Any]] | None:
        """The context entries of a response's whole chain, oldest turn first; ``None`` if unknown.

        One recursive query walks the ``previous_id`` links within ``project``.
        """
        chain = (
            sa.select(
                responses.c.id,
                responses.c.previous_id,
                responses.c.entries,
                sa.literal(0).label("depth"),
            )
            .where(responses.c.id == response_id, responses.c.project == project)
            .cte("chain", recursive=True)
        )
        step = (
            sa.select(
                responses.c.id,
                responses.c.previous_id,
                responses.c.entries,
                (chain.c.depth + 1).label("depth"),
            )
            .join(chain, responses.c.id == chain.c.previous_id)
            .where(responses.c.project == project)
        )
        chain = chain.union_all(step)
        async with self.engine.connect() as conn:
            rows = (
                await conn.execute(sa.select(chain.c.entries).order_by(chain.c.depth.desc()))
            ).all()
        if not rows:
            return None
        return [entry for row in rows for entry in loads(row.entries)]

    async def delete_response(self, response_id: str, project: str) -> bool:
        """Delete a response and its events; ``False`` if there was none."""
        async with self.engine.begin() as conn:
            result = await conn.execute(
                responses.delete().where(
                    responses.c.id == response_id, responses.c.project == project
                )
            )
            if result.rowcount:
                await conn.execute(
                    response_events.delete().where(response_events.c.response_id == response_id)
                )
                await conn.execute(items.delete().where(items.c.response_id == response_id))
        return bool(result.rowcount)

    async def cancel_response(self, response_id: str, project: str) -> StoredResponse | None:
        """Mark a queued or running response ``cancelled``; returns it as it now is (``None`` if unknown)."""
        async with self.engine.begin() as conn:
            await conn.execute(
                responses.update()
                .where(
                    responses.c.id == response_id,
                    responses.c.project == project,
                    responses.c.status.in_(list(UNSETTLED)),
                )
                .values(status="cancelled")
            )
        return await self.get_response(response_id, project)

    async def add_events(
        self, response_id: str, events: Sequence[ResponseEvent], owner: str | None = None
    ) -> None:
        """Append streaming events (each carries its ``sequence_number``).

        Raises:
            LeaseLost: ``owner`` is given and no longer holds the response's lease (nothing is written).
        """
        if not events:
            return
        async with self.engine.begin() as conn:
            if owner is not None:
                await fence(conn, response_id, owner)
            await conn.execute(
                response_events.insert(),
                [
                    {
                        "response_id": response_id,
                        "sequence_number": e.sequence_number,
                        "event": dumps(e),
                    }
                    for e in events
                ],
            )

    async def events_after(self, response_id: str, after: int) -> list[ResponseEvent]:
        """Stored events with ``sequence_number > after``, in order."""
        query = (
            sa.select(response_events.c.event)
            .where(
                response_events.c.response_id == response_id,
                response_events.c.sequence_number > after,
            )
            .order_by(response_events.c.sequence_number)
        )
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [_EVENT.decode(r.event) for r in rows]
