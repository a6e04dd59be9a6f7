"""Tax-lot matching over all symbol groups: in parallel, or sequentially for reference.

Groups of substantially identical symbols share no state, so
:func:`match_lots_nb` runs :func:`~quantcore._kernels.tax_lots.match_group_nb`
on every group in a ``prange`` loop. Each group writes its pieces and open lots
into its own slice of a scratch buffer (``64 + 8 x rows`` rows; only the rows
written take memory); a group that needs more goes on in an array of its own,
grown as it needs, which it keeps: every group runs once. The slices are then
placed in the order of the sequential algorithm: realized pieces by sell row,
open lots by symbol. Asked ``by_group`` (the layout
:class:`quantcore.tax.splice.GroupedLedger` keeps), each group's pieces stay where it
wrote them, renumbered among the group's rows in place: a view per group, never
copied (a copy of 5.9 million 88-byte pieces faulted in 130,000 fresh pages). Every
sell, dividend and symbol belongs to exactly one group, so the result is
bit-identical to :func:`match_lots_seq_nb`, which runs the groups one after the other.

Memory: the scratch is one buffer per batch of consecutive groups (at least
:data:`BATCH_ROWS` rows each); a slice's pages past what its group writes are never
touched, so they take no memory. In sell order the pieces are placed batch by batch,
each batch freed as soon as placed, so they are not held twice over (a 5.9-million-piece
ledger of 39 groups peaks at 1.55 times its pieces); by group they are held once.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from quantcore._kernels.tax_lots import match_group_nb
from quantcore._kernels.tax_table import OPEN_NF, R_NF, R_ORIGIN, R_ROW

__all__ = ["match_lots_nb", "match_lots_seq_nb"]

# rows of the per-transaction fields
F_SYM = 0
F_DAY = 1
F_KIND = 2
F_QTY = 3
F_PRICE = 4
F_FEE = 5
F_REF = 6
F_RATIO = 7
F_CASH = 8
F_ALLOC = 9
F_TARGET = 10
N_FIELDS = 11

#: Slice rows per transaction row of a group (64 more each): its pieces and open lots
#: (the benchmarks' statements need up to 6.2; a group that needs more grows its own array).
CAP_PER_ROW = 8
#: Slice rows per batch buffer (46 MiB): above malloc's largest mmap threshold (32 MiB), so a
#: batch's buffer is a mapping of its own, returned to the system when freed.
BATCH_ROWS = 1 << 19

# columns of the per-group counts
C_REAL = 0
C_OPEN = 1
C_ERR = 2
C_ROW = 3


@njit(cache=True, error_model="numpy")
def _plan(
    sym: np.ndarray, sym_group: np.ndarray, group_start: np.ndarray, group_syms: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows of each group (a stable counting sort), symbol index in its group, slice bounds."""
    n = sym.shape[0]
    n_grp = group_start.shape[0] - 1
    row_start = np.zeros(n_grp + 1, dtype=np.int64)
    for i in range(n):
        row_start[sym_group[sym[i]] + 1] += 1
    for g in range(n_grp):
        row_start[g + 1] += row_start[g]
    fill = row_start[:-1].copy()
    rows = np.empty(n, dtype=np.int64)
    for i in range(n):
        g = sym_group[sym[i]]
        rows[fill[g]] = i
        fill[g] += 1
    loc = np.empty(sym_group.shape[0], dtype=np.int64)
    for g in range(n_grp):
        for gi in range(group_start[g], group_start[g + 1]):
            loc[group_syms[gi]] = gi - group_start[g]
    cap_start = np.zeros(n_grp + 1, dtype=np.int64)
    for g in range(n_grp):
        cap_start[g + 1] = cap_start[g] + 64 + CAP_PER_ROW * (row_start[g + 1] - row_start[g])
    return row_start, rows, loc, cap_start


