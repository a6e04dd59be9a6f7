"""Wash sales (IRC 1091, IRS Publication 550): groups of identical securities and the adjustments.

The rule as applied by :func:`quantcore.tax.match_lots` (the kernel is
:func:`quantcore._kernels.tax.match_lots_nb`):

* A sold lot piece with a loss is a wash sale to the extent that substantially
  identical shares (the same symbol, or the same group key in
  ``substantially_identical``) are bought within 30 days before or after the
  sale date (a 61-day window). Partial replacement disallows
  ``loss x replacement shares / sold shares``.
* Replacement shares are taken in the order they were acquired: first lots
  still held that were bought in the 30 days before the sale, then buys in the
  30 days after it. Shares from the same purchase as the sold shares never
  replace them, and a share replaces at most one loss (a lot absorbs at most its
  own quantity; a lot partly used is split).
* The disallowed loss is added to the replacement shares' basis, and their
  acquisition date moves back by the number of days the sold shares were held,
  so their holding period includes the sold shares' (chains carry forward).

Known simplifications: replacement shares bought before the sale and already
sold again before it are not counted; options, short sales and IRA purchases
are out of scope.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from quantcore.tax.lots import LotLedger

__all__ = ["WASH_SALE_WINDOW_DAYS", "group_codes", "wash_sale_adjustments"]

#: Days on each side of a loss sale in which a purchase makes it a wash sale.
WASH_SALE_WINDOW_DAYS = 30


def group_codes(symbols: Sequence[str], substantially_identical: Mapping[str, str] | None = None) -> np.ndarray:
    """Group code of each symbol; symbols mapped to the same key share a code.

    Parameters
    ----------
    symbols : sequence of str
        The ledger's symbols.
    substantially_identical : mapping of str to str, optional
        Symbol -> group key. Unlisted symbols are their own group.

    Returns
    -------
    ndarray of int64
        Codes ``0..n_groups-1`` in order of first appearance.

    Examples
    --------
    >>> group_codes(["IVV", "MSFT", "SPY"], {"SPY": "S&P 500", "IVV": "S&P 500"})
    array([0, 1, 0])
    """
    if substantially_identical is not None and not isinstance(substantially_identical, Mapping):
        raise ValueError("substantially_identical must be a mapping of symbol to group key")
    mapping = substantially_identical or {}
    keys = [("group", str(mapping[s])) if s in mapping else ("symbol", s) for s in symbols]
    codes: dict[tuple[str, str], int] = {}
    out = np.empty(len(keys), dtype=np.int64)
    for i, key in enumerate(keys):
        out[i] = codes.setdefault(key, len(codes))
    return out


def wash_sale_adjustments(ledger: LotLedger) -> pd.DataFrame:
    """The realized pieces whose loss was (partly) disallowed, with the amount.

    Parameters
    ----------
    ledger : LotLedger
        From :func:`quantcore.tax.match_lots`.

    Returns
    -------
    DataFrame
        The rows of ``ledger.realized_frame()`` with ``disallowed > 0``.
    """
    frame = ledger.realized_frame()
    return frame[frame["wash_sale"]].reset_index(drop=True)
