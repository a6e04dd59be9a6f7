"""Rolling-window kernels: volatility, Sharpe ratio and beta over a sliding window.

Each kernel walks the rows of a chunk of columns and keeps per-column running
moments, updated Welford-style as a row enters and the row ``window`` back
leaves (one fused replace update, without a division, when the window is full
and finite). Every step is one loop across the chunk's columns with no branch:
the update for a full window, the remove-then-add update and the "not finite"
bookkeeping are all computed and the right result selected, so LLVM vectorizes
the loop, and the selected arithmetic is exactly that of a branchy loop. A
row-major (C-ordered) panel is read in place, in wide chunks
(:func:`quantcore._kernels.tiles.chunk_cols`); a column-major one is copied a
64-column chunk at a time into a row-major scratch block (reading a row of a
column-major panel is 64 strided loads) and the result copied back, so the output has the input's layout. The arithmetic per column does not
depend on the layout, so C and F inputs give bit-identical results. Rounding drift of the add/remove updates is
bounded by rebuilding the moments from the whole window every ``window``
rows, and at once for a column whose sum of squares falls below
:data:`DRIFT_DROP` times its peak since the last rebuild (removing a large
value leaves an absolute error of about ``eps * peak``, which would be a
large relative error of a small variance).

A window holding a NaN or an infinity gives NaN. A window of equal values has
exactly zero dispersion (tracked as a run of equal values, so a rounding
residue of the updates cannot turn into a huge ratio). Divisions use numpy's
error model (no zero-division branch); a division by zero only ever happens in
a result that is not selected.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange, uintp

from quantcore._kernels.risk import _TINY_VARIANCE
from quantcore._kernels.tiles import TILE_COLS, TILE_ROWS, as_c, c_typed, chunk_cols, gather_block
from quantcore._parallel import parallel_kernel
from quantcore._typing import Float64Array1D, Float64Array2D, Int64Array1D

__all__ = ["rolling_beta_nb", "rolling_moments_nb"]

#: A column's moments are rebuilt when its sum of squares drops below this fraction of its peak.
DRIFT_DROP = 2.0**-4

#: ``rolling_moments_nb`` modes.
VOLATILITY = 0
SHARPE = 1


@njit(cache=True)
def _is_restart(t: int, window: int) -> bool:
    """Rows where the moments are rebuilt from the whole window instead of updated."""
    return (t - (window - 1)) % window == 0


@njit(cache=True)
def _moments_of(
    x: Float64Array2D, j: int, t: int, window: int, shift: float
) -> tuple[float, float, float]:
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
def _comoments_of(
    x: Float64Array2D, b: Float64Array2D, j: int, jb: int, t: int, window: int
) -> tuple[float, float, float, float, float, float]:
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


@njit(cache=True)
def _track_runs(
    x: Float64Array2D, t: int, j0: int, c: int, prev: Float64Array1D, run: Int64Array1D
) -> None:
    """Length of the run of equal values ending at row ``t``, per column."""
    for jj in range(c):
        v = x[uintp(t), uintp(j0 + jj)]
        run[jj] = run[jj] + 1 if v == prev[jj] else 1
        prev[jj] = v


@njit(cache=True, error_model="numpy")
def _rebuild(
    x: Float64Array2D,
    t: int,
    window: int,
    j0: int,
    c: int,
    shift: float,
    cnt: Float64Array1D,
    mean: Float64Array1D,
    m2: Float64Array1D,
    bad: Int64Array1D,
) -> None:
    """Moments of window ``t`` from scratch (Welford), for every column of the block.

    Branch-free: a value that is not finite (``v - v != 0``) only counts in ``bad``.
    """
    for jj in range(c):
        cnt[jj] = 0.0
        mean[jj] = 0.0
        m2[jj] = 0.0
        bad[jj] = 0
    for s in range(t - window + 1, t + 1):
        for jj in range(c):
            v = x[uintp(s), uintp(j0 + jj)] - shift
            fin = v - v == 0.0
            n1 = cnt[jj] + 1.0
            d = v - mean[jj]
            mu = mean[jj] + d / n1
            bad[jj] += 0 if fin else 1
            cnt[jj] = n1 if fin else cnt[jj]
            m2[jj] = m2[jj] + d * (v - mu) if fin else m2[jj]
            mean[jj] = mu if fin else mean[jj]


@njit(cache=True, error_model="numpy")
def _slide(
    x: Float64Array2D,
    t: int,
    window: int,
    j0: int,
    c: int,
    shift: float,
    inv_window: float,
    cnt: Float64Array1D,
    mean: Float64Array1D,
    m2: Float64Array1D,
    bad: Int64Array1D,
) -> None:
    """Row ``t - window`` leaves every column's moments and row ``t`` enters.

    A full window of finite values takes the fused replace update (no division);
    otherwise the leaving value is removed and the entering one added, Welford-style.
    Both are computed for every column and the right one selected, so the loop has
    no branch and vectorizes; the selected arithmetic is that of the branchy code.
    """
    for jj in range(c):
        u = x[uintp(t - window), uintp(j0 + jj)] - shift
        v = x[uintp(t), uintp(j0 + jj)] - shift
        fu = u - u == 0.0
        fv = v - v == 0.0
        n0 = cnt[jj]
        mu0 = mean[jj]
        s0 = m2[jj]
        b0 = bad[jj]
        # replace: a full window, one value for another
        d = v - u
        mu_f = mu0 + d * inv_window
        s_f = s0 + d * ((v - mu_f) + (u - mu0))
        # remove u (a non-finite u only leaves ``bad``; the last value resets) ...
        reset = fu and n0 <= 1.0
        n_r = n0 - 1.0
        d1 = u - mu0
        mu_r = mu0 - d1 / n_r
        s_r = s0 - d1 * (u - mu_r)
        keep = not fu
        n1 = n0 if keep else (0.0 if reset else n_r)
        mu1 = mu0 if keep else (0.0 if reset else mu_r)
        s1 = s0 if keep else (0.0 if reset else s_r)
        b1 = b0 - (0 if fu else 1)
        # ... then add v
        n2 = n1 + 1.0
        d2 = v - mu1
        mu2 = mu1 + d2 / n2
        s2 = s1 + d2 * (v - mu2)
        fast = b0 == 0 and fu and fv
        cnt[jj] = n0 if fast else (n2 if fv else n1)
        mean[jj] = mu_f if fast else (mu2 if fv else mu1)
        m2[jj] = s_f if fast else (s2 if fv else s1)
        bad[jj] = b0 if fast else b1 + (0 if fv else 1)


@njit(cache=True, error_model="numpy")
def _moments_out(
    out: Float64Array2D,
    t: int,
    j0: int,
    c: int,
    window: int,
    scale: float,
    ddof: int,
    mode: int,
    mean: Float64Array1D,
    m2: Float64Array1D,
    bad: Int64Array1D,
    run: Int64Array1D,
) -> None:
    vol = mode == VOLATILITY
    dof = window - ddof if vol else window - 1
    for jj in range(c):  # one loop for both modes (a select, not two compiled copies)
        ss = 0.0 if run[jj] >= window else max(m2[jj], 0.0)
        sd = math.sqrt(ss / dof)
        sharpe = np.nan if ss == 0.0 else mean[jj] / sd * scale
        val = sd * scale if vol else sharpe
        out[uintp(t), uintp(j0 + jj)] = np.nan if bad[jj] > 0 else val


@njit(cache=True)
def _rolling_moments_block(
    x: Float64Array2D,
    j0: int,
    c: int,
    window: int,
    shift: float,
    ppy: float,
    ddof: int,
    mode: int,
    out: Float64Array2D,
) -> None:
    """``rolling_moments_nb`` for the columns ``j0:j0 + c`` of a row-major ``x`` into ``out``."""
    n = x.shape[0]
    scale = math.sqrt(ppy)
    inv_window = 1.0 / window
    cnt = np.zeros(c)
    mean = np.zeros(c)
    m2 = np.zeros(c)
    peak = np.zeros(c)
    bad = np.zeros(c, dtype=np.int64)
    run = np.zeros(c, dtype=np.int64)
    prev = np.full(c, np.nan)
    for t in range(n):
        _track_runs(x, t, j0, c, prev, run)
        if t < window - 1:
            for jj in range(c):
                out[t, j0 + jj] = np.nan
            continue
        if _is_restart(t, window):
            _rebuild(x, t, window, j0, c, shift, cnt, mean, m2, bad)
            peak[:] = 0.0
        else:
            _slide(x, t, window, j0, c, shift, inv_window, cnt, mean, m2, bad)
        for jj in range(c):  # rarely true: a column whose sum of squares collapsed
            if bad[jj] == 0 and run[jj] < window and m2[jj] < DRIFT_DROP * peak[jj]:
                cnt[jj], mean[jj], m2[jj] = _moments_of(x, j0 + jj, t, window, shift)
                peak[jj] = m2[jj]
            peak[jj] = max(peak[jj], m2[jj])
        _moments_out(out, t, j0, c, window, scale, ddof, mode, mean, m2, bad, run)


@parallel_kernel()
def rolling_moments_nb(
    x: Float64Array2D, window: int, shift: float, ppy: float, ddof: int, mode: int
) -> Float64Array2D:
    """Rolling volatility (``mode`` 0) or Sharpe ratio (``mode`` 1) of each column.

    ``shift`` is subtracted from every value first (the per-period risk-free
    rate of the Sharpe ratio). Rows before ``window - 1`` are NaN.
    """
    k = x.shape[1]
    out = np.empty_like(x)  # the layout of the input
    w = chunk_cols(x)
    for blk in prange((k + w - 1) // w):
        _rolling_moments_chunk(x, blk * w, min(w, k - blk * w), window, shift, ppy, ddof, mode, out)
    return out


@njit(cache=True)
def _scatter_block(buf: Float64Array2D, out: Float64Array2D, j0: int) -> None:
    """Write the row-major ``buf`` to ``out[:, j0:j0 + c]``, down each column."""
    n, c = buf.shape
    for i0 in range(0, n, TILE_ROWS):
        i1 = min(n, i0 + TILE_ROWS)
        for jj in range(c):
            for i in range(i0, i1):
                out[uintp(i), uintp(j0 + jj)] = buf[uintp(i), uintp(jj)]


@njit(cache=True)
def _rolling_moments_chunk(
    x: Float64Array2D,
    j0: int,
    c: int,
    window: int,
    shift: float,
    ppy: float,
    ddof: int,
    mode: int,
    out: Float64Array2D,
) -> None:
    """One chunk of columns; a column-major panel's chunk goes through a row-major copy.

    The row passes read a row of the chunk per step; in a column-major panel that
    would be ``c`` strided reads (measured 3x slower than copying the chunk first).
    """
    direct = c_typed(x)  # then ``out`` (like ``x``) is C-typed too: written in place
    src = as_c(x) if direct else gather_block(x, j0, c)
    dst = as_c(out) if direct else np.empty((x.shape[0], c))
    sj = j0 if direct else 0 * j0  # one call site of the block: LLVM inlines it at each
    _rolling_moments_block(src, sj, c, window, shift, ppy, ddof, mode, dst)
    if not direct:
        _scatter_block(dst, out, j0)


@njit(cache=True)
def _track_bench_runs(
    b: Float64Array2D,
    t: int,
    j0: int,
    c: int,
    shared: bool,
    prev: Float64Array1D,
    run: Int64Array1D,
) -> None:
    """``_track_runs`` of the benchmark beside columns ``j0:j0 + c`` (one shared column or one each)."""
    for jj in range(c):
        v = b[uintp(t), 0] if shared else b[uintp(t), uintp(j0 + jj)]
        run[jj] = run[jj] + 1 if v == prev[jj] else 1
        prev[jj] = v


@njit(cache=True, error_model="numpy")
def _pair_add(
    x: Float64Array2D,
    b: Float64Array2D,
    s: int,
    j0: int,
    c: int,
    shared: bool,
    cnt: Float64Array1D,
    mx: Float64Array1D,
    mb: Float64Array1D,
    mxx: Float64Array1D,
    mbb: Float64Array1D,
    cxb: Float64Array1D,
    bad: Int64Array1D,
) -> None:
    """Row ``s`` enters every column's co-moments (Welford); a non-finite pair only counts in ``bad``."""
    for jj in range(c):
        u = x[uintp(s), uintp(j0 + jj)]
        v = b[uintp(s), 0] if shared else b[uintp(s), uintp(j0 + jj)]
        fin = u - u == 0.0 and v - v == 0.0
        n1 = cnt[jj] + 1.0
        dx = u - mx[jj]
        mx1 = mx[jj] + dx / n1
        db = v - mb[jj]
        mb1 = mb[jj] + db / n1
        bad[jj] += 0 if fin else 1
        cnt[jj] = n1 if fin else cnt[jj]
        mxx[jj] = mxx[jj] + dx * (u - mx1) if fin else mxx[jj]
        cxb[jj] = cxb[jj] + dx * (v - mb1) if fin else cxb[jj]
        mbb[jj] = mbb[jj] + db * (v - mb1) if fin else mbb[jj]
        mx[jj] = mx1 if fin else mx[jj]
        mb[jj] = mb1 if fin else mb[jj]


