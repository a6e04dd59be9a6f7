"""Array aliases that carry dtype and dimensionality in their names."""

from __future__ import annotations

from typing import TypeAlias, TypeVar

import numpy as np
import numpy.typing as npt
import pandas as pd

__all__ = [
    "ArrayLike1D",
    "ArrayOrFrame",
    "BoolArray1D",
    "Float64Array",
    "Float64Array1D",
    "Float64Array2D",
    "Int64Array1D",
    "Int64Array2D",
    "Offset",
    "Reduced",
    "T",
]

#: float64 array of any shape (NumPy cannot type the number of dimensions yet).
Float64Array: TypeAlias = npt.NDArray[np.float64]
#: float64 array of shape (n,): one series, axis 0 is time.
Float64Array1D: TypeAlias = npt.NDArray[np.float64]
#: float64 array of shape (n, k): axis 0 is time, axis 1 is assets or parameter sets.
Float64Array2D: TypeAlias = npt.NDArray[np.float64]
#: int64 array of shape (n,).
Int64Array1D: TypeAlias = npt.NDArray[np.int64]
#: int64 array of shape (n, k).
Int64Array2D: TypeAlias = npt.NDArray[np.int64]
#: bool array of shape (n,): signals, masks.
BoolArray1D: TypeAlias = npt.NDArray[np.bool_]
#: An array offset that kernels may pass as numba's ``uintp`` (unsigned indices
#: need no negative-index wraparound code).
Offset: TypeAlias = "int | np.uintp"

#: What public functions accept: one series or a panel.
ArrayOrFrame: TypeAlias = "np.ndarray | pd.Series | pd.DataFrame"
#: One series only.
ArrayLike1D: TypeAlias = "np.ndarray | pd.Series"
#: One series or panel in, the same kind out (index and columns restored): the
#: time-shaped results (returns, drawdowns, rolling metrics, indicators).
T = TypeVar("T", np.ndarray, pd.Series, pd.DataFrame)
#: One value per column: a float for a series, a Series for a frame, a float or an
#: array for an ndarray (1-D or 2-D); each reduction overloads this by input kind.
Reduced: TypeAlias = "float | Float64Array | pd.Series"
