"""Wire types of the ledger's inputs, shared by every feature that takes an amount or a currency."""

from __future__ import annotations

from typing import Annotated

import msgspec

from service import patterns

__all__ = ["Currency", "DecimalInput"]

#: A decimal as a JSON string of ASCII digits (optional sign, point, exponent), or a JSON
#: number. Python's ``Decimal`` would also read ``"1_000"``, full-width digits and
#: padding spaces; those are 400s naming the field.
DecimalInput = (
    Annotated[
        str, msgspec.Meta(pattern=patterns.DECIMAL)
    ]
    | int
    | float
)

#: An ISO 4217 code.
Currency = Annotated[str, msgspec.Meta(pattern=patterns.CURRENCY)]
