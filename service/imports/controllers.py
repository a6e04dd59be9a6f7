"""``POST /api/portfolios/{id}/import/``: load a broker statement into a portfolio's ledger."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, Request, post
from litestar.datastructures import State, UploadFile
from litestar.di import NamedDependency
from litestar.enums import RequestEncodingType
from litestar.params import Body, FromPath
from sqlalchemy.ext.asyncio import AsyncSession

from service.assets.market import MarketData
from service.auth.guards import requires_user
from service.auth.identity import Identity
from service.db import Database
from service.errors import ValidationError
from service.imports import decode_mapping
from service.imports.schemas import ImportRead
from service.imports.services import (
    MAX_FILE_BYTES,
    ImportOptions,
    guess_format,
    import_statement,
    preview_statement,
)

__all__ = ["ImportController", "ImportForm"]

Req = Request[Identity, Any, State]


@dataclass
class ImportForm:
    """The multipart form of an import.

    ``file``: the statement (OFX/QFX 1.x SGML or 2.x XML, or CSV). ``format``:
    ``ofx`` or ``csv`` (default: from the file name, ``.ofx``/``.qfx``/``.csv``, or
    OFX content). ``mapping``: CSV only, a JSON object (``columns``, ``types``,
    ``date_format``, ``decimal_comma``, ``delimiter``, ``currency``). ``preset``:
    CSV only, ``schwab`` or ``fidelity`` (default: detected from the header).
    ``dry_run``: report without writing. ``create_assets``: add unknown symbols
    as assets (in the rows' currency) instead of refusing their rows.
    """

    file: UploadFile
    format: str | None = None
    mapping: str | None = None
    preset: str | None = None
    dry_run: bool = False
    create_assets: bool = False


class ImportController(Controller):
    path = "/api/portfolios"
    tags = ["imports"]  # noqa: RUF012
    guards = [requires_user]  # noqa: RUF012

    @post(
        "/{portfolio_id:int}/import/",
        summary="Import a broker statement (OFX/QFX or CSV) into the portfolio's ledger",
        description=(
            "All or nothing and idempotent: one database transaction; rows whose source id "
            "(OFX FITID, or the hash of a CSV row) the portfolio already holds are skipped "
            "(`skipped_duplicates`). Any bad line (an uncovered sale on the whole resulting "
            "ledger, an unknown symbol without `create_assets`, a bad number or date, a "
            "share transfer) makes it a 400 `validation_error` whose `details.errors` lists every "
            "problem with its line and field; nothing is written. Cash rows (deposits, "
            "withdrawals, interest, fees) are imported in their currency; a security row's "
            "currency must be its asset's. Under `cash_policy` `strict`, an import that would "
            "leave cash below zero on some day is refused (`insufficient_cash` on the line). "
            "`dry_run` returns the same report without writing. Files up to "
            f"{MAX_FILE_BYTES // (1024 * 1024)} MiB (413 `request_too_large` above)."
        ),
        status_code=200,
        request_max_body_size=MAX_FILE_BYTES + 1024 * 1024,
    )
    async def import_statement(
        self,
        request: Req,
        portfolio_id: FromPath[int],
        data: Annotated[ImportForm, Body(media_type=RequestEncodingType.MULTI_PART)],
        session: NamedDependency[AsyncSession],
        db: NamedDependency[Database],
        market: NamedDependency[MarketData],
    ) -> ImportRead:
        content = await data.file.read()
        fmt = data.format or guess_format(data.file.filename, content)
        if fmt not in ("ofx", "csv"):
            raise ValidationError(
                "format", "invalid_choice" if data.format else "required",
                "format must be 'ofx' or 'csv' (or a file named .ofx, .qfx or .csv).",
            )  # fmt: skip
        if fmt == "ofx" and (data.mapping or data.preset):
            field = "mapping" if data.mapping else "preset"
            raise ValidationError(field, "invalid", f"{field} applies to CSV files only.")
        try:
            mapping = decode_mapping(data.mapping)
        except ValueError as exc:
            raise ValidationError("mapping", "invalid", str(exc)) from None
        options = ImportOptions(
            format="ofx" if fmt == "ofx" else "csv",
            mapping=mapping,
            preset=data.preset or None,
            dry_run=data.dry_run,
            create_assets=data.create_assets,
            currencies=market.currencies(),
        )
        if options.dry_run:  # only reads: the request's session of a POST would write
            return await preview_statement(db, request.user.id, portfolio_id, content, options)
        return await import_statement(session, request.user.id, portfolio_id, content, options)
