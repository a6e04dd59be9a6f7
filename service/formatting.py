"""Decimal strings at the HTTP edge.

Stored ledger values are :class:`~decimal.Decimal` and keep their exact digits;
computed values are float64 (``quantcore``) rounded once here:

* quantities: 8 fractional digits (``"10.00000000"``);
* prices and average costs: 4 fractional digits;
* money amounts (values, changes, gains): 2 fractional digits;
* percentages: 2 fractional digits, in percent (``"1.25"`` is +1.25 %);
* fractions (returns, weights, drawdowns as 0.0125): 6 fractional digits;
* ratios (Sharpe, beta, correlation): 4 fractional digits;
* exchange rates: 6 fractional digits (``"1.083412"``; a JPY rate such as
  ``"0.006712"`` keeps 4 significant digits).

A non-finite computed value (no price, zero cost) is ``None`` (JSON ``null``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from typing import overload

__all__ = [
    "dec", "frac", "fx_rate", "money", "percent", "plain", "price", "price_column", "quantity", "ratio",
]  # fmt: skip


def _unsigned_zero(x: Decimal) -> Decimal:
    """``x``, with a zero's sign dropped (never ``"-0.00"``)."""
    return x.copy_abs() if x.is_zero() else x


def _fixed(x: float | Decimal | None, digits: int) -> str | None:
    if x is None:
        return None
    if isinstance(x, Decimal):
        return format(_unsigned_zero(x.quantize(Decimal(1).scaleb(-digits))), "f")
    if not math.isfinite(x):
        return None
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def quantity(x: Decimal) -> str:
    """8 fractional digits."""
    return format(x.quantize(Decimal("1e-8")), "f")


@overload
def price(x: Decimal) -> str: ...
@overload
def price(x: float | Decimal | None) -> str | None: ...
def price(x: float | Decimal | None) -> str | None:
    """4 fractional digits (a Decimal always gives a string)."""
    return _fixed(x, 4)


def price_column(values: Sequence[float]) -> list[str]:
    """Finite prices (a bar column) with 4 fractional digits each, as :func:`price`."""
    return [f"{v:.4f}" for v in values]


@overload
def money(x: Decimal) -> str: ...
@overload
def money(x: float | Decimal | None) -> str | None: ...
def money(x: float | Decimal | None) -> str | None:
    """2 fractional digits (a Decimal always gives a string)."""
    return _fixed(x, 2)


def percent(x: float | None) -> str | None:
    """Percent with 2 fractional digits."""
    return _fixed(x, 2)


def frac(x: float) -> str | None:
    """A fraction with 6 fractional digits (``None`` when not finite)."""
    return _fixed(float(x), 6)


def ratio(x: float) -> str | None:
    """A ratio with 4 fractional digits (``None`` when not finite)."""
    return _fixed(float(x), 4)


def fx_rate(x: float) -> str | None:
    """An exchange rate with 6 fractional digits (``None`` when not finite)."""
    return _fixed(float(x), 6)


def plain(x: Decimal) -> str:
    """A Decimal's own digits, without trailing zeros or exponent (``"4"``, ``"0.1"``, ``"0.0238"``)."""
    return format(_unsigned_zero(x.normalize()), "f")


def dec(x: Decimal) -> str:
    """A stored Decimal without trailing zeros beyond 2 fractional digits (``"150.25"``)."""
    normal = _unsigned_zero(x.normalize())
    if normal.as_tuple().exponent > -2:  # type: ignore[operator]
        normal = normal.quantize(Decimal("0.01"))
    return format(normal, "f")
