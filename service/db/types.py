"""Exact decimal column type: NUMERIC on PostgreSQL, canonical TEXT on SQLite.

SQLite has no decimal type (its NUMERIC affinity stores binary floats), so on
SQLite the value is stored as a fixed-point string; every other dialect gets
``NUMERIC(38, 8)``. Values are always :class:`decimal.Decimal` in Python and are
quantized to :data:`SCALE` fractional digits on the way in.
"""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from sqlalchemy import DateTime, Numeric, String
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

__all__ = ["QUANTUM", "SCALE", "ExactDecimal", "UTCDateTime", "quantize"]

SCALE = 8
QUANTUM = Decimal(1).scaleb(-SCALE)


def quantize(value: Decimal) -> Decimal:
    """Round to 8 fractional digits, half to even (the storage precision); a zero is
    stored and read unsigned (``-0`` and ``-0.000000001`` are ``0E-8``)."""
    exact = value.quantize(QUANTUM, rounding=ROUND_HALF_EVEN)
    return exact.copy_abs() if exact.is_zero() else exact


class ExactDecimal(TypeDecorator[Decimal]):
    """A Decimal stored exactly with 8 fractional digits on every backend."""

    impl = Numeric(38, SCALE)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "sqlite":
            return dialect.type_descriptor(String(48))
        return dialect.type_descriptor(Numeric(38, SCALE, asdecimal=True))

    def process_bind_param(self, value: Decimal | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        exact = quantize(Decimal(value))
        return format(exact, "f") if dialect.name == "sqlite" else exact

    def process_result_value(self, value: Any, dialect: Dialect) -> Decimal | None:
        if value is None:
            return None
        return quantize(Decimal(value) if not isinstance(value, float) else Decimal(repr(value)))


class UTCDateTime(TypeDecorator[dt.datetime]):
    """A timezone-aware UTC datetime on every backend (SQLite stores it naive)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        value = value.astimezone(dt.UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> dt.datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)
