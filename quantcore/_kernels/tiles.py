"""Reading a panel in its memory order: tiles and column blocks, and the passes over them.

A panel reduction keeps one accumulator per column and walks the rows, so that the
inner loop runs across columns (SIMD lanes, independent chains) while each column
still sees its values in time order: the sums are the same, to the last bit, as a
plain loop down each column. A row-major (C-ordered) panel is read in place; any
other layout is first copied a ``TILE_ROWS x TILE_COLS`` block at a time into a
C-ordered scratch tile (:func:`load_tile`), so the same pass bodies serve both. Percentiles need whole columns:
:func:`load_columns` gathers a block of columns the same way.

Column blocks are independent: the public kernels run them with ``prange``.
Select expressions (``v if ok else 0.0``) keep the loops branch-free; NaN fails
every comparison, which the ``lo``/``hi`` updates rely on.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, uintp

__all__ = [
    "TILE_COLS",
    "TILE_ROWS",
    "load_columns",
    "load_tile",
    "moments_block",
    "n_blocks",
    "row_major",
]

#: A tile is 64 x 64 float64 (32 KB): it and the accumulators stay in L1.
TILE_ROWS = 64
TILE_COLS = 64


@njit(cache=True)
def n_blocks(k):  # type: ignore[no-untyped-def]
    """Number of ``TILE_COLS``-wide column blocks of a panel of ``k`` columns."""
    return (k + TILE_COLS - 1) // TILE_COLS


@njit(cache=True)
def row_major(x):  # type: ignore[no-untyped-def]
    """True when the rows of ``x`` are contiguous: passes read ``x`` directly, else a tile."""
    return x.strides[1] == x.itemsize and x.strides[0] >= x.strides[1]


@njit(cache=True)
def load_tile(x, i0, j0, tile):  # type: ignore[no-untyped-def]
    """Copy ``x[i0:i0 + r, j0:j0 + c]`` into ``tile[:r, :c]``; return ``r, c``."""
    n, k = x.shape
    r = min(TILE_ROWS, n - i0)
    c = min(TILE_COLS, k - j0)
    for j in range(c):  # down the columns of a column-major x
        for i in range(r):
            tile[uintp(i), uintp(j)] = x[uintp(i0 + i), uintp(j0 + j)]
    return r, c


@njit(cache=True)
def load_columns(x, j0, cols, compact):  # type: ignore[no-untyped-def]
    """Columns ``j0:j0 + c`` of ``x`` as the rows of ``cols`` (``c x n``); return ``c`` and counts.

    With ``compact`` only the non-NaN values are kept, at the front of each row,
    in time order (``counts`` holds how many); otherwise every value is copied.
    """
    n, k = x.shape
    c = min(cols.shape[0], k - j0)
    counts = np.zeros(c, dtype=np.int64)
    if row_major(x):
        for i in range(n):
            for j in range(c):
                v = x[uintp(i), uintp(j0 + j)]
                cols[uintp(j), uintp(counts[j])] = v
                counts[j] += (not compact) or v == v  # written always, kept if valid
    else:
        for j in range(c):
            m = 0
            for i in range(n):
                v = x[uintp(i), uintp(j0 + j)]
                cols[uintp(j), uintp(m)] = v
                m += (not compact) or v == v
            counts[j] = m
    return c, counts


# The passes read ``src[i0:i0 + r, j0:j0 + c]`` (the panel itself when it is row-major,
# else a tile at offset 0). Unsigned indices skip numba's negative-index wraparound,
# which would keep LLVM from vectorizing the loops across columns.


@njit(cache=True)
def _sum_count(src, i0, j0, r, c, shift, s, m):  # type: ignore[no-untyped-def]
    for i in range(r):
        for j in range(c):
            v = src[uintp(i0 + i), uintp(j0 + j)] - shift
            ok = v == v
            s[j] += v if ok else 0.0
            m[j] += 1.0 if ok else 0.0


@njit(cache=True)
def _range(src, i0, j0, r, c, shift, lo, hi):  # type: ignore[no-untyped-def]
    for i in range(r):
        for j in range(c):
            v = src[uintp(i0 + i), uintp(j0 + j)] - shift
            lo[j] = v if v < lo[j] else lo[j]
            hi[j] = v if v > hi[j] else hi[j]


@njit(cache=True)
def _squares(src, i0, j0, r, c, shift, mean, ss):  # type: ignore[no-untyped-def]
    for i in range(r):
        for j in range(c):
            v = src[uintp(i0 + i), uintp(j0 + j)] - shift
            d = v - mean[j]
            ss[j] += d * d if v == v else 0.0


@njit(cache=True)
def moments_block(x, j0, shift, ddof, mean, sd, count):  # type: ignore[no-untyped-def]
    """Mean, std and count of ``x[:, j0:j0 + c] - shift`` per column into ``[:c]``; return ``c``.

    Two passes, like ``risk._mean_std`` on the compacted column: the std is NaN when
    ``m - ddof < 1`` and exactly 0.0 when all values are equal; mean and std are NaN
    for an all-NaN column.
    """
    n, k = x.shape
    c = min(TILE_COLS, k - j0)
    tile = np.empty((TILE_ROWS, TILE_COLS))
    s = np.zeros(TILE_COLS)
    m = np.zeros(TILE_COLS)
    lo = np.full(TILE_COLS, np.inf)
    hi = np.full(TILE_COLS, -np.inf)
    direct = row_major(x)
    for i0 in range(0, n, TILE_ROWS):
        r = min(TILE_ROWS, n - i0)
        if direct:
            _sum_count(x, i0, j0, r, c, shift, s, m)
            _range(x, i0, j0, r, c, shift, lo, hi)
        else:
            load_tile(x, i0, j0, tile)
            _sum_count(tile, 0, 0, r, c, shift, s, m)
            _range(tile, 0, 0, r, c, shift, lo, hi)
    for j in range(c):
        mean[j] = s[j] / m[j] if m[j] > 0.0 else np.nan
    ss = np.zeros(TILE_COLS)
    for i0 in range(0, n, TILE_ROWS):
        r = min(TILE_ROWS, n - i0)
        if direct:
            _squares(x, i0, j0, r, c, shift, mean, ss)
        else:
            load_tile(x, i0, j0, tile)
            _squares(tile, 0, 0, r, c, shift, mean, ss)
    for j in range(c):
        mj = int(m[j])
        count[j] = mj
        if mj == 0 or mj - ddof < 1:
            sd[j] = np.nan
        elif lo[j] == hi[j]:
            sd[j] = 0.0
        else:
            sd[j] = math.sqrt(ss[j] / (mj - ddof))
    return c


@njit(cache=True)
def _downside(src, i0, j0, r, c, shift, d2):  # type: ignore[no-untyped-def]
    for i in range(r):
        for j in range(c):
            a = src[uintp(i0 + i), uintp(j0 + j)] - shift
            d = a if a < 0.0 else 0.0  # NaN fails the test: adds 0
            d2[j] += d * d


@njit(cache=True)
def downside_block(x, j0, shift, s, m, d2):  # type: ignore[no-untyped-def]
    """Per column of ``a = x[:, j0:j0 + c] - shift``: ``sum(a)``, the count and ``sum(min(a, 0)^2)``."""
    n, k = x.shape
    c = min(TILE_COLS, k - j0)
    tile = np.empty((TILE_ROWS, TILE_COLS))
    direct = row_major(x)
    for i0 in range(0, n, TILE_ROWS):
        r = min(TILE_ROWS, n - i0)
        if direct:
            _sum_count(x, i0, j0, r, c, shift, s, m)
            _downside(x, i0, j0, r, c, shift, d2)
        else:
            load_tile(x, i0, j0, tile)
            _sum_count(tile, 0, 0, r, c, shift, s, m)
            _downside(tile, 0, 0, r, c, shift, d2)
    return c
