"""A lot ledger kept per processing group, and spliced after a change to a few of its symbols.

Lots are relieved per processing group (substantially identical symbols, joined by
spin-offs and mergers) and groups share no state (:mod:`quantcore._kernels.tax_match`).
A :class:`GroupedLedger` keeps a ledger's realized pieces, by far its largest records, one
array per group, with row numbers local to the group: rows inserted or dropped in
other groups leave them as they are. When a change of the transactions touches only the
rows of some groups, :func:`splice_ledger` makes the new ledger from the old one: those
groups' pieces replaced by a match of their new rows alone, every other group's array
shared, not copied; the records of the size of the table (open lots, dividends, buys,
the encoded rows) renumbered to the new table. Its :meth:`GroupedLedger.whole` equals,
record for record, :func:`quantcore.tax.match_lots` of the whole new table
(``tests/property/test_tax_splice.py`` checks it after random changes).
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Collection, Mapping
from decimal import Decimal
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from quantcore._kernels.tax_reports import SUM_LIMIT, yearly_gains_nb
from quantcore._kernels.tax_splice import (
    count_sales_nb,
    group_rows_nb,
    place_rows_nb,
    place_sales_nb,
    splice_records_nb,
)
from quantcore._records import realized_dt
from quantcore._validation import read_only
from quantcore.tax.dividends import year_bounds
from quantcore.tax.encode import ROW_FIELDS, Encoded, LedgerSource
from quantcore.tax.lots import LotLedger, LotMethod, match_grouped

__all__ = ["GroupedLedger", "grouped", "splice_ledger"]

_NO_PIECES = np.empty(0, realized_dt)
_NO_PIECES.flags.writeable = False
_WIDTH = len(realized_dt.names or ())
_ROW, _LOT = (realized_dt.names or ()).index("row"), (realized_dt.names or ()).index("lot")


def _part_gains(pieces: np.ndarray) -> dict[int, tuple[int, int]]:
    """Short- and long-term gain in cents per sale year of some realized pieces (the sums
    of their Form 8949 rows, :func:`quantcore.tax.rates.yearly_gains`): years with sales."""
    if pieces.size == 0:
        return {}
    sold, proceeds, basis, disallowed, long_term = (
        read_only(pieces[f]) for f in ("sold", "proceeds", "basis", "disallowed", "long_term")
    )
    years, st, lt, count, _, size = yearly_gains_nb(sold, proceeds, basis, disallowed, long_term, 0, -1)
    if size >= SUM_LIMIT:
        raise OverflowError("tax kernel: yearly gains out of the int64 range")
    at = count > 0
    return {
        int(y): (int(a), int(b))
        for y, a, b in zip(years[at].tolist(), st[at].tolist(), lt[at].tolist(), strict=True)
    }


def _row_groups(enc: Encoded) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Of an encoded table: its rows in group order (the table's row of each group row),
    where each group's rows start in that order, and each row's index among its group's."""
    n_groups = int(enc.links.max()) + 1 if enc.links.size else 0
    return group_rows_nb(read_only(enc.links[enc.sym]), n_groups)


def placement(chosen: list[tuple[np.ndarray, np.ndarray]], part_col: int = -1) -> tuple[int, np.ndarray]:
    """Where the pieces of :meth:`GroupedLedger.slices` go in sell order, numbered as the
    table's rows: the first table row ``base`` and ``at[part, row - base]``, the place of
    that row's first piece in part 0 and, after them, part 1 (pieces whose column
    ``part_col`` is not 0; ``-1``: one part). A counting placement (a sell's pieces are all
    of one group), no sort: the kernels that copy the pieces advance ``at``."""
    if not chosen:
        return 0, np.zeros((2, 1), np.int64)
    # each slice is in sell order: its first and last pieces bound its table rows
    base = min(int(rows[p[0, _ROW]]) for p, rows in chosen)
    top = max(int(rows[p[-1, _ROW]]) for p, rows in chosen)
    at = np.zeros((2, top - base + 2), np.int64)
    for p, rows in chosen:
        count_sales_nb(p, rows, _ROW, part_col, base, at)
    np.cumsum(at, axis=1, out=at)
    at[1] += at[0, -1]
    return base, at


