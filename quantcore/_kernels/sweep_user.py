"""Fused sweep of a user's ``@njit`` strategy: its signals and the engine in one parallel kernel.

``f(close, **params) -> (entries, exits)`` is called inside the kernel once per
parameter combination (by keyword; the values arrive as float64), then every option row runs on those signals with
:func:`~quantcore._kernels.sweep.signal_row_nb`, the bar step every sweep uses.
No signal array leaves the kernel: memory is one signal pair per thread plus
the result. The kernel takes a function as an argument, so numba compiles it once
per user function and cannot cache it on disk; it is generated once per tuple
of parameter names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit, prange

from quantcore._kernels.backtest import N_STATS
from quantcore._kernels.orders import DIRECTION_BOTH
from quantcore._kernels.sweep import flat_next_nb, signal_row_nb

__all__ = ["fused_kernel"]

_TEMPLATE = """
def fused(f, o, h, lo, x, use_open, params, opts, init_cash, slippage, size_type, leverage,
          borrow_bar, direction, integer_shares, periods_per_year):
    m_s = params.shape[0]
    m_o = opts.shape[0]
    n = x.shape[0]
    out = np.empty((m_s * m_o, N_STATS))
    fill = o if use_open else x
    for s in prange(m_s):
        e0, x0 = f(x{args})
        e = np.zeros(n, dtype=np.bool_)
        xs = np.zeros(n, dtype=np.bool_)
        if use_open:  # a signal at t acts at the open of t + 1
            e[1:] = e0[:-1]
            xs[1:] = x0[:-1]
        else:
            e[:] = e0
            xs[:] = x0
        nxt = flat_next_nb(e, xs, direction == DIRECTION_BOTH)
        for c in range(m_o):
            signal_row_nb(o, h, lo, x, fill, use_open, e, xs, nxt, opts[c], init_cash, slippage,
                          size_type, leverage, borrow_bar, direction, integer_shares,
                          periods_per_year, out[s * m_o + c])
    return out
"""
_KERNELS: dict[tuple[str, ...], Callable[..., Any]] = {}


def fused_kernel(names: tuple[str, ...]) -> Callable[..., Any]:
    """The parallel kernel for strategies with these parameter names (built once each).

    Its arguments: the user's jitted ``f``, one asset's ``o, h, lo, x`` (contiguous),
    ``use_open``, ``params`` (m_s, len(names)), ``opts`` (m_o, N_OPT) and the scalar
    engine options of :func:`~quantcore._kernels.sweep.sweep_signals_nb`; row
    ``s * m_o + c`` of the result is combination ``s`` under option row ``c``.
    """
    kernel = _KERNELS.get(names)
    if kernel is None:
        if not all(n.isidentifier() for n in names):
            raise ValueError(f"parameter names must be identifiers, got {names!r}")
        args = "".join(f", {n}=params[s, {i}]" for i, n in enumerate(names))
        scope: dict[str, Any] = {
            "np": np, "prange": prange, "N_STATS": N_STATS, "DIRECTION_BOTH": DIRECTION_BOTH,
            "flat_next_nb": flat_next_nb, "signal_row_nb": signal_row_nb,
        }  # fmt: skip
        exec(_TEMPLATE.format(args=args), scope)  # a fixed template; only the arity varies
        kernel = njit(parallel=True)(scope["fused"])
        _KERNELS[names] = kernel
    return kernel
