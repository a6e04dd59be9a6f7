"""Input validation and output wrapping shared by every public function.

A public function converts its data arguments once with :func:`as_float64_2d`,
calls one kernel on the 2-D float64 array (axis 0 time, axis 1 columns), and
gives the result back in the kind it was given with :class:`Wrapper`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.special import ndtri

from quantcore._typing import Float64Array, Float64Array2D, Reduced

__all__ = [
    "Wrapper",
    "as_float64_1d",
    "as_float64_2d",
    "check_finite",
    "check_int",
    "check_level",
    "check_positive",
    "check_same_shape",
    "level_tail",
    "read_only",
    "with_benchmark",
]

Kind = Literal["ndarray1", "ndarray2", "series", "frame"]


@dataclass(frozen=True, slots=True)
class Wrapper:
    """Remembers the kind, index and columns of an input to restore them on output."""

    kind: Kind
    index: pd.Index | None = None
    columns: pd.Index | None = None
    name: Any = None

    @property
    def is_1d(self) -> bool:
        return self.kind in ("ndarray1", "series")

    def wrap(self, out: Float64Array2D | np.ndarray, *, name: Any = None) -> Any:
        """Give back a time-shaped (n, k) result as the input's kind."""
        if self.kind == "ndarray1":
            return out[:, 0] if out.ndim == 2 else out
        if self.kind == "ndarray2":
            return out
        if self.kind == "series":
            values = out[:, 0] if out.ndim == 2 else out
            return pd.Series(values, index=self.index, name=self.name if name is None else name)
        return pd.DataFrame(out, index=self.index, columns=self.columns)

    def wrap_reduced(self, out: np.ndarray, *, name: Any = None) -> Reduced:
        """Give back one value per column: a float for a series, a Series for a frame."""
        if self.is_1d:
            return float(out[0])
        if self.kind == "ndarray2":
            return out
        return pd.Series(out, index=self.columns, name=name)


def read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a`` (no copy).

    numba compiles a kernel once per array type, and whether an array is writable is part
    of its type: a kernel fed the service's shared (frozen) arrays on one path and fresh
    ones on another compiles twice. Inputs passed through this compile once.
    """
    view = a.view()
    view.flags.writeable = False
    return view


def _to_array(x: Any, name: str) -> tuple[np.ndarray, Wrapper]:
    values: np.ndarray
    if isinstance(x, pd.DataFrame):
        wrapper = Wrapper("frame", index=x.index, columns=x.columns)
        values = x.to_numpy(dtype=np.float64, na_value=np.nan)
    elif isinstance(x, pd.Series):
        wrapper = Wrapper("series", index=x.index, name=x.name)
        values = x.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        try:
            values = np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be numeric (float64-convertible): {exc}") from None
        if values.ndim == 0:
            raise ValueError(f"{name} must be a 1-D or 2-D array, got a scalar")
        wrapper = Wrapper("ndarray1" if values.ndim == 1 else "ndarray2")
    if values.ndim > 2:
        raise ValueError(f"{name} must be a 1-D or 2-D array, got {values.ndim} dimensions")
    return values, wrapper


def as_float64_2d(
    x: Any, name: str = "x", *, order: Literal["F", "K"] = "F"
) -> tuple[Float64Array2D, Wrapper]:
    """Convert a series or panel to a 2-D float64 array (axis 0 time) and its wrapper.

    A 1-D input becomes one column. With ``order="F"`` panels are returned in
    Fortran order so that each column is contiguous for kernels that walk
    columns (pandas already stores them so). With ``order="K"`` a C- or
    Fortran-contiguous panel is kept as it is, for the kernels that read a
    panel in its memory order (:mod:`quantcore._kernels.tiles`); a copy is
    made only for a non-contiguous view.

    The array is a read-only view (:func:`read_only`): pandas hands out read-only
    arrays and NumPy writable ones, and one flag for both means one compiled kernel.
    """
    values, wrapper = _to_array(x, name)
    if values.ndim == 1:
        values = values.reshape(-1, 1)
    if order == "K" and values.flags.c_contiguous:
        return read_only(values), wrapper
    return read_only(np.asfortranarray(values)), wrapper


def as_float64_1d(x: Any, name: str = "x") -> tuple[Float64Array, Wrapper]:
    """Convert a single series to a contiguous, read-only 1-D float64 array and its wrapper."""
    values, wrapper = _to_array(x, name)
    if values.ndim == 2:
        if values.shape[1] != 1:
            raise ValueError(f"{name} must be one series, got {values.shape[1]} columns")
        values = values[:, 0]
    return read_only(np.ascontiguousarray(values)), wrapper


def check_same_shape(a: np.ndarray, b: np.ndarray, names: tuple[str, str]) -> None:
    """Raise a ValueError naming both arguments when their lengths or widths differ."""
    if a.shape[0] != b.shape[0]:
        raise ValueError(
            f"{names[0]} and {names[1]} must have the same length, got {a.shape[0]} and {b.shape[0]}"
        )
    if a.ndim == 2 and b.ndim == 2 and b.shape[1] not in (1, a.shape[1]):
        raise ValueError(
            f"{names[1]} must have 1 or {a.shape[1]} columns like {names[0]}, got {b.shape[1]}"
        )


def check_int(value: Any, name: str, *, minimum: int = 1) -> int:
    """Validate an integer option (window lengths and the like)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def check_positive(value: Any, name: str, *, allow_zero: bool = False) -> float:
    """Validate a finite positive float option."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not np.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {bound}, got {value!r}")
    return v


def check_level(level: Any, name: str = "level") -> float:
    """Validate a confidence level strictly between 0 and 1."""
    try:
        v = float(level)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in (0, 1), got {level!r}") from None
    if not 0.0 < v < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {level!r}")
    return v


def check_finite(value: Any, name: str) -> float:
    """Validate a finite float option that may be negative (risk-free rate and the like)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return v


def level_tail(level: Any) -> tuple[float, float, float, float]:
    """The confidence level, numpy's percentile fraction and empyrical's cutoff for it,
    and a standard score a little beyond that tail (the kernels' selection prefilter)."""
    lv = check_level(level)
    cutoff = 1.0 - lv
    q = (100.0 * cutoff) / 100.0  # what np.percentile(r, 100 * cutoff) uses internally
    zt = float(ndtri(min(0.999, 1.5 * q + 0.01)))
    return lv, q, cutoff, zt


def with_benchmark(
    returns: Any, benchmark: Any, order: Literal["F", "K"] = "F"
) -> tuple[Float64Array2D, Float64Array2D, Wrapper]:
    """Validate ``returns`` and a benchmark of one column or the same width, same rows.

    ``order`` as in :func:`as_float64_2d`, for both arrays.
    """
    x, w = as_float64_2d(returns, "returns", order=order)
    b, _ = as_float64_2d(benchmark, "benchmark", order=order)
    if b.shape[0] != x.shape[0]:
        raise ValueError(
            f"returns and benchmark must have the same length, got {x.shape[0]} and {b.shape[0]}"
        )
    if b.shape[1] not in (1, x.shape[1]):
        raise ValueError(f"benchmark must have 1 or {x.shape[1]} columns, got {b.shape[1]}")
    ix = getattr(returns, "index", None)
    ib = getattr(benchmark, "index", None)
    if isinstance(ix, pd.Index) and isinstance(ib, pd.Index) and not ix.equals(ib):
        raise ValueError(
            "returns and benchmark must share the same index; align them first, "
            "e.g. returns, benchmark = returns.align(benchmark, join='inner', axis=0)"
        )
    return x, b, w
