"""The string patterns request bodies declare, with what each means in words.

msgspec reports a string that fails a pattern as ``Expected `str` matching regex
'...'``; :mod:`service.errors` tells the client the meaning instead of the regex.
"""

from __future__ import annotations

__all__ = ["CURRENCY", "DECIMAL", "MEANINGS", "PRINTABLE_NOT_BLANK"]

#: A decimal as ASCII digits: optional sign, point, exponent (no ``_``, no spaces).
DECIMAL = r"\A[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z"
#: Printable, not blank (no NUL or other control characters).
PRINTABLE_NOT_BLANK = r"\A[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]*\Z"
#: An ISO 4217 currency code: three upper-case letters (``USD``, ``EUR``).
CURRENCY = r"\A[A-Z]{3}\Z"

MEANINGS = {
    DECIMAL: 'a decimal number written as a string, such as "10" or "12.5"',
    PRINTABLE_NOT_BLANK: "text that is not blank and has no control characters",
    CURRENCY: 'an ISO 4217 currency code of three capital letters, such as "USD"',
}
