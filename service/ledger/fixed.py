"""Exact ledger amounts as two int64 columns.

The ledger stores every amount as ``NUMERIC(38, 8)`` (canonical text with eight
fractional digits on SQLite). One int64 at the unit ``1e-8`` overflows at about
``9.2e10``, and the writes accept values below ``1e20`` (``max_value`` 400 beyond:
:func:`service.ledger.writes.check_amount`). So an amount is kept as two int64
halves of its count of units ``u = value x 1e8``::

    u = hi x 1e16 + lo,   0 <= lo < 1e16     (value = hi x 1e8 + lo x 1e-8)

``hi`` holds the hundreds of millions (below ``1e12`` for what the writes accept,
so far inside int64: a sum of a million such values still fits), ``lo`` the last
eight integer digits and the eight fractional ones. The pair is exact, orders like
the value (``hi`` first, then ``lo``: :func:`sort_keys`), and becomes float64
(:meth:`Fixed.to_float`, one rounding of each half; the core computes in float64
and rounds once at the edge) or :class:`~decimal.Decimal` (:meth:`Fixed.to_decimal`,
for twins and exact checks).

Text is parsed column-wise (:func:`parse`): the canonical text of a whole column,
right-aligned in a byte matrix, becomes digits by one subtraction; only a value
not in canonical form (none are written so) goes through ``Decimal`` alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

__all__ = [
    "LO", "MAX_VALUE", "NULL_UNITS", "SCALE", "WIDE_UNITS", "Fixed", "from_units", "parse", "sort_keys",
]  # fmt: skip

I64 = NDArray[np.int64]
#: Fractional digits of the ledger (its unit is ``1e-8``).
SCALE = 8
#: ``lo`` is below this: sixteen digits (eight integer, eight fractional).
LO = 10**16
#: Writes refuse an amount at or above this (``max_value``); the pair covers it widely.
MAX_VALUE = Decimal("1e20")
#: ``hi x 1e16 + lo`` fits an int64 when ``|hi|`` is at most this.
_NARROW_HI = 920
#: Markers in a column of units as the ledger's read returns it (:func:`from_units`): a
#: null, and a value read as text. Below any count of units the read returns as such
#: (those are under ``1e17``).
NULL_UNITS = -(2**62)
WIDE_UNITS = -(2**62) - 1
_POW = 10 ** np.arange(17, -1, -1, dtype=np.int64)  # 1e17 .. 1e0


@dataclass(frozen=True, slots=True)
class Fixed:
    """A column of exact amounts: ``value = hi x 1e8 + lo x 1e-8`` with ``0 <= lo < 1e16``.

    ``null`` marks rows without a value (``NULL`` in the database; the halves are 0).
    """

    hi: I64
    lo: I64
    null: NDArray[np.bool_]

    def __len__(self) -> int:
        return int(self.hi.shape[0])

    def to_float(self) -> NDArray[np.float64]:
        """The values as float64 (``NaN`` where null)."""
        neg = self.hi < 0
        hi, lo = _split(neg, self.hi, self.lo)  # magnitudes: no cancellation below zero
        out = hi.astype(np.float64) * 1e8 + lo.astype(np.float64) * 1e-8
        out[neg] = -out[neg]
        out[self.null] = np.nan
        return out

    def to_decimal(self) -> list[Decimal | None]:
        """The exact values (``None`` where null); for twins and checks, not hot paths."""
        return [
            None if n else Decimal(h * LO + lo).scaleb(-SCALE)
            for h, lo, n in zip(self.hi.tolist(), self.lo.tolist(), self.null.tolist(), strict=True)
        ]

    def to_arrow(self) -> pa.Array:
        """The exact values as Arrow ``decimal128(38, 8)`` (the ledger's ``NUMERIC(38, 8)``),
        nulls kept: how exact amounts enter ``quantcore`` without a ``Decimal`` per row.

        The 128-bit unscaled value ``hi x 1e16 + lo`` is written as two little-endian
        int64 words; rows whose value needs more than 63 bits (|value| >= 9.2e10) are
        done in Python integers, one by one (few or none)."""
        n = len(self)
        wide = np.abs(self.hi) > _NARROW_HI
        units = np.where(wide, 0, self.hi) * LO + self.lo  # exact where narrow
        words = np.empty((n, 2), np.int64)
        words[:, 0] = units
        words[:, 1] = units >> 63  # sign extension
        for i in np.flatnonzero(wide).tolist():
            v = int(self.hi[i]) * LO + int(self.lo[i])
            lo64 = v & (2**64 - 1)
            words[i, 0] = lo64 - 2**64 if lo64 >= 2**63 else lo64
            words[i, 1] = v >> 64
        validity = None
        if self.null.any():
            validity = pa.array(~self.null).buffers()[1]
        return pa.Array.from_buffers(
            pa.decimal128(38, SCALE), n, [validity, pa.py_buffer(words.tobytes())],
            null_count=int(self.null.sum()),
        )  # fmt: skip

    def take(self, index: NDArray[np.intp] | NDArray[np.bool_]) -> Fixed:
        """The rows at ``index`` (an index array or a mask)."""
        return Fixed(self.hi[index], self.lo[index], self.null[index])

    @classmethod
    def from_decimals(cls, values: Sequence[Decimal | None]) -> Fixed:
        """From exact values (``None``: null); each is rounded to ``1e-8`` first."""
        hi, lo, null = [], [], []
        for v in values:
            if v is None:
                hi.append(0)
                lo.append(0)
                null.append(True)
                continue
            units = int(v.scaleb(SCALE).to_integral_value())
            h, r = divmod(units, LO)
            hi.append(h)
            lo.append(r)
            null.append(False)
        return cls(np.array(hi, np.int64), np.array(lo, np.int64), np.array(null, np.bool_))


def _split(neg: NDArray[np.bool_], hi: I64, lo: I64) -> tuple[I64, I64]:
    """Magnitudes ``(hi, lo)`` with a sign, normalized to ``0 <= lo < 1e16``."""
    borrow = neg & (lo > 0)
    hi = np.where(neg, -hi - borrow.astype(np.int64), hi)
    lo = np.where(borrow, LO - lo, lo)
    return hi, lo


def parse(values: Sequence[str | None]) -> Fixed:
    """Canonical decimal text (``"-123.45000000"``, eight fractional digits) -> :class:`Fixed`.

    ``None`` is null. Text in any other form (fewer digits, an exponent) is read
    through :class:`~decimal.Decimal`, row by row; the ledger writes none.

    Raises:
        ValueError: a value is not a decimal number or is too large (``|value| >= 1e26``).
    """
    n = len(values)
    if n == 0:
        z = np.zeros(0, np.int64)
        return Fixed(z, z.copy(), np.zeros(0, np.bool_))
    raw = np.array(values, dtype=object)
    null = np.array([v is None for v in values], np.bool_)
    text = np.where(null, "0.00000000", raw).astype(str)
    neg = np.char.startswith(text, "-")
    body = np.char.encode(np.char.lstrip(text, "-"), "ascii")
    width = max(int(body.dtype.itemsize), 27)
    grid = np.frombuffer(np.char.rjust(body, width, b"0").tobytes(), np.uint8).reshape(n, width)
    canonical = grid[:, width - 9] == ord(".")
    digits = grid.astype(np.int64) - ord("0")
    whole = digits[:, : width - 9]
    frac = digits[:, width - 8 :]
    ok = canonical & (digits[:, : width - 9] >= 0).all(1) & (digits[:, : width - 9] <= 9).all(1)
    ok &= (frac >= 0).all(1) & (frac <= 9).all(1)
    ok &= (whole[:, : max(whole.shape[1] - 26, 0)] == 0).all(1)  # |value| < 1e26
    head = whole[:, -26:-8]  # the digits of hi (up to 18)
    hi = head @ _POW[-head.shape[1] :]
    lo = whole[:, -8:] @ _POW[-16:-8] + frac @ _POW[-8:]
    hi, lo = _split(neg, hi, lo)
    bad = np.flatnonzero(~ok)
    if bad.size:
        fixed = Fixed.from_decimals([_decimal(values[i]) for i in bad.tolist()])
        hi[bad], lo[bad] = fixed.hi, fixed.lo
    return Fixed(hi.astype(np.int64), lo.astype(np.int64), null.astype(np.bool_))


def from_units(units: NDArray[np.int64], text: Callable[[list[int]], list[str]]) -> Fixed:
    """A column read as integer counts of 1e-8 units, where :data:`NULL_UNITS` marks a null
    and :data:`WIDE_UNITS` a value too large to cross as one: ``text(rows)`` gives the
    text of those rows, parsed exactly."""
    hi, lo = np.divmod(units, LO)
    null = units == NULL_UNITS
    wide = np.flatnonzero(units == WIDE_UNITS)
    if wide.size:
        big = parse(text(wide.tolist()))
        hi[wide], lo[wide] = big.hi, big.lo
    hi[null], lo[null] = 0, 0
    return Fixed(hi.astype(np.int64), lo.astype(np.int64), null)


def _decimal(value: str | None) -> Decimal:
    try:
        out = Decimal(str(value))
    except ArithmeticError:
        raise ValueError(f"not a decimal amount: {value!r}") from None
    if not out.is_finite() or abs(out) >= Decimal("1e26"):
        raise ValueError(f"amount out of range: {value!r}")
    return out


def sort_keys(column: Fixed) -> tuple[I64, I64]:
    """Keys for :func:`numpy.lexsort` that order ``column`` by value (least significant first)."""
    return column.lo, column.hi
