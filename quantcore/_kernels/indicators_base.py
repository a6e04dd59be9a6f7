"""Shared machinery of the indicator kernels: constants, signatures, helpers.

The indicator kernels live in :mod:`~quantcore._kernels.indicators_ma` (single
input), :mod:`~quantcore._kernels.indicators_bars` (ATR, ADX, OBV, VWAP) and
:mod:`~quantcore._kernels.indicators_range` (stochastic, Williams %R, CCI).

Every indicator has three layers:

* ``_<name>_into(x, ..., out)``: the recursion on one column, written into ``out``;
* ``<name>_1d_nb(x, ...)``: one series in, a new series out (for other jitted
  code; compiled lazily for the caller's types);
* ``<name>_nb(x, ..., out)``: a 2-D panel (axis 0 time, axis 1 assets) written
  into caller-allocated outputs, ``prange`` over the columns. Call it through
  :func:`quantcore._parallel.run`, which runs small panels and single series on
  the calling thread; it is compiled once, on first use, for one explicit
  signature of layout ``A`` (read-only input allowed), so a single series
  passed as an ``(n, 1)`` column, a Fortran-ordered panel and pandas' read-only
  arrays share one machine-code specialization, cached on disk by
  ``cache=True``. Columns are handed to the inner loop as C-contiguous views
  (:func:`column_nb`), so layout ``A`` costs nothing there, and the hot loops
  of the recursions run over unsigned indices (``range(np.uint64(a),
  np.uint64(n))``), for which numba emits no negative-index wraparound code.

Outputs are allocated by the caller with NumPy, which asks the kernel for
transparent huge pages on large arrays; numba's allocator does not, and on a
1,000,000-point series the first-touch page faults would cost more than the
indicator itself.

The arithmetic follows TA-Lib's C code operation by operation (running sums,
``TA_IS_ZERO`` thresholds, seeding, fused multiply-adds as GCC emits them), so
results agree with ``talib`` to a few ulps. Like the ``talib`` wrapper, each
column is computed from its first valid value (leading NaNs are skipped, the
output is NaN until that start plus the indicator's lookback); a NaN after the
start propagates through the running sums and recursions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit, types
from numba.core.typing.templates import Signature

from quantcore._parallel import parallel_kernel, register_signature
from quantcore._typing import Float64Array1D, Float64Array2D

__all__ = [
    "CANCELLED",
    "CONTRACT",
    "IN2",
    "INT",
    "OUT2",
    "SIG_HLC_W",
    "SIG_W",
    "TA_EPSILON",
    "check_output_nb",
    "check_shape_nb",
    "column_nb",
    "first_valid_1d_nb",
    "first_valid_all_1d_nb",
    "nan_head_1d_nb",
    "panel_kernel",
    "true_range_nb",
    "wilder_step_nb",
]

#: The only fast-math flag used: fused multiply-add (as in TA-Lib's GCC build).
#: No reassociation; NaN and inf semantics are kept.
CONTRACT = {"contract"}

#: TA-Lib's ``TA_IS_ZERO`` / ``TA_IS_ZERO_OR_NEG`` threshold.
TA_EPSILON = 1e-8

#: Bollinger variances below this fraction of ``mean(x**2)`` have lost most of
#: their digits to cancellation in the running sums and are recomputed exactly.
CANCELLED = 1e-9

#: Kernel argument types: any layout, read-only inputs accepted without a copy.
IN2 = types.Array(types.float64, 2, "A", readonly=True)
OUT2 = types.Array(types.float64, 2, "A")
INT = types.int64
SIG_W = types.void(IN2, INT, OUT2)
SIG_HLC_W = types.void(IN2, IN2, IN2, INT, OUT2)


def panel_kernel(signature: Signature) -> Callable[[Callable[..., None]], Any]:
    """:func:`~quantcore._parallel.parallel_kernel` for a panel kernel with one explicit signature.

    The signature is compiled (or loaded from numba's on-disk cache) the first
    time the kernel goes through :func:`quantcore._parallel.run`, not at import,
    so that ``import quantcore.indicators`` stays cheap and each indicator pays
    only for itself.
    """

    def decorate(fn: Callable[..., None]) -> Any:
        dispatcher = parallel_kernel(fastmath=CONTRACT)(fn)
        register_signature(dispatcher, signature)
        return dispatcher

    return decorate


@njit(cache=True, fastmath=CONTRACT)
def check_shape_nb(a: Float64Array2D, n: int, k: int) -> None:
    """Raise ``ValueError`` unless ``a`` has shape ``(n, k)`` (kernels do not bounds-check)."""
    if a.shape[0] != n or a.shape[1] != k:
        raise ValueError("all kernel inputs and outputs must have the same shape")


@njit(cache=True, fastmath=CONTRACT)
def check_output_nb(out: Float64Array2D, n: int, k: int) -> None:
    """Raise ``ValueError`` unless ``out`` is ``(n, k)`` with contiguous (Fortran-order) columns."""
    check_shape_nb(out, n, k)
    if n > 1 and k > 0 and out.strides[0] != out.itemsize:
        raise ValueError("kernel outputs must have contiguous columns (Fortran order)")


@njit(cache=True, fastmath=CONTRACT, inline="always")
def column_nb(a: Float64Array2D, j: int) -> Float64Array1D:
    """Column ``j`` typed as C-contiguous: a view when it is contiguous, else a copy.

    Inner loops over contiguous 1-D arrays compile to plain pointer arithmetic;
    on layout ``A`` every access multiplies by a runtime stride. Outputs are
    checked contiguous first (:func:`check_output_nb`), so writes land in place.
    Inlined into the caller's IR: a kernel takes read-only inputs and writable
    outputs, so a kernel of its own would compile twice.
    """
    return np.ascontiguousarray(a[:, j])


@njit(cache=True, fastmath=CONTRACT)
def first_valid_1d_nb(x: Float64Array1D) -> int:
    """Index of the first non-NaN value of ``x`` (``len(x)`` if there is none)."""
    for i in range(x.shape[0]):
        if not np.isnan(x[i]):
            return i
    return int(x.shape[0])


@njit(cache=True, fastmath=CONTRACT)
def nan_head_1d_nb(out: Float64Array1D, stop: int) -> None:
    """Fill ``out[:stop]`` with NaN (``stop`` clipped to the length)."""
    for i in range(min(stop, out.shape[0])):
        out[i] = np.nan


@njit(cache=True, fastmath=CONTRACT)
def first_valid_all_1d_nb(
    a: Float64Array1D, b: Float64Array1D, c: Float64Array1D, d: Float64Array1D
) -> int:
    """First index where ``a``, ``b``, ``c`` and ``d`` are all non-NaN (``len(a)`` if none)."""
    for i in range(a.shape[0]):
        if not (np.isnan(a[i]) or np.isnan(b[i]) or np.isnan(c[i]) or np.isnan(d[i])):
            return i
    return int(a.shape[0])


@njit(cache=True, fastmath=CONTRACT)
def true_range_nb(high: float, low: float, prev_close: float) -> float:
    """TA-Lib's ``TRUE_RANGE``: ``max(h - l, |h - c_prev|, |l - c_prev|)``."""
    out = high - low
    other = abs(high - prev_close)
    out = other if other > out else out
    other = abs(low - prev_close)
    return other if other > out else out


@njit(cache=True, fastmath=CONTRACT, inline="always")
def wilder_step_nb(avg: float, value: float, decay: float, inv: float) -> float:
    """Wilder's smoothing ``((w - 1) A + v) / w`` as ``A (w - 1) / w + v / w``.

    ``decay = (w - 1) / w`` and ``inv = 1 / w``: no division on the critical path
    (TA-Lib divides: the two agree to rounding). ATR and RSI smooth with it.
    """
    return avg * decay + value * inv