@njit(cache=True, error_model="numpy")
def _gather(
    rows: np.ndarray, sym: np.ndarray, day: np.ndarray, kind: np.ndarray, qty: np.ndarray,
    price: np.ndarray, fee: np.ndarray, lot_ref: np.ndarray, ratio: np.ndarray, cash: np.ndarray,
    alloc: np.ndarray, target: np.ndarray,
) -> tuple[np.ndarray, ...]:
    """The transaction fields in group order (a tuple indexed by ``F_*``): each group then
    reads its rows sequentially instead of one cache line per field and row. One array per
    field: a single (fields x rows) block would exceed malloc's mmap threshold and be
    page-faulted in afresh on every call."""
    if ratio.shape[0] != sym.shape[0]:  # no corporate actions: those fields are never read
        return (
            sym[rows], day[rows], kind[rows], qty[rows], price[rows], fee[rows], lot_ref[rows],
            ratio, cash, alloc, target,
        )
    return (
        sym[rows], day[rows], kind[rows], qty[rows], price[rows], fee[rows], lot_ref[rows],
        ratio[rows], cash[rows], alloc[rows], target[rows],
    )


@njit(cache=True, error_model="numpy")
def _batches(cap_start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Consecutive groups in batches of at least :data:`BATCH_ROWS` slice rows (the last may
    be smaller): the first group of each batch (and the end), and each group's batch."""
    n_grp = cap_start.shape[0] - 1
    starts = np.zeros(n_grp + 1, dtype=np.int64)
    batch_of = np.empty(n_grp, dtype=np.int64)
    n_batch = 0
    for g in range(n_grp):
        if g == 0 or cap_start[g] - cap_start[starts[n_batch - 1]] >= BATCH_ROWS:
            starts[n_batch] = g
            n_batch += 1
        batch_of[g] = n_batch - 1
    starts[n_batch] = n_grp
    return starts[: n_batch + 1].copy(), batch_of


@njit(cache=True, error_model="numpy")
def _buffers(cap_start: np.ndarray, batch_start: np.ndarray) -> list[np.ndarray]:
    """One buffer per batch: its groups' slices, back to back (pages are touched only where written)."""
    return [
        np.empty((cap_start[batch_start[b + 1]] - cap_start[batch_start[b]], R_NF), dtype=np.int64)
        for b in range(batch_start.shape[0] - 1)
    ]


@njit(cache=True, error_model="numpy")
def _empties(n: int) -> list[np.ndarray]:
    """``n`` empty outputs: a group's own grown array goes in its place when its slice overflows."""
    return [np.empty((0, R_NF), dtype=np.int64) for _ in range(n)]


@njit(cache=True, error_model="numpy")
def _slice(
    g: int, bufs: list[np.ndarray], batch_of: np.ndarray, batch_start: np.ndarray, cap_start: np.ndarray
) -> np.ndarray:
    """Group ``g``'s slice of its batch's buffer."""
    base = cap_start[batch_start[batch_of[g]]]
    out: np.ndarray = bufs[batch_of[g]][cap_start[g] - base : cap_start[g + 1] - base]
    return out


@njit(cache=True, error_model="numpy")
def _run_group(
    g: int, rows: np.ndarray, row_start: np.ndarray, f: tuple[np.ndarray, ...], group_start: np.ndarray,
    group_syms: np.ndarray, loc: np.ndarray, method: np.ndarray, wgroup: np.ndarray, wash: bool, window: int,
    dividends: np.ndarray, piece_count: np.ndarray, open_count: np.ndarray,
    bufs: list[np.ndarray], outs: list[np.ndarray], batch_of: np.ndarray, batch_start: np.ndarray,
    cap_start: np.ndarray, counts: np.ndarray, pieces: bool,
) -> None:
    """Run group ``g`` on its rows (``f``: the per-row fields in group order) into its slice,
    or, when its output outgrows the slice, into ``outs[g]``."""
    a = row_start[g]
    b = row_start[g + 1]
    dst = _slice(g, bufs, batch_of, batch_start, cap_start)
    n_real, n_open, err, row, out = match_group_nb(
        rows[a:b], f[F_SYM][a:b], f[F_DAY][a:b], f[F_KIND][a:b], f[F_QTY][a:b], f[F_PRICE][a:b],
        f[F_FEE][a:b], f[F_REF][a:b], f[F_RATIO][a:b], f[F_CASH][a:b], f[F_ALLOC][a:b], f[F_TARGET][a:b],
        loc, group_syms[group_start[g] : group_start[g + 1]], method, wgroup, wash, window,
        dividends[a:b], piece_count[a:b], open_count, dst, pieces,
    )
    if err == 0 and out.shape[0] > dst.shape[0]:  # grown: past the slice
        outs[g] = out
    counts[g, C_REAL] = n_real
    counts[g, C_OPEN] = n_open
    counts[g, C_ERR] = err
    counts[g, C_ROW] = row


@njit(cache=True, error_model="numpy")
def _release(bufs: list[np.ndarray], outs: list[np.ndarray], batch_start: np.ndarray, b: int) -> None:
    """Free batch ``b``'s buffer and its groups' grown outputs, once placed."""
    bufs[b] = np.empty((0, R_NF), dtype=np.int64)
    for g in range(batch_start[b], batch_start[b + 1]):
        outs[g] = np.empty((0, R_NF), dtype=np.int64)


@njit(cache=True, error_model="numpy")
def _outputs(
    counts: np.ndarray, rows: np.ndarray, piece_count_g: np.ndarray, open_count: np.ndarray, by_group: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Status (the earliest failing row over all groups), output arrays, their offsets (of
    each sell row's pieces, or ``by_group`` of each group's) and where each group's pieces
    would start laid out by group."""
    n_grp = counts.shape[0]
    status = np.zeros(2, dtype=np.int64)
    status[1] = -1
    for g in range(n_grp):
        if counts[g, C_ERR] != 0 and (status[1] == -1 or counts[g, C_ROW] < status[1]):
            status[0] = counts[g, C_ERR]
            status[1] = counts[g, C_ROW]
    part_start = np.zeros(n_grp + 1, dtype=np.int64)
    if status[0] != 0:
        empty = np.zeros(1, dtype=np.int64)
        return (
            np.empty((0, R_NF), dtype=np.int64), np.empty((0, OPEN_NF), dtype=np.int64), status, empty, empty,
            part_start,
        )
    for g in range(n_grp):
        part_start[g + 1] = part_start[g] + counts[g, C_REAL]
    if by_group:
        piece_start = part_start
    else:
        piece_count = np.zeros(rows.shape[0], dtype=np.int64)
        for j in range(rows.shape[0]):
            piece_count[rows[j]] = piece_count_g[j]
        piece_start = np.empty(piece_count.shape[0], dtype=np.int64)
        t = 0
        for i in range(piece_count.shape[0]):
            piece_start[i] = t
            t += piece_count[i]
    # by group, each group's pieces stay where it wrote them (no copy): see _place_group
    realized = np.empty((0 if by_group else part_start[n_grp], R_NF), dtype=np.int64)
    open_start = np.empty(open_count.shape[0], dtype=np.int64)
    t = 0
    for s in range(open_count.shape[0]):
        open_start[s] = t
        t += open_count[s]
    open_lots = np.empty((t, OPEN_NF), dtype=np.int64)
    return realized, open_lots, status, piece_start, open_start, part_start


@njit(cache=True, error_model="numpy")
def _place_group(
    g: int, counts: np.ndarray, bufs: list[np.ndarray], outs: list[np.ndarray], batch_of: np.ndarray,
    batch_start: np.ndarray, cap_start: np.ndarray, piece_start: np.ndarray, open_start: np.ndarray,
    realized: np.ndarray, open_lots: np.ndarray, by_group: bool, rows: np.ndarray, row_start: np.ndarray,
    local: np.ndarray,
) -> None:
    """Copy a group's pieces to their sell rows' places (``by_group``: leave them in its own
    array, ``row`` and ``lot`` numbered among the group's rows) and its lots to their
    symbols' places."""
    src = outs[g] if outs[g].shape[0] > 0 else _slice(g, bufs, batch_of, batch_start, cap_start)
    n_real = counts[g, C_REAL]
    if by_group:
        for j in range(row_start[g], row_start[g + 1]):  # the group's rows, in table order
            local[rows[j]] = j - row_start[g]
        for j in range(n_real):
            src[j, R_ROW] = local[src[j, R_ROW]]
            lot = src[j, R_ORIGIN]
            if lot >= 0:
                src[j, R_ORIGIN] = local[lot]
    else:
        pos = 0
        prev = -1
        for j in range(n_real):  # the pieces of one sell are consecutive
            row = src[j, R_ROW]
            pos = piece_start[row] if row != prev else pos + 1
            prev = row
            realized[pos] = src[j]
    prev = -1
    pos = 0
    for j in range(n_real, n_real + counts[g, C_OPEN]):
        s = src[j, 0]
        pos = open_start[s] if s != prev else pos + 1
        prev = s
        open_lots[pos] = src[j, :OPEN_NF]


@njit(cache=True, error_model="numpy")
def _parts(
    counts: np.ndarray, bufs: list[np.ndarray], outs: list[np.ndarray], batch_of: np.ndarray,
    batch_start: np.ndarray, cap_start: np.ndarray, by_group: bool, ok: bool,
) -> list[np.ndarray]:
    """``by_group``: each group's pieces, a view of the array it wrote them in (a batch's
    buffer, whose pages past the pieces were never touched, or its own grown array)."""
    n_grp = counts.shape[0] if by_group and ok else 0
    parts = [np.empty((0, R_NF), dtype=np.int64)]
    parts.clear()
    for g in range(n_grp):
        src = outs[g] if outs[g].shape[0] > 0 else _slice(g, bufs, batch_of, batch_start, cap_start)
        parts.append(src[: counts[g, C_REAL]])
    return parts


@njit(cache=True, error_model="numpy", parallel=True, nogil=True)
def match_lots_nb(
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
    target: np.ndarray,
    sym_group: np.ndarray,
    group_start: np.ndarray,
    group_syms: np.ndarray,
    method: np.ndarray,
    wgroup: np.ndarray,
    wash: bool,
    window: int,
    by_group: bool,
    pieces: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[np.ndarray]]:
    """Relieve lots for every sell in date order and detect wash sales, groups in parallel.

    Parameters
    ----------
    sym, day, kind : ndarray of int64
        Symbol code, day number and kind (``BUY``, ``SELL``, ``DIVIDEND``) of
        each transaction, in date order.
    qty, price, fee : ndarray of int64
        Quantity, price and fees in 1e-8 units.
    lot_ref : ndarray of int64
        For ``SPECIFIC`` sells, the row of the buy whose lot is sold; else -1.
    ratio, cash, alloc, target : ndarray of int64
        Corporate-action fields (see
        :func:`~quantcore._kernels.tax_lots.match_group_nb`); 0 and -1 elsewhere.
        Empty arrays when no row is a corporate action (they are then never read).
    sym_group, group_start, group_syms : ndarray of int64
        Group code of each symbol and the symbols of group ``g``, ascending, as
        ``group_syms[group_start[g]:group_start[g + 1]]``. A group holds the
        substantially identical securities and every symbol a spin-off or
        merger links to them.
    method : ndarray of int64
        Lot relief method of each symbol code: ``FIFO``, ``LIFO``, ``HIFO``,
        ``SPECIFIC`` (a sell with ``lot_ref < 0`` relieves ``FIFO``) or ``AVERAGE``.
    wgroup : ndarray of int64
        Wash-sale group of each symbol code (the substantially identical ones).
    wash : bool
        Apply the wash-sale rule.
    window : int
        Wash-sale window in days on each side of a loss sale (30).
    by_group : bool
        Keep the realized pieces by group (:mod:`quantcore.tax.splice`): ``parts``, each
        group's in sell order, ``row`` and ``lot`` numbered among the group's rows (in
        table order); ``realized`` is then empty.
    pieces : bool
        Keep the realized pieces; without, ``realized`` is empty and the scratch holds
        one row's pieces at a time (a position needs only the open lots, which are the
        same either way, as are the errors).

    Returns
    -------
    realized : ndarray of int64, shape (n_pieces, 11)
        One row per (sell, lot) piece in sell order (``by_group``: none), columns of
        ``realized_dt``.
    open_lots : ndarray of int64, shape (n_open, 8)
        Lots still held, symbol by symbol in relief order, columns of ``lot_dt``.
    dividends : ndarray of int64, shape (n,)
        Per row: the dividend amount ``round_half_up(qty x price)`` (0 for other rows).
    status : ndarray of int64, shape (2,)
        ``(0, -1)`` on success, else an ``ERR_*`` code and the first offending
        row (then ``realized`` and ``open_lots`` are empty).
    part_start : ndarray of int64, shape (n_groups + 1,)
        Where each group's pieces would start laid out group after group (zeros on an
        error).
    parts : list of ndarray of int64, shape (n_group_pieces, 11)
        ``by_group`` (and no error): each group's pieces, a view of the array the group
        wrote them in; else empty.

    Notes
    -----
    The rules are those of :func:`~quantcore._kernels.tax_lots.match_group_nb`;
    work and memory are ``O(n + output)``, the groups spread over the threads.
    """
    n_grp = group_start.shape[0] - 1
    row_start, rows, loc, cap_start = _plan(sym, sym_group, group_start, group_syms)
    batch_start, batch_of = _batches(cap_start)
    fg = _gather(rows, sym, day, kind, qty, price, fee, lot_ref, ratio, cash, alloc, target)
    div_g = np.zeros(sym.shape[0], dtype=np.int64)
    piece_count_g = np.zeros(sym.shape[0], dtype=np.int64)
    open_count = np.zeros(sym_group.shape[0], dtype=np.int64)
    counts = np.zeros((n_grp, 4), dtype=np.int64)
    bufs = _buffers(cap_start, batch_start)
    outs = _empties(n_grp)
    for g in prange(n_grp):
        _run_group(
            g, rows, row_start, fg, group_start, group_syms, loc, method, wgroup, wash, window,
            div_g, piece_count_g, open_count, bufs, outs, batch_of, batch_start, cap_start, counts,
            pieces,
        )
    realized, open_lots, status, piece_start, open_start, part_start = _outputs(
        counts, rows, piece_count_g, open_count, by_group
    )
    local = np.empty(sym.shape[0] if by_group else 0, dtype=np.int64)
    dividends = np.empty(sym.shape[0], dtype=np.int64)
    dividends[rows] = div_g
    if status[0] == 0:
        for b in range(batch_start.shape[0] - 1):  # a batch's memory goes as soon as it is placed
            for g in prange(batch_start[b], batch_start[b + 1]):
                _place_group(
                    g, counts, bufs, outs, batch_of, batch_start, cap_start, piece_start, open_start,
                    realized, open_lots, by_group, rows, row_start, local,
                )
            if not by_group:  # by group, the batches hold the pieces
                _release(bufs, outs, batch_start, b)
    parts = _parts(counts, bufs, outs, batch_of, batch_start, cap_start, by_group, status[0] == 0)
    return realized, open_lots, dividends, status, part_start, parts


@njit(cache=True, error_model="numpy")
def match_lots_seq_nb(
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
    target: np.ndarray,
    sym_group: np.ndarray,
    group_start: np.ndarray,
    group_syms: np.ndarray,
    method: np.ndarray,
    wgroup: np.ndarray,
    wash: bool,
    window: int,
    by_group: bool,
    pieces: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[np.ndarray]]:
    """:func:`match_lots_nb` on one thread, the groups one after the other (same results)."""
    n_grp = group_start.shape[0] - 1
    row_start, rows, loc, cap_start = _plan(sym, sym_group, group_start, group_syms)
    batch_start, batch_of = _batches(cap_start)
    fg = _gather(rows, sym, day, kind, qty, price, fee, lot_ref, ratio, cash, alloc, target)
    div_g = np.zeros(sym.shape[0], dtype=np.int64)
    piece_count_g = np.zeros(sym.shape[0], dtype=np.int64)
    open_count = np.zeros(sym_group.shape[0], dtype=np.int64)
    counts = np.zeros((n_grp, 4), dtype=np.int64)
    bufs = _buffers(cap_start, batch_start)
    outs = _empties(n_grp)
    for g in range(n_grp):
        _run_group(
            g, rows, row_start, fg, group_start, group_syms, loc, method, wgroup, wash, window,
            div_g, piece_count_g, open_count, bufs, outs, batch_of, batch_start, cap_start, counts,
            pieces,
        )
    realized, open_lots, status, piece_start, open_start, part_start = _outputs(
        counts, rows, piece_count_g, open_count, by_group
    )
    local = np.empty(sym.shape[0] if by_group else 0, dtype=np.int64)
    dividends = np.empty(sym.shape[0], dtype=np.int64)
    dividends[rows] = div_g
    if status[0] == 0:
        for b in range(batch_start.shape[0] - 1):  # a batch's memory goes as soon as it is placed
            for g in range(batch_start[b], batch_start[b + 1]):
                _place_group(
                    g, counts, bufs, outs, batch_of, batch_start, cap_start, piece_start, open_start,
                    realized, open_lots, by_group, rows, row_start, local,
                )
            if not by_group:  # by group, the batches hold the pieces
                _release(bufs, outs, batch_start, b)
    parts = _parts(counts, bufs, outs, batch_of, batch_start, cap_start, by_group, status[0] == 0)
    return realized, open_lots, dividends, status, part_start, parts
