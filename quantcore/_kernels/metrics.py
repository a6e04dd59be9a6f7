"""Performance-ratio kernels and the fused one-pass ``summary_nb``."""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from quantcore._kernels.drawdown import _max_drawdown
from quantcore._kernels.returns import _cagr, _growth
from quantcore._kernels.risk import (
    _GATHER_COLS,
    _TINY_VARIANCE,
    _compact,
    _cov_var,
    _mean_std,
    _pairs,
)
from quantcore._kernels.risk_tail import _percentile_pair, _var_es
from quantcore._kernels.tiles import (
    chunk_cols,
    downside_block,
    load_columns,
    moments_block,
)
from quantcore._parallel import parallel_kernel
from quantcore._typing import BoolArray1D, Float64Array1D, Float64Array2D

__all__ = [
    "SUMMARY_BENCH_ROWS",
    "SUMMARY_ROWS",
    "calmar_ratio_nb",
    "omega_ratio_nb",
    "sharpe_ratio_nb",
    "sortino_ratio_nb",
    "stability_nb",
    "summary_bench_nb",
    "summary_column_nb",
    "summary_nb",
    "tail_ratio_nb",
]

#: Row order of ``summary_nb``'s output (the benchmark rows follow).
SUMMARY_ROWS = (
    "total_return",
    "annualized_return",
    "volatility",
    "sharpe_ratio",
    "sortino_ratio",
    "max_drawdown",
    "calmar_ratio",
    "omega_ratio",
    "stability_of_timeseries",
    "tail_ratio",
    "value_at_risk",
    "expected_shortfall",
)
SUMMARY_BENCH_ROWS = ("beta", "alpha", "correlation", "tracking_error", "information_ratio")


@njit(cache=True)
def _sharpe_chunk(
    x: Float64Array2D,
    j0: int,
    c: int,
    risk_free: float,
    periods_per_year: float,
    out: Float64Array1D,
) -> None:
    mean = np.empty(c)
    sd = np.empty(c)
    count = np.empty(c, dtype=np.int64)
    moments_block(x, j0, c, risk_free, 1, mean, sd, count)
    scale = math.sqrt(periods_per_year)
    for j in range(c):
        if count[j] >= 2 and sd[j] > 0.0:
            out[j0 + j] = mean[j] / sd[j] * scale


