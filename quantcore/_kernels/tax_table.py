"""The lot table of the tax matcher: kinds, methods, error codes, column layouts, and the
linked-list primitives over it (int64 arrays grown by doubling).

Shared by :mod:`quantcore._kernels.tax_lots` (the matcher) and
:mod:`quantcore._kernels.tax_actions` (corporate actions).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from quantcore._kernels.tax_fixed import is_long_term_nb

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
    "L_ACQUIRED",
    "L_ADJ",
    "L_BASIS",
    "L_NEXT",
    "L_NF",
    "L_ORIGIN",
    "L_PREV",
    "L_PURCHASED",
    "L_QTY",
    "L_SYM",
    "L_UNEXT",
    "L_UPREV",
    "L_USED",
    "MERGER",
    "OPEN_NF",
    "P_ACQUIRED",
    "P_LOSS",
    "P_NEXT",
    "P_NF",
    "P_PIECE",
    "P_QTY",
    "P_SALE",
    "P_SYM",
    "RETURN_OF_CAPITAL",
    "R_ACQUIRED",
    "R_BASIS",
    "R_DISALLOWED",
    "R_LONG",
    "R_NF",
    "R_ORIGIN",
    "R_PROCEEDS",
    "R_PURCHASED",
    "R_QTY",
    "R_ROW",
    "R_SOLD",
    "R_SYM",
    "SELL",
    "SPECIFIC",
    "SPIN_OFF",
    "SPLIT",
    "STOCK_DIVIDEND",
    "append_nb",
    "grow_nb",
    "insert_before_nb",
    "insert_by_purchase_nb",
    "new_lot_nb",
    "piece_nb",
    "unlink_nb",
]

# transaction kinds
BUY = 0
SELL = 1
DIVIDEND = 2
# corporate actions (IRS Publication 550, "Stock Splits", "Stock Dividends",
# "Nondividend Distributions"; the issuer's Form 8937 gives ratio and basis allocation)
SPLIT = 3  # every open lot's quantity x ratio, basis unchanged; cash in lieu sells the fraction
STOCK_DIVIDEND = 4  # a nontaxable stock dividend: the same as a split
RETURN_OF_CAPITAL = 5  # price per share reduces basis; beyond zero, a capital gain
SPIN_OFF = 6  # new lots of the target: quantity x ratio, basis x allocation, dates kept
MERGER = 7  # lots become the target's (quantity x ratio); the cash part is a sale
# lot relief methods
FIFO = 0
LIFO = 1
HIFO = 2
SPECIFIC = 3
AVERAGE = 4
# error codes
ERR_OVERSOLD = 1
ERR_LOT_EXCEEDED = 2
ERR_NOT_HELD = 3  # a corporate action on a symbol with no open lots
ERR_NO_FRACTION = 4  # cash in lieu, but the split leaves no fractional share
ERR_RATIO = 5  # a ratio that leaves a lot with no shares

# lot table columns (L_SYM is the symbol's index inside its group)
L_SYM = 0
L_ORIGIN = 1  # row of the buy that created the shares
L_PURCHASED = 2  # day of that buy
L_ACQUIRED = 3  # day for the holding period (earlier after a wash sale)
L_QTY = 4
L_BASIS = 5
L_USED = 6  # 1 once the shares replaced a wash-sale loss; 2: never a replacement (spin-off, merger)
L_ADJ = 7  # disallowed loss carried in the basis
L_NEXT = 8  # the symbol's list of open lots, in relief order
L_PREV = 9
L_UNEXT = 10  # the sub-list of lots not yet used as replacement (wash-sale candidates)
L_UPREV = 11
L_NF = 12
# realized table columns (the fields of realized_dt)
R_SYM = 0
R_ORIGIN = 1
R_ROW = 2  # the sell row
R_PURCHASED = 3
R_ACQUIRED = 4
R_SOLD = 5
R_QTY = 6
R_PROCEEDS = 7
R_BASIS = 8
R_DISALLOWED = 9
R_LONG = 10
R_NF = 11
OPEN_NF = 8  # open-lot columns (the fields of lot_dt)
# pending (forward-looking) wash entries
P_PIECE = 0
P_QTY = 1
P_LOSS = 2
P_SALE = 3
P_ACQUIRED = 4
P_NEXT = 5
P_SYM = 6  # the sold symbol
P_NF = 7



@njit(cache=True, error_model="numpy")
def grow_nb(a: np.ndarray, need: int) -> np.ndarray:
    if need <= a.shape[0]:
        return a
    out = np.empty((max(need, 2 * a.shape[0]), a.shape[1]), dtype=np.int64)
    out[: a.shape[0]] = a
    return out


@njit(cache=True, error_model="numpy")
def new_lot_nb(
    lots: np.ndarray, n_lots: int, s: int, origin: int, purchased: int, acquired: int,
    qty: int, basis: int, used: int, adj: int,
) -> np.ndarray:
    lots = grow_nb(lots, n_lots + 1)
    lots[n_lots, L_SYM] = s
    lots[n_lots, L_ORIGIN] = origin
    lots[n_lots, L_PURCHASED] = purchased
    lots[n_lots, L_ACQUIRED] = acquired
    lots[n_lots, L_QTY] = qty
    lots[n_lots, L_BASIS] = basis
    lots[n_lots, L_USED] = used
    lots[n_lots, L_ADJ] = adj
    lots[n_lots, L_NEXT] = -1
    lots[n_lots, L_PREV] = -1
    lots[n_lots, L_UNEXT] = -1
    lots[n_lots, L_UPREV] = -1
    return lots


@njit(cache=True, error_model="numpy")
def append_nb(lots: np.ndarray, head: np.ndarray, tail: np.ndarray, s: int, k: int, nxt: int, prv: int) -> None:
    t = tail[s]
    lots[k, prv] = t
    lots[k, nxt] = -1
    if t == -1:
        head[s] = k
    else:
        lots[t, nxt] = k
    tail[s] = k


@njit(cache=True, error_model="numpy")
def insert_before_nb(lots: np.ndarray, head: np.ndarray, s: int, k: int, at: int) -> None:
    p = lots[at, L_PREV]
    lots[k, L_PREV] = p
    lots[k, L_NEXT] = at
    lots[at, L_PREV] = k
    if p == -1:
        head[s] = k
    else:
        lots[p, L_NEXT] = k


@njit(cache=True, error_model="numpy")
def insert_by_purchase_nb(lots: np.ndarray, head: np.ndarray, tail: np.ndarray, s: int, k: int) -> None:
    """Put lot ``k`` in symbol ``s``'s list before the first lot purchased after it."""
    at = head[s]
    while at != -1 and lots[at, L_PURCHASED] <= lots[k, L_PURCHASED]:
        at = lots[at, L_NEXT]
    if at == -1:
        append_nb(lots, head, tail, s, k, L_NEXT, L_PREV)
    else:
        insert_before_nb(lots, head, s, k, at)