@njit(cache=True, error_model="numpy")
def _pair_remove(
    x: Float64Array2D,
    b: Float64Array2D,
    s: int,
    j0: int,
    c: int,
    shared: bool,
    cnt: Float64Array1D,
    mx: Float64Array1D,
    mb: Float64Array1D,
    mxx: Float64Array1D,
    mbb: Float64Array1D,
    cxb: Float64Array1D,
    bad: Int64Array1D,
) -> None:
    """Row ``s`` leaves every column's co-moments; the last pair resets them to zero."""
    for jj in range(c):
        u = x[uintp(s), uintp(j0 + jj)]
        v = b[uintp(s), 0] if shared else b[uintp(s), uintp(j0 + jj)]
        fin = u - u == 0.0 and v - v == 0.0
        n0 = cnt[jj]
        reset = n0 <= 1.0
        n1 = n0 - 1.0
        dx = u - mx[jj]
        db = v - mb[jj]
        mx1 = mx[jj] - dx / n1
        mb1 = mb[jj] - db / n1
        mxx1 = mxx[jj] - (u - mx1) * dx
        cxb1 = cxb[jj] - (u - mx1) * db
        mbb1 = mbb[jj] - (v - mb1) * db
        bad[jj] -= 0 if fin else 1
        cnt[jj] = (0.0 if reset else n1) if fin else n0
        mxx[jj] = (0.0 if reset else mxx1) if fin else mxx[jj]
        cxb[jj] = (0.0 if reset else cxb1) if fin else cxb[jj]
        mbb[jj] = (0.0 if reset else mbb1) if fin else mbb[jj]
        mx[jj] = (0.0 if reset else mx1) if fin else mx[jj]
        mb[jj] = (0.0 if reset else mb1) if fin else mb[jj]


