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
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "AVERAGE",
    "BUY",
    "DIVIDEND",
    "ERR_LOT_EXCEEDED",
    "ERR_OVERSOLD",
    "FIFO",
    "HIFO",
    "LIFO",
    "SCALE",
    "SELL",
    "SPECIFIC",
    "is_long_term_nb",
    "match_lots_nb",
    "muldiv_nb",
    "qualified_dividends_nb",
]

SCALE = 100_000_000  # 1e-8 units per share and per dollar

# transaction kinds
BUY = 0
SELL = 1
DIVIDEND = 2
# lot relief methods
FIFO = 0
LIFO = 1
HIFO = 2
SPECIFIC = 3
AVERAGE = 4
# error codes (status[0]); status[1] is the row
ERR_OVERSOLD = 1
ERR_LOT_EXCEEDED = 2

# lot table columns
L_SYM = 0
L_ORIGIN = 1  # row of the buy that created the shares
L_PURCHASED = 2  # day of that buy
L_ACQUIRED = 3  # day for the holding period (earlier after a wash sale)
L_QTY = 4
L_BASIS = 5
L_USED = 6  # 1 once the shares replaced a wash-sale loss
L_ADJ = 7  # disallowed loss carried in the basis
L_NEXT = 8  # the symbol's list of open lots, in relief order
L_PREV = 9
L_UNEXT = 10  # the sub-list of lots not yet used as replacement (wash-sale candidates)
L_UPREV = 11
L_NF = 12
# realized table columns
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
_HELD = 1 << 60  # disposal day of shares still held

# pending (forward-looking) wash entries
P_PIECE = 0
P_QTY = 1
P_LOSS = 2
P_SALE = 3
P_ACQUIRED = 4
P_NEXT = 5
P_NF = 6



@njit(cache=True, error_model="numpy")
def _mul128(a: np.uint64, b: np.uint64) -> tuple[np.uint64, np.uint64]:
    """Exact 128-bit product of two uint64 as (high, low) words."""
    mask = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    a_lo = a & mask
    a_hi = a >> s32
    b_lo = b & mask
    b_hi = b >> s32
    p0 = a_lo * b_lo
    p1 = a_lo * b_hi
    p2 = a_hi * b_lo
    p3 = a_hi * b_hi
    mid = (p0 >> s32) + (p1 & mask) + (p2 & mask)
    lo = (p0 & mask) | (mid << s32)
    hi = p3 + (p1 >> s32) + (p2 >> s32) + (mid >> s32)
    return hi, lo


@njit(cache=True, error_model="numpy")
def _divmod128(hi: np.uint64, lo: np.uint64, c: np.uint64) -> tuple[np.uint64, np.uint64]:
    """Quotient and remainder of (hi, lo) / c by binary long division (needs hi < c < 2**63)."""
    one = np.uint64(1)
    rem = hi
    q = np.uint64(0)
    for k in range(63, -1, -1):
        rem = (rem << one) | ((lo >> np.uint64(k)) & one)
        q = q << one
        if rem >= c:
            rem -= c
            q |= one
    return q, rem


