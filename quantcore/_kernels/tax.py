"""Tax-lot matching with wash-sale detection, in exact int64 fixed point.

Exactness
---------
Every quantity and every amount inside these kernels is an ``int64`` count of
``1e-8`` units (:data:`SCALE`): shares in 1e-8 shares, money in 1e-8 dollars.
Additions and subtractions are therefore exact; the only rounding is
:func:`muldiv_nb`, ``round_half_up(a * b / c)`` computed *exactly* with a
128-bit intermediate product, used for ``quantity x price`` and for every
proportional split (partial lot, proceeds of a sale spread over lots, partial
wash-sale replacement). Each split hands the *remainder* to the last piece, so
pieces always sum to their whole. Money is rounded half-up to cents only at the
edge (reports). The plain-Python ``Decimal`` reference in the tests applies the
same two rules and agrees to the 1e-8 unit, hence to the cent.

Ranges: ``|amount| < 9.2e10`` dollars and ``quantity < 9.2e10`` shares.
Every divisor is a positive quantity (validated at the edge), so the kernels use
NumPy's error model and skip Python's zero-division checks.

Dates are int64 day numbers (days since 1970-01-01).

Layout
------
- :mod:`quantcore._kernels.tax_fixed`: fixed-point products, exact ratio
  comparison, calendar and holding-period helpers.
- :mod:`quantcore._kernels.tax_table`: kinds, methods, error codes, the lot table's
  layout and its linked-list primitives.
- :mod:`quantcore._kernels.tax_lots`: the matcher of one group of
  substantially identical symbols (:func:`match_group_nb`), with corporate actions in
  :mod:`quantcore._kernels.tax_actions`.
- :mod:`quantcore._kernels.tax_match`: all groups, in parallel
  (:func:`match_lots_nb`) or one after the other (:func:`match_lots_seq_nb`).
- this module: the public names and dividend qualification.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from quantcore._kernels.tax_fixed import (
    SCALE,
    _civil_from_days,  # noqa: F401  (re-exported for the tests)
    _cmp_ratio,  # noqa: F401
    _days_from_civil,  # noqa: F401
    is_long_term_nb,
    muldiv_nb,
)
from quantcore._kernels.tax_lots import match_group_nb
from quantcore._kernels.tax_match import match_lots_nb, match_lots_seq_nb
from quantcore._kernels.tax_table import (
    AVERAGE,
    BUY,
    DIVIDEND,
    ERR_LOT_EXCEEDED,
    ERR_NO_FRACTION,
    ERR_NOT_HELD,
    ERR_OVERSOLD,
    ERR_RATIO,
    FIFO,
    HIFO,
    LIFO,
    MERGER,
    R_PURCHASED,
    R_QTY,
    R_SOLD,
    R_SYM,
    RETURN_OF_CAPITAL,
    SELL,
    SPECIFIC,
    SPIN_OFF,
    SPLIT,
    STOCK_DIVIDEND,
)

__all__ = [
    "AVERAGE",
    "BUY",
    "DIVIDEND",
    "ERR_LOT_EXCEEDED",
    "ERR_NOT_HELD",
    "ERR_NO_FRACTION",
    "ERR_OVERSOLD",
    "ERR_RATIO",
    "FIFO",
    "HIFO",
    "LIFO",
    "MERGER",
    "RETURN_OF_CAPITAL",
    "SCALE",
    "SELL",
    "SPECIFIC",
    "SPIN_OFF",
    "SPLIT",
    "STOCK_DIVIDEND",
    "is_long_term_nb",
    "match_group_nb",
    "match_lots_nb",
    "match_lots_seq_nb",
    "muldiv_nb",
    "qualified_dividends_nb",
]

_HELD = 1 << 60  # disposal day of shares still held


@njit(cache=True, error_model="numpy")
def _add_interval(
    s: int, a: int, e: int, q: int, first: np.ndarray, ex_sorted: np.ndarray,
    entitled: np.ndarray, good: np.ndarray, half_window: int, min_days: int,
) -> None:
    """Add ``q`` shares held from day ``a`` to day ``e`` to the dividends of symbol ``s``
    whose ex-date falls in ``(a, e]``, and to their qualified count when held long enough."""
    lo = first[s]
    hi = first[s + 1]
    while lo < hi:  # first dividend of the symbol with ex-date > purchase day
        mid = (lo + hi) >> 1
        if ex_sorted[mid] <= a:
            lo = mid + 1
        else:
            hi = mid
    for m in range(lo, first[s + 1]):
        ex = ex_sorted[m]
        if ex > e:  # sold before this ex-date
            break
        entitled[m] += q
        held = min(e, ex + half_window) - max(a + 1, ex - half_window) + 1
        if held >= min_days:
            good[m] += q


@njit(cache=True, error_model="numpy")
def qualified_dividends_nb(
    div_sym: np.ndarray,
    div_ex: np.ndarray,
    div_amount: np.ndarray,
    realized: np.ndarray,
    open_lots: np.ndarray,
    n_symbols: int,
    half_window: int,
    min_days: int,
) -> np.ndarray:
    """Qualified part of each dividend from the holding intervals of the shares.

    Parameters
    ----------
    div_sym, div_ex, div_amount : ndarray of int64
        Symbol code, ex-dividend day and amount (1e-8 dollars) of each dividend.
    realized, open_lots : ndarray of int64
        The outputs of :func:`match_lots_nb`: every share's holding interval
        (purchase day to sale day, or still held).
    n_symbols : int
        Number of symbol codes.
    half_window, min_days : int
        60 and 61 for common stock: the window is ``[ex - 60, ex + 60]`` and a
        share qualifies when held at least 61 days of it.

    Returns
    -------
    ndarray of int64
        The qualified amount of each dividend, ``amount * q / e`` rounded
        half-up, where ``e`` are the shares entitled (bought before the
        ex-date, not sold before it) and ``q`` those of them held long enough;
        0 when no recorded shares are entitled.
    """
    n_div = div_sym.shape[0]
    # dividends grouped by symbol and sorted by ex-date; each interval then adds its
    # shares to the dividends whose ex-date falls in (purchase, disposal]
    key = np.empty(n_div, dtype=np.int64)
    for j in range(n_div):
        key[j] = (div_sym[j] << 32) + div_ex[j] + (1 << 31)  # days fit in 32 bits
    order = np.argsort(key)
    ex_sorted = div_ex[order]
    first = np.zeros(n_symbols + 1, dtype=np.int64)
    for j in range(n_div):
        first[div_sym[j] + 1] += 1
    for s in range(n_symbols):
        first[s + 1] += first[s]
    entitled = np.zeros(n_div, dtype=np.int64)
    good = np.zeros(n_div, dtype=np.int64)
    for j in range(realized.shape[0]):
        _add_interval(
            realized[j, R_SYM], realized[j, R_PURCHASED], realized[j, R_SOLD], realized[j, R_QTY],
            first, ex_sorted, entitled, good, half_window, min_days,
        )
    for j in range(open_lots.shape[0]):
        _add_interval(
            open_lots[j, 0], open_lots[j, 2], _HELD, open_lots[j, 4],
            first, ex_sorted, entitled, good, half_window, min_days,
        )
    out = np.zeros(n_div, dtype=np.int64)
    for m in range(n_div):
        i = order[m]
        if entitled[m] > 0:
            out[i] = div_amount[i] if good[m] == entitled[m] else muldiv_nb(div_amount[i], good[m], entitled[m])
    return out
