"""Where a panel kernel runs: numba's worker threads, or the calling thread when the work is small.

Every ``prange`` kernel of quantcore is compiled once, with its parallel loop,
and called through :func:`run`, the one place that chooses: one column, or a
panel under :data:`PARALLEL_MIN_CELLS` values, runs on the calling thread only
(``numba.set_num_threads(1)`` for the call, which numba keeps per calling
thread), because waking the worker threads costs 10-200 us, more than such
work, and a spinning worker slows the one doing the work on a busy machine.

A ``prange`` kernel declared with :func:`parallel_kernel` has a serial twin
compiled from the same source without ``parallel=True`` (``prange`` is then
``range``), and :func:`run` calls the twin for a single series: parallel
compilation (the parfor passes and the gufunc of every loop) costs a few times
the serial compile and never pays on one column, so a first call on one series
never compiles it. A panel, small or large, runs (and compiles) the parallel
kernel: on a small panel its column loop, run on one thread, is still faster
than the twin's. Both are cached on disk under their own names.

A kernel declared with one explicit signature (the indicator kernels, see
:func:`register_signature`) is compiled for it, or loaded from numba's on-disk
cache, on its first :func:`run`, not at import.
"""

from __future__ import annotations

from collections.abc import Callable
from types import FunctionType
from typing import Any

import numba
from numba.core.typing.templates import Signature

__all__ = ["PARALLEL_MIN_CELLS", "parallel_kernel", "register_signature", "run", "serial_twin"]

#: Panels with fewer values than this run on the calling thread.
PARALLEL_MIN_CELLS = 1 << 16

_PENDING: dict[Any, Signature] = {}
#: parallel dispatcher -> its serial twin
_SERIAL: dict[Any, Any] = {}


def parallel_kernel(**options: Any) -> Callable[[Callable[..., Any]], Any]:
    """``@njit(cache=True, parallel=True, **options)`` plus a serial twin for :func:`run`.

    The twin is the same code object under the name ``<name>_serial`` (so that
    numba's on-disk cache keeps the two apart), compiled without
    ``parallel=True`` on its first call only.
    """

    def decorate(fn: Callable[..., Any]) -> Any:
        parallel = numba.njit(cache=True, parallel=True, **options)(fn)
        twin = FunctionType(
            fn.__code__, fn.__globals__, f"{fn.__name__}_serial", fn.__defaults__, fn.__closure__
        )
        twin.__qualname__ = f"{fn.__qualname__}_serial"
        twin.__module__ = fn.__module__
        twin.__doc__ = fn.__doc__
        _SERIAL[parallel] = numba.njit(cache=True, **options)(twin)
        return parallel

    return decorate


def serial_twin(kernel: Any) -> Any:
    """The serial twin of a :func:`parallel_kernel` (the kernel itself if it has none)."""
    return _SERIAL.get(kernel, kernel)


def register_signature(kernel: Any, signature: Signature) -> None:
    """Compile ``kernel`` for ``signature`` only, on its first :func:`run`.

    Numba would otherwise compile one specialization per argument layout (a single
    series is a C-ordered ``(n, 1)`` array, a panel is Fortran-ordered, pandas
    hands out read-only arrays); with compilation disabled after the one
    signature they all run the same machine code.
    """
    _PENDING[kernel] = signature
    if kernel in _SERIAL:
        _PENDING[_SERIAL[kernel]] = signature


def run(kernel: Any, *args: Any, shape: tuple[int, ...] | None = None) -> Any:
    """Call a ``prange`` kernel, on the calling thread alone when the work is small.

    ``shape`` is the ``(rows, columns)`` of the work (default: the shape of the
    first argument; a 1-D first argument is one column).
    """
    dims = args[0].shape if shape is None else shape
    cols = dims[1] if len(dims) == 2 else 1
    cells = dims[0] * cols if dims else 0
    if cols > 1 and cells >= PARALLEL_MIN_CELLS:
        return _ready(kernel)(*args)
    # one series: the serial twin; a small panel: the parallel kernel on this thread
    # (its column loop compiles to faster code than the twin's, and a panel user
    # compiles it once anyway)
    target = _ready(_SERIAL.get(kernel, kernel) if cols == 1 else kernel)
    previous = numba.get_num_threads()
    numba.set_num_threads(1)  # a kernel without a twin, or nested prange kernels
    try:
        return target(*args)
    finally:
        numba.set_num_threads(previous)


def _ready(kernel: Any) -> Any:
    """The kernel, compiled for its one registered signature if it has one."""
    signature = _PENDING.pop(kernel, None)
    if signature is not None:
        kernel.compile(signature)
        kernel.disable_compile()
    return kernel
