"""Leases of running responses: the queries that make generation durable work.

Every stored response being generated carries a lease in its row (``lease_owner``, ``lease_expires``),
renewed while it runs. A response whose lease is free (released, expired, or written by a release
without leases) is claimed by exactly one instance (a compare-and-set on the lease columns), and every
write of a running response is fenced by its lease. Reached through :class:`textgen.store.Store`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from textgen.events import ResponseObject
from textgen.store_tables import load_response, loads, responses

__all__ = ["UNSETTLED", "Lease", "LeaseLost", "LeaseQueries", "Orphan", "fence"]

UNSETTLED = ("queued", "in_progress")


@dataclass(frozen=True, slots=True)
class Lease:
    """An instance's claim on a running response, valid until ``expires`` (Unix seconds)."""

    owner: str
    expires: float


@dataclass(frozen=True, slots=True)
class Orphan:
    """An unsettled response whose lease this instance just took: its row's body and job."""

    id: str
    project: str
    body: ResponseObject
    job: dict[str, Any] | None


class LeaseLost(Exception):
    """Another instance holds the response's lease now: this one must stop writing it."""


async def fence(conn: Any, response_id: str, owner: str) -> None:
    """Within ``conn``'s transaction: raise :class:`LeaseLost` unless ``owner`` holds the lease (the
    no-op update locks the row, so a takeover waits for this transaction or comes before it)."""
    held = await conn.execute(
        responses.update()
        .where(responses.c.id == response_id, responses.c.lease_owner == owner)
        .values(lease_owner=owner)
    )
    if not held.rowcount:
        raise LeaseLost(response_id)


class LeaseQueries:
    """The lease queries of :class:`textgen.store.Store`."""

    engine: AsyncEngine

    async def renew_lease(self, response_id: str, lease: Lease) -> bool:
        """Extend the lease of a queued or in-progress response this owner holds; ``False`` if it lost it
        (taken over after it expired), or the response was cancelled, settled or deleted."""
        async with self.engine.begin() as conn:
            result = await conn.execute(
                responses.update()
                .where(
                    responses.c.id == response_id,
                    responses.c.lease_owner == lease.owner,
                    responses.c.status.in_(UNSETTLED),
                )
                .values(lease_expires=lease.expires)
            )
        return bool(result.rowcount)

    async def release_lease(self, response_id: str, owner: str) -> None:
        """Hand an unsettled response back: any instance may take it at once."""
        async with self.engine.begin() as conn:
            await conn.execute(
                responses.update()
                .where(responses.c.id == response_id, responses.c.lease_owner == owner)
                .values(lease_owner=None, lease_expires=None)
            )

    async def claim_orphan(self, lease: Lease, now: float) -> Orphan | None:
        """Take the lease of one queued or in-progress response nobody holds (released, expired, or
        written by a release without leases), oldest first; ``None`` when there is none.

        A compare-and-set on the lease columns, so of several instances exactly one wins each response.
        """
        free = sa.or_(responses.c.lease_expires.is_(None), responses.c.lease_expires < now)
        candidates = (
            sa.select(responses.c.id)
            .where(responses.c.status.in_(UNSETTLED), free)
            .order_by(responses.c.created_at, responses.c.id)
            .limit(8)
        )
        async with self.engine.connect() as conn:
            ids = [r.id for r in (await conn.execute(candidates)).all()]
        for response_id in ids:
            async with self.engine.begin() as conn:
                won = await conn.execute(
                    responses.update()
                    .where(responses.c.id == response_id, responses.c.status.in_(UNSETTLED), free)
                    .values(lease_owner=lease.owner, lease_expires=lease.expires)
                )
                if not won.rowcount:
                    continue
                row = (
                    await conn.execute(sa.select(responses).where(responses.c.id == response_id))
                ).one()
            return Orphan(
                row.id,
                row.project,
                load_response(row),
                None if row.job is None else loads(row.job),
            )
        return None
