"""Risk kernels: dispersion, tail quantiles, regression on a benchmark.

Shared helpers (``_compact``, ``_mean_std``, ``_select``, ``_lower_tail``) live here and
are reused by :mod:`quantcore._kernels.metrics`. Every panel kernel takes a 2-D
float64 array (axis 0 time, axis 1 columns), loops over columns with ``prange``
and skips NaNs inside each column.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange, uintp

from quantcore._kernels.risk_tail import _var_es
from quantcore._kernels.tiles import (
    GATHER_MAX_VALUES,
    ROW_UNROLL,
    TILE_COLS,
    as_c,
    c_typed,
    chunk_cols,
    downside_block,
    gather_block,
    load_columns,
    moments_block,
)
from quantcore._parallel import parallel_kernel
from quantcore._typing import Float64Array1D, Float64Array2D, Offset

__all__ = [
    "active_risk_nb",
    "beta_alpha_nb",
    "correlation_nb",
    "downside_deviation_nb",
    "moments_nb",
    "value_at_risk_es_nb",
    "volatility_nb",
]

#: Benchmark variances below this are treated as zero (empyrical's threshold).
_TINY_VARIANCE = 1.0e-30


@njit(cache=True)
def _compact(col: Float64Array1D, buf: Float64Array1D) -> int:
    """Copy the non-NaN values of ``col`` to the front of ``buf``; return their count."""
    m = 0
    for i in range(col.shape[0]):
        v = col[i]
        if not np.isnan(v):
            buf[m] = v
            m += 1
    return m


@njit(cache=True)
def _mean_std(buf: Float64Array1D, m: int, ddof: int) -> tuple[float, float]:
    """Two-pass mean and standard deviation of ``buf[:m]``.

    The std is NaN when ``m - ddof < 1`` and exactly 0.0 when all values are equal
    (so that callers can turn a zero dispersion into NaN instead of a rounding residue).
    """
    if m == 0:
        return np.nan, np.nan
    s = 0.0
    lo = buf[0]
    hi = buf[0]
    for i in range(m):
        v = buf[i]
        s += v
        lo = min(lo, v)
        hi = max(hi, v)
    mean = s / m
    if m - ddof < 1:
        return mean, np.nan
    if lo == hi:
        return mean, 0.0
    ss = 0.0
    for i in range(m):
        d = buf[i] - mean
        ss += d * d
    return mean, math.sqrt(ss / (m - ddof))


@njit(cache=True)
def _volatility_chunk(
    x: Float64Array2D, j0: int, c: int, periods_per_year: float, ddof: int, out: Float64Array1D
) -> None:
    mean = np.empty(c)
    sd = np.empty(c)
    count = np.empty(c, dtype=np.int64)
    moments_block(x, j0, c, 0.0, ddof, mean, sd, count)
    scale = math.sqrt(periods_per_year)
    for j in range(c):
        out[j0 + j] = sd[j] * scale if count[j] >= 2 else np.nan


@parallel_kernel()
def volatility_nb(x: Float64Array2D, periods_per_year: float, ddof: int) -> Float64Array1D:
    """Annualized standard deviation of each column, NaNs skipped (any memory order)."""
    k = x.shape[1]
    out = np.empty(k)
    w = chunk_cols(x)
    for blk in prange((k + w - 1) // w):
        _volatility_chunk(x, blk * w, min(w, k - blk * w), periods_per_year, ddof, out)
    return out


#: Columns gathered at a time for the percentile kernels (16 x 2,520 rows: 320 KB).
_GATHER_COLS = 16


@parallel_kernel()
def value_at_risk_es_nb(x: Float64Array2D, q: float, cutoff: float, zt: float) -> Float64Array2D:
    """Historical VaR (row 0) and expected shortfall (row 1) of each column as positive losses.

    ``q`` is the lower-tail probability used like ``np.percentile`` (``100 * q / 100``);
    ``cutoff`` the same probability used like empyrical's ``int((m - 1) * cutoff)``;
    ``zt`` a standard score a little above ``q``'s that only speeds up the selection.
    Columns are gathered ``_GATHER_COLS`` at a time in the panel's memory order.
    """
    n, k = x.shape
    out = np.empty((2, k))
    for blk in prange((k + _GATHER_COLS - 1) // _GATHER_COLS):
        j0 = blk * _GATHER_COLS
        cols = np.empty((_GATHER_COLS, n))
        cand = np.empty(n)
        c, counts = load_columns(x, j0, cols, True)
        for j in range(c):
            buf = cols[j]
            m = counts[j]
            mean, sd = _mean_std(buf, m, 1)
            out[0, j0 + j], out[1, j0 + j] = _var_es(buf, m, mean, sd, q, cutoff, zt, cand)
    return out


@parallel_kernel()
def moments_nb(x: Float64Array2D) -> Float64Array2D:
    """Mean, std (ddof=1), skewness and excess kurtosis (biased, like scipy) per column.

    Rows: 0 mean, 1 std, 2 skew, 3 excess kurtosis. NaN when fewer than 2 valid
    values or zero variance.
    """
    n, k = x.shape
    # np.empty, the constructor spelling most kernels share (not np.full, compiled
    # apart); each column writes its NaNs in the loop (a slice fill would be one
    # more parallel loop)
    out = np.empty((4, k))
    for j in prange(k):
        buf = np.empty(n)
        m = _compact(x[:, j], buf)
        mean, sd = _mean_std(buf, m, 1)
        if m < 2 or not sd > 0.0:
            for row in range(4):
                out[row, j] = np.nan
            continue
        m2 = 0.0
        m3 = 0.0
        m4 = 0.0
        for i in range(m):
            d = buf[i] - mean
            d2 = d * d
            m2 += d2
            m3 += d2 * d
            m4 += d2 * d2
        m2 /= m
        m3 /= m
        m4 /= m
        out[0, j] = mean
        out[1, j] = sd
        out[2, j] = m3 / m2**1.5
        out[3, j] = m4 / (m2 * m2) - 3.0
    return out


@njit(cache=True)
def _downside_chunk(
    x: Float64Array2D,
    j0: int,
    c: int,
    required_return: float,
    periods_per_year: float,
    out: Float64Array1D,
) -> None:
    s = np.zeros(c)
    m = np.zeros(c)
    d2 = np.zeros(c)
    downside_block(x, j0, c, required_return, s, m, d2)
    scale = math.sqrt(periods_per_year)
    for j in range(c):
        out[j0 + j] = math.sqrt(d2[j] / m[j]) * scale if m[j] >= 2.0 else np.nan


@parallel_kernel()
def downside_deviation_nb(
    x: Float64Array2D, required_return: float, periods_per_year: float
) -> Float64Array1D:
    """Annualized root mean square of ``min(r - required_return, 0)`` per column."""
    k = x.shape[1]
    out = np.empty(k)
    w = chunk_cols(x)
    for blk in prange((k + w - 1) // w):
        _downside_chunk(x, blk * w, min(w, k - blk * w), required_return, periods_per_year, out)
    return out


@njit(cache=True)
def _pairs(col: Float64Array1D, bcol: Float64Array1D, a: Float64Array1D, b: Float64Array1D) -> int:
    """Copy the rows where both ``col`` and ``bcol`` are valid; return their count."""
    m = 0
    for i in range(col.shape[0]):
        u = col[i]
        v = bcol[i]
        if not (np.isnan(u) or np.isnan(v)):
            a[m] = u
            b[m] = v
            m += 1
    return m


@njit(cache=True)
def _cov_var(
    a: Float64Array1D, b: Float64Array1D, m: int
) -> tuple[float, float, float, float, float]:
    """Means, covariance and variances (all divided by m) of paired samples (two-pass)."""
    ma = 0.0
    mb = 0.0
    a_const = True
    b_const = True
    for i in range(m):
        ma += a[i]
        mb += b[i]
        a_const &= a[i] == a[0]
        b_const &= b[i] == b[0]
    ma /= m
    mb /= m
    cab = 0.0
    vaa = 0.0
    vbb = 0.0
    for i in range(m):
        da = a[i] - ma
        db = b[i] - mb
        cab += da * db
        vaa += da * da
        vbb += db * db
    # a constant side has exactly zero variance (not a rounding residue)
    return ma, mb, cab / m, 0.0 if a_const else vaa / m, 0.0 if b_const else vbb / m


@njit(cache=True)
def _pair_sums_step(
    u: float, v: float, saj: float, sbj: float, mj: float, lj: float, hj: float
) -> tuple[float, float, float, float, float]:
    ok = u == u and v == v
    saj += u if ok else 0.0
    mj += 1.0 if ok else 0.0
    sbj += v if ok else 0.0
    w = v if u == u else np.nan  # the benchmark's range over the rows where u is valid
    lj = w if w < lj else lj
    hj = w if w > hj else hj
    return saj, sbj, mj, lj, hj


@njit(cache=True)
def _pair_sums(
    src: Float64Array2D,
    i0: Offset,
    j0: Offset,
    bsrc: Float64Array2D,
    bi0: Offset,
    bj0: Offset,
    shared: bool,
    r: int,
    c: int,
    sa: Float64Array1D,
    sb: Float64Array1D,
    m: Float64Array1D,
    blo: Float64Array1D,
    bhi: Float64Array1D,
) -> None:
    """First-pass sums over rows ``i0:i0 + r`` of ``src`` and the benchmark rows ``bi0:bi0 + r``.

    ``shared``: the benchmark is the one column ``bsrc[:, 0]``, else ``bsrc[:, bj0 + j]``.
    """
    i = 0
    # a shared benchmark: ROW_UNROLL (= 4) rows per load and store of the accumulators,
    # the same 4 benchmark values for every column; one per column: a row at a time
    # (the rarer case, kept simple: less code to compile)
    while shared and i + ROW_UNROLL <= r:
        a = i0 + uintp(i)
        ab = bi0 + uintp(i)
        v0, v1, v2, v3 = bsrc[ab, 0], bsrc[ab + 1, 0], bsrc[ab + 2, 0], bsrc[ab + 3, 0]
        for j in range(c):
            jj = j0 + uintp(j)
            saj, sbj, mj, lj, hj = sa[j], sb[j], m[j], blo[j], bhi[j]
            saj, sbj, mj, lj, hj = _pair_sums_step(src[a, jj], v0, saj, sbj, mj, lj, hj)
            saj, sbj, mj, lj, hj = _pair_sums_step(src[a + 1, jj], v1, saj, sbj, mj, lj, hj)
            saj, sbj, mj, lj, hj = _pair_sums_step(src[a + 2, jj], v2, saj, sbj, mj, lj, hj)
            saj, sbj, mj, lj, hj = _pair_sums_step(src[a + 3, jj], v3, saj, sbj, mj, lj, hj)
            sa[j], sb[j], m[j], blo[j], bhi[j] = saj, sbj, mj, lj, hj
        i += ROW_UNROLL
    for t in range(i, r):
        a = i0 + uintp(t)
        ab = bi0 + uintp(t)
        for j in range(c):
            u = src[a, j0 + uintp(j)]
            v = bsrc[ab, 0] if shared else bsrc[ab, bj0 + uintp(j)]
            sa[j], sb[j], m[j], blo[j], bhi[j] = _pair_sums_step(
                u, v, sa[j], sb[j], m[j], blo[j], bhi[j]
            )


@njit(cache=True)
def _pair_products_step(
    u: float, v: float, maj: float, mbj: float, cj: float, vj: float
) -> tuple[float, float]:
    ok = u == u and v == v
    da = u - maj
    db = v - mbj
    cj += da * db if ok else 0.0
    vj += db * db if ok else 0.0
    return cj, vj


@njit(cache=True)
def _pair_products(
    src: Float64Array2D,
    i0: Offset,
    j0: Offset,
    bsrc: Float64Array2D,
    bi0: Offset,
    bj0: Offset,
    shared: bool,
    r: int,
    c: int,
    ma: Float64Array1D,
    mb: Float64Array1D,
    cab: Float64Array1D,
    vbb: Float64Array1D,
) -> None:
    i = 0
    while shared and i + ROW_UNROLL <= r:  # as in ``_pair_sums``
        a = i0 + uintp(i)
        ab = bi0 + uintp(i)
        v0, v1, v2, v3 = bsrc[ab, 0], bsrc[ab + 1, 0], bsrc[ab + 2, 0], bsrc[ab + 3, 0]
        for j in range(c):
            jj = j0 + uintp(j)
            maj, mbj, cj, vj = ma[j], mb[j], cab[j], vbb[j]
            cj, vj = _pair_products_step(src[a, jj], v0, maj, mbj, cj, vj)
            cj, vj = _pair_products_step(src[a + 1, jj], v1, maj, mbj, cj, vj)
            cj, vj = _pair_products_step(src[a + 2, jj], v2, maj, mbj, cj, vj)
            cj, vj = _pair_products_step(src[a + 3, jj], v3, maj, mbj, cj, vj)
            cab[j], vbb[j] = cj, vj
        i += ROW_UNROLL
    for t in range(i, r):
        a = i0 + uintp(t)
        ab = bi0 + uintp(t)
        for j in range(c):
            u = src[a, j0 + uintp(j)]
            v = bsrc[ab, 0] if shared else bsrc[ab, bj0 + uintp(j)]
            cab[j], vbb[j] = _pair_products_step(u, v, ma[j], mb[j], cab[j], vbb[j])


@njit(cache=True)
def _pair_passes(
    src: Float64Array2D,
    j0: Offset,
    bsrc: Float64Array2D,
    bj0: Offset,
    shared: bool,
    n: int,
    c: int,
    sa: Float64Array1D,
    sb: Float64Array1D,
    m: Float64Array1D,
    blo: Float64Array1D,
    bhi: Float64Array1D,
    cab: Float64Array1D,
    vbb: Float64Array1D,
) -> tuple[Float64Array1D, Float64Array1D]:
    """Both passes of ``beta_alpha_nb`` over row-major ``src`` and ``bsrc``; return the means."""
    zero = uintp(0)
    _pair_sums(src, zero, j0, bsrc, zero, bj0, shared, n, c, sa, sb, m, blo, bhi)
    ma = sa / np.maximum(m, 1.0)
    mb = sb / np.maximum(m, 1.0)
    _pair_products(src, zero, j0, bsrc, zero, bj0, shared, n, c, ma, mb, cab, vbb)
    return ma, mb


@njit(cache=True)
def _beta_alpha_chunk(
    x: Float64Array2D,
    bench: Float64Array2D,
    j0: int,
    c: int,
    risk_free: float,
    periods_per_year: float,
    out: Float64Array2D,
) -> None:
    """``beta_alpha_nb`` for the columns ``j0:j0 + c``.

    C-typed inputs are read in place; otherwise the chunk (and a per-column
    benchmark) is copied to row-major blocks of at most ``GATHER_MAX_VALUES``,
    each read twice. One call site of the passes keeps the compiled code small
    (LLVM inlines and re-optimizes them at every call site).
    """
    n = x.shape[0]
    shared = bench.shape[1] == 1
    direct = c_typed(x) and c_typed(bench)
    step = c if direct else max(1, min(c, GATHER_MAX_VALUES // max(n, 1)))
    for jb in range(j0, j0 + c, step):
        cw = min(step, j0 + c - jb)
        if direct:
            xs, bs, sj, bj = as_c(x), as_c(bench), uintp(jb), uintp(jb)
        else:
            xs = gather_block(x, jb, cw)
            bs = gather_block(bench, 0 * jb, 1) if shared else gather_block(bench, jb, cw)
            sj, bj = uintp(0), uintp(0)
        _beta_alpha_block(xs, sj, bs, bj, shared, n, cw, risk_free, periods_per_year, out, jb)


@njit(cache=True)
def _beta_alpha_block(
    src: Float64Array2D,
    sj: Offset,
    bsrc: Float64Array2D,
    bj: Offset,
    shared: bool,
    n: int,
    c: int,
    risk_free: float,
    periods_per_year: float,
    out: Float64Array2D,
    j0: int,
) -> None:
    """Beta and alpha of the row-major ``src[:, sj:sj + c]`` into ``out[:, j0:j0 + c]``."""
    sa = np.zeros(c)
    sb = np.zeros(c)
    m = np.zeros(c)
    blo = np.full(c, np.inf)
    bhi = np.full(c, -np.inf)
    cab = np.zeros(c)
    vbb = np.zeros(c)
    ma, mb = _pair_passes(src, sj, bsrc, bj, shared, n, c, sa, sb, m, blo, bhi, cab, vbb)
    for j in range(c):
        mj = m[j]
        if mj < 2.0:
            continue
        # a constant benchmark has exactly zero variance (not a rounding residue)
        var_b = 0.0 if blo[j] == bhi[j] else vbb[j] / mj
        if var_b < _TINY_VARIANCE:
            continue
        beta = (cab[j] / mj) / var_b
        out[0, j0 + j] = beta
        # mean of (r - rf) - beta (b - rf)
        mean_alpha = (ma[j] - risk_free) - beta * (mb[j] - risk_free)
        out[1, j0 + j] = (1.0 + mean_alpha) ** periods_per_year - 1.0


@parallel_kernel()
def beta_alpha_nb(
    x: Float64Array2D, bench: Float64Array2D, risk_free: float, periods_per_year: float
) -> Float64Array2D:
    """Beta (row 0) and annualized alpha (row 1) of each column on the benchmark.

    ``bench`` has one column (shared) or as many as ``x``. Rows where either
    side is NaN are dropped pairwise. Two passes (means, then co-moments), each
    reading both panels in their memory order.
    """
    k = x.shape[1]
    out = np.full((2, k), np.nan)
    w = chunk_cols(x) if c_typed(bench) else TILE_COLS
    for blk in prange((k + w - 1) // w):
        _beta_alpha_chunk(x, bench, blk * w, min(w, k - blk * w), risk_free, periods_per_year, out)
    return out


@parallel_kernel()
def correlation_nb(x: Float64Array2D, bench: Float64Array2D) -> Float64Array1D:
    """Pearson correlation of each column with the benchmark over pairwise-valid rows."""
    n, k = x.shape
    bstep = 0 if bench.shape[1] == 1 else 1  # shared benchmark column or one per column
    out = np.full(k, np.nan)
    for j in prange(k):
        a = np.empty(n)
        b = np.empty(n)
        m = _pairs(x[:, j], bench[:, j * bstep], a, b)
        if m < 2:
            continue
        _, _, cab, vaa, vbb = _cov_var(a, b, m)
        if vaa > 0.0 and vbb > 0.0:
            out[j] = max(-1.0, min(1.0, cab / math.sqrt(vaa * vbb)))
    return out


@parallel_kernel()
def active_risk_nb(
    x: Float64Array2D, bench: Float64Array2D, periods_per_year: float, ddof: int
) -> Float64Array2D:
    """Tracking error (row 0) and information ratio (row 1) of ``x - bench`` per column.

    Both are annualized: ``std(a) * sqrt(P)`` and ``mean(a) / std(a) * sqrt(P)``.
    """
    n, k = x.shape
    bstep = 0 if bench.shape[1] == 1 else 1  # shared benchmark column or one per column
    out = np.full((2, k), np.nan)
    scale = math.sqrt(periods_per_year)
    for j in prange(k):
        buf = np.empty(n)
        col = x[:, j]
        bcol = bench[:, j * bstep]
        m = 0
        for i in range(n):
            d = col[i] - bcol[i]
            if not np.isnan(d):
                buf[m] = d
                m += 1
        if m < 2:
            continue
        mean, sd = _mean_std(buf, m, ddof)
        out[0, j] = sd * scale
        if sd > 0.0:
            out[1, j] = mean / sd * scale
    return out