@njit(cache=True, error_model="numpy")
def _beta_out(
    out: Float64Array2D,
    t: int,
    j0: int,
    c: int,
    window: int,
    mbb: Float64Array1D,
    cxb: Float64Array1D,
    bad: Int64Array1D,
    run: Int64Array1D,
) -> None:
    for jj in range(c):
        vb = 0.0 if run[jj] >= window else max(mbb[jj], 0.0)
        nan = bad[jj] > 0 or vb / window < _TINY_VARIANCE
        out[uintp(t), uintp(j0 + jj)] = np.nan if nan else cxb[jj] / vb


@njit(cache=True)
def _rolling_beta_block(
    x: Float64Array2D, b: Float64Array2D, j0: int, c: int, window: int, out: Float64Array2D
) -> None:
    """``rolling_beta_nb`` for the columns ``j0:j0 + c`` of a row-major ``x`` (and ``b``) into ``out``."""
    n = x.shape[0]
    shared = b.shape[1] == 1
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
        _track_bench_runs(b, t, j0, c, shared, prev, run)
        if t < window - 1:
            for jj in range(c):
                out[t, j0 + jj] = np.nan
            continue
        if _is_restart(t, window):
            for jj in range(c):
                cnt[jj] = 0.0
                mx[jj] = 0.0
                mb[jj] = 0.0
                mxx[jj] = 0.0
                mbb[jj] = 0.0
                cxb[jj] = 0.0
                peak_x[jj] = 0.0
                peak_b[jj] = 0.0
                bad[jj] = 0
            for s in range(t - window + 1, t + 1):
                _pair_add(x, b, s, j0, c, shared, cnt, mx, mb, mxx, mbb, cxb, bad)
        else:
            _pair_remove(x, b, t - window, j0, c, shared, cnt, mx, mb, mxx, mbb, cxb, bad)
            _pair_add(x, b, t, j0, c, shared, cnt, mx, mb, mxx, mbb, cxb, bad)
        for jj in range(c):  # rarely true: a column whose sums of squares collapsed
            drifted = mxx[jj] < DRIFT_DROP * peak_x[jj] or mbb[jj] < DRIFT_DROP * peak_b[jj]
            if bad[jj] == 0 and run[jj] < window and drifted:
                cnt[jj], mx[jj], mb[jj], mxx[jj], mbb[jj], cxb[jj] = _comoments_of(
                    x, b, j0 + jj, 0 if shared else j0 + jj, t, window
                )
                peak_x[jj] = mxx[jj]
                peak_b[jj] = mbb[jj]
            peak_x[jj] = max(peak_x[jj], mxx[jj])
            peak_b[jj] = max(peak_b[jj], mbb[jj])
        _beta_out(out, t, j0, c, window, mbb, cxb, bad, run)


