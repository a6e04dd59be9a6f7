"""Kernels of the tax reports and loss harvesting: cents, yearly gains, sums per symbol,
lots below their basis. Arrays in, arrays out, exact int64 (1e-8 units or cents).

A figure is rounded half-up (away from zero) to cents once, per row
(:func:`cents_nb`), and every total is a sum of rounded rows; the sums are exact int64
and raise ``OverflowError`` rather than wrap (amounts are below 9.2e10 dollars, so
that takes about a million rows at the limit).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from quantcore._kernels.tax_fixed import (
    SCALE,
    civil_from_days_nb,
    days_from_civil_nb,
    is_long_term_nb,
    muldiv_nb,
)

__all__ = ["cents_nb", "harvest_lots_nb", "sum_by_code_nb", "yearly_gains_nb"]

_UNITS_PER_CENT = 1_000_000
_SUM_LIMIT = 9.0e18  # |sum| of int64 cents stays below this, or the kernels raise


@njit(cache=True, error_model="numpy")
def _cent(x: int) -> int:
    a = -x if x < 0 else x
    q = a // _UNITS_PER_CENT
    if 2 * (a - q * _UNITS_PER_CENT) >= _UNITS_PER_CENT:
        q += 1
    return -q if x < 0 else q


@njit(cache=True, error_model="numpy")
def cents_nb(units: np.ndarray) -> np.ndarray:
    """Each 1e-8 amount rounded half-up (away from zero) to int64 cents."""
    out = np.empty(units.shape[0], dtype=np.int64)
    for i in range(units.shape[0]):
        out[i] = _cent(units[i])
    return out


@njit(cache=True, error_model="numpy")
def yearly_gains_nb(
    sold: np.ndarray, proceeds: np.ndarray, basis: np.ndarray, disallowed: np.ndarray, long_term: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Short- and long-term gain in cents per calendar year of the sale day.

    A piece's gain is ``cents(proceeds) - cents(basis) + cents(disallowed)``, its Form
    8949 row's gain. Returns ``(years, short_term, long_term, pieces)``: every year from
    the first to the last sale (years without sales hold 0 pieces), empty without pieces.
    """
    n = sold.shape[0]
    if n == 0:
        e = np.empty(0, dtype=np.int64)
        return e, e.copy(), e.copy(), e.copy()
    lo = sold[0]
    hi = sold[0]
    for i in range(n):
        lo = min(lo, sold[i])
        hi = max(hi, sold[i])
    y0 = civil_from_days_nb(lo)[0]
    y1 = civil_from_days_nb(hi)[0]
    years = np.arange(y0, y1 + 1).astype(np.int64)
    starts = np.empty(years.shape[0] + 1, dtype=np.int64)  # January 1st of each year, and after
    for k in range(years.shape[0] + 1):
        starts[k] = days_from_civil_nb(y0 + k, 1, 1)
    st = np.zeros(years.shape[0], dtype=np.int64)
    lt = np.zeros(years.shape[0], dtype=np.int64)
    count = np.zeros(years.shape[0], dtype=np.int64)
    size = 0.0
    for i in range(n):
        g = _cent(proceeds[i]) - _cent(basis[i]) + _cent(disallowed[i])
        size += abs(float(g))
        y = np.searchsorted(starts, sold[i], side="right") - 1
        count[y] += 1
        if long_term[i]:
            lt[y] += g
        else:
            st[y] += g
    if size >= _SUM_LIMIT:
        raise OverflowError("tax kernel: yearly gains out of the int64 range")
    return years, st, lt, count


@njit(cache=True, error_model="numpy")
def sum_by_code_nb(codes: np.ndarray, values: np.ndarray, n_codes: int) -> np.ndarray:
    """Exact int64 sum of ``values`` per code ``0..n_codes-1`` (raises rather than wraps)."""
    out = np.zeros(n_codes, dtype=np.int64)
    size = 0.0
    for i in range(codes.shape[0]):
        out[codes[i]] += values[i]
        size += abs(float(values[i]))
    if size >= _SUM_LIMIT:
        raise OverflowError("tax kernel: sum out of the int64 range")
    return out


@njit(cache=True, error_model="numpy")
def harvest_lots_nb(
    sym: np.ndarray, acquired: np.ndarray, qty: np.ndarray, basis: np.ndarray,
    price: np.ndarray, today: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Which open lots are below their basis at ``price``, and the totals per symbol.

    Parameters
    ----------
    sym, acquired, qty, basis : ndarray of int64
        The open lots (symbol code, holding-period day, shares and basis in 1e-8).
    price : ndarray of int64
        Price per symbol code in 1e-8 dollars, < 0 for a symbol without a price.
    today : int
        Day number of the sale (decides short- or long-term).

    Returns
    -------
    loss : ndarray of bool
        Per lot: ``quantity x price`` (half-up at 1e-8) is below its basis.
    totals : ndarray of int64, shape (n_symbols, 6)
        Per symbol: short-term loss, long-term loss, shares and basis of the loss lots,
        then shares and basis of all its lots (1e-8 units).
    """
    n_sym = price.shape[0]
    loss = np.zeros(sym.shape[0], dtype=np.bool_)
    totals = np.zeros((n_sym, 6), dtype=np.int64)
    for i in range(sym.shape[0]):
        s = sym[i]
        totals[s, 4] += qty[i]
        totals[s, 5] += basis[i]
        if price[s] < 0:
            continue
        value = muldiv_nb(qty[i], price[s], SCALE)
        if value >= basis[i]:
            continue
        loss[i] = True
        if is_long_term_nb(acquired[i], today):
            totals[s, 1] += basis[i] - value
        else:
            totals[s, 0] += basis[i] - value
        totals[s, 2] += qty[i]
        totals[s, 3] += basis[i]
    return loss, totals
