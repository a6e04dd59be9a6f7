"""Rolling-window kernels: volatility, Sharpe ratio and beta over a sliding window.

Each kernel walks the rows of a block of ``TILE_COLS`` columns and keeps
per-column running moments, updated Welford-style as a row enters and the row
``window`` back leaves (one fused replace update, without a division, when the
window is full). In a C-ordered panel each row of the block is one contiguous
read; in a Fortran-ordered one each column of the block is read front to back,
64 sequential streams. Walking one column alone would be slower: its updates
form one chain of dependent operations, and interleaving 64 independent
columns hides their latency (measured 2.5-3x on the 2,520 x 1,000 benchmark
panel). The output has the input's layout. The arithmetic per column does not
depend on the layout, so C and F inputs give bit-identical results. Rounding drift of the add/remove updates is
bounded by rebuilding the moments from the whole window every ``window``
rows, and at once for a column whose sum of squares falls below
:data:`DRIFT_DROP` times its peak since the last rebuild (removing a large
value leaves an absolute error of about ``eps * peak``, which would be a
large relative error of a small variance).

A window holding a NaN or an infinity gives NaN. A window of equal values has
exactly zero dispersion (tracked as a run of equal values, so a rounding
residue of the updates cannot turn into a huge ratio).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from quantcore._kernels.risk import _TINY_VARIANCE
from quantcore._kernels.tiles import TILE_COLS

__all__ = ["rolling_beta_nb", "rolling_moments_nb"]

#: A column's moments are rebuilt when its sum of squares drops below this fraction of its peak.
DRIFT_DROP = 2.0**-4

#: ``rolling_moments_nb`` modes.
VOLATILITY = 0
SHARPE = 1


@njit(cache=True)
def _is_restart(t, window):  # type: ignore[no-untyped-def]
    """Rows where the moments are rebuilt from the whole window instead of updated."""
    return (t - (window - 1)) % window == 0


@njit(cache=True)
def _moments_of(x, j, t, window, shift):  # type: ignore[no-untyped-def]
    """Count, mean and sum of squared deviations of the valid values of window ``t`` of column ``j``."""
    cnt = 0.0
    mean = 0.0
    m2 = 0.0
    for s in range(t - window + 1, t + 1):
        v = x[s, j] - shift
        if np.isfinite(v):
            cnt += 1.0
            d = v - mean
            mean += d / cnt
            m2 += d * (v - mean)
    return cnt, mean, m2


@njit(cache=True)
def _comoments_of(x, b, j, jb, t, window):  # type: ignore[no-untyped-def]
    """Count, means and co-moments of the valid pairs of window ``t`` of ``x[:, j]``, ``b[:, jb]``."""
    cnt = 0.0
    mx = 0.0
    mb = 0.0
    mxx = 0.0
    mbb = 0.0
    cxb = 0.0
    for s in range(t - window + 1, t + 1):
        u = x[s, j]
        v = b[s, jb]
        if np.isfinite(u) and np.isfinite(v):
            cnt += 1.0
            dx = u - mx
            mx += dx / cnt
            db = v - mb
            mb += db / cnt
            mxx += dx * (u - mx)
            cxb += dx * (v - mb)
            mbb += db * (v - mb)
    return cnt, mx, mb, mxx, mbb, cxb


@njit(cache=True, parallel=True)
def rolling_moments_nb(x, window, shift, ppy, ddof, mode):  # type: ignore[no-untyped-def]
    """Rolling volatility (``mode`` 0) or Sharpe ratio (``mode`` 1) of each column.

    ``shift`` is subtracted from every value first (the per-period risk-free
    rate of the Sharpe ratio). Rows before ``window - 1`` are NaN.
    """
    n, k = x.shape
    out = np.empty_like(x)  # the layout of the input: rows or columns written in order
    bw = TILE_COLS
    blocks = (k + bw - 1) // bw
    scale = math.sqrt(ppy)
    inv_window = 1.0 / window
    for blk in prange(blocks):
        j0 = blk * bw
        j1 = min(k, j0 + bw)
        c = j1 - j0
        cnt = np.zeros(c)
        mean = np.zeros(c)
        m2 = np.zeros(c)
        peak = np.zeros(c)
        bad = np.zeros(c, dtype=np.int64)
        run = np.zeros(c, dtype=np.int64)
        prev = np.full(c, np.nan)
        for t in range(n):
            for jj in range(c):
                v = x[t, j0 + jj]
                run[jj] = run[jj] + 1 if v == prev[jj] else 1
                prev[jj] = v
            if t < window - 1:
                for jj in range(c):
                    out[t, j0 + jj] = np.nan
                continue
            if _is_restart(t, window):
                cnt[:] = 0.0
                mean[:] = 0.0
                m2[:] = 0.0
                peak[:] = 0.0
                bad[:] = 0
                for s in range(t - window + 1, t + 1):
                    for jj in range(c):
                        v = x[s, j0 + jj] - shift
                        if not np.isfinite(v):
                            bad[jj] += 1
                        else:
                            cnt[jj] += 1.0
                            d = v - mean[jj]
                            mean[jj] += d / cnt[jj]
                            m2[jj] += d * (v - mean[jj])
            else:
                for jj in range(c):
                    u = x[t - window, j0 + jj] - shift
                    v = x[t, j0 + jj] - shift
                    if bad[jj] == 0 and np.isfinite(u) and np.isfinite(v):
                        # a full window: one value replaces another (no division)
                        d = v - u
                        new_mean = mean[jj] + d * inv_window
                        m2[jj] += d * ((v - new_mean) + (u - mean[jj]))
                        mean[jj] = new_mean
                        continue
                    v = u
                    if not np.isfinite(v):
                        bad[jj] -= 1
                    elif cnt[jj] <= 1.0:
                        cnt[jj] = 0.0
                        mean[jj] = 0.0
                        m2[jj] = 0.0
                    else:
                        cnt[jj] -= 1.0
                        d = v - mean[jj]
                        mean[jj] -= d / cnt[jj]
                        m2[jj] -= d * (v - mean[jj])
                    v = x[t, j0 + jj] - shift
                    if not np.isfinite(v):
                        bad[jj] += 1
                    else:
                        cnt[jj] += 1.0
                        d = v - mean[jj]
                        mean[jj] += d / cnt[jj]
                        m2[jj] += d * (v - mean[jj])
            for jj in range(c):
                if bad[jj] == 0 and run[jj] < window and m2[jj] < DRIFT_DROP * peak[jj]:
                    cnt[jj], mean[jj], m2[jj] = _moments_of(x, j0 + jj, t, window, shift)
                    peak[jj] = m2[jj]
                peak[jj] = max(peak[jj], m2[jj])
                if bad[jj] > 0:
                    out[t, j0 + jj] = np.nan
                    continue
                ss = 0.0 if run[jj] >= window else max(m2[jj], 0.0)
                if mode == VOLATILITY:
                    out[t, j0 + jj] = math.sqrt(ss / (window - ddof)) * scale
                elif ss == 0.0:
                    out[t, j0 + jj] = np.nan
                else:
                    out[t, j0 + jj] = mean[jj] / math.sqrt(ss / (window - 1)) * scale
    return out


@njit(cache=True, parallel=True)
def rolling_beta_nb(x, b, window):  # type: ignore[no-untyped-def]
    """Rolling OLS slope of each column of ``x`` on ``b`` (one column or one per column).

    Rows before ``window - 1`` are NaN; so is a window whose benchmark variance
    (ddof 0) is below empyrical's 1e-30.
    """
    n, k = x.shape
    shared = b.shape[1] == 1
    out = np.empty_like(x)  # the layout of the input: rows or columns written in order
    bw = TILE_COLS
    blocks = (k + bw - 1) // bw
    for blk in prange(blocks):
        j0 = blk * bw
        j1 = min(k, j0 + bw)
        c = j1 - j0
        cnt = np.zeros(c)
        mx = np.zeros(c)
        mb = np.zeros(c)
        mxx = np.zeros(c)
        mbb = np.zeros(c)
        cxb = np.zeros(c)
        peak_x = np.zeros(c)
        peak_b = np.zeros(c)
        bad = np.zeros(c, dtype=np.int64)
        run = np.zeros(c, dtype=np.int64)
        prev = np.full(c, np.nan)
        for t in range(n):
            for jj in range(c):
                v = b[t, 0 if shared else j0 + jj]
                run[jj] = run[jj] + 1 if v == prev[jj] else 1
                prev[jj] = v
            if t < window - 1:
                for jj in range(c):
                    out[t, j0 + jj] = np.nan
                continue
            if _is_restart(t, window):
                cnt[:] = 0.0
                mx[:] = 0.0
                mb[:] = 0.0
                mxx[:] = 0.0
                mbb[:] = 0.0
                cxb[:] = 0.0
                peak_x[:] = 0.0
                peak_b[:] = 0.0
                bad[:] = 0
                first = t - window + 1
            else:
                first = t
                for jj in range(c):
                    u = x[t - window, j0 + jj]
                    v = b[t - window, 0 if shared else j0 + jj]
                    if not (np.isfinite(u) and np.isfinite(v)):
                        bad[jj] -= 1
                    elif cnt[jj] <= 1.0:
                        cnt[jj] = 0.0
                        mx[jj] = 0.0
                        mb[jj] = 0.0
                        mxx[jj] = 0.0
                        mbb[jj] = 0.0
                        cxb[jj] = 0.0
                    else:
                        cnt[jj] -= 1.0
                        dx = u - mx[jj]
                        db = v - mb[jj]
                        mx[jj] -= dx / cnt[jj]
                        mb[jj] -= db / cnt[jj]
                        mxx[jj] -= (u - mx[jj]) * dx
                        cxb[jj] -= (u - mx[jj]) * db
                        mbb[jj] -= (v - mb[jj]) * db
            for s in range(first, t + 1):
                for jj in range(c):
                    u = x[s, j0 + jj]
                    v = b[s, 0 if shared else j0 + jj]
                    if not (np.isfinite(u) and np.isfinite(v)):
                        bad[jj] += 1
                    else:
                        cnt[jj] += 1.0
                        dx = u - mx[jj]
                        mx[jj] += dx / cnt[jj]
                        db = v - mb[jj]
                        mb[jj] += db / cnt[jj]
                        mxx[jj] += dx * (u - mx[jj])
                        cxb[jj] += dx * (v - mb[jj])
                        mbb[jj] += db * (v - mb[jj])
            for jj in range(c):
                drifted = mxx[jj] < DRIFT_DROP * peak_x[jj] or mbb[jj] < DRIFT_DROP * peak_b[jj]
                if bad[jj] == 0 and run[jj] < window and drifted:
                    cnt[jj], mx[jj], mb[jj], mxx[jj], mbb[jj], cxb[jj] = _comoments_of(
                        x, b, j0 + jj, 0 if shared else j0 + jj, t, window
                    )
                    peak_x[jj] = mxx[jj]
                    peak_b[jj] = mbb[jj]
                peak_x[jj] = max(peak_x[jj], mxx[jj])
                peak_b[jj] = max(peak_b[jj], mbb[jj])
                vb = 0.0 if run[jj] >= window else max(mbb[jj], 0.0)
                if bad[jj] > 0 or vb / window < _TINY_VARIANCE:
                    out[t, j0 + jj] = np.nan
                else:
                    out[t, j0 + jj] = cxb[jj] / vb
    return out
