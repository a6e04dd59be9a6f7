"""Kernel of the combinatorially symmetric cross-validation (CSCV) behind PBO."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from quantcore._parallel import parallel_kernel

__all__ = ["cscv_logits_nb"]


@parallel_kernel()
def cscv_logits_nb(
    sums: np.ndarray, sums2: np.ndarray, rows: int, combos: np.ndarray
) -> np.ndarray:
    """Logit of the out-of-sample relative rank of the in-sample best, per combination.

    Parameters
    ----------
    sums, sums2 : (S, N) arrays
        Per block and strategy: sum of the returns and of their squares.
    rows : int
        Rows per block.
    combos : (C, S) bool array
        True where a block is in-sample in combination ``c``; the others are out.

    Returns
    -------
    (C,) array of ``log(w / (1 - w))``, ``w = rank / (N + 1)`` with ``rank`` the
    average rank (1 = worst) of the in-sample best among the out-of-sample Sharpe
    ratios. A Sharpe ratio without variance is -inf: it ranks worst.
    """
    n_combos = combos.shape[0]
    n_blocks, n_strats = sums.shape
    out = np.empty(n_combos)
    for c in prange(n_combos):
        is_sr = np.empty(n_strats)
        oos_sr = np.empty(n_strats)
        is_s = np.zeros(n_strats)
        is_s2 = np.zeros(n_strats)
        oos_s = np.zeros(n_strats)
        oos_s2 = np.zeros(n_strats)
        m_is = 0
        for b in range(n_blocks):
            if combos[c, b]:
                m_is += rows
                for j in range(n_strats):
                    is_s[j] += sums[b, j]
                    is_s2[j] += sums2[b, j]
            else:
                for j in range(n_strats):
                    oos_s[j] += sums[b, j]
                    oos_s2[j] += sums2[b, j]
        m_oos = n_blocks * rows - m_is
        for j in range(n_strats):
            is_sr[j] = _sharpe(is_s[j], is_s2[j], m_is)
            oos_sr[j] = _sharpe(oos_s[j], oos_s2[j], m_oos)
        best = 0
        for j in range(1, n_strats):
            if is_sr[j] > is_sr[best]:
                best = j
        target = oos_sr[best]
        below = 0.0
        ties = 0.0
        for j in range(n_strats):
            if j != best:
                if oos_sr[j] < target:
                    below += 1.0
                elif oos_sr[j] == target:
                    ties += 1.0
        rank = 1.0 + below + 0.5 * ties
        w = rank / (n_strats + 1.0)
        out[c] = np.log(w / (1.0 - w))
    return out


@njit(cache=True)
def _sharpe(s: float, s2: float, m: int) -> float:
    """``mean / std(ddof=1)`` from sums; -inf without variance, so it ranks last."""
    mean = s / m
    var = (s2 - s * mean) / (m - 1)
    if not var > 0.0:
        return -np.inf
    return float(mean / np.sqrt(var))
