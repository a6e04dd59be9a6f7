"""Kernels of the tax reports and loss harvesting: cents, yearly gains, sums per symbol,
lots below their basis. Arrays in, arrays out, exact int64 (1e-8 units or cents).

A figure is rounded half-up (away from zero) to cents once, per row
(:func:`cents_nb`), and every total is a sum of rounded rows; the sums are exact int64
and raise ``OverflowError`` rather than wrap (amounts are below 9.2e10 dollars, so
that takes about a million rows at the limit); the yearly gains return the sum of
their magnitudes instead, for the caller to refuse.
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

__all__ = [
    "SUM_LIMIT",
    "cents_nb",
    "form_8949_nb",
    "form_columns_nb",
    "harvest_lots_nb",
    "place_form_nb",
    "sum_by_code_nb",
    "yearly_gains_nb",
]

_UNITS_PER_CENT = 1_000_000
SUM_LIMIT = 9.0e18  # |sum| of int64 cents stays below this, or the sum is refused


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
    sold: np.ndarray, proceeds: np.ndarray, basis: np.ndarray, disallowed: np.ndarray, long_term: np.ndarray,
    first: int, last: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """Short- and long-term gain in cents per calendar year of the sale day, and where the
    pieces sold from day ``first`` to ``last`` are: one pass over the pieces.

    A piece's gain is ``cents(proceeds) - cents(basis) + cents(disallowed)``, its Form
    8949 row's gain. Returns ``(years, short_term, long_term, pieces, window, size)``:
    every year from the first to the last sale (years without sales hold 0 pieces), empty
    without pieces; ``window`` is ``(lo, hi, short, long)``, the pieces sold in
    ``first..last`` lie in ``lo:hi`` (all of them, in sale order, when the pieces are) and
    number ``short`` short-term and ``long`` long-term; ``size`` is the sum of the
    gains' magnitudes (the sums are exact while it is below ``SUM_LIMIT``).
    """
    n = sold.shape[0]
    window = np.zeros(4, dtype=np.int64)
    if n == 0:
        e = np.empty(0, dtype=np.int64)
        return e, e.copy(), e.copy(), e.copy(), window, 0.0
    # per year, from year ``low`` on; grown when a piece falls outside (pieces come in
    # sale order: the year changes a few times, and the pass reads each record once)
    low = civil_from_days_nb(sold[0])[0]
    sums = np.zeros((3, 16), dtype=np.int64)  # short-term, long-term, pieces
    y_min = y_max = low
    y = low
    start = days_from_civil_nb(y, 1, 1)
    end = days_from_civil_nb(y + 1, 1, 1)
    size = 0.0
    w_lo = n
    w_hi = 0
    for i in range(n):
        day = sold[i]
        if day < start or day >= end:
            y = civil_from_days_nb(day)[0]
            start = days_from_civil_nb(y, 1, 1)
            end = days_from_civil_nb(y + 1, 1, 1)
            y_min = min(y_min, y)
            y_max = max(y_max, y)
            if y_min < low or y_max - low >= sums.shape[1]:
                top = max(y_max, low + sums.shape[1] - 1)
                grown = np.zeros((3, 2 * (top - y_min + 1)), dtype=np.int64)
                grown[:, low - y_min : low - y_min + sums.shape[1]] = sums
                sums = grown
                low = y_min
        g = _cent(proceeds[i]) - _cent(basis[i]) + _cent(disallowed[i])
        size += abs(float(g))
        k = y - low
        sums[2, k] += 1
        if long_term[i]:
            sums[1, k] += g
        else:
            sums[0, k] += g
        if first <= day <= last:
            w_lo = min(w_lo, i)
            w_hi = i + 1
            window[3 if long_term[i] else 2] += 1
    window[0] = min(w_lo, w_hi)
    window[1] = w_hi
    years = np.arange(y_min, y_max + 1).astype(np.int64)
    at = y_min - low
    m = y_max - y_min + 1
    return years, sums[0, at : at + m].copy(), sums[1, at : at + m].copy(), sums[2, at : at + m].copy(), window, size


@njit(cache=True, error_model="numpy")
def form_columns_nb(n: int) -> tuple[np.ndarray, ...]:
    """``n`` rows of Form 8949 columns to fill (:func:`form_8949_nb`'s result)."""
    return (
        np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64),
        np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64),
        np.empty(n, dtype=np.int64), np.empty(n, dtype=np.bool_), np.empty(n, dtype=np.bool_),
    )  # fmt: skip


