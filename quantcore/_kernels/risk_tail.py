"""Tail quantiles of the risk kernels: selection (quickselect, heapsort), VaR and ES.

Historical VaR, expected shortfall and the tail ratio's percentiles select the lower
tail of a column's values (copied to a buffer by the caller) instead of sorting it.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types

from quantcore._typing import Float64Array1D

__all__: list[str] = []  # helpers of quantcore._kernels.risk and .metrics only

# The selection helpers below are called with constants (``0``, ``-1``) as well as
# variables; numba would compile one specialization per integer literal (four of
# ``_lower_tail``), so each has its one explicit signature (compiled, or loaded
# from the cache, when this module is imported). The thin wrappers (``_select``,
# ``_var_es``, ``_percentile_pair``) are inlined into their callers' IR instead
# (``inline="always"``): a kernel of their own would cost its compile, and each
# caller would optimize and emit the selection's machine code once more.
_C1 = types.Array(types.float64, 1, "C")


@njit(types.void(_C1, types.int64, types.int64, types.int64), cache=True)
def _sift(a: Float64Array1D, lo: int, root: int, end: int) -> None:
    """Sift ``a[lo + root]`` down the max-heap ``a[lo:lo + end]``."""
    v = a[lo + root]
    while True:
        child = 2 * root + 1
        if child >= end:
            break
        if child + 1 < end and a[lo + child + 1] > a[lo + child]:
            child += 1
        if a[lo + child] <= v:
            break
        a[lo + root] = a[lo + child]
        root = child
    a[lo + root] = v


@njit(types.void(_C1, types.int64, types.int64), cache=True)
def _heapsort(a: Float64Array1D, lo: int, hi: int) -> None:
    """Sort ``a[lo:hi]`` in place, O(n log n) worst case (cheaper to compile than ``np.sort``)."""
    size = hi - lo
    for root in range(size // 2 - 1, -1, -1):
        _sift(a, lo, root, size)
    for end in range(size - 1, 0, -1):
        a[lo], a[lo + end] = a[lo + end], a[lo]
        _sift(a, lo, 0, end)


@njit(cache=True, inline="always")  # its one caller, _lower_tail, compiles it
def _select(a: Float64Array1D, c: int, k: int) -> None:
    """Quickselect in place: afterwards ``a[k]`` is the k-th smallest of ``a[:c]``, ``a[:k] <= a[k]``.

    Median-of-three pivot and Alexandrescu's branch-free Lomuto partition (the
    comparisons of returns against a pivot are a coin flip for a branch
    predictor). Each round removes the pivot, so heavy ties cannot loop
    forever; after 64 rounds the rest is sorted.
    """
    lo = 0
    hi = c
    rounds = 0
    while hi - lo > 16:
        rounds += 1
        if rounds > 64:  # pathological input: finish by sorting what is left
            _heapsort(a, lo, hi)
            return
        mid = (lo + hi) >> 1
        # median of three to a[hi - 1]
        if a[mid] < a[lo]:
            a[mid], a[lo] = a[lo], a[mid]
        if a[hi - 1] < a[lo]:
            a[hi - 1], a[lo] = a[lo], a[hi - 1]
        if a[mid] < a[hi - 1]:
            a[mid], a[hi - 1] = a[hi - 1], a[mid]
        p = a[hi - 1]
        store = lo
        for i in range(lo, hi - 1):
            v = a[i]
            a[i] = a[store]
            a[store] = v
            store += v < p
        a[hi - 1] = a[store]
        a[store] = p
        if k == store:
            return
        if k < store:
            hi = store
        else:
            lo = store + 1
    # insertion sort of the small rest
    for i in range(lo + 1, hi):
        v = a[i]
        j = i - 1
        while j >= lo and a[j] > v:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = v


@njit(cache=True)
def _lerp(a: float, b: float, t: float) -> float:
    """NumPy's linear interpolation (``numpy.lib._function_base_impl._lerp``)."""
    d = b - a
    if t >= 0.5:
        return b - d * (1.0 - t)
    return a + d * t


@njit(
    types.UniTuple(types.float64, 2)(
        _C1, types.int64, types.float64, types.int64, types.float64, types.float64, _C1
    ),
    cache=True,
)
def _lower_tail(
    buf: Float64Array1D, m: int, idx: float, kes: int, sign: float, thresh: float,
    cand: Float64Array1D,
) -> tuple[float, float]:  # fmt: skip
    """Lower-tail statistics of ``y = sign * buf[:m]`` (``m >= 1``).

    Returns the linear-interpolated order statistic at the virtual index ``idx``
    (what ``np.percentile`` computes) and the mean of the ``kes + 1`` smallest
    values (NaN if ``kes < 0``). Values ``<= thresh`` are first copied out
    branch-free; if they are enough, only they are selected from (the exact
    answer either way), otherwise all values are.
    """
    lo = math.floor(idx)
    hi = min(lo + 1, m - 1)
    kk = max(hi, kes)
    c = 0
    for i in range(m):  # branch-free copy of the values at or below the threshold
        v = sign * buf[i]
        cand[c] = v
        c += v <= thresh
    if c < kk + 1:  # too few (a skewed sample): every value
        for i in range(m):
            cand[i] = sign * buf[i]
        c = m
    _select(cand, c, kk)
    top = cand[kk]
    below = -np.inf
    s = 0.0
    for i in range(kk):
        v = cand[i]
        below = max(below, v)
        s += v
    if lo >= kk - 1 and hi >= kk - 1 and (kes < 0 or kes >= kk - 1):
        a = top if lo == kk else below
        b = top if hi == kk else below
        es = (s + top) / (kk + 1) if kes == kk else (s / kk if kes >= 0 else np.nan)
    else:  # the requested ranks are further apart: sort the selected head
        _heapsort(cand, 0, kk + 1)
        a = cand[lo]
        b = cand[hi]
        es = np.nan
        if kes >= 0:
            es = 0.0
            for i in range(kes + 1):
                es += cand[i]
            es /= kes + 1
    q = a if a == b else _lerp(a, b, idx - lo)
    return q, es


@njit(cache=True, inline="always")
def _var_es(
    buf: Float64Array1D,
    m: int,
    mean: float,
    sd: float,
    q: float,
    cutoff: float,
    zt: float,
    cand: Float64Array1D,
) -> tuple[float, float]:
    """Historical VaR and ES of ``buf[:m]`` (mean ``mean``, std ``sd``) as positive losses.

    ``zt`` places the prefilter threshold at ``mean + zt * sd``.
    """
    if m < 2:
        return np.nan, np.nan
    idx = q * (m - 1)
    kes = int((m - 1) * cutoff)
    quant, es = _lower_tail(buf, m, idx, kes, 1.0, mean + zt * sd, cand)
    return -quant, -es


@njit(cache=True, inline="always")
def _percentile_pair(
    buf: Float64Array1D, m: int, q: float, mean: float, sd: float, zt: float, cand: Float64Array1D
) -> tuple[float, float]:
    """``np.percentile(buf[:m], [100 q, 100 (1 - q)])`` for a small tail probability ``q``."""
    idx = q * (m - 1)
    low, _ = _lower_tail(buf, m, idx, -1, 1.0, mean + zt * sd, cand)
    idx_up = (1.0 - q) * (m - 1)
    up, _ = _lower_tail(buf, m, (m - 1) - idx_up, -1, -1.0, -mean + zt * sd, cand)
    return low, -up
