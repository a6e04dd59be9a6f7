"""Corporate actions on the open lots of one symbol (IRS Publication 550, "Stock Splits",
"Stock Dividends", "Nondividend Distributions"; the issuer's Form 8937 gives ratio and
basis allocation), kept out of the matcher's loop (:mod:`quantcore._kernels.tax_lots`),
which then stays as tight as without corporate actions.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from quantcore._kernels.tax_fixed import SCALE, muldiv_nb
from quantcore._kernels.tax_table import (
    AVERAGE,
    ERR_NO_FRACTION,
    ERR_NOT_HELD,
    ERR_RATIO,
    L_ACQUIRED,
    L_ADJ,
    L_BASIS,
    L_NEXT,
    L_ORIGIN,
    L_PURCHASED,
    L_QTY,
    P_NEXT,
    P_QTY,
    P_SYM,
    RETURN_OF_CAPITAL,
    SPIN_OFF,
    SPLIT,
    STOCK_DIVIDEND,
    insert_by_purchase_nb,
    new_lot_nb,
    piece_nb,
)

__all__ = ["corporate_action_nb"]


@njit(cache=True, error_model="numpy")
def corporate_action_nb(
    ii: int, i: int, s: int, d: int, sym: np.ndarray, kind: np.ndarray, price: np.ndarray,
    ratio: np.ndarray, cash: np.ndarray, alloc: np.ndarray, tgt: np.ndarray, loc: np.ndarray,
    method: np.ndarray, lots: np.ndarray, n_lots: int, realized: np.ndarray, n_real: int,
    head: np.ndarray, tail: np.ndarray, u_head: np.ndarray, u_tail: np.ndarray,
    pool_q: np.ndarray, pool_b: np.ndarray, pend: np.ndarray, q_head: int,
) -> tuple[np.ndarray, np.ndarray, int, int, int, int, int]:
    """Apply row ``ii``'s corporate action to symbol ``s``'s open lots (kept out of the
    matcher's loop, which then stays as tight as without corporate actions).

    Returns ``(lots, realized, n_lots, n_real, sell_q, sell_p, err)``: the fraction a cash
    in lieu sells and its proceeds, and an ``ERR_*`` code (0: none)."""
    sell_q = 0
    sell_p = 0
    if head[s] == -1:
        return lots, realized, n_lots, n_real, 0, 0, ERR_NOT_HELD
    ca = kind[ii]
    rt = ratio[ii]
    if ca == SPLIT or ca == STOCK_DIVIDEND:
        tot = 0
        k = head[s]
        while k != -1:
            nq = muldiv_nb(lots[k, L_QTY], rt, SCALE)
            if nq <= 0:
                return lots, realized, n_lots, n_real, 0, 0, ERR_RATIO
            lots[k, L_QTY] = nq
            tot += nq
            k = lots[k, L_NEXT]
        pool_q[s] = tot
        e = q_head
        while e != -1:  # a loss sale's unreplaced shares, in the new units
            if pend[e, P_SYM] == sym[ii]:
                pend[e, P_QTY] = max(1, muldiv_nb(pend[e, P_QTY], rt, SCALE))
            e = pend[e, P_NEXT]
        if cash[ii] > 0:  # cash in lieu: a sale of the fractional share
            sell_q = tot % SCALE
            if sell_q == 0:
                return lots, realized, n_lots, n_real, 0, 0, ERR_NO_FRACTION
            sell_p = cash[ii]
    elif ca == RETURN_OF_CAPITAL:
        k = head[s]
        cut = 0
        while k != -1:
            red = muldiv_nb(lots[k, L_QTY], price[ii], SCALE)
            b = lots[k, L_BASIS]
            if red <= b:
                lots[k, L_BASIS] = b - red
                cut += red
            else:  # beyond zero basis: a capital gain of the lot's holding period
                lots[k, L_BASIS] = 0
                cut += b
                realized = piece_nb(realized, n_real, sym[ii], lots, k, i, d, 0, red - b, 0)
                n_real += 1
            k = lots[k, L_NEXT]
        pool_b[s] = max(0, pool_b[s] - cut)
    else:  # SPIN_OFF or MERGER: new lots of the target keep the old dates
        t = loc[tgt[ii]]
        pooled = method[sym[ii]] == AVERAGE
        moved_q = 0
        moved_b = 0
        k = head[s]
        if ca == SPIN_OFF:
            f = alloc[ii]
            while k != -1:
                nq = muldiv_nb(lots[k, L_QTY], rt, SCALE)
                if nq <= 0:
                    return lots, realized, n_lots, n_real, 0, 0, ERR_RATIO
                mb = muldiv_nb(lots[k, L_BASIS], f, SCALE)
                ma = muldiv_nb(lots[k, L_ADJ], f, SCALE)
                lots[k, L_BASIS] -= mb
                lots[k, L_ADJ] -= ma
                lots = new_lot_nb(
                    lots, n_lots, t, lots[k, L_ORIGIN], lots[k, L_PURCHASED], lots[k, L_ACQUIRED],
                    nq, mb, 2, ma,
                )
                insert_by_purchase_nb(lots, head, tail, t, n_lots)
                n_lots += 1
                moved_q += nq
                moved_b += mb
                k = lots[k, L_NEXT]
            if pooled:  # an average-cost pool moves by the fraction too
                moved_b = muldiv_nb(pool_b[s], f, SCALE)
            pool_b[s] -= moved_b
            pool_q[t] += moved_q
            pool_b[t] += moved_b
        else:  # MERGER
            cps = cash[ii]
            per_share = muldiv_nb(rt, price[ii], SCALE) + cps  # consideration per old share
            q_all = pool_q[s]
            b_all = pool_b[s]
            while k != -1:
                nxt_k = lots[k, L_NEXT]
                lq = lots[k, L_QTY]
                b = lots[k, L_BASIS]
                if pooled:
                    b = b_all if nxt_k == -1 else muldiv_nb(b_all, lq, q_all)
                    q_all -= lq
                    b_all -= b
                if cps > 0:  # the cash part is a sale of cps / per_share of the lot
                    sq = lq if rt == 0 else muldiv_nb(lq, cps, per_share)
                    sb = b if rt == 0 else muldiv_nb(b, cps, per_share)
                    realized = piece_nb(
                        realized, n_real, sym[ii], lots, k, i, d, sq, muldiv_nb(lq, cps, SCALE), sb,
                    )
                    n_real += 1
                    b -= sb
                if rt > 0:
                    nq = muldiv_nb(lq, rt, SCALE)
                    if nq <= 0:
                        return lots, realized, n_lots, n_real, 0, 0, ERR_RATIO
                    lots = new_lot_nb(
                        lots, n_lots, t, lots[k, L_ORIGIN], lots[k, L_PURCHASED], lots[k, L_ACQUIRED],
                        nq, b, 2, lots[k, L_ADJ],
                    )
                    insert_by_purchase_nb(lots, head, tail, t, n_lots)
                    n_lots += 1
                    pool_q[t] += nq
                    pool_b[t] += b
                k = nxt_k
            head[s] = -1  # the old shares are gone
            tail[s] = -1
            u_head[s] = -1
            u_tail[s] = -1
            pool_q[s] = 0
            pool_b[s] = 0
    return lots, realized, n_lots, n_real, sell_q, sell_p, 0

