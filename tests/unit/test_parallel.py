"""quantcore._parallel.run: the one place that puts a prange kernel on the worker threads or not."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numba import njit, prange, types

from quantcore import _parallel
from quantcore._parallel import PARALLEL_MIN_CELLS, register_signature, run


@njit(parallel=True)
def _threads_seen(x: np.ndarray) -> np.ndarray:
    out = np.empty(x.shape[1])
    for j in prange(x.shape[1]):
        out[j] = numba.get_num_threads()
    return out


def _seen(dims: tuple[int, int], work: tuple[int, int] | None = None) -> float:
    return float(run(_threads_seen, np.zeros(dims), shape=work).max())


def test_small_work_runs_on_the_calling_thread() -> None:
    default = numba.get_num_threads()
    rows = PARALLEL_MIN_CELLS // 4
    assert _seen((rows, 4)) == default  # exactly the threshold: parallel
    assert _seen((rows, 3)) == 1  # below it
    assert _seen((PARALLEL_MIN_CELLS * 2, 1)) == 1  # one column: nothing to share out
    # the work's shape can be given apart from the first argument
    assert _seen((rows, 3), work=(rows, 8)) == default
    assert numba.get_num_threads() == default  # restored after the call


def test_the_thread_count_is_restored_after_an_error() -> None:
    default = numba.get_num_threads()

    def boom(x: np.ndarray) -> None:
        raise ValueError("bad")

    with pytest.raises(ValueError, match="bad"):
        run(boom, np.zeros((3, 2)))
    assert numba.get_num_threads() == default


def test_a_registered_signature_is_the_only_one_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_parallel, "_PENDING", {})

    @njit(parallel=True)
    def colsum(x: np.ndarray, out: np.ndarray) -> None:
        for j in prange(x.shape[1]):
            out[j] = x[:, j].sum()

    sig = types.void(types.Array(types.float64, 2, "A", readonly=True), types.Array(types.float64, 1, "A"))
    register_signature(colsum, sig)
    assert colsum.signatures == []  # nothing compiled at registration
    out = np.empty(3)
    run(colsum, np.ones((4, 3)), out)  # C order
    run(colsum, np.asfortranarray(np.ones((4, 3))), out)  # Fortran order: same machine code
    assert out.tolist() == [4.0, 4.0, 4.0]
    assert colsum.signatures == [sig.args]