@njit(cache=True, error_model="numpy")
def _form_row(
    out: tuple[np.ndarray, ...], k: int, symbol: int, quantity: int, acquired: int, sold: int,
    proceeds: int, basis: int, disallowed: int, long_term: int,
) -> None:
    """Row ``k`` of Form 8949 columns ``out`` from one realized piece (amounts to cents)."""
    sym, qty, acq, day, pro, bas, adj, lt, wash = out
    sym[k] = symbol
    qty[k] = quantity
    acq[k] = acquired
    day[k] = sold
    pro[k] = _cent(proceeds)
    bas[k] = _cent(basis)
    adj[k] = _cent(disallowed)
    lt[k] = long_term != 0
    wash[k] = disallowed > 0


@njit(cache=True, error_model="numpy")
def form_8949_nb(
    symbol: np.ndarray, quantity: np.ndarray, acquired: np.ndarray, sold: np.ndarray,
    proceeds: np.ndarray, basis: np.ndarray, disallowed: np.ndarray, long_term: np.ndarray,
    first: int, last: int, window: np.ndarray,
) -> tuple[np.ndarray, ...]:
    """Form 8949 columns of the pieces sold in ``first..last`` (``window`` of
    :func:`yearly_gains_nb`): short-term rows, then long-term rows, each in piece order.

    Returns ``(symbol, quantity, acquired, sold, proceeds, cost_basis, adjustment,
    long_term, wash_sale)``, the amounts rounded to cents (:func:`cents_nb`).
    """
    out = form_columns_nb(window[2] + window[3])
    k_short = 0
    k_long = window[2]  # a counting order: Part II rows start after Part I's
    for i in range(window[0], window[1]):
        d = sold[i]
        if d < first or d > last:
            continue
        if long_term[i]:
            k = k_long
            k_long += 1
        else:
            k = k_short
            k_short += 1
        _form_row(
            out, k, symbol[i], quantity[i], acquired[i], d, proceeds[i], basis[i], disallowed[i], long_term[i]
        )
    return out


@njit(cache=True, error_model="numpy", nogil=True)
def place_form_nb(
    pieces: np.ndarray, rows: np.ndarray, cols: np.ndarray, row_col: int, base: int, at: np.ndarray,
    out: tuple[np.ndarray, ...],
) -> None:
    """One processing group's realized pieces (int64 columns; ``cols``: where symbol,
    quantity, acquired, sold, proceeds, basis, disallowed and long_term are) as rows of
    Form 8949 columns ``out``: ``at[part, row - base]`` is where the next piece of that
    table row goes in Part I (0) or II (1), advanced as pieces are placed
    (``quantcore.tax.splice.placement``). The pieces are all of the form's year."""
    for i in range(pieces.shape[0]):
        r = rows[pieces[i, row_col]] - base
        p = pieces[i]
        part = 1 if p[cols[7]] else 0
        k = at[part, r]
        at[part, r] = k + 1
        _form_row(out, k, p[cols[0]], p[cols[1]], p[cols[2]], p[cols[3]], p[cols[4]], p[cols[5]], p[cols[6]], p[cols[7]])


@njit(cache=True, error_model="numpy")
def sum_by_code_nb(codes: np.ndarray, values: np.ndarray, n_codes: int) -> np.ndarray:
    """Exact int64 sum of ``values`` per code ``0..n_codes-1`` (raises rather than wraps)."""
    out = np.zeros(n_codes, dtype=np.int64)
    size = 0.0
    for i in range(codes.shape[0]):
        out[codes[i]] += values[i]
        size += abs(float(values[i]))
    if size >= SUM_LIMIT:
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