@njit(cache=True, error_model="numpy")
def muldiv_nb(a: int, b: int, c: int) -> int:
    """``round_half_up(a * b / c)`` exactly, for int64 ``a``, ``b >= 0``, ``c > 0``.

    Half-up means half away from zero, like ``decimal.ROUND_HALF_UP``. The
    product is formed in 128 bits; the result must fit in int64.
    """
    neg = a < 0
    ua = -a if neg else a
    if ua == 0 or b == 0:
        return 0
    q: int | np.int64
    r: int | np.int64
    if float(ua) * float(b) < 9.0e18:  # the product fits in int64 (float error is far smaller)
        p = ua * b
        q = p // c
        r = p - q * c
    else:
        qf = float(ua) * float(b) / float(c)
        if qf >= 9.2e18:
            raise OverflowError("tax kernel: amount out of the int64 fixed-point range")
        # float estimate, then the exact remainder by wrapping uint64 arithmetic:
        # it is exact whenever |true remainder| < 2**62, which the guard ensures.
        if (qf * 1e-15 + 4.0) * float(c) < 4.0e18:
            q = np.int64(qf)
            wrapped = np.uint64(ua) * np.uint64(b) - np.uint64(q) * np.uint64(c)
            r = np.int64(wrapped)
            k = r // c
            q += k
            r -= k * c
        else:
            hi, lo = _mul128(np.uint64(ua), np.uint64(b))
            if hi >= np.uint64(c):
                raise OverflowError("tax kernel: amount out of the int64 fixed-point range")
            uq, ur = _divmod128(hi, lo, np.uint64(c))
            q = np.int64(uq)
            r = np.int64(ur)
    if r >= c - r:
        q += 1
    return int(-q if neg else q)


@njit(cache=True, error_model="numpy")
def _cmp_ratio(b1: int, q1: int, b2: int, q2: int) -> int:
    """Sign of ``b1/q1 - b2/q2`` exactly (all arguments >= 0, q > 0)."""
    h1, l1 = _mul128(np.uint64(b1), np.uint64(q2))
    h2, l2 = _mul128(np.uint64(b2), np.uint64(q1))
    if h1 != h2:
        return 1 if h1 > h2 else -1
    if l1 != l2:
        return 1 if l1 > l2 else -1
    return 0


@njit(cache=True, error_model="numpy")
def _civil_from_days(z: int) -> tuple[int, int, int]:
    """(year, month, day) of a day number (H. Hinnant's algorithm, proleptic Gregorian)."""
    z += 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + 1 if m <= 2 else y), m, d


