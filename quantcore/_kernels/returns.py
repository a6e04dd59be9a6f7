"""Return kernels: price to return transforms, compounding, TWR and XIRR."""

from __future__ import annotations

import math

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
from quantcore._typing import Float64Array1D, Float64Array2D, Offset

__all__ = [
    "annualized_return_nb",
    "cumulative_returns_nb",
    "log_returns_nb",
    "money_weighted_return_nb",
    "simple_returns_nb",
    "time_weighted_return_nb",
    "total_return_nb",
]


@parallel_kernel()
def simple_returns_nb(prices: Float64Array2D) -> Float64Array2D:
    """``p[t] / p[t-1] - 1``; row 0, NaN neighbours and non-positive bases give NaN."""
    n, k = prices.shape
    out = np.empty((n, k))
    for j in prange(k):
        if n > 0:
            out[0, j] = np.nan
        for i in range(1, n):
            prev = prices[i - 1, j]
            out[i, j] = prices[i, j] / prev - 1.0 if prev > 0.0 else np.nan
    return out


@parallel_kernel()
def log_returns_nb(prices: Float64Array2D) -> Float64Array2D:
    """``log(p[t] / p[t-1])``; NaN where either price is NaN or not positive, and on row 0."""
    n, k = prices.shape
    out = np.empty((n, k))
    for j in prange(k):
        if n > 0:
            out[0, j] = np.nan
        for i in range(1, n):
            prev = prices[i - 1, j]
            cur = prices[i, j]
            out[i, j] = math.log(cur / prev) if prev > 0.0 and cur > 0.0 else np.nan
    return out


@parallel_kernel()
def cumulative_returns_nb(returns: Float64Array2D) -> Float64Array2D:
    """Running ``prod(1 + r) - 1`` over the valid values; NaN where the input is NaN."""
    n, k = returns.shape
    out = np.empty((n, k))
    for j in prange(k):
        wealth = 1.0
        for i in range(n):
            r = returns[i, j]
            if np.isnan(r):
                out[i, j] = np.nan
            else:
                wealth *= 1.0 + r
                out[i, j] = wealth - 1.0
    return out


@njit(cache=True)
def _growth(col: Float64Array1D) -> tuple[float, int]:
    """``prod(1 + r)`` over the valid values of ``col`` and how many there were."""
    wealth = 1.0
    m = 0
    for i in range(col.shape[0]):
        r = col[i]
        if not np.isnan(r):
            wealth *= 1.0 + r
            m += 1
    return wealth, m


@njit(cache=True)
def _cagr(wealth: float, m: int, periods_per_year: float) -> float:
    if m == 0:
        return np.nan
    if wealth < 0.0:
        return np.nan
    return float(wealth ** (1.0 / (m / periods_per_year))) - 1.0


@njit(cache=True)
def _growth_rows(
    src: Float64Array2D,
    i0: Offset,
    j0: Offset,
    r: int,
    c: int,
    wealth: Float64Array1D,
    m: Float64Array1D,
) -> None:
    i = 0
    while i + ROW_UNROLL <= r:  # ROW_UNROLL rows per load and store of the accumulators
        a = i0 + uintp(i)
        for j in range(c):
            jj = j0 + uintp(j)
            wj, mj = wealth[j], m[j]
            for q in range(ROW_UNROLL):
                v = src[a + uintp(q), jj]
                ok = v == v
                wj *= 1.0 + v if ok else 1.0
                mj += 1.0 if ok else 0.0
            wealth[j], m[j] = wj, mj
        i += ROW_UNROLL
    for t in range(i, r):
        a = i0 + uintp(t)
        for j in range(c):
            v = src[a, j0 + uintp(j)]
            ok = v == v
            wealth[j] *= 1.0 + v if ok else 1.0
            m[j] += 1.0 if ok else 0.0


@njit(cache=True)
def _growth_chunk(
    x: Float64Array2D,
    j0: int,
    c: int,
    periods_per_year: float,
    annualize: bool,
    out: Float64Array1D,
) -> None:
    """``prod(1 + r) - 1`` (or the CAGR if ``annualize``) of the columns ``j0:j0 + c`` into ``out``."""
    n = x.shape[0]
    wealth = np.ones(c)
    m = np.zeros(c)
    zero = uintp(0)
    if c_typed(x):
        _growth_rows(as_c(x), zero, uintp(j0), n, c, wealth, m)
    else:
        tile = np.empty((TILE_ROWS, TILE_COLS))
        for i0 in range(0, n, TILE_ROWS):
            r = min(TILE_ROWS, n - i0)
            load_tile(x, i0, j0, tile)
            _growth_rows(tile, zero, zero, r, c, wealth, m)
    for j in range(c):
        if annualize:
            out[j0 + j] = _cagr(wealth[j], int(m[j]), periods_per_year)
        else:
            out[j0 + j] = wealth[j] - 1.0 if m[j] > 0.0 else np.nan


