"""Drawdown kernels on the wealth index ``W[t] = prod(1 + r[:t+1])`` (``W`` starts at 1)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange, uintp

from quantcore._kernels.tiles import (
    ROW_UNROLL,
    TILE_COLS,
    TILE_ROWS,
    as_c,
    c_typed,
    chunk_cols,
    load_tile,
)
from quantcore._parallel import parallel_kernel
from quantcore._typing import Float64Array1D, Float64Array2D, Int64Array2D, Offset

__all__ = ["drawdown_periods_nb", "drawdown_series_nb", "max_drawdown_nb"]


@parallel_kernel()
def drawdown_series_nb(returns: Float64Array2D) -> Float64Array2D:
    """``W[t] / max(1, W[:t+1]) - 1`` per column; NaN where the input is NaN."""
    n, k = returns.shape
    out = np.empty((n, k))
    for j in prange(k):
        wealth = 1.0
        peak = 1.0
        for i in range(n):
            r = returns[i, j]
            if np.isnan(r):
                out[i, j] = np.nan
                continue
            wealth *= 1.0 + r
            peak = max(peak, wealth)
            out[i, j] = (wealth - peak) / peak
    return out


@njit(cache=True)
def _max_drawdown(col: Float64Array1D) -> float:
    """Most negative drawdown of one column (0.0 if it never falls), NaN if no valid value."""
    wealth = 1.0
    peak = 1.0
    worst = 0.0
    m = 0
    for i in range(col.shape[0]):
        r = col[i]
        if np.isnan(r):
            continue
        m += 1
        wealth *= 1.0 + r
        peak = max(peak, wealth)
        worst = min(worst, (wealth - peak) / peak)
    return worst if m > 0 else np.nan


# numpy's error model: a division by zero gives inf/NaN instead of raising, so the
# loop has no branch and vectorizes (the peak is >= 1, never zero).
@njit(cache=True, error_model="numpy")
def _drawdown_step(
    v: float, w: float, mj: float, p: float, low: float
) -> tuple[float, float, float, float]:
    ok = v == v
    # a NaN row leaves wealth and peak as they were: the drawdown repeats, min unchanged
    w = w * (1.0 + v) if ok else w
    mj += 1.0 if ok else 0.0
    p = w if w > p else p
    d = (w - p) / p
    low = d if d < low else low
    return w, mj, p, low


@njit(cache=True, error_model="numpy")
def _drawdown_rows(
    src: Float64Array2D,
    i0: Offset,
    j0: Offset,
    r: int,
    c: int,
    wealth: Float64Array1D,
    m: Float64Array1D,
    peak: Float64Array1D,
    worst: Float64Array1D,
) -> None:
    i = 0
    while i + ROW_UNROLL <= r:  # ROW_UNROLL rows per load and store of the accumulators
        a = i0 + uintp(i)
        for j in range(c):
            jj = j0 + uintp(j)
            w, mj, p, low = wealth[j], m[j], peak[j], worst[j]
            for q in range(ROW_UNROLL):
                w, mj, p, low = _drawdown_step(src[a + uintp(q), jj], w, mj, p, low)
            wealth[j], m[j], peak[j], worst[j] = w, mj, p, low
        i += ROW_UNROLL
    for t in range(i, r):
        a = i0 + uintp(t)
        for j in range(c):
            wealth[j], m[j], peak[j], worst[j] = _drawdown_step(
                src[a, j0 + uintp(j)], wealth[j], m[j], peak[j], worst[j]
            )


@njit(cache=True)
def _max_drawdown_chunk(returns: Float64Array2D, j0: int, c: int, out: Float64Array1D) -> None:
    n = returns.shape[0]
    wealth = np.ones(c)
    m = np.zeros(c)
    peak = np.ones(c)
    worst = np.zeros(c)
    zero = uintp(0)
    if c_typed(returns):
        _drawdown_rows(as_c(returns), zero, uintp(j0), n, c, wealth, m, peak, worst)
    else:
        tile = np.empty((TILE_ROWS, TILE_COLS))
        for i0 in range(0, n, TILE_ROWS):
            r = min(TILE_ROWS, n - i0)
            load_tile(returns, i0, j0, tile)
            _drawdown_rows(tile, zero, zero, r, c, wealth, m, peak, worst)
    for j in range(c):
        out[j0 + j] = worst[j] if m[j] > 0.0 else np.nan


@parallel_kernel()
def max_drawdown_nb(returns: Float64Array2D) -> Float64Array1D:
    """Maximum drawdown per column (a fraction in [-1, 0]), read in the panel's memory order."""
    k = returns.shape[1]
    out = np.empty(k)
    w = chunk_cols(returns)
    for blk in prange((k + w - 1) // w):
        _max_drawdown_chunk(returns, blk * w, min(w, k - blk * w), out)
    return out


@njit(cache=True)
def _periods(
    col: Float64Array1D, j: int, ints: Int64Array2D, depth: Float64Array1D, start: int
) -> int:
    """Scan one column; write its periods from row ``start`` if ``ints`` has rows, return count.

    ``ints`` columns: column, peak, valley, recovery, duration.
    """
    write = ints.shape[0] > 0
    count = 0
    wealth = 1.0
    hwm = 1.0
    hwm_row = -1
    first = True
    in_dd = False
    valley = -1
    valley_w = 1.0
    last = -1
    for i in range(col.shape[0]):
        r = col[i]
        if np.isnan(r):
            continue
        if first:
            hwm_row = i - 1  # the row before the first return holds the starting capital
            first = False
        last = i
        wealth *= 1.0 + r
        if wealth >= hwm:
            if in_dd:
                if write:
                    row = start + count
                    ints[row, 0] = j
                    ints[row, 1] = hwm_row
                    ints[row, 2] = valley
                    ints[row, 3] = i
                    ints[row, 4] = i - hwm_row
                    depth[row] = (valley_w - hwm) / hwm
                count += 1
                in_dd = False
            hwm = wealth
            hwm_row = i
        elif not in_dd:
            in_dd = True
            valley = i
            valley_w = wealth
        elif wealth < valley_w:
            valley = i
            valley_w = wealth
    if in_dd:
        if write:
            row = start + count
            ints[row, 0] = j
            ints[row, 1] = hwm_row
            ints[row, 2] = valley
            ints[row, 3] = -1
            ints[row, 4] = last - hwm_row
            depth[row] = (valley_w - hwm) / hwm
        count += 1
    return count


@parallel_kernel()
def drawdown_periods_nb(returns: Float64Array2D) -> tuple[Int64Array2D, Float64Array1D]:
    """All drawdown periods of every column, column-major.

    Returns ``ints`` (rows: column, peak, valley, recovery, duration) and ``depth``.
    Two passes: count per column, then fill at the prefix-sum offsets, so memory
    grows with the number of periods, not with the panel.
    """
    k = returns.shape[1]
    counts = np.zeros(k, dtype=np.int64)
    none_i = np.empty((0, 5), dtype=np.int64)
    none_d = np.empty(0)
    for j in prange(k):
        counts[j] = _periods(returns[:, j], j, none_i, none_d, 0)
    offsets = np.zeros(k + 1, dtype=np.int64)
    for j in range(k):
        offsets[j + 1] = offsets[j] + counts[j]
    ints = np.empty((offsets[k], 5), dtype=np.int64)
    depth = np.empty(offsets[k])
    for j in prange(k):
        if counts[j] > 0:
            _periods(returns[:, j], j, ints, depth, offsets[j])
    return ints, depth
