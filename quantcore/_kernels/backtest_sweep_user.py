"""Fused sweep of a user's ``@njit`` strategy: its signals and the engine in one parallel kernel.

``f(close, **params) -> (entries, exits)`` is called inside the kernel once per
parameter combination, then every option row runs on those signals with
:func:`~quantcore._kernels.backtest_sweep.signal_row_nb`, the bar step every sweep uses.
No signal array leaves the kernel: memory is one signal pair per thread plus
the result.

The kernel, :func:`fused_signals_nb`, is compiled once for every user function
and cached on disk: it takes the strategy as a first-class function of one fixed
type, ``(close, params) -> (entries, exits)`` on C-contiguous float64 and bool
arrays (:data:`SIGNAL_FN`). :func:`signal_adapter` wraps a user function into
that type (keyword call, signals converted to bool); only this small adapter is
compiled per user function and parameter names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit, prange, types

from quantcore._kernels.backtest import N_STATS
from quantcore._kernels.backtest_orders import DIRECTION_BOTH
from quantcore._kernels.backtest_sweep import flat_next_nb, signal_row_nb

__all__ = ["SIGNAL_FN", "fused_signals_nb", "signal_adapter"]

_F1 = types.Array(types.float64, 1, "C")
_F2 = types.Array(types.float64, 2, "C")
_B1 = types.Array(types.bool_, 1, "C")
#: The strategy argument of :func:`fused_signals_nb`: ``(close, params) -> (entries, exits)``.
SIGNAL_FN = types.FunctionType(types.UniTuple(_B1, 2)(_F1, _F1))


@njit(
    _F2(
        SIGNAL_FN, _F1, _F1, _F1, _F1, types.boolean, _F2, _F2, types.float64, types.float64,
        types.int64, types.float64, types.float64, types.int64, types.boolean, types.float64,
    ),
    cache=True,
    parallel=True,
)  # fmt: skip
def fused_signals_nb(
    f: Any, o: np.ndarray, h: np.ndarray, lo: np.ndarray, x: np.ndarray, use_open: bool,
    params: np.ndarray, opts: np.ndarray, init_cash: float, slippage: float, size_type: int,
    leverage: float, borrow_bar: float, direction: int, integer_shares: bool,
    periods_per_year: float,
) -> np.ndarray:  # fmt: skip
    """Metrics of a strategy's every parameter row under every option row, on one asset.

    ``f`` is a :data:`SIGNAL_FN` (see :func:`signal_adapter`), ``o, h, lo, x`` the
    asset's prices (contiguous), ``params`` (m_s, p) the strategy's parameter rows,
    ``opts`` (m_o, N_OPT) and the scalar engine options those of
    :func:`~quantcore._kernels.backtest_sweep.sweep_signals_nb`. Row ``s * m_o + c`` of the
    result is parameter row ``s`` under option row ``c``; parallel over parameter rows.
    """
    m_s = params.shape[0]
    m_o = opts.shape[0]
    n = x.shape[0]
    out = np.empty((m_s * m_o, N_STATS))
    fill = o if use_open else x
    for s in prange(m_s):
        e0, x0 = f(x, params[s])
        e = np.zeros(n, dtype=np.bool_)
        xs = np.zeros(n, dtype=np.bool_)
        if use_open:  # a signal at t acts at the open of t + 1 (a length mismatch raises)
            e[1:] = e0[:-1]
            xs[1:] = x0[:-1]
        else:
            e[:] = e0
            xs[:] = x0
        nxt = flat_next_nb(e, xs, direction == DIRECTION_BOTH)
        for c in range(m_o):
            signal_row_nb(
                o, h, lo, x, fill, use_open, e, xs, nxt, opts[c], init_cash, slippage, size_type,
                leverage, borrow_bar, direction, integer_shares, periods_per_year,
                out[s * m_o + c],
            )  # fmt: skip
    return out


@njit(cache=True)
def as_signal_nb(a: np.ndarray) -> np.ndarray:
    """A one-dimensional signal as a C-contiguous bool array (non-zero is True)."""
    out = np.empty(a.shape[0], dtype=np.bool_)
    for t in range(a.shape[0]):
        out[t] = a[t] != 0
    return out


_TEMPLATE = """
def adapt(x, p):
    e, xs = f(x{args})
    return as_signal_nb(e), as_signal_nb(xs)
"""
_ADAPTERS: dict[tuple[Any, tuple[str, ...]], Callable[..., Any]] = {}


def signal_adapter(f: Any, names: tuple[str, ...]) -> Callable[..., Any]:
    """``f`` (an ``@njit`` strategy) as a :data:`SIGNAL_FN`: ``params[i]`` goes to ``names[i]``.

    Built and compiled once per function and tuple of names; the engine kernel is
    not recompiled.
    """
    key = (f, names)
    adapter = _ADAPTERS.get(key)
    if adapter is None:
        if not all(n.isidentifier() for n in names):
            raise ValueError(f"parameter names must be identifiers, got {names!r}")
        args = "".join(f", {n}=p[{i}]" for i, n in enumerate(names))
        scope: dict[str, Any] = {"f": f, "as_signal_nb": as_signal_nb}
        exec(_TEMPLATE.format(args=args), scope)  # a fixed template; only the arity varies
        # no cache=True: the adapter is exec'd source (numba caches only functions
        # backed by a file) and calls the user's function as a global, which a cache
        # entry could not follow across sessions; it is a few lines, compiled once per
        # (function, names) and process, and the engine kernel it feeds is cached.
        adapter = njit(scope["adapt"])
        _ADAPTERS[key] = adapter
    return adapter
