"""Merging a lot ledger's records with those of a few re-matched symbols (see
:mod:`quantcore.tax.splice`): one pass, rows and symbols renumbered on the way."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["count_sales_nb", "group_rows_nb", "place_rows_nb", "place_sales_nb", "splice_records_nb"]


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


@njit(cache=True, error_model="numpy")
def group_rows_nb(group: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Of the rows of a table, each in group ``group[i]`` (``0..n_groups-1``): the rows in
    group order (table order within a group), where each group starts in that order
    (``n_groups + 1``), and each row's index among its group's rows. One counting pass."""
    starts = np.zeros(n_groups + 1, dtype=np.int64)
    for i in range(group.shape[0]):
        starts[group[i] + 1] += 1
    for g in range(n_groups):
        starts[g + 1] += starts[g]
    fill = starts[:-1].copy()
    order = np.empty(group.shape[0], dtype=np.int64)
    local = np.empty(group.shape[0], dtype=np.int64)
    for i in range(group.shape[0]):
        g = group[i]
        order[fill[g]] = i
        local[i] = fill[g] - starts[g]
        fill[g] += 1
    return order, starts, local


@njit(cache=True, error_model="numpy")
def place_rows_nb(
    a: np.ndarray,
    b: np.ndarray,
    old_to_new: np.ndarray,
    part_rows: np.ndarray,
    a_map: np.ndarray,
    b_map: np.ndarray,
) -> np.ndarray:
    """One per-row column of the new table: old row ``i``'s value ``a[i]`` at ``old_to_new[i]``
    (rows mapped to -1 left out), the part's row ``j``'s ``b[j]`` at ``part_rows[j]``. A
    non-negative value is replaced by ``a_map[value]`` (``b_map`` for the part's) when that
    map is not empty (row numbers, symbol codes)."""
    out = np.empty(part_rows.shape[0] + (old_to_new >= 0).sum(), dtype=np.int64)
    for i in range(a.shape[0]):
        k = old_to_new[i]
        if k >= 0:
            v = a[i]
            out[k] = a_map[v] if a_map.shape[0] and v >= 0 else v
    for j in range(b.shape[0]):
        v = b[j]
        out[part_rows[j]] = b_map[v] if b_map.shape[0] and v >= 0 else v
    return out


@njit(cache=True, error_model="numpy", nogil=True)
def count_sales_nb(
    pieces: np.ndarray, rows: np.ndarray, row_col: int, part_col: int, base: int, at: np.ndarray
) -> None:
    """Of one group's realized pieces (int64 columns, ``row_col`` their row among the group's
    rows, ``rows`` those rows' table rows): count each table row's pieces in
    ``at[part, row - base + 1]``, ``part`` 1 where column ``part_col`` is not 0 (0 for every
    piece when ``part_col`` < 0): once summed, where each row's pieces start. A table row
    outside ``base .. base + at.shape[1] - 2`` raises: the pieces were not in sell order."""
    for i in range(pieces.shape[0]):
        k = rows[pieces[i, row_col]] - base + 1
        if k < 1 or k >= at.shape[1]:
            raise ValueError("realized pieces out of sell order")
        at[1 if part_col >= 0 and pieces[i, part_col] != 0 else 0, k] += 1


@njit(cache=True, error_model="numpy", nogil=True)
def place_sales_nb(
    pieces: np.ndarray, rows: np.ndarray, row_col: int, lot_col: int, base: int, at: np.ndarray, out: np.ndarray
) -> None:
    """Copy one group's realized pieces into ``out`` in table row order, ``row`` and ``lot``
    (``lot_col``; negative ones stay) renumbered to the table's rows: ``at[row - base]`` is
    where the next piece of that table row goes (the running sum of :func:`count_sales_nb`'s
    counts over every group), advanced as pieces are placed. A sell's pieces are all of
    one group: they keep their order."""
    for i in range(pieces.shape[0]):
        r = rows[pieces[i, row_col]]
        k = at[r - base]
        at[r - base] = k + 1
        for c in range(pieces.shape[1]):
            out[k, c] = pieces[i, c]
        out[k, row_col] = r
        lot = pieces[i, lot_col]
        if lot >= 0:
            out[k, lot_col] = rows[lot]