@njit(cache=True)
def _rolling_beta_chunk(
    x: Float64Array2D, b: Float64Array2D, j0: int, c: int, window: int, out: Float64Array2D
) -> None:
    """One chunk of columns; column-major panels go through row-major copies (see above)."""
    shared = b.shape[1] == 1
    direct = c_typed(x) and c_typed(b)  # then ``out`` (like ``x``) is C-typed too
    src = as_c(x) if direct else gather_block(x, j0, c)
    if direct:
        bs = as_c(b)
    else:
        bs = gather_block(b, 0 * j0, 1) if shared else gather_block(b, j0, c)
    dst = as_c(out) if direct else np.empty((x.shape[0], c))
    sj = j0 if direct else 0 * j0  # one call site of the block: LLVM inlines it at each
    _rolling_beta_block(src, bs, sj, c, window, dst)
    if not direct:
        _scatter_block(dst, out, j0)


@parallel_kernel()
def rolling_beta_nb(x: Float64Array2D, b: Float64Array2D, window: int) -> Float64Array2D:
    """Rolling OLS slope of each column of ``x`` on ``b`` (one column or one per column).

    Rows before ``window - 1`` are NaN; so is a window whose benchmark variance
    (ddof 0) is below empyrical's 1e-30.
    """
    k = x.shape[1]
    out = np.empty_like(x)  # the layout of the input
    w = chunk_cols(x) if c_typed(b) else TILE_COLS
    for blk in prange((k + w - 1) // w):
        _rolling_beta_chunk(x, b, blk * w, min(w, k - blk * w), window, out)
    return out
