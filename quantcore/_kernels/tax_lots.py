"""Lot relief and wash-sale detection for one group of substantially identical symbols.

The state of the matcher (open lots, the average-cost pool, loss sales waiting for
replacement shares) never crosses a group boundary, so :mod:`quantcore._kernels.tax_match`
runs :func:`match_group_nb` on every group independently. All arithmetic is exact
int64 fixed point (:mod:`quantcore._kernels.tax_fixed`).

The lot table and its primitives are in :mod:`quantcore._kernels.tax_table`, corporate
actions in :mod:`quantcore._kernels.tax_actions`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from quantcore._kernels.tax_actions import corporate_action_nb
from quantcore._kernels.tax_fixed import SCALE, _cmp_ratio, is_long_term_nb, muldiv_nb
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
    L_ACQUIRED,
    L_ADJ,
    L_BASIS,
    L_NEXT,
    L_NF,
    L_ORIGIN,
    L_PREV,
    L_PURCHASED,
    L_QTY,
    L_SYM,
    L_UNEXT,
    L_UPREV,
    L_USED,
    LIFO,
    MERGER,
    OPEN_NF,
    P_ACQUIRED,
    P_LOSS,
    P_NEXT,
    P_NF,
    P_PIECE,
    P_QTY,
    P_SALE,
    P_SYM,
    R_ACQUIRED,
    R_BASIS,
    R_DISALLOWED,
    R_LONG,
    R_NF,
    R_ORIGIN,
    R_PROCEEDS,
    R_PURCHASED,
    R_QTY,
    R_ROW,
    R_SOLD,
    R_SYM,
    RETURN_OF_CAPITAL,
    SELL,
    SPECIFIC,
    SPIN_OFF,
    SPLIT,
    STOCK_DIVIDEND,
    append_nb,
    grow_nb,
    insert_before_nb,
    new_lot_nb,
    unlink_nb,
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
    "OPEN_NF",
    "RETURN_OF_CAPITAL",
    "R_NF",
    "R_ROW",
    "SELL",
    "SPECIFIC",
    "SPIN_OFF",
    "SPLIT",
    "STOCK_DIVIDEND",
    "match_group_nb",
]


@njit(cache=True, error_model="numpy")
def _pick_lot(lots: np.ndarray, head: np.ndarray, tail: np.ndarray, s: int, method: int, ref: int) -> int:
    if method == LIFO:
        return int(tail[s])
    if method == HIFO:
        best = head[s]
        k = lots[best, L_NEXT]
        while k != -1:
            if _cmp_ratio(lots[k, L_BASIS], lots[k, L_QTY], lots[best, L_BASIS], lots[best, L_QTY]) > 0:
                best = k
            k = lots[k, L_NEXT]
        return int(best)
    if method == SPECIFIC:
        k = head[s]
        while k != -1 and lots[k, L_ORIGIN] != ref:
            k = lots[k, L_NEXT]
        return int(k)
    return int(head[s])  # FIFO and AVERAGE (holding period is first-in first-out)


@njit(cache=True, error_model="numpy")
def match_group_nb(
    rows: np.ndarray,
    sym: np.ndarray,
    day: np.ndarray,
    kind: np.ndarray,
    qty: np.ndarray,
    price: np.ndarray,
    fee: np.ndarray,
    lot_ref: np.ndarray,
    ratio: np.ndarray,
    cash: np.ndarray,
    alloc: np.ndarray,
    tgt: np.ndarray,
    loc: np.ndarray,
    g_syms: np.ndarray,
    method: np.ndarray,
    wgroup: np.ndarray,
    wash: bool,
    window: int,
    dividends: np.ndarray,
    piece_count: np.ndarray,
    open_count: np.ndarray,
    dst: np.ndarray,
    pieces: bool,
) -> tuple[int, int, int, int, np.ndarray]:
    """Relieve the lots of one symbol group and detect its wash sales.

    Parameters
    ----------
    rows : ndarray of int64
        The group's transaction rows, in date order.
    sym, day, kind, qty, price, fee, lot_ref : ndarray of int64
        The fields of those rows, in the same order (gathered, so that the
        matcher reads memory sequentially; see
        :func:`quantcore._kernels.tax_match.match_lots_nb`).
    ratio, cash, alloc, tgt : ndarray of int64
        Corporate actions (1e-8 units): the ratio (split multiplier, or new
        shares per old share), cash (in lieu of a fraction, a total; or a
        merger's cash per old share), the basis fraction a spin-off moves, and
        the target symbol code of a spin-off or merger (-1 otherwise). A
        merger's ``price`` is the target share's value, which splits the basis
        between the cash and the shares when both are paid.
    loc : ndarray of int64
        Index of each symbol inside its group (the group holds every symbol
        a spin-off or merger links, so it may span several wash-sale groups).
    g_syms : ndarray of int64
        The group's symbols, ascending (``g_syms[loc[s]] == s``).
    method : ndarray of int64
        Lot relief method of each symbol code (a sell uses its symbol's; a
        ``SPECIFIC`` sell without a lot, ``lot_ref < 0``, relieves ``FIFO``).
    wgroup : ndarray of int64
        Wash-sale group (substantially identical securities) of each symbol code.
    wash, window
        Apply the wash-sale rule, window in days.
    dividends, piece_count : ndarray of int64
        Per row of ``rows``: the dividend amount of a dividend row and the
        number of realized pieces of a sell row (other entries are untouched).
    open_count : ndarray of int64
        Per symbol; written for the group's symbols only: their open lots.
    dst : ndarray of int64, shape (cap, 11)
        Receives the realized pieces (in sell order) followed by the open lots
        (in the first 8 columns, symbol by symbol in relief order) when they fit;
        its content is unspecified otherwise.
    pieces : bool
        Keep the realized pieces. Without, a row's pieces live only while the row is
        relieved (its wash sales need them), ``n_real`` and ``piece_count`` stay 0 and
        ``dst`` holds the open lots alone, the same lots as with.

    Returns
    -------
    n_real, n_open : int
        Realized pieces and open lots.
    err_code, err_row : int
        ``ERR_*`` code and row of the first invalid sell, else ``(0, -1)``.
    out : ndarray of int64, shape (>= n_real + n_open, 11)
        What holds the pieces and then the open lots: ``dst`` when they fit in it,
        else an array grown from it (by doubling, as the pieces came).

    Notes
    -----
    A loss piece of ``q`` shares is matched, in acquisition order, first with
    open lots of the group bought within ``window`` days before the sale (not
    from the same purchase, not already used as replacement), then with later
    buys up to ``window`` days after it. A replacement of ``r <= q`` shares
    takes ``loss_left * r / q_left`` of the loss into its basis and its
    acquisition date moves back by the days the sold shares were held. The
    replacement may be a symbol of another method: the loss goes into its lot's
    basis and its symbol's average-cost pool alike, as every symbol keeps both.
    """
    n = rows.shape[0]
    n_loc = g_syms.shape[0]
    lots = np.empty((16 + n + n // 2, L_NF), dtype=np.int64)
    realized = dst  # pieces go straight to the caller's slice; a local copy only if it overflows
    pend = np.empty((16, P_NF), dtype=np.int64)
    head = np.full(n_loc, -1, dtype=np.int64)
    tail = np.full(n_loc, -1, dtype=np.int64)
    u_head = np.full(n_loc, -1, dtype=np.int64)
    u_tail = np.full(n_loc, -1, dtype=np.int64)
    pool_q = np.zeros(n_loc, dtype=np.int64)
    pool_b = np.zeros(n_loc, dtype=np.int64)
    cand = np.empty(16, dtype=np.int64)
    q_head = -1
    q_tail = -1
    n_lots = 0
    n_real = 0
    n_pend = 0
    mixed = False  # several wash-sale groups, joined by a spin-off or merger
    for s2 in range(1, n_loc):
        if wgroup[g_syms[s2]] != wgroup[g_syms[0]]:
            mixed = True
    for ii in range(n):
        i = rows[ii]
        s = loc[sym[ii]]
        d = day[ii]
        wg = wgroup[sym[ii]]
        r_first = n_real
        sell_q = 0  # shares sold by this row (a sell, or the fraction a cash in lieu sells)
        sell_p = 0
        if kind[ii] == DIVIDEND:
            dividends[ii] = muldiv_nb(qty[ii], price[ii], SCALE) - fee[ii]  # net, as the cash
        elif kind[ii] == BUY:
            q_rem = qty[ii]
            b_rem = muldiv_nb(qty[ii], price[ii], SCALE) + fee[ii]
            if wash:  # absorb earlier loss sales still waiting for replacement shares
                e = q_head
                prev = -1
                while e != -1 and q_rem > 0:
                    nxt = pend[e, P_NEXT]
                    if pend[e, P_SALE] + window >= d and (not mixed or wgroup[pend[e, P_SYM]] == wg):
                        take = min(q_rem, pend[e, P_QTY])
                        dis = muldiv_nb(pend[e, P_LOSS], take, pend[e, P_QTY])
                        own = b_rem if take == q_rem else muldiv_nb(b_rem, take, q_rem)
                        acq = d - (pend[e, P_SALE] - pend[e, P_ACQUIRED])
                        lots = new_lot_nb(lots, n_lots, s, i, d, acq, take, own + dis, 1, dis)
                        append_nb(lots, head, tail, s, n_lots, L_NEXT, L_PREV)
                        n_lots += 1
                        pool_q[s] += take
                        pool_b[s] += own + dis
                        if pieces:
                            realized[pend[e, P_PIECE], R_DISALLOWED] += dis
                        q_rem -= take
                        b_rem -= own
                        pend[e, P_QTY] -= take
                        pend[e, P_LOSS] -= dis
                    if pend[e, P_QTY] == 0 or pend[e, P_SALE] + window < d:  # done or expired
                        if prev == -1:
                            q_head = nxt
                        else:
                            pend[prev, P_NEXT] = nxt
                        if nxt == -1:
                            q_tail = prev
                    else:
                        prev = e
                    e = nxt
            if q_rem > 0:
                lots = new_lot_nb(lots, n_lots, s, i, d, d, q_rem, b_rem, 0, 0)
                append_nb(lots, head, tail, s, n_lots, L_NEXT, L_PREV)
                append_nb(lots, u_head, u_tail, s, n_lots, L_UNEXT, L_UPREV)
                n_lots += 1
                pool_q[s] += q_rem
                pool_b[s] += b_rem
        elif kind[ii] == SELL:
            sell_q = qty[ii]
            sell_p = muldiv_nb(qty[ii], price[ii], SCALE) - fee[ii]
        else:  # a corporate action on the open lots of symbol s
            lots, realized, n_lots, n_real, sell_q, sell_p, err = corporate_action_nb(
                ii, i, s, d, sym, kind, price, ratio, cash, alloc, tgt, loc, method, lots, n_lots,
                realized, n_real, head, tail, u_head, u_tail, pool_q, pool_b, pend, q_head,
            )
            if err != 0:
                return n_real, 0, err, i, dst
        if sell_q > 0 or n_real > r_first:  # shares sold, or pieces realized by a corporate action
            m = method[sym[ii]]
            if m == SPECIFIC and lot_ref[ii] < 0:
                m = FIFO  # no lot named: the earliest acquired shares (Treas. Reg. 1.1012-1(c)(1))
            if m == SPECIFIC:
                held = 0
                k = head[s]
                while k != -1:
                    if lots[k, L_ORIGIN] == lot_ref[ii]:
                        held += lots[k, L_QTY]
                    k = lots[k, L_NEXT]
                if held < sell_q:
                    return n_real, 0, ERR_LOT_EXCEEDED, i, dst
            elif pool_q[s] < sell_q:
                return n_real, 0, ERR_OVERSOLD, i, dst
            q_left = sell_q
            p_left = sell_p
            while q_left > 0:
                k = _pick_lot(lots, head, tail, s, m, lot_ref[ii])
                lq = lots[k, L_QTY]
                take = min(q_left, lq)
                pr = p_left if take == q_left else muldiv_nb(p_left, take, q_left)
                part = lots[k, L_BASIS] if take == lq else muldiv_nb(lots[k, L_BASIS], take, lq)
                if m == AVERAGE:
                    bs = pool_b[s] if take == pool_q[s] else muldiv_nb(pool_b[s], take, pool_q[s])
                else:
                    bs = part
                realized = grow_nb(realized, n_real + 1)
                r = n_real
                n_real += 1
                realized[r, R_SYM] = sym[ii]
                realized[r, R_ORIGIN] = lots[k, L_ORIGIN]
                realized[r, R_ROW] = i
                realized[r, R_PURCHASED] = lots[k, L_PURCHASED]
                realized[r, R_ACQUIRED] = lots[k, L_ACQUIRED]
                realized[r, R_SOLD] = d
                realized[r, R_QTY] = take
                realized[r, R_PROCEEDS] = pr
                realized[r, R_BASIS] = bs
                realized[r, R_DISALLOWED] = 0
                realized[r, R_LONG] = 1 if is_long_term_nb(lots[k, L_ACQUIRED], d) else 0
                lots[k, L_QTY] = lq - take
                lots[k, L_BASIS] -= part
                if take == lq:
                    unlink_nb(lots, head, tail, s, k, L_NEXT, L_PREV)
                    if lots[k, L_USED] == 0:
                        unlink_nb(lots, u_head, u_tail, s, k, L_UNEXT, L_UPREV)
                pool_q[s] -= take
                pool_b[s] -= bs
                q_left -= take
                p_left -= pr
            if pieces:
                piece_count[ii] = n_real - r_first
            # -- wash sales, once the sale has removed its own shares from the open lots:
            # shares sold together never replace one another
            for r in range(r_first, n_real if wash else r_first):
                loss = realized[r, R_BASIS] - realized[r, R_PROCEEDS]
                if loss <= 0:
                    continue
                origin = realized[r, R_ORIGIN]
                acquired = realized[r, R_ACQUIRED]
                # replacement shares bought up to `window` days before the sale
                need = realized[r, R_QTY]
                nc = 0
                for s2 in range(n_loc):
                    if mixed and wgroup[g_syms[s2]] != wg:  # linked by a spin-off or merger only
                        continue
                    seg = nc
                    k2 = u_tail[s2]  # walk back over the unused lots only
                    while k2 != -1 and lots[k2, L_PURCHASED] >= d - window:
                        if lots[k2, L_ORIGIN] != origin:
                            if nc == cand.shape[0]:
                                bigger = np.empty(2 * nc, dtype=np.int64)
                                bigger[:nc] = cand
                                cand = bigger
                            cand[nc] = k2
                            nc += 1
                        k2 = lots[k2, L_UPREV]
                    lo, hi = seg, nc - 1
                    while lo < hi:  # back to list (acquisition) order
                        cand[lo], cand[hi] = cand[hi], cand[lo]
                        lo += 1
                        hi -= 1
                if nc > 1 and n_loc > 1:  # merge the group's symbols
                    keys = np.empty(nc, dtype=np.int64)
                    for j in range(nc):
                        keys[j] = lots[cand[j], L_ORIGIN]
                    cand[:nc] = cand[:nc][np.argsort(keys, kind="mergesort")]
                j = 0
                while j < nc and need > 0:
                    c = cand[j]
                    j += 1
                    s2 = lots[c, L_SYM]
                    cq = lots[c, L_QTY]
                    t2 = min(need, cq)
                    dis = loss if t2 == need else muldiv_nb(loss, t2, need)
                    target = c
                    if t2 < cq:  # split: the replacement shares become their own lot
                        cb = muldiv_nb(lots[c, L_BASIS], t2, cq)
                        lots = new_lot_nb(
                            lots, n_lots, s2, lots[c, L_ORIGIN], lots[c, L_PURCHASED],
                            lots[c, L_ACQUIRED], t2, cb, 0, lots[c, L_ADJ],
                        )
                        insert_before_nb(lots, head, s2, n_lots, c)
                        lots[c, L_QTY] = cq - t2
                        lots[c, L_BASIS] -= cb
                        target = n_lots
                        n_lots += 1
                    else:  # the whole lot becomes replacement shares
                        unlink_nb(lots, u_head, u_tail, s2, c, L_UNEXT, L_UPREV)
                    lots[target, L_BASIS] += dis
                    lots[target, L_ADJ] += dis
                    lots[target, L_USED] = 1
                    lots[target, L_ACQUIRED] = lots[target, L_PURCHASED] - (d - acquired)
                    pool_b[s2] += dis
                    realized[r, R_DISALLOWED] += dis
                    need -= t2
                    loss -= dis
                if need > 0:  # wait for buys up to `window` days after the sale
                    pend = grow_nb(pend, n_pend + 1)
                    pend[n_pend, P_PIECE] = r
                    pend[n_pend, P_QTY] = need
                    pend[n_pend, P_LOSS] = loss
                    pend[n_pend, P_SALE] = d
                    pend[n_pend, P_ACQUIRED] = acquired
                    pend[n_pend, P_SYM] = sym[ii]
                    pend[n_pend, P_NEXT] = -1
                    if q_tail == -1:
                        q_head = n_pend
                    else:
                        pend[q_tail, P_NEXT] = n_pend
                    q_tail = n_pend
                    n_pend += 1
        if not pieces:
            n_real = r_first  # the row's pieces are done with: the next row writes over them
    n_open = 0
    for s in range(n_loc):
        c = 0
        k = head[s]
        while k != -1:
            c += 1
            k = lots[k, L_NEXT]
        open_count[g_syms[s]] = c
        n_open += c
    # the open lots follow the pieces; past the caller's slice, in the grown array, which the
    # caller keeps (so a group runs once, whatever its output)
    out = grow_nb(realized, n_real + n_open)
    j = n_real
    for s in range(n_loc):  # open lots, symbol by symbol in relief order
        k = head[s]
        q_pool = pool_q[s]
        b_pool = pool_b[s]
        average = method[g_syms[s]] == AVERAGE
        while k != -1:
            b = lots[k, L_BASIS]
            if average:  # the pooled basis, spread over the lots by quantity
                q = lots[k, L_QTY]
                b = b_pool if q == q_pool else muldiv_nb(b_pool, q, q_pool)
                q_pool -= q
                b_pool -= b
            out[j, 0] = g_syms[s]
            out[j, 1] = lots[k, L_ORIGIN]
            out[j, 2] = lots[k, L_PURCHASED]
            out[j, 3] = lots[k, L_ACQUIRED]
            out[j, 4] = lots[k, L_QTY]
            out[j, 5] = b
            out[j, 6] = lots[k, L_ADJ]
            out[j, 7] = 1 if lots[k, L_USED] == 1 else 0
            j += 1
            k = lots[k, L_NEXT]
    return n_real, n_open, 0, -1, out