@njit(cache=True, error_model="numpy")
def piece_nb(
    realized: np.ndarray, n_real: int, sym: int, lots: np.ndarray, k: int, row: int, d: int,
    q: int, proceeds: int, basis: int,
) -> np.ndarray:
    """Append a realized piece of lot ``k`` (sold on day ``d`` by row ``row``)."""
    realized = grow_nb(realized, n_real + 1)
    realized[n_real, R_SYM] = sym
    realized[n_real, R_ORIGIN] = lots[k, L_ORIGIN]
    realized[n_real, R_ROW] = row
    realized[n_real, R_PURCHASED] = lots[k, L_PURCHASED]
    realized[n_real, R_ACQUIRED] = lots[k, L_ACQUIRED]
    realized[n_real, R_SOLD] = d
    realized[n_real, R_QTY] = q
    realized[n_real, R_PROCEEDS] = proceeds
    realized[n_real, R_BASIS] = basis
    realized[n_real, R_DISALLOWED] = 0
    realized[n_real, R_LONG] = 1 if is_long_term_nb(lots[k, L_ACQUIRED], d) else 0
    return realized


@njit(cache=True, error_model="numpy")
def unlink_nb(lots: np.ndarray, head: np.ndarray, tail: np.ndarray, s: int, k: int, nxt: int, prv: int) -> None:
    p = lots[k, prv]
    nx = lots[k, nxt]
    if p == -1:
        head[s] = nx
    else:
        lots[p, nxt] = nx
    if nx == -1:
        tail[s] = p
    else:
        lots[nx, prv] = p