def _in_sell_order(chosen: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """The pieces of :meth:`GroupedLedger.slices` as one array in sell order, numbered as the
    table's rows (row and lot): one copy."""
    if not chosen:
        return _NO_PIECES.copy()
    base, at = placement(chosen)
    out = np.empty((int(at[0, -1]), _WIDTH), np.int64)
    for p, rows in chosen:
        place_sales_nb(p, rows, _ROW, _LOT, base, at[0], out)
    return out.view(realized_dt)[:, 0]


@dataclasses.dataclass(frozen=True, eq=False)
class GroupedLedger:
    """A :class:`~quantcore.tax.LotLedger` whose realized pieces are kept per processing group.

    Attributes
    ----------
    ledger : LotLedger
        Every record but the realized pieces (its ``realized`` is empty): open lots,
        dividends, buys, lot names and the encoded rows, numbered as the table's.
    parts : tuple of ndarray of :data:`~quantcore._records.realized_dt`
        The realized pieces of each processing group (by its code,
        ``ledger.source.encoded.links``), in sell order, ``row`` and ``lot`` numbered
        among the group's rows (in table order).
    gains : tuple of dict
        Of each part: the short- and long-term gain in cents per sale year.
    """

    ledger: LotLedger
    parts: tuple[np.ndarray, ...]
    gains: tuple[dict[int, tuple[int, int]], ...]

    @cached_property
    def _groups(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        src = self.ledger.source
        assert src is not None  # every GroupedLedger is made from a match (grouped, splice)
        return _row_groups(src.encoded)

    @property
    def pieces(self) -> int:
        """How many realized pieces the ledger holds."""
        return sum(p.size for p in self.parts)

    def sales(self, first: int | None = None, last: int | None = None) -> np.ndarray:
        """The realized pieces sold from day ``first`` to day ``last`` (day numbers; ``None``:
        unbounded), in sell order and numbered as the table's rows, as
        :attr:`LotLedger.realized` holds them: a new array of those pieces only.

        A part is in sell order and the table in date order, so each part's pieces of
        those days are one slice of it, found by bisection: the other pieces are not read."""
        return _in_sell_order(self.slices(first, last))

    def slices(self, first: int | None = None, last: int | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
        """Of each part with pieces sold from day ``first`` to day ``last``: those pieces (one
        slice of it, found by bisection) as read-only int64 rows, and the table rows of its
        group's rows (what its ``row`` and ``lot`` number)."""
        order, starts, _ = self._groups
        chosen = []
        for g, part in enumerate(self.parts):
            sold = part["sold"]
            lo = 0 if first is None else bisect.bisect_left(sold, first)
            hi = part.size if last is None else bisect.bisect_right(sold, last)
            if hi > lo:
                chosen.append((_block(part[lo:hi]), read_only(order[starts[g] : starts[g + 1]])))
        return chosen

    def year(self, year: int) -> LotLedger:
        """The ledger with only the realized pieces sold in ``year`` (what Form 8949 of that
        year reads; carryovers need :meth:`yearly_gains`)."""
        first, last = year_bounds(year)
        return dataclasses.replace(self.ledger, realized=self.sales(first, last))

    def whole(self) -> LotLedger:
        """The ledger with every realized piece: :func:`~quantcore.tax.match_lots`' result."""
        return dataclasses.replace(self.ledger, realized=self.sales())

    def yearly_gains(self) -> dict[int, tuple[Decimal, Decimal]]:
        """:func:`quantcore.tax.rates.yearly_gains` of :meth:`whole`, summed from the parts'."""
        total: dict[int, tuple[int, int]] = {}
        for gains in self.gains:
            for y, (st, lt) in gains.items():
                a, b = total.get(y, (0, 0))
                total[y] = (a + st, b + lt)
        return {y: (Decimal(st).scaleb(-2), Decimal(lt).scaleb(-2)) for y, (st, lt) in sorted(total.items())}

    def only(self, symbols: Collection[str]) -> GroupedLedger:
        """:meth:`LotLedger.only` of it: the parts' pieces of ``symbols`` only (a part wholly
        of them is shared)."""
        led = self.ledger.only(symbols)
        src = led.source
        if src is None or src.kept is None:
            return self._with_rows(dataclasses.replace(self, ledger=led))
        wanted = np.zeros(len(self.ledger.symbols), np.bool_)
        wanted[src.kept] = True
        links = src.encoded.links
        parts, gains = [], []
        for g, (part, sums) in enumerate(zip(self.parts, self.gains, strict=True)):
            of_group = wanted[links == g]  # a group wholly kept, or wholly not: no piece read
            if of_group.all() or not of_group.any():
                kept = part if of_group.all() else part[:0]
            else:
                kept = part[wanted[part["symbol"]]]
            parts.append(kept)
            gains.append(sums if kept is part else _part_gains(kept))
        return self._with_rows(GroupedLedger(led, tuple(parts), tuple(gains)))

    def _with_rows(self, cut: GroupedLedger) -> GroupedLedger:
        """``cut`` (of the same table) sharing this ledger's row maps when they are made."""
        if "_groups" in self.__dict__:
            cut.__dict__["_groups"] = self._groups
        return cut


def _whole_source(ledger: LotLedger) -> LedgerSource:
    src = ledger.source
    if src is None or src.kept is not None or src.encoded.rows is not None:
        raise ValueError(
            "a spliced ledger must come from match_lots of a date-sorted table, not cut"
        )
    return src


def grouped(
    transactions: pd.DataFrame,
    *,
    method: LotMethod | Mapping[str, LotMethod] = "fifo",
    wash_sales: bool = True,
    substantially_identical: Mapping[str, str] | None = None,
) -> GroupedLedger:
    """:func:`~quantcore.tax.match_lots` of ``transactions`` (date-sorted; same arguments,
    same errors) with its realized pieces kept per processing group. The match lays the
    pieces out group by group, numbered among the group's rows: the parts are the arrays
    it writes them in, never reordered nor copied."""
    ledger, parts = match_grouped(transactions, method, wash_sales, substantially_identical)
    made = GroupedLedger(ledger, parts, tuple(_part_gains(p) for p in parts))
    made.__dict__["_groups"] = made._groups  # one pass over the rows: not a first report's cost
    return made


def _partition(labels: np.ndarray) -> np.ndarray:
    """Labels renumbered by first appearance: equal iff two labelings partition alike."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    return np.argsort(np.argsort(first))[inverse] if labels.size else labels


def _block(records: np.ndarray) -> np.ndarray:
    """Records of int64 fields as a read-only (n, fields) int64 array (a view when contiguous):
    read-only whether the records are a cached ledger's or fresh, so the kernel compiles once."""
    width = len(records.dtype.names or ())
    if records.dtype.itemsize != 8 * width or any(
        records.dtype[k] != np.int64 for k in range(width)
    ):
        raise ValueError("records of int64 fields expected")
    return read_only(np.ascontiguousarray(records).view(np.int64).reshape(records.size, width))


def splice_ledger(
    old: GroupedLedger,
    part: LotLedger,
    replaced: Collection[str],
    old_to_new: np.ndarray,
    part_rows: np.ndarray,
) -> GroupedLedger:
    """``old`` with the results of the symbols ``replaced`` taken from ``part``.

    Parameters
    ----------
    old : GroupedLedger
        :func:`grouped` of the old table (date-sorted: rows are the table's), whole (not
        :meth:`~GroupedLedger.only`), or a splice of one.
    part : LotLedger
        :func:`~quantcore.tax.match_lots` of the new table's rows of ``replaced``
        (in the new table's order, with the same methods and groups).
    replaced : collection of str
        Whole processing groups of ``old``: every symbol a spin-off, merger or the
        ``substantially_identical`` map joins to one of them is in it.
    old_to_new : ndarray of int64
        The new table's row of each old row; -1 for the rows of ``replaced``.
    part_rows : ndarray of int64
        The new table's row of each row of ``part``, increasing.

    Returns
    -------
    GroupedLedger
        Its :meth:`~GroupedLedger.whole` equal to :func:`~quantcore.tax.match_lots` of
        the new table; the parts of the groups not replaced are ``old``'s own arrays.

    Raises
    ------
    ValueError
        When the inputs cannot describe such a change (the symbols of ``part`` are not
        ``replaced``, groups or methods differ, the rows are not one new table): the
        caller matches the new table whole instead.
    """
    led = old.ledger
    src, psrc = _whole_source(led), _whole_source(part)
    enc, penc = src.encoded, psrc.encoded
    if src.wash_sales != psrc.wash_sales or set(part.symbols) != set(replaced):
        raise ValueError("the part does not hold exactly the replaced symbols")
    index = {s: c for c, s in enumerate(led.symbols)}
    if not set(replaced) <= index.keys():
        raise ValueError("the part holds symbols the old ledger does not")
    code = np.array([index[s] for s in part.symbols], np.int64)  # part code -> old code
    if code.size and (np.diff(code) <= 0).any():
        raise ValueError("symbol order differs")
    if tuple(led.symbol_methods[c] for c in code.tolist()) != part.symbol_methods:
        raise ValueError("lot methods differ")
    if not (
        np.array_equal(_partition(enc.links[code]), _partition(penc.links))
        and np.array_equal(_partition(led.groups[code]), _partition(part.groups))
    ):
        raise ValueError("groups differ")
    inside = np.zeros(len(led.symbols), np.bool_)
    inside[code] = True
    if (np.isin(enc.links, enc.links[code]) != inside).any():
        raise ValueError("the replaced symbols are not whole processing groups")
    old_to_new = np.asarray(old_to_new, np.int64)
    part_rows = np.asarray(part_rows, np.int64)
    n_old = enc.day.size
    if old_to_new.shape != (n_old,) or part_rows.shape != (penc.day.size,):
        raise ValueError("row maps of the wrong length")
    dropped = inside[enc.sym]
    if ((old_to_new < 0) != dropped).any():
        raise ValueError("the rows dropped are not the rows of the replaced symbols")
    n_new = int(n_old - dropped.sum() + part_rows.size)
    kept = np.flatnonzero(~dropped)
    both = np.concatenate([old_to_new[kept], part_rows])
    if (
        (both.size and (both.min() < 0 or both.max() >= n_new))
        or not (np.bincount(both, minlength=n_new) == 1).all()
        or (np.diff(old_to_new[kept]) <= 0).any()
        or (np.diff(part_rows) <= 0).any()
    ):
        raise ValueError("the rows do not make one new table in order")

    def rows_part(a: np.ndarray) -> np.ndarray:
        return np.where(a >= 0, part_rows[np.maximum(a, 0)], a)

    def merged(a: np.ndarray, b: np.ndarray, fields: tuple[str, ...], by: str) -> np.ndarray:
        """Old records of the kept symbols and the part's, renumbered, in ``by`` order."""
        col = {name: k for k, name in enumerate(a.dtype.names or ())}
        out = splice_records_nb(
            _block(a),
            _block(b),
            inside,
            code,
            old_to_new,
            part_rows,
            col["symbol"],
            col[by],
            np.array([col[f] for f in fields], np.int64),
        )
        return out.view(a.dtype)[:, 0]

    open_lots = merged(led.open_lots, part.open_lots, ("lot",), "symbol")
    dividends = merged(led.dividends, part.dividends, ("row",), "row")
    buys = splice_records_nb(
        read_only(np.ascontiguousarray(led.buys)),
        read_only(np.ascontiguousarray(part.buys)),
        inside,
        code,
        old_to_new,
        part_rows,
        0,
        3,
        np.array([3], np.int64),
    )
    names = np.empty(n_new, dtype=object)
    names[old_to_new[kept]] = np.asarray(led.lot_names, dtype=object)[kept]
    names[part_rows] = np.asarray(part.lot_names, dtype=object)
    lot_names = tuple(names.tolist())
    fields: dict[str, Any] = {}
    ro_old, ro_part, ro_code, same = (
        read_only(old_to_new), read_only(part_rows), read_only(code), read_only(np.empty(0, np.int64))
    )
    for f in ROW_FIELDS:
        a_map, b_map = (ro_old, ro_part) if f == "lot_ref" else (same, ro_code if f in ("sym", "target") else same)
        a, b = read_only(getattr(enc, f)), read_only(getattr(penc, f))
        fields[f] = place_rows_nb(a, b, ro_old, ro_part, a_map, b_map)
    encoded: Encoded = dataclasses.replace(
        enc, **fields, lot_names=lot_names, table=None, rows=None
    )
    source = LedgerSource(encoded, src.wash_sales, n_new, None)
    ledger = dataclasses.replace(
        led,
        open_lots=open_lots,
        dividends=dividends,
        buys=buys,
        lot_names=lot_names,
        source=source,
    )
    # the replaced groups' pieces: the part's, numbered among their group's rows of the new table
    groups = _row_groups(encoded)
    pieces = np.array(part.realized, copy=True)
    if pieces.size:
        pieces["symbol"] = code[pieces["symbol"]]
        for f in ("row", "lot"):
            pieces[f] = np.where(pieces[f] >= 0, groups[2][rows_part(pieces[f])], pieces[f])
    piece_group = enc.links[pieces["symbol"]]
    by_group = np.argsort(piece_group, kind="stable")
    pieces = pieces[by_group]
    at = np.searchsorted(piece_group[by_group], np.arange(len(old.parts) + 1))
    new_groups = set(enc.links[code].tolist())
    parts = list(old.parts)
    gains = list(old.gains)
    for g in new_groups:
        parts[g] = pieces[at[g] : at[g + 1]]
        gains[g] = _part_gains(parts[g])
    spliced = GroupedLedger(ledger, tuple(parts), tuple(gains))
    spliced.__dict__["_groups"] = groups
    return spliced
