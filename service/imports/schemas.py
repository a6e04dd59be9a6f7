"""Wire shapes of ``POST /api/portfolios/{id}/import/``."""

from __future__ import annotations

import datetime as dt
from typing import Literal

import msgspec

__all__ = [
    "ImportErrorRead",
    "ImportIgnoredRead",
    "ImportRead",
    "ImportRowRead",
    "StatementFormat",
]

StatementFormat = Literal["ofx", "csv"]


class ImportRowRead(msgspec.Struct, kw_only=True):
    """A ledger row the import adds (or would add), in the transactions' vocabulary.

    A cash row (deposit, withdrawal, interest, fee) has no ``asset_symbol`` and
    ``price`` is its amount; ``currency`` is the one its cash moves in (a security
    row's: its asset's).
    """

    line: int
    source_id: str
    transaction_type: str
    asset_symbol: str | None
    currency: str
    transaction_date: dt.date
    quantity: str
    price: str
    fees: str


class ImportIgnoredRead(msgspec.Struct, kw_only=True):
    """A statement row the import leaves out on purpose, and why (a cash row of 0)."""

    line: int
    type: str
    reason: str


class ImportErrorRead(msgspec.Struct, kw_only=True):
    """A line that stops the import (``line`` 0: the file as a whole)."""

    line: int
    field: str
    code: str
    message: str


class ImportRead(msgspec.Struct, kw_only=True):
    """What an import added, or (``dry_run``) would add.

    ``counts``: rows added per transaction type; ``rows``: the first of them;
    ``skipped_duplicates``: rows whose source id the portfolio already holds (a
    statement imported twice adds nothing); ``duplicate_lines``: lines dropped
    because an earlier line of the same file had their id; ``errors``: every
    problem found (always empty when ``dry_run`` is false: an import with errors
    is a 400 and writes nothing).
    """

    portfolio: int
    format: StatementFormat
    dry_run: bool
    added: int
    counts: dict[str, int]
    skipped_duplicates: int
    duplicate_lines: list[int]
    ignored: list[ImportIgnoredRead]
    created_assets: list[str]
    rows: list[ImportRowRead]
    errors: list[ImportErrorRead]
