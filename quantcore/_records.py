"""Structured record dtypes, defined once, and small integer enums numba can read."""

from __future__ import annotations

import numpy as np

__all__ = ["drawdown_dt"]

#: One drawdown period of a series: indices are positions on axis 0.
#: ``recovery`` is -1 while the drawdown is still open at the end of the series.
drawdown_dt = np.dtype(
    [
        ("column", np.int64),
        ("peak", np.int64),
        ("valley", np.int64),
        ("recovery", np.int64),
        ("depth", np.float64),
        ("duration", np.int64),
    ],
    align=True,
)
