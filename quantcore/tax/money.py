"""Exact 1e-8 fixed point to cents and decimal text: one value, or a whole column at once.

Money inside :mod:`quantcore.tax` is an int64 count of 1e-8 dollars. The reports round
each amount half-up (away from zero) to cents once; these are the functions that do it,
for one value (:func:`to_cents`, a ``Decimal``) and for a column
(:func:`cents`, int64 cents, and :func:`cents_text`, the decimal strings the reports
write), so a figure is the same whichever way it was produced.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quantcore._kernels.tax_reports import cents_nb

__all__ = ["cents", "cents_arrow", "cents_text", "from_fixed", "quantity_arrow", "quantity_text", "to_cents"]

_UNITS_PER_CENT = 1_000_000
_SCALE = 100_000_000


def to_cents(x: int) -> Decimal:
    """Round an amount in 1e-8 dollars half-up (away from zero) to a cents ``Decimal``.

    Examples
    --------
    >>> to_cents(1_234_500_000), to_cents(-500_000), to_cents(499_999)
    (Decimal('12.35'), Decimal('-0.01'), Decimal('0.00'))
    """
    q, r = divmod(abs(int(x)), _UNITS_PER_CENT)
    if 2 * r >= _UNITS_PER_CENT:
        q += 1
    return Decimal(-q if x < 0 else q).scaleb(-2)


def from_fixed(x: int) -> Decimal:
    """The exact ``Decimal`` of a 1e-8 fixed-point integer.

    Examples
    --------
    >>> from_fixed(150_000_000)
    Decimal('1.50000000')
    """
    return Decimal(int(x)).scaleb(-8)


def cents(units: np.ndarray) -> np.ndarray:
    """:func:`to_cents` of every element, as int64 cents (a numba kernel, no Python per row).

    Examples
    --------
    >>> cents(np.array([1_234_500_000, -500_000, 499_999])).tolist()
    [1235, -1, 0]
    """
    return cents_nb(np.ascontiguousarray(units, dtype=np.int64))


def cents_arrow(cents_values: np.ndarray) -> pa.Array:
    """:func:`cents_text` as an Arrow string array (Arrow's decimal-to-string cast)."""
    v = np.ascontiguousarray(cents_values, dtype=np.int64)
    words = np.empty((v.size, 2), dtype=np.int64)  # a little-endian 128-bit integer per value
    words[:, 0] = v
    words[:, 1] = v >> 63
    arr = pa.Array.from_buffers(pa.decimal128(38, 2), v.size, [None, pa.py_buffer(words)])
    return arr.cast(pa.string())


def quantity_arrow(units: np.ndarray) -> pa.Array:
    """:func:`quantity_text` as an Arrow string array."""
    v = np.asarray(units, dtype=np.int64)
    whole = pc.cast(pa.array(v // _SCALE), pa.string())
    frac = pc.utf8_rtrim(pc.utf8_lpad(pc.cast(pa.array(v % _SCALE), pa.string()), width=8, padding="0"), characters="0")
    return pc.if_else(pc.equal(frac, ""), whole, pc.binary_join_element_wise(whole, frac, "."))


def cents_text(cents_values: np.ndarray) -> np.ndarray:
    """Decimal strings (``"-12.30"``) of int64 cents: ``str(to_cents(x))`` of each amount.

    Examples
    --------
    >>> cents_text(np.array([1235, -1, 0, -120])).tolist()
    ['12.35', '-0.01', '0.00', '-1.20']
    """
    out: np.ndarray = cents_arrow(cents_values).to_numpy(zero_copy_only=False)
    return out


def quantity_text(units: np.ndarray) -> np.ndarray:
    """Shares (1e-8 units, >= 0) as plain decimal strings without trailing zeros (``"2.5"``,
    ``"100"``): ``format(from_fixed(q).normalize(), "f")`` of each, in one vectorized pass.

    Examples
    --------
    >>> quantity_text(np.array([250_000_000, 10_000_000_000, 1, 0])).tolist()
    ['2.5', '100', '0.00000001', '0']
    """
    out: np.ndarray = quantity_arrow(units).to_numpy(zero_copy_only=False)
    return out