@parallel_kernel()
def sharpe_ratio_nb(x: Float64Array2D, risk_free: float, periods_per_year: float) -> Float64Array1D:
    """``mean(r - rf) / std(r - rf, ddof=1) * sqrt(P)`` per column (any memory order)."""
    k = x.shape[1]
    out = np.full(k, np.nan)
    w = chunk_cols(x)
    for blk in prange((k + w - 1) // w):
        _sharpe_chunk(x, blk * w, min(w, k - blk * w), risk_free, periods_per_year, out)
    return out


@njit(cache=True)
def _sortino_chunk(
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
    for j in range(c):
        mj = m[j]
        if mj >= 2.0 and d2[j] != 0.0:
            out[j0 + j] = (
                (s[j] / mj)
                * periods_per_year
                / (math.sqrt(d2[j] / mj) * math.sqrt(periods_per_year))
            )


@parallel_kernel()
def sortino_ratio_nb(
    x: Float64Array2D, required_return: float, periods_per_year: float
) -> Float64Array1D:
    """``mean(r - q) * P / (sqrt(mean(min(r - q, 0)^2)) * sqrt(P))`` per column."""
    k = x.shape[1]
    out = np.full(k, np.nan)
    w = chunk_cols(x)
    for blk in prange((k + w - 1) // w):
        _sortino_chunk(x, blk * w, min(w, k - blk * w), required_return, periods_per_year, out)
    return out


@njit(cache=True)
def _omega(buf: Float64Array1D, m: int, shift: float) -> float:
    if m < 2:
        return np.nan
    up = 0.0
    down = 0.0
    for i in range(m):
        a = buf[i] - shift
        up += max(a, 0.0)
        down += max(-a, 0.0)
    return up / down if down > 0.0 else np.nan


@parallel_kernel()
def omega_ratio_nb(x: Float64Array2D, shift: float) -> Float64Array1D:
    """``sum(max(r - s, 0)) / sum(max(s - r, 0))`` per column, ``s`` = rf + per-period threshold."""
    n, k = x.shape
    out = np.empty(k)
    for j in prange(k):
        buf = np.empty(n)
        m = _compact(x[:, j], buf)
        out[j] = _omega(buf, m, shift)
    return out


@parallel_kernel()
def calmar_ratio_nb(x: Float64Array2D, periods_per_year: float) -> Float64Array1D:
    """CAGR divided by ``|max drawdown|``; NaN when there is no drawdown."""
    k = x.shape[1]
    out = np.full(k, np.nan)
    for j in prange(k):
        col = x[:, j]
        mdd = _max_drawdown(col)
        if mdd < 0.0:
            wealth, m = _growth(col)
            out[j] = _cagr(wealth, m, periods_per_year) / -mdd
    return out


@njit(cache=True)
def _stability(buf: Float64Array1D, m: int) -> float:
    """R^2 of ``cumsum(log1p(r))`` regressed on ``0..m-1``; overwrites ``buf``."""
    if m < 2:
        return np.nan
    y = 0.0
    for i in range(m):
        y += math.log1p(buf[i])
        buf[i] = y
    mx = (m - 1) / 2.0
    my = 0.0
    for i in range(m):
        my += buf[i]
    my /= m
    sxy = 0.0
    sxx = 0.0
    syy = 0.0
    for i in range(m):
        dx = i - mx
        dy = buf[i] - my
        sxy += dx * dy
        sxx += dx * dx
        syy += dy * dy
    if not syy > 0.0:
        return np.nan
    r = sxy / math.sqrt(sxx * syy)
    r = max(-1.0, min(1.0, r))
    return r * r


@parallel_kernel()
def stability_nb(x: Float64Array2D) -> Float64Array1D:
    """Stability of the cumulative log-return path per column (see ``_stability``)."""
    n, k = x.shape
    out = np.empty(k)
    for j in prange(k):
        buf = np.empty(n)
        m = _compact(x[:, j], buf)
        out[j] = _stability(buf, m)
    return out


# inlined into its callers' IR: no kernel of its own around the tail selection
@njit(cache=True, inline="always")
def _tail_ratio(buf: Float64Array1D, m: int, mean: float, sd: float, cand: Float64Array1D) -> float:
    if m < 2:
        return np.nan
    # -1.175: about 12 % of a normal sample lies below; only a prefilter for the selection
    lower, upper = _percentile_pair(buf, m, 0.05, mean, sd, -1.175, cand)
    lower = abs(lower)
    return abs(upper) / lower if lower > 0.0 else np.nan


@parallel_kernel()
def tail_ratio_nb(x: Float64Array2D) -> Float64Array1D:
    """``|95th percentile| / |5th percentile|`` per column."""
    n, k = x.shape
    out = np.empty(k)
    for j in prange(k):
        buf = np.empty(n)
        cand = np.empty(n)
        m = _compact(x[:, j], buf)
        mean, sd = _mean_std(buf, m, 1)
        out[j] = _tail_ratio(buf, m, mean, sd, cand)
    return out


@parallel_kernel()
def summary_nb(
    x: Float64Array2D,
    bench: Float64Array2D,
    risk_free: float,
    required_return: float,
    threshold: float,
    periods_per_year: float,
    q: float,
    cutoff: float,
    zt: float,
    want: BoolArray1D,
) -> Float64Array2D:
    """Every ``SUMMARY_ROWS`` (and ``SUMMARY_BENCH_ROWS`` if ``bench`` has columns) per column.

    ``want`` is a boolean mask over the output rows; the costly parts (stability:
    one ``log1p`` per value; tail ratio: two more tail selections; the benchmark
    rows) run only when asked for. Rows not asked for are NaN.

    One read of each column compacts the valid values and accumulates the
    growth, drawdown, extrema and shifted first and second moments; the
    downside and omega sums (only if asked for) take one more pass over the
    compacted values; VaR/ES come from one branch-free quickselect of the
    lower tail of the compacted values.
    """
    n, k = x.shape
    bstep = 0 if bench.shape[1] == 1 else 1  # shared benchmark column or one per column
    n_rows = 17 if bench.shape[1] > 0 else 12  # len(SUMMARY_ROWS) (+ len(SUMMARY_BENCH_ROWS))
    out = np.full((n_rows, k), np.nan)
    for blk in prange((k + _GATHER_COLS - 1) // _GATHER_COLS):
        j0 = blk * _GATHER_COLS
        cols = np.empty((_GATHER_COLS, n))
        c, _ = load_columns(x, j0, cols, False)  # the columns, read in x's memory order
        for j in range(c):
            col = cols[j]
            buf = np.empty(n)
            cand = np.empty(n)
            summary_column_nb(
                col, buf, cand, risk_free, required_return, threshold, periods_per_year, q,
                cutoff, zt, want, out, j0 + j,
            )  # fmt: skip
            if bench.shape[1] > 0 and (want[12] or want[13] or want[14] or want[15] or want[16]):
                bcol = bench[:, (j0 + j) * bstep]
                summary_bench_nb(col, bcol, buf, cand, risk_free, periods_per_year, out, j0 + j)
    return out


@njit(cache=True)
def summary_column_nb(
    col: Float64Array1D,
    buf: Float64Array1D,
    cand: Float64Array1D,
    risk_free: float,
    required_return: float,
    threshold: float,
    periods_per_year: float,
    q: float,
    cutoff: float,
    zt: float,
    want: BoolArray1D,
    out: Float64Array2D,
    j: int,
) -> None:
    """The rows of ``SUMMARY_ROWS`` of one column into ``out[:, j]`` (``buf``, ``cand``:
    scratch arrays of the column's length).

    Kept out of the parallel loop so that the parfor pass stays small and compiles
    fast; :func:`quantcore.metrics.summary` calls it from Python for one series, so a
    first call on one series compiles neither ``summary_nb`` nor the benchmark rows.
    """
    scale = math.sqrt(periods_per_year)
    n = col.shape[0]
    # the one read: compact + growth + drawdown + extrema + shifted moments. The wealth
    # product is a serial chain; the other sums are independent chains that run beside
    # it, all branch-free (the sign of a return is a coin flip for the branch predictor).
    m = int(np.int64(0))  # not 0: numba would compile every callee of m once more for the literal
    wealth = 1.0
    peak = 1.0
    worst = 0.0
    shift0 = np.nan  # first valid value: shifted sums keep the variance accurate
    s1 = 0.0
    s2 = 0.0
    lo = np.inf
    hi = -np.inf
    omega_shift = risk_free + threshold
    for i in range(n):
        v = col[i]
        if np.isnan(v):
            continue
        if m == 0:
            shift0 = v
        buf[m] = v
        m += 1
        d = v - shift0
        s1 += d
        s2 += d * d
        lo = min(lo, v)
        hi = max(hi, v)
        wealth *= 1.0 + v
        peak = max(peak, wealth)
        worst = min(worst, (wealth - peak) / peak)
    if m == 0:
        return
    out[0, j] = wealth - 1.0
    cagr = _cagr(wealth, m, periods_per_year)
    out[1, j] = cagr
    out[5, j] = worst
    if worst < 0.0:
        out[6, j] = cagr / -worst
    if m < 2:
        return
    mean = shift0 + s1 / m
    ss = max(s2 - s1 * s1 / m, 0.0)
    sd = 0.0 if lo == hi else math.sqrt(ss / (m - 1))
    out[2, j] = sd * scale
    if sd > 0.0:
        out[3, j] = (mean - risk_free) / sd * scale
    if want[4] or want[7]:
        # downside and omega sums: a second, branch-free pass over the compacted values
        # (kept out of the first one, whose extra chains would slow the core metrics)
        d2 = 0.0
        spread = 0.0  # sum |r - omega threshold|; with sum(r - threshold) it gives both sides
        for i in range(m):
            v = buf[i]
            a = v - required_return
            a = a - abs(a)  # 2 min(a, 0), exact and branch-free
            d2 += a * a
            spread += abs(v - omega_shift)
        d2 *= 0.25
        if lo < required_return:
            out[4, j] = (mean - required_return) * periods_per_year / (math.sqrt(d2 / m) * scale)
        if lo < omega_shift:
            net = s1 + m * (shift0 - omega_shift)  # sum(r - threshold)
            out[7, j] = (spread + net) / (spread - net)
    out[10, j], out[11, j] = _var_es(buf, m, mean, sd, q, cutoff, zt, cand)
    if want[9]:
        out[9, j] = _tail_ratio(buf, m, mean, sd, cand)
    if want[8]:
        out[8, j] = _stability(buf, m)  # overwrites buf: keep last


@njit(cache=True)
def summary_bench_nb(
    col: Float64Array1D,
    bcol: Float64Array1D,
    a: Float64Array1D,
    b: Float64Array1D,
    risk_free: float,
    periods_per_year: float,
    out: Float64Array2D,
    j: int,
) -> None:
    """Benchmark rows of ``summary_nb`` (12 beta, 13 alpha, 14 correlation, 15 TE, 16 IR)."""
    base = 12
    m = _pairs(col, bcol, a, b)
    if m < 2:
        return
    ma, mb, cab, vaa, vbb = _cov_var(a, b, m)
    if vbb >= _TINY_VARIANCE:
        beta = cab / vbb
        out[base, j] = beta
        out[base + 1, j] = (
            1.0 + (ma - risk_free) - beta * (mb - risk_free)
        ) ** periods_per_year - 1.0
    if vaa > 0.0 and vbb > 0.0:
        out[base + 2, j] = max(-1.0, min(1.0, cab / math.sqrt(vaa * vbb)))
    for i in range(m):
        a[i] -= b[i]
    mean, sd = _mean_std(a, m, 1)
    scale = math.sqrt(periods_per_year)
    out[base + 3, j] = sd * scale
    if sd > 0.0:
        out[base + 4, j] = mean / sd * scale
