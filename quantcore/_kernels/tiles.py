"""Reading a panel in its memory order: column chunks, tiles, and the passes over them.

A panel reduction keeps one accumulator per column and walks the rows, so that the
inner loop runs across columns (SIMD lanes, independent chains) while each column
still sees its values in time order: the sums are the same, to the last bit, as a
plain loop down each column. Each pass takes ``ROW_UNROLL`` rows per load and
store of a column's accumulators, which then stay in registers.

A C-typed (row-major) panel is read in place, in chunks of columns as wide as
a power-of-two share of the panel allows (:func:`chunk_cols`): each pass walks every
row of its chunk in one long, vectorized inner loop over the columns, with one
accumulator array per statistic (a few KB, in L1). Narrow blocks would cut each
row into short pieces: measured 2x slower on a 2,520 x 1,000 panel. Any other
layout is split into ``TILE_COLS``-wide chunks: the two-pass statistics copy a
chunk once into a row-major block (:func:`gather_block`) and read that twice;
the one-pass ones copy ``TILE_ROWS x TILE_COLS`` tiles (:func:`load_tile`).
Percentiles need whole columns: :func:`load_columns` gathers a block of columns.

The in-place path is chosen by the array's numba type (:func:`c_typed`, a
compile-time constant), and reads :func:`as_c` of it, so the passes are compiled
for C-typed arrays only, whatever the input's layout; each is called from one
place (LLVM inlines a callee, and optimizes it again, at every call site).
Chunks are independent: the public kernels are thin ``prange`` loops over them
that call one serial function per chunk. Select expressions (``v if ok else 0.0``)
keep the loops branch-free; NaN fails every comparison, which the ``lo``/``hi``
updates rely on. Offsets are passed as ``uintp`` (no literal-typed copies).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit, uintp
from numba.extending import overload

from quantcore._typing import Float64Array1D, Float64Array2D, Int64Array1D, Offset

__all__ = [
    "CHUNK_MIN_COLS",
    "GATHER_MAX_VALUES",
    "ROW_UNROLL",
    "TILE_COLS",
    "TILE_ROWS",
    "as_c",
    "c_typed",
    "chunk_cols",
    "downside_block",
    "gather_block",
    "load_columns",
    "load_tile",
    "moments_block",
    "row_major",
]

#: A tile is 64 x 64 float64 (32 KB): it and the accumulators stay in L1.
TILE_ROWS = 64
TILE_COLS = 64

#: The passes update each column's accumulators from this many rows per load and
#: store of them (in registers, in time order): 2-3x faster than one row at a time.
#: The shared-benchmark passes of ``risk._pair_sums``/``_pair_products`` spell out 4.
ROW_UNROLL = 4

#: A two-pass statistic copies a column-major chunk of up to this many values into a
#: row-major block once (8 MB), instead of transposing it tile by tile in each pass.
GATHER_MAX_VALUES = 1 << 20

#: A row-major panel is split into at most 64 chunks, a power of two of them (so that
#: 2, 4, ... threads get equal shares), each at least this many columns wide.
CHUNK_MIN_COLS = 200


def c_typed(x: np.ndarray) -> bool:
    """Whether numba types ``x`` as C-contiguous (a constant of the compiled code).

    The kernels read ``x`` in place only then, through :func:`as_c`; any other
    layout goes through row-major copies. So the row passes are compiled for
    C-typed arrays only: a Fortran-ordered input does not also compile (and
    optimize) an in-place path for its own type that would never run.
    """
    return bool(x.flags.c_contiguous)


# numba requires an overload and its implementation to declare the same parameters,
# annotations included: both say Any (a numba type here, an array in the implementation)


@overload(c_typed)
def _c_typed(x: Any) -> Callable[[Any], bool]:
    const: bool = x.layout == "C"

    def impl(x: Any) -> bool:
        return const

    return impl


def as_c(x: np.ndarray) -> np.ndarray:
    """``x`` itself when it is C-typed (see :func:`c_typed`); else a C-ordered copy (never
    executed by the kernels: they call it only under ``c_typed(x)``)."""
    return np.ascontiguousarray(x)


@overload(as_c)
def _as_c(x: Any) -> Callable[[Any], Any]:
    def same(x: Any) -> Any:
        return x

    def copy(x: Any) -> Any:
        return np.ascontiguousarray(x)

    return same if x.layout == "C" else copy


@njit(cache=True)
def chunk_cols(x: Float64Array2D) -> int:
    """Columns per parallel chunk: wide chunks for a C-typed panel, else a tile's width."""
    k = x.shape[1]
    if not c_typed(x):
        return TILE_COLS
    chunks = 1
    while chunks < 64 and k >= 2 * chunks * CHUNK_MIN_COLS:
        chunks *= 2
    w = (k + chunks - 1) // chunks
    return int(max(8, (w + 7) // 8 * 8))


@njit(cache=True)
def row_major(x: Float64Array2D) -> bool:
    """True when the rows of ``x`` are contiguous: passes read ``x`` directly, else a tile."""
    return x.strides[1] == x.itemsize and x.strides[0] >= x.strides[1]


@njit(cache=True)
def load_tile(x: Float64Array2D, i0: int, j0: int, tile: Float64Array2D) -> tuple[int, int]:
    """Copy ``x[i0:i0 + r, j0:j0 + c]`` into ``tile[:r, :c]``; return ``r, c``."""
    n, k = x.shape
    r = min(TILE_ROWS, n - i0)
    c = min(TILE_COLS, k - j0)
    for j in range(c):  # down the columns of a column-major x
        for i in range(r):
            tile[uintp(i), uintp(j)] = x[uintp(i0 + i), uintp(j0 + j)]
    return r, c


@njit(cache=True)
def load_columns(
    x: Float64Array2D, j0: int, cols: Float64Array2D, compact: bool
) -> tuple[int, Int64Array1D]:
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


# The passes read ``src[i0:i0 + r, j0:j0 + c]``: the panel itself when it is row-major
# (all its rows at once), else a tile at offset 0. Unsigned indices skip numba's
# negative-index wraparound, which would keep LLVM from vectorizing the loops across columns.


@njit(cache=True)
def _moments_step(
    v: float, sj: float, mj: float, lj: float, hj: float
) -> tuple[float, float, float, float]:
    ok = v == v
    sj += v if ok else 0.0
    mj += 1.0 if ok else 0.0
    lj = v if v < lj else lj
    hj = v if v > hj else hj
    return sj, mj, lj, hj


@njit(cache=True)
def _moments_rows(
    src: Float64Array2D,
    i0: Offset,
    j0: Offset,
    r: int,
    c: int,
    shift: float,
    s: Float64Array1D,
    m: Float64Array1D,
    lo: Float64Array1D,
    hi: Float64Array1D,
) -> None:
    i = 0
    while i + ROW_UNROLL <= r:  # ROW_UNROLL rows per load and store of the accumulators
        a = i0 + uintp(i)
        for j in range(c):
            jj = j0 + uintp(j)
            sj, mj, lj, hj = s[j], m[j], lo[j], hi[j]
            for q in range(ROW_UNROLL):
                sj, mj, lj, hj = _moments_step(src[a + uintp(q), jj] - shift, sj, mj, lj, hj)
            s[j], m[j], lo[j], hi[j] = sj, mj, lj, hj
        i += ROW_UNROLL
    for t in range(i, r):
        a = i0 + uintp(t)
        for j in range(c):
            s[j], m[j], lo[j], hi[j] = _moments_step(
                src[a, j0 + uintp(j)] - shift, s[j], m[j], lo[j], hi[j]
            )


@njit(cache=True)
def _squares(
    src: Float64Array2D,
    i0: Offset,
    j0: Offset,
    r: int,
    c: int,
    shift: float,
    mean: Float64Array1D,
    ss: Float64Array1D,
) -> None:
    i = 0
    while i + ROW_UNROLL <= r:
        a = i0 + uintp(i)
        for j in range(c):
            jj = j0 + uintp(j)
            mu = mean[j]
            acc = ss[j]
            for q in range(ROW_UNROLL):
                v = src[a + uintp(q), jj] - shift
                d = v - mu
                acc += d * d if v == v else 0.0
            ss[j] = acc
        i += ROW_UNROLL
    for t in range(i, r):
        a = i0 + uintp(t)
        for j in range(c):
            v = src[a, j0 + uintp(j)] - shift
            d = v - mean[j]
            ss[j] += d * d if v == v else 0.0


@njit(cache=True)
def _means(s: Float64Array1D, m: Float64Array1D, c: int, mean: Float64Array1D) -> None:
    for j in range(c):
        mean[j] = s[j] / m[j] if m[j] > 0.0 else np.nan


@njit(cache=True)
def _two_pass(
    src: Float64Array2D,
    j0: Offset,
    n: int,
    c: int,
    shift: float,
    s: Float64Array1D,
    m: Float64Array1D,
    lo: Float64Array1D,
    hi: Float64Array1D,
    mean: Float64Array1D,
    ss: Float64Array1D,
) -> None:
    """Both passes of ``moments_block`` over the row-major ``src[:, j0:j0 + c]``."""
    zero = uintp(0)
    _moments_rows(src, zero, j0, n, c, shift, s, m, lo, hi)
    _means(s, m, c, mean)
    _squares(src, zero, j0, n, c, shift, mean, ss)


@njit(cache=True)
def gather_block(x: Float64Array2D, j0: int, c: int) -> Float64Array2D:
    """``x[:, j0:j0 + c]`` as a new row-major array, read down each column.

    Copied in ``TILE_ROWS``-row strips, so that the strip being written stays in L1.
    """
    n = x.shape[0]
    buf = np.empty((n, c))
    for i0 in range(0, n, TILE_ROWS):
        i1 = min(n, i0 + TILE_ROWS)
        for jj in range(c):
            for i in range(i0, i1):
                buf[uintp(i), uintp(jj)] = x[uintp(i), uintp(j0 + jj)]
    return buf


@njit(cache=True)
def moments_block(
    x: Float64Array2D,
    j0: int,
    c: int,
    shift: float,
    ddof: int,
    mean: Float64Array1D,
    sd: Float64Array1D,
    count: Int64Array1D,
) -> None:
    """Mean, std and count of ``x[:, j0:j0 + c] - shift`` per column into ``[:c]``.

    ``c`` is at most :func:`chunk_cols`. A C-typed ``x`` is read in place; any other
    layout is copied to row-major blocks of at most ``GATHER_MAX_VALUES`` (both passes
    read the copy). One call site of the passes keeps the compiled code small.
    Two passes, like ``risk._mean_std`` on the compacted column: the std is NaN when
    ``m - ddof < 1`` and exactly 0.0 when all values are equal; mean and std are NaN
    for an all-NaN column.
    """
    n = x.shape[0]
    s = np.zeros(c)
    m = np.zeros(c)
    lo = np.full(c, np.inf)
    hi = np.full(c, -np.inf)
    ss = np.zeros(c)
    direct = c_typed(x)
    # copied once, read twice; a chunk too long for one copy goes column by column
    step = c if direct else max(1, min(c, GATHER_MAX_VALUES // max(n, 1)))
    for jb in range(0, c, step):
        cw = min(step, c - jb)
        src, sj = (as_c(x), uintp(j0 + jb)) if direct else (gather_block(x, j0 + jb, cw), uintp(0))
        _two_pass(src, sj, n, cw, shift, s[jb:], m[jb:], lo[jb:], hi[jb:], mean[jb:], ss[jb:])
    for j in range(c):
        mj = int(m[j])
        count[j] = mj
        if mj == 0 or mj - ddof < 1:
            sd[j] = np.nan
        elif lo[j] == hi[j]:
            sd[j] = 0.0
        else:
            sd[j] = math.sqrt(ss[j] / (mj - ddof))


@njit(cache=True)
def _downside_step(a: float, sj: float, mj: float, dj: float) -> tuple[float, float, float]:
    ok = a == a
    sj += a if ok else 0.0
    mj += 1.0 if ok else 0.0
    d = a if a < 0.0 else 0.0  # NaN fails the test: adds 0
    dj += d * d
    return sj, mj, dj


@njit(cache=True)
def _downside_rows(
    src: Float64Array2D,
    i0: Offset,
    j0: Offset,
    r: int,
    c: int,
    shift: float,
    s: Float64Array1D,
    m: Float64Array1D,
    d2: Float64Array1D,
) -> None:
    i = 0
    while i + ROW_UNROLL <= r:
        a = i0 + uintp(i)
        for j in range(c):
            jj = j0 + uintp(j)
            sj, mj, dj = s[j], m[j], d2[j]
            for q in range(ROW_UNROLL):
                sj, mj, dj = _downside_step(src[a + uintp(q), jj] - shift, sj, mj, dj)
            s[j], m[j], d2[j] = sj, mj, dj
        i += ROW_UNROLL
    for t in range(i, r):
        a = i0 + uintp(t)
        for j in range(c):
            s[j], m[j], d2[j] = _downside_step(src[a, j0 + uintp(j)] - shift, s[j], m[j], d2[j])


@njit(cache=True)
def downside_block(
    x: Float64Array2D,
    j0: int,
    c: int,
    shift: float,
    s: Float64Array1D,
    m: Float64Array1D,
    d2: Float64Array1D,
) -> None:
    """Per column of ``a = x[:, j0:j0 + c] - shift``: ``sum(a)``, the count and ``sum(min(a, 0)^2)``."""
    n = x.shape[0]
    zero = uintp(0)
    if c_typed(x):
        _downside_rows(as_c(x), zero, uintp(j0), n, c, shift, s, m, d2)
        return
    tile = np.empty((TILE_ROWS, TILE_COLS))
    for i0 in range(0, n, TILE_ROWS):
        r = min(TILE_ROWS, n - i0)
        load_tile(x, i0, j0, tile)
        _downside_rows(tile, zero, zero, r, c, shift, s, m, d2)