@parallel_kernel()
def _growth_nb(returns: Float64Array2D, periods_per_year: float, annualize: bool) -> Float64Array1D:
    k = returns.shape[1]
    out = np.empty(k)
    w = chunk_cols(returns)
    for blk in prange((k + w - 1) // w):
        _growth_chunk(returns, blk * w, min(w, k - blk * w), periods_per_year, annualize, out)
    return out


def total_return_nb(returns: Float64Array2D) -> Float64Array1D:
    """``prod(1 + r) - 1`` per column over the valid values; NaN if there are none."""
    out: Float64Array1D = _growth_nb(returns, 1.0, False)
    return out


def annualized_return_nb(returns: Float64Array2D, periods_per_year: float) -> Float64Array1D:
    """CAGR ``prod(1 + r) ** (P / m) - 1`` per column over the ``m`` valid values."""
    out: Float64Array1D = _growth_nb(returns, periods_per_year, True)
    return out


@parallel_kernel()
def time_weighted_return_nb(values: Float64Array2D, flows: Float64Array2D) -> Float64Array1D:
    """Chain-linked return with external flows at the start of each period.

    Period ``t`` starts with ``V[t-1] + F[t]`` (``V[-1] = 0``) and ends at ``V[t]``.
    Rows with a NaN value are skipped (the previous value carries), NaN flows
    count as 0, periods that start with no capital are skipped.
    """
    n, k = values.shape
    out = np.empty(k)
    for j in prange(k):
        growth = 1.0
        prev = 0.0
        used = 0
        pending = 0.0
        for i in range(n):
            f = flows[i, j]
            if not np.isnan(f):
                pending += f
            v = values[i, j]
            if np.isnan(v):
                continue
            start = prev + pending
            pending = 0.0
            if start != 0.0:
                growth *= v / start
                used += 1
            prev = v
        out[j] = growth - 1.0 if used > 0 else np.nan
    return out


@njit(cache=True)
def _fv_gap(
    rate: float, tau: Float64Array1D, flows: Float64Array1D, final_value: float
) -> tuple[float, float]:
    """``sum F_i (1 + r) ** tau_i - V`` and its derivative in ``r``."""
    g = -final_value
    dg = 0.0
    base = 1.0 + rate
    for i in range(tau.shape[0]):
        f = flows[i]
        if f == 0.0 or np.isnan(f):
            continue
        grow = base ** tau[i]
        g += f * grow
        if tau[i] != 0.0:
            dg += f * tau[i] * grow / base
    return g, dg


@njit(cache=True)
def _fv_scale(rate: float, tau: Float64Array1D, flows: Float64Array1D, final_value: float) -> float:
    """Size of the terms of ``_fv_gap``, to judge a residual relative to it."""
    total = abs(final_value)
    for i in range(tau.shape[0]):
        f = flows[i]
        if not np.isnan(f):
            total += abs(f) * (1.0 + rate) ** tau[i]
    return total


@njit(cache=True)
def _xirr(tau: Float64Array1D, flows: Float64Array1D, final_value: float) -> float:
    """Annual rate solving ``sum F_i (1 + r) ** tau_i = V``; NaN if no root is found."""
    # Newton from 10 %, kept inside (-1, inf)
    rate = 0.1
    for _ in range(60):
        g, dg = _fv_gap(rate, tau, flows, final_value)
        if dg == 0.0 or not np.isfinite(g) or not np.isfinite(dg):
            break
        step = g / dg
        new = rate - step
        if new <= -1.0:
            new = (rate - 1.0) / 2.0
        if abs(new - rate) <= 1e-14 * (1.0 + abs(rate)):
            g_new, _ = _fv_gap(new, tau, flows, final_value)
            if abs(g_new) <= 1e-9 * _fv_scale(new, tau, flows, final_value):
                return new
            break  # stalled without a root (e.g. pushed against -100 %)
        rate = new
    # bracketing fallback: find a sign change on (-1, hi], then bisect
    lo = -1.0 + 1e-9
    g_lo, _ = _fv_gap(lo, tau, flows, final_value)
    hi = 1.0
    g_hi, _ = _fv_gap(hi, tau, flows, final_value)
    tries = 0
    while np.isfinite(g_hi) and np.sign(g_hi) == np.sign(g_lo) and tries < 40:
        hi = hi * 2.0 + 1.0
        g_hi, _ = _fv_gap(hi, tau, flows, final_value)
        tries += 1
    if not (np.isfinite(g_lo) and np.isfinite(g_hi)) or np.sign(g_hi) == np.sign(g_lo):
        return np.nan
    if g_lo == 0.0:
        return lo
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        g_mid, _ = _fv_gap(mid, tau, flows, final_value)
        if g_mid == 0.0:
            return mid
        if np.sign(g_mid) == np.sign(g_lo):
            lo = mid
            g_lo = g_mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * (1.0 + abs(mid)):
            break
    return 0.5 * (lo + hi)


@parallel_kernel()
def money_weighted_return_nb(
    tau: Float64Array1D, flows: Float64Array2D, final_values: Float64Array1D
) -> Float64Array1D:
    """XIRR per column: ``tau`` years from each flow to the valuation date."""
    k = flows.shape[1]
    out = np.empty(k)
    for j in prange(k):
        out[j] = _xirr(tau, flows[:, j], final_values[j])
    return out
