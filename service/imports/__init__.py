"""Broker statements (OFX/QFX and CSV) read into normalized ledger rows.

Parsing only: every function here is pure (bytes in, rows and errors out); the
import endpoint and CLI check the rows against the ledger and write them.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from service.imports.csv_layouts import PRESETS, CsvMapping
from service.imports.csvfile import parse_csv
from service.imports.ofx import parse_ofx
from service.imports.rows import CASH_TYPES, ImportRow, ParseResult, RowError, RowType

__all__ = [
    "CASH_TYPES",
    "PRESETS",
    "CsvMapping",
    "ImportRow",
    "ParseResult",
    "RowError",
    "RowType",
    "decode_mapping",
    "parse_csv",
    "parse_ofx",
    "parse_statement",
]

StatementFormat = Literal["ofx", "csv"]


def decode_mapping(raw: str | bytes | dict[str, Any] | None) -> CsvMapping | None:
    """A :class:`CsvMapping` from JSON text or a dict; ``ValueError`` naming the bad field."""
    if raw is None or raw == "" or raw == b"":
        return None
    try:
        if isinstance(raw, dict):
            return msgspec.convert(raw, CsvMapping)
        return msgspec.json.decode(raw, type=CsvMapping)
    except msgspec.ValidationError as exc:
        raise ValueError(f"mapping: {exc}") from None
    except msgspec.DecodeError as exc:
        raise ValueError(f"mapping is not JSON: {exc}") from None


def parse_statement(
    data: bytes,
    fmt: StatementFormat,
    *,
    mapping: CsvMapping | None = None,
    preset: str | None = None,
    columns: bool = False,
) -> ParseResult:
    """Read a statement file of format ``fmt`` (``"ofx"`` also reads QFX).

    Args:
        data: the file's bytes.
        fmt: ``"ofx"`` or ``"csv"``.
        mapping: CSV only, a generic column mapping.
        preset: CSV only, ``"schwab"`` or ``"fidelity"`` (default: detected from the header).
        columns: CSV only, the rows as columns when the reader can (``ParseResult.columns``).

    Returns:
        A :class:`ParseResult`; ``result.ok`` is False when any line is bad.
    """
    if fmt == "ofx":
        return parse_ofx(data)
    if fmt == "csv":
        return parse_csv(data, mapping=mapping, preset=preset, columns=columns)
    raise ValueError(f"format must be 'ofx' or 'csv', got {fmt!r}")
