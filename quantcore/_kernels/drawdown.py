"""Drawdown kernels on the wealth index ``W[t] = prod(1 + r[:t+1])`` (``W`` starts at 1)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange, uintp

from quantcore._kernels.tiles import TILE_COLS, TILE_ROWS, load_tile, n_blocks, row_major

__all__ = ["drawdown_periods_nb", "drawdown_series_nb", "max_drawdown_nb"]


@njit(cache=True, parallel=True)
def drawdown_series_nb(returns):  # type: ignore[no-untyped-def]
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
def _max_drawdown(col):  # type: ignore[no-untyped-def]
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


@njit(cache=True)
def _drawdown_rows(src, i0, j0, r, c, wealth, m, peak, worst):  # type: ignore[no-untyped-def]
    for i in range(r):
        for j in range(c):
            v = src[uintp(i0 + i), uintp(j0 + j)]
            ok = v == v
            wealth[j] *= 1.0 + v if ok else 1.0
            m[j] += 1.0 if ok else 0.0
        # a NaN row leaves wealth and peak as they were: the drawdown repeats, min unchanged
        for j in range(c):
            w = wealth[j]
            p = w if w > peak[j] else peak[j]
            peak[j] = p
            d = (w - p) / p
            worst[j] = d if d < worst[j] else worst[j]


@njit(cache=True, parallel=True)
def max_drawdown_nb(returns):  # type: ignore[no-untyped-def]
    """Maximum drawdown per column (a fraction in [-1, 0]), read in the panel's memory order."""
    n, k = returns.shape
    out = np.empty(k)
    for blk in prange(n_blocks(k)):
        j0 = blk * TILE_COLS
        c = min(TILE_COLS, k - j0)
        tile = np.empty((TILE_ROWS, TILE_COLS))
        wealth = np.ones(TILE_COLS)
        m = np.zeros(TILE_COLS)
        peak = np.ones(TILE_COLS)
        worst = np.zeros(TILE_COLS)
        direct = row_major(returns)
        for i0 in range(0, n, TILE_ROWS):
            r = min(TILE_ROWS, n - i0)
            if direct:
                _drawdown_rows(returns, i0, j0, r, c, wealth, m, peak, worst)
            else:
                load_tile(returns, i0, j0, tile)
                _drawdown_rows(tile, 0, 0, r, c, wealth, m, peak, worst)
        for j in range(c):
            out[j0 + j] = worst[j] if m[j] > 0.0 else np.nan
    return out


@njit(cache=True)
def _periods(col, j, ints, depth, start):  # type: ignore[no-untyped-def]
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


@njit(cache=True, parallel=True)
def drawdown_periods_nb(returns):  # type: ignore[no-untyped-def]
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
