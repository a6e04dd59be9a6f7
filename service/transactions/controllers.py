"""``/api/transactions/``: the user's ledger."""

from __future__ import annotations

import datetime as dt
from typing import Any

from litestar import Controller, Request, delete, get, post, put
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery, JSONBody
from litestar.response import Stream
from sqlalchemy.ext.asyncio import AsyncSession

from service.assets.market import MarketData
from service.auth.guards import requires_user
from service.auth.identity import Identity
from service.csvexport import ExportFormat, csv_requested
from service.db import Database
from service.ledger.cash import check_currency
from service.pagination import Page, PageParams
from service.transactions import export, services
from service.transactions.schemas import TransactionCreate, TransactionRead, TransactionType

__all__ = ["TransactionController"]


def _entry(data: TransactionCreate, market: MarketData) -> services.LedgerEntry:
    if data.currency is not None:
        check_currency(market, data.currency, "currency")
    return services.LedgerEntry(
        data.asset_symbol,
        data.transaction_type,
        data.quantity,
        data.price,
        data.fees,
        data.transaction_date,
        lot_id=data.lot_id,
        split_ratio=data.split_ratio,
        cash_in_lieu=data.cash_in_lieu,
        ratio=data.ratio,
        target_symbol=data.target_symbol,
        basis_allocation=data.basis_allocation,
        cash_per_share=data.cash_per_share,
        currency=data.currency,
    )


class TransactionController(Controller):
    path = "/api/transactions"
    tags = ["transactions"]  # noqa: RUF012
    guards = [requires_user]  # noqa: RUF012

    @get("/", summary="List transactions")
    async def list_transactions(
        self,
        request: Request[Identity, Any, State],
        db: NamedDependency[Database],
        session: NamedDependency[AsyncSession],
        paging: NamedDependency[PageParams],
        portfolio_id: FromQuery[int | None] = None,
        asset_symbol: FromQuery[str | None] = None,
        transaction_type: FromQuery[TransactionType | None] = None,
        date_from: FromQuery[dt.date | None] = None,
        date_to: FromQuery[dt.date | None] = None,
        format: ExportFormat = None,
    ) -> Page[TransactionRead] | Stream:
        if csv_requested(request, format):
            return export.transaction_csv(
                db, request.user.id, portfolio_id=portfolio_id, asset_symbol=asset_symbol,
                transaction_type=transaction_type, date_from=date_from, date_to=date_to,
            )  # fmt: skip
        items, count = await services.list_transactions(
            session,
            request.user.id,
            paging,
            portfolio_id=portfolio_id,
            asset_symbol=asset_symbol,
            transaction_type=transaction_type,
            date_from=date_from,
            date_to=date_to,
        )
        return Page.build(request, items, count, paging)

    @post("/", summary="Record a transaction")
    async def create_transaction(
        self,
        request: Request[Identity, Any, State],
        data: JSONBody[TransactionCreate],
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
    ) -> TransactionRead:
        entry = _entry(data, market)
        txn, asset, _ = await services.record(session, request.user.id, data.portfolio, entry)
        return services.transaction_read(txn, asset, entry.target_symbol)

    @put("/{transaction_id:int}/", summary="Replace a transaction")
    async def update_transaction(
        self,
        request: Request[Identity, Any, State],
        transaction_id: FromPath[int],
        data: JSONBody[TransactionCreate],
        session: NamedDependency[AsyncSession],
        market: NamedDependency[MarketData],
    ) -> TransactionRead:
        """The whole entry is replaced (same body as create); the symbol's ledger is re-checked."""
        entry = _entry(data, market)
        txn, asset = await services.update(
            session, request.user.id, transaction_id, data.portfolio, entry
        )
        return services.transaction_read(txn, asset, entry.target_symbol)

    @delete("/{transaction_id:int}/", summary="Delete a transaction", status_code=204)
    async def delete_transaction(
        self,
        request: Request[Identity, Any, State],
        transaction_id: FromPath[int],
        session: NamedDependency[AsyncSession],
    ) -> None:
        await services.remove(session, request.user.id, transaction_id)

    @get("/{transaction_id:int}/", summary="Retrieve a transaction")
    async def get_transaction(
        self,
        request: Request[Identity, Any, State],
        transaction_id: FromPath[int],
        session: NamedDependency[AsyncSession],
    ) -> TransactionRead:
        return await services.get_transaction(session, request.user.id, transaction_id)