@njit(cache=True, error_model="numpy")
def _days_from_civil(y: int, m: int, d: int) -> int:
    y = y - 1 if m <= 2 else y
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    mp = m - 3 if m > 2 else m + 9
    doy = (153 * mp + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


@njit(cache=True, error_model="numpy")
def is_long_term_nb(acquired: int, sold: int) -> bool:
    """Held more than one year: sold after the anniversary of the acquisition date.

    The holding period starts the day after acquisition, so the anniversary
    itself is still short-term; the anniversary of 29 February is 28 February.
    """
    held = sold - acquired
    if held != 366:  # one year is 365 or 366 days: only 366 needs the calendar
        return held > 366
    y, m, d = _civil_from_days(acquired)
    if m == 2 and d == 29:
        d = 28
    return sold > _days_from_civil(y + 1, m, d)


@njit(cache=True, error_model="numpy")
def _grow(a: np.ndarray, need: int) -> np.ndarray:
    if need <= a.shape[0]:
        return a
    out = np.empty((max(need, 2 * a.shape[0]), a.shape[1]), dtype=np.int64)
    out[: a.shape[0]] = a
    return out


@njit(cache=True, error_model="numpy")
def _new_lot(
    lots: np.ndarray, n_lots: int, s: int, origin: int, purchased: int, acquired: int,
    qty: int, basis: int, used: int, adj: int,
) -> np.ndarray:
    lots = _grow(lots, n_lots + 1)
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
def _append(lots: np.ndarray, head: np.ndarray, tail: np.ndarray, s: int, k: int, nxt: int, prv: int) -> None:
    t = tail[s]
    lots[k, prv] = t
    lots[k, nxt] = -1
    if t == -1:
        head[s] = k
    else:
        lots[t, nxt] = k
    tail[s] = k


@njit(cache=True, error_model="numpy")
def _insert_before(lots: np.ndarray, head: np.ndarray, s: int, k: int, at: int) -> None:
    p = lots[at, L_PREV]
    lots[k, L_PREV] = p
    lots[k, L_NEXT] = at
    lots[at, L_PREV] = k
    if p == -1:
        head[s] = k
    else:
        lots[p, L_NEXT] = k


@njit(cache=True, error_model="numpy")
def _unlink(lots: np.ndarray, head: np.ndarray, tail: np.ndarray, s: int, k: int, nxt: int, prv: int) -> None:
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


@njit(cache=True, error_model="numpy")
def _pick_lot(lots: np.ndarray, head: np.ndarray, tail: np.ndarray, s: int, method: int, ref: int) -> int:
    if method == LIFO:
        return tail[s]
    if method == HIFO:
        best = head[s]
        k = lots[best, L_NEXT]
        while k != -1:
            if _cmp_ratio(lots[k, L_BASIS], lots[k, L_QTY], lots[best, L_BASIS], lots[best, L_QTY]) > 0:
                best = k
            k = lots[k, L_NEXT]
        return best
    if method == SPECIFIC:
        k = head[s]
        while k != -1 and lots[k, L_ORIGIN] != ref:
            k = lots[k, L_NEXT]
        return k
    return head[s]  # FIFO and AVERAGE (holding period is first-in first-out)


@njit(cache=True, error_model="numpy")
def match_lots_nb(
    sym: np.ndarray,
    day: np.ndarray,
    kind: np.ndarray,
    qty: np.ndarray,
    price: np.ndarray,
    fee: np.ndarray,
    lot_ref: np.ndarray,
    sym_group: np.ndarray,
    group_start: np.ndarray,
    group_syms: np.ndarray,
    method: int,
    wash: bool,
    window: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Relieve lots for every sell in date order and detect wash sales.

    Parameters
    ----------
    sym, day, kind : ndarray of int64
        Symbol code, day number and kind (:data:`BUY`, :data:`SELL`,
        :data:`DIVIDEND`) of each transaction, in date order.
    qty, price, fee : ndarray of int64
        Quantity, price and fees in 1e-8 units.
    lot_ref : ndarray of int64
        For ``SPECIFIC`` sells, the row of the buy whose lot is sold; else -1.
    sym_group, group_start, group_syms : ndarray of int64
        Group code of each symbol (substantially identical securities) and the
        symbols of group ``g`` as ``group_syms[group_start[g]:group_start[g + 1]]``.
    method : int
        :data:`FIFO`, :data:`LIFO`, :data:`HIFO`, :data:`SPECIFIC` or :data:`AVERAGE`.
    wash : bool
        Apply the wash-sale rule.
    window : int
        Wash-sale window in days on each side of a loss sale (30).

    Returns
    -------
    realized : ndarray of int64, shape (n_pieces, 11)
        One row per (sell, lot) piece, columns ``R_*`` (a view of a larger buffer).
    open_lots : ndarray of int64, shape (n_open, 8)
        Lots still held, in each symbol's relief order: symbol, origin row,
        purchased, acquired, quantity, basis, adjustment, replacement flag.
    dividends : ndarray of int64, shape (n,)
        Per row: the dividend amount (0 for other rows).
    status : ndarray of int64, shape (2,)
        ``(0, -1)`` on success, else an ``ERR_*`` code and the offending row.

    Notes
    -----
    A loss piece of ``q`` shares is matched, in acquisition order, first with
    open lots of the same group bought within ``window`` days before the sale
    (not from the same purchase, not already used as replacement), then with
    later buys up to ``window`` days after it. A replacement of ``r <= q``
    shares takes ``loss_left * r / q_left`` of the loss into its basis and its
    acquisition date moves back by the days the sold shares were held.
    """
    n = sym.shape[0]
    n_sym = sym_group.shape[0]
    n_grp = group_start.shape[0] - 1
    status = np.zeros(2, dtype=np.int64)
    status[1] = -1
    # every row is written in full before it is read; rows never touched cost no memory
    lots = np.empty((16 + 2 * n, L_NF), dtype=np.int64)
    realized = np.empty((16 + 3 * n, R_NF), dtype=np.int64)
    pend = np.empty((16, P_NF), dtype=np.int64)
    dividends = np.zeros(n, dtype=np.int64)
    head = np.full(n_sym, -1, dtype=np.int64)
    tail = np.full(n_sym, -1, dtype=np.int64)
    u_head = np.full(n_sym, -1, dtype=np.int64)
    u_tail = np.full(n_sym, -1, dtype=np.int64)
    pool_q = np.zeros(n_sym, dtype=np.int64)
    pool_b = np.zeros(n_sym, dtype=np.int64)
    q_head = np.full(n_grp, -1, dtype=np.int64)
    q_tail = np.full(n_grp, -1, dtype=np.int64)
    cand = np.empty(16, dtype=np.int64)
    n_lots = 0
    n_real = 0
    n_pend = 0
    for i in range(n):
        s = sym[i]
        g = sym_group[s]
        d = day[i]
        if kind[i] == DIVIDEND:
            dividends[i] = muldiv_nb(qty[i], price[i], SCALE)
        elif kind[i] == BUY:
            q_rem = qty[i]
            b_rem = muldiv_nb(qty[i], price[i], SCALE) + fee[i]
            if wash:  # absorb earlier loss sales still waiting for replacement shares
                e = q_head[g]
                prev = -1
                while e != -1 and q_rem > 0:
                    nxt = pend[e, P_NEXT]
                    if pend[e, P_SALE] + window >= d:
                        take = min(q_rem, pend[e, P_QTY])
                        dis = muldiv_nb(pend[e, P_LOSS], take, pend[e, P_QTY])
                        own = b_rem if take == q_rem else muldiv_nb(b_rem, take, q_rem)
                        acq = d - (pend[e, P_SALE] - pend[e, P_ACQUIRED])
                        lots = _new_lot(lots, n_lots, s, i, d, acq, take, own + dis, 1, dis)
                        _append(lots, head, tail, s, n_lots, L_NEXT, L_PREV)
                        n_lots += 1
                        pool_q[s] += take
                        pool_b[s] += own + dis
                        realized[pend[e, P_PIECE], R_DISALLOWED] += dis
                        q_rem -= take
                        b_rem -= own
                        pend[e, P_QTY] -= take
                        pend[e, P_LOSS] -= dis
                    if pend[e, P_QTY] == 0 or pend[e, P_SALE] + window < d:  # done or expired
                        if prev == -1:
                            q_head[g] = nxt
                        else:
                            pend[prev, P_NEXT] = nxt
                        if nxt == -1:
                            q_tail[g] = prev
                    else:
                        prev = e
                    e = nxt
            if q_rem > 0:
                lots = _new_lot(lots, n_lots, s, i, d, d, q_rem, b_rem, 0, 0)
                _append(lots, head, tail, s, n_lots, L_NEXT, L_PREV)
                _append(lots, u_head, u_tail, s, n_lots, L_UNEXT, L_UPREV)
                n_lots += 1
                pool_q[s] += q_rem
                pool_b[s] += b_rem
        else:  # SELL
            if method == SPECIFIC:
                held = 0
                k = head[s]
                while k != -1:
                    if lots[k, L_ORIGIN] == lot_ref[i]:
                        held += lots[k, L_QTY]
                    k = lots[k, L_NEXT]
                if held < qty[i]:
                    status[0] = ERR_LOT_EXCEEDED
                    status[1] = i
                    break
            elif pool_q[s] < qty[i]:
                status[0] = ERR_OVERSOLD
                status[1] = i
                break
            q_left = qty[i]
            p_left = muldiv_nb(qty[i], price[i], SCALE) - fee[i]
            r_first = n_real
            while q_left > 0:
                k = _pick_lot(lots, head, tail, s, method, lot_ref[i])
                lq = lots[k, L_QTY]
                take = min(q_left, lq)
                pr = p_left if take == q_left else muldiv_nb(p_left, take, q_left)
                part = lots[k, L_BASIS] if take == lq else muldiv_nb(lots[k, L_BASIS], take, lq)
                if method == AVERAGE:
                    bs = pool_b[s] if take == pool_q[s] else muldiv_nb(pool_b[s], take, pool_q[s])
                else:
                    bs = part
                realized = _grow(realized, n_real + 1)
                r = n_real
                n_real += 1
                realized[r, R_SYM] = s
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
                    _unlink(lots, head, tail, s, k, L_NEXT, L_PREV)
                    if lots[k, L_USED] == 0:
                        _unlink(lots, u_head, u_tail, s, k, L_UNEXT, L_UPREV)
                pool_q[s] -= take
                pool_b[s] -= bs
                q_left -= take
                p_left -= pr
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
                for gi in range(group_start[g], group_start[g + 1]):
                    s2 = group_syms[gi]
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
                if nc > 1 and group_start[g + 1] - group_start[g] > 1:  # merge the group's symbols
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
                        lots = _new_lot(
                            lots, n_lots, s2, lots[c, L_ORIGIN], lots[c, L_PURCHASED],
                            lots[c, L_ACQUIRED], t2, cb, 0, lots[c, L_ADJ],
                        )
                        _insert_before(lots, head, s2, n_lots, c)
                        lots[c, L_QTY] = cq - t2
                        lots[c, L_BASIS] -= cb
                        target = n_lots
                        n_lots += 1
                    else:  # the whole lot becomes replacement shares
                        _unlink(lots, u_head, u_tail, s2, c, L_UNEXT, L_UPREV)
                    lots[target, L_BASIS] += dis
                    lots[target, L_ADJ] += dis
                    lots[target, L_USED] = 1
                    lots[target, L_ACQUIRED] = lots[target, L_PURCHASED] - (d - acquired)
                    pool_b[s2] += dis
                    realized[r, R_DISALLOWED] += dis
                    need -= t2
                    loss -= dis
                if need > 0:  # wait for buys up to `window` days after the sale
                    pend = _grow(pend, n_pend + 1)
                    pend[n_pend, P_PIECE] = r
                    pend[n_pend, P_QTY] = need
                    pend[n_pend, P_LOSS] = loss
                    pend[n_pend, P_SALE] = d
                    pend[n_pend, P_ACQUIRED] = acquired
                    pend[n_pend, P_NEXT] = -1
                    if q_tail[g] == -1:
                        q_head[g] = n_pend
                    else:
                        pend[q_tail[g], P_NEXT] = n_pend
                    q_tail[g] = n_pend
                    n_pend += 1
    # open lots, symbol by symbol in relief order
    n_open = 0
    for s in range(n_sym):
        k = head[s]
        while k != -1:
            n_open += 1
            k = lots[k, L_NEXT]
    open_lots = np.empty((n_open, 8), dtype=np.int64)  # the fields of lot_dt
    j = 0
    for s in range(n_sym):
        k = head[s]
        q_pool = pool_q[s]
        b_pool = pool_b[s]
        while k != -1:
            b = lots[k, L_BASIS]
            if method == AVERAGE:  # the pooled basis, spread over the lots by quantity
                q = lots[k, L_QTY]
                b = b_pool if q == q_pool else muldiv_nb(b_pool, q, q_pool)
                q_pool -= q
                b_pool -= b
            open_lots[j, 0] = s
            open_lots[j, 1] = lots[k, L_ORIGIN]
            open_lots[j, 2] = lots[k, L_PURCHASED]
            open_lots[j, 3] = lots[k, L_ACQUIRED]
            open_lots[j, 4] = lots[k, L_QTY]
            open_lots[j, 5] = b
            open_lots[j, 6] = lots[k, L_ADJ]
            open_lots[j, 7] = lots[k, L_USED]
            j += 1
            k = lots[k, L_NEXT]
    return realized[:n_real], open_lots, dividends, status  # a view: no copy of the pieces


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
