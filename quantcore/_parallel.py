"""Where a panel kernel runs: numba's worker threads, or the calling thread when the work is small.

Every ``prange`` kernel of quantcore is compiled once, with its parallel loop,
and called through :func:`run`, the one place that chooses: one column, or a
panel under :data:`PARALLEL_MIN_CELLS` values, runs on the calling thread only
(``numba.set_num_threads(1)`` for the call, which numba keeps per calling
thread), because waking the worker threads costs 10-200 us, more than such
work, and a spinning worker slows the one doing the work on a busy machine.
Kernels therefore carry no serial copy of their loops.

A kernel declared with one explicit signature (the indicator kernels, see
:func:`register_signature`) is compiled for it, or loaded from numba's on-disk
cache, on its first :func:`run`, not at import.
"""

from __future__ import annotations

from typing import Any

import numba
from numba.core.typing import Signature

__all__ = ["PARALLEL_MIN_CELLS", "register_signature", "run"]

#: Panels with fewer values than this run on the calling thread.
PARALLEL_MIN_CELLS = 1 << 16

_PENDING: dict[Any, Signature] = {}


def register_signature(kernel: Any, signature: Signature) -> None:
    """Compile ``kernel`` for ``signature`` only, on its first :func:`run`.

    Numba would otherwise compile one specialization per argument layout (a single
    series is a C-ordered ``(n, 1)`` array, a panel is Fortran-ordered, pandas
    hands out read-only arrays); with compilation disabled after the one
    signature they all run the same machine code.
    """
    _PENDING[kernel] = signature


def run(kernel: Any, *args: Any, shape: tuple[int, ...] | None = None) -> Any:
    """Call a ``prange`` kernel, on the calling thread alone when the work is small.

    ``shape`` is the ``(rows, columns)`` of the work (default: the shape of the
    first argument; a 1-D first argument is one column).
    """
    signature = _PENDING.pop(kernel, None)
    if signature is not None:
        kernel.compile(signature)
        kernel.disable_compile()
    dims = args[0].shape if shape is None else shape
    cols = dims[1] if len(dims) == 2 else 1
    cells = dims[0] * cols if dims else 0
    if cols > 1 and cells >= PARALLEL_MIN_CELLS:
        return kernel(*args)
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        return kernel(*args)
    finally:
        numba.set_num_threads(previous)
