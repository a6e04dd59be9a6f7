"""The one single-series / panel wrapper of the indicators: validate, allocate, run, restore.

An indicator is its kernel plus a call of :func:`apply`: the inputs (one close
series or several same-shaped bar fields) are converted once to 2-D float64
panels (axis 0 time), the outputs allocated in Fortran order, the kernel run
through :func:`quantcore._parallel.run` (``kernel(*inputs, *params, *outputs)``)
and each output given back in the kind of ``close`` (index and columns restored).
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from quantcore._parallel import run
from quantcore._typing import Float64Array2D, T
from quantcore._validation import Wrapper, as_float64_2d

__all__ = ["apply", "apply1", "as_fields"]


def as_fields(names: tuple[str, ...], values: tuple[Any, ...]) -> tuple[list[Float64Array2D], Wrapper]:
    """Convert same-shaped bar fields; the wrapper of ``close`` restores the output's kind.

    Fields are aligned by position: they must have the same shape, and pandas
    inputs the same index (and columns), or a ``ValueError`` names the field.
    """
    converted = [as_float64_2d(value, name) for name, value in zip(names, values, strict=True)]
    ref = names.index("close")
    ref_values, ref_wrapper = converted[ref]
    for name, (array, wrapper) in zip(names, converted, strict=True):
        if array.shape != ref_values.shape:
            raise ValueError(
                f"{name} must have the same shape as close, got {array.shape} and {ref_values.shape}"
            )
        for attr in ("index", "columns"):
            mine, theirs = getattr(wrapper, attr), getattr(ref_wrapper, attr)
            if mine is not None and theirs is not None and not mine.equals(theirs):
                raise ValueError(f"{name} must have the same {attr} as close")
    return [array for array, _ in converted], ref_wrapper


def apply(
    kernel: Any, fields: dict[str, T], params: tuple[Any, ...], n_out: int = 1
) -> tuple[T, ...]:
    """Run ``kernel(*fields, *params, *outputs)`` over ``n_out`` new output panels.

    ``fields`` maps each input's name (used in error messages; one must be
    ``close``) to its value, in the kernel's argument order.
    """
    names = tuple(fields)
    if len(names) == 1:
        x, wrapper = as_float64_2d(fields[names[0]], names[0])
        arrays = [x]
    else:
        arrays, wrapper = as_fields(names, tuple(fields.values()))
    # allocated by NumPy (huge pages for large panels, see the kernels), columns contiguous
    outs = [np.empty(arrays[0].shape, order="F") for _ in range(n_out)]
    run(kernel, *arrays, *params, *outs)
    return tuple(cast(T, wrapper.wrap(out)) for out in outs)


def apply1(kernel: Any, close: T, *params: Any) -> T:
    """:func:`apply` for the common case: one close series or panel in, one out."""
    return apply(kernel, {"close": close}, params)[0]
