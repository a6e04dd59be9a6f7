"""Which portfolios a user owns: the scope of every ledger read and write."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from service.db.models import Portfolio
from service.errors import NotFoundError

__all__ = ["get_owned"]


async def get_owned(session: AsyncSession, user_id: int, portfolio_id: int) -> Portfolio:
    """The user's portfolio; another user's (or no) portfolio is a 404."""
    row = (
        await session.execute(
            select(Portfolio).where(Portfolio.id == portfolio_id, Portfolio.user_id == user_id)
        )
    ).scalar_one_or_none()
    if row is None:
        raise NotFoundError(f"Portfolio {portfolio_id} not found.")
    return row
