"""Merging a lot ledger's records with those of a few re-matched symbols (see
:mod:`quantcore.tax.splice`): one pass, rows and symbols renumbered on the way."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["splice_records_nb"]


@njit(cache=True, error_model="numpy")
def splice_records_nb(
    x: np.ndarray,
    y: np.ndarray,
    replaced: np.ndarray,
    code: np.ndarray,
    old_to_new: np.ndarray,
    part_rows: np.ndarray,
    sym_col: int,
    by_col: int,
    row_cols: np.ndarray,
) -> np.ndarray:
    """The rows of ``x`` (old records, int64 columns) whose symbol is not ``replaced``, and
    all rows of ``y`` (the re-matched symbols' records), merged in order of column
    ``by_col`` (a row number, or ``sym_col``: both inputs are sorted by it and share no
    key). Row numbers in ``row_cols`` become the new table's (``old_to_new`` for ``x``,
    ``part_rows`` for ``y``; negative ones stay), ``y``'s symbols the old codes (``code``)."""
    n_x = 0
    for i in range(x.shape[0]):
        if not replaced[x[i, sym_col]]:
            n_x += 1
    out = np.empty((n_x + y.shape[0], x.shape[1]), dtype=np.int64)
    i = 0
    j = 0
    for k in range(out.shape[0]):
        while i < x.shape[0] and replaced[x[i, sym_col]]:
            i += 1
        take_x = j == y.shape[0]
        if not take_x and i < x.shape[0]:
            kx = x[i, by_col] if by_col == sym_col else old_to_new[x[i, by_col]]
            ky = code[y[j, by_col]] if by_col == sym_col else part_rows[y[j, by_col]]
            take_x = kx < ky
        if take_x:
            out[k] = x[i]
            for c in row_cols:
                if x[i, c] >= 0:
                    out[k, c] = old_to_new[x[i, c]]
            i += 1
        else:
            out[k] = y[j]
            out[k, sym_col] = code[y[j, sym_col]]
            for c in row_cols:
                if y[j, c] >= 0:
                    out[k, c] = part_rows[y[j, c]]
            j += 1
    return out
