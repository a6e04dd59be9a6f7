"""A lot ledger after a change to a few of its symbols: the other symbols' results kept.

Lots are relieved per processing group (substantially identical symbols, joined by
spin-offs and mergers) and groups share no state (:mod:`quantcore._kernels.tax_match`).
When a change of the transactions touches only the rows of some groups, the new ledger
is the old one with those groups' results replaced by a match of their new rows alone:
:func:`splice_ledger` does that, renumbering rows and lots to the new table. It is
equal, record for record, to :func:`quantcore.tax.match_lots` of the whole new table
(``tests/quantcore/test_tax_splice.py`` checks it after random changes).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import Any

import numpy as np

from quantcore._kernels.tax_splice import splice_records_nb
from quantcore._validation import read_only
from quantcore.tax.encode import ROW_FIELDS, Encoded, LedgerSource
from quantcore.tax.lots import LotLedger

__all__ = ["splice_ledger"]


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


def _whole_source(ledger: LotLedger) -> LedgerSource:
    src = ledger.source
    if src is None or src.kept is not None or src.encoded.rows is not None:
        raise ValueError(
            "a spliced ledger must come from match_lots of a date-sorted table, not cut"
        )
    return src


def splice_ledger(
    old: LotLedger,
    part: LotLedger,
    replaced: Collection[str],
    old_to_new: np.ndarray,
    part_rows: np.ndarray,
) -> LotLedger:
    """``old`` with the results of the symbols ``replaced`` taken from ``part``.

    Parameters
    ----------
    old : LotLedger
        :func:`~quantcore.tax.match_lots` of the old table (date-sorted: rows are the
        table's), whole (not :meth:`~LotLedger.only`).
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
    LotLedger
        Equal to :func:`~quantcore.tax.match_lots` of the new table.

    Raises
    ------
    ValueError
        When the inputs cannot describe such a change (the symbols of ``part`` are not
        ``replaced``, groups or methods differ, the rows are not one new table): the
        caller matches the new table whole instead.
    """
    src, psrc = _whole_source(old), _whole_source(part)
    enc, penc = src.encoded, psrc.encoded
    if src.wash_sales != psrc.wash_sales or set(part.symbols) != set(replaced):
        raise ValueError("the part does not hold exactly the replaced symbols")
    index = {s: c for c, s in enumerate(old.symbols)}
    if not set(replaced) <= index.keys():
        raise ValueError("the part holds symbols the old ledger does not")
    code = np.array([index[s] for s in part.symbols], np.int64)  # part code -> old code
    if code.size and (np.diff(code) <= 0).any():
        raise ValueError("symbol order differs")
    if tuple(old.symbol_methods[c] for c in code.tolist()) != part.symbol_methods:
        raise ValueError("lot methods differ")
    if not (
        np.array_equal(_partition(enc.links[code]), _partition(penc.links))
        and np.array_equal(_partition(old.groups[code]), _partition(part.groups))
    ):
        raise ValueError("groups differ")
    inside = np.zeros(len(old.symbols), np.bool_)
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

    def rows_old(a: np.ndarray) -> np.ndarray:
        return np.where(a >= 0, old_to_new[np.maximum(a, 0)], a)

    def rows_part(a: np.ndarray) -> np.ndarray:
        return np.where(a >= 0, part_rows[np.maximum(a, 0)], a)

    def syms_part(a: np.ndarray) -> np.ndarray:
        return np.where(a >= 0, code[np.maximum(a, 0)], a)

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

    realized = merged(old.realized, part.realized, ("lot", "row"), "row")
    open_lots = merged(old.open_lots, part.open_lots, ("lot",), "symbol")
    dividends = merged(old.dividends, part.dividends, ("row",), "row")
    buys = splice_records_nb(
        read_only(np.ascontiguousarray(old.buys)),
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
    names[old_to_new[kept]] = np.asarray(old.lot_names, dtype=object)[kept]
    names[part_rows] = np.asarray(part.lot_names, dtype=object)
    lot_names = tuple(names.tolist())
    fields: dict[str, Any] = {}
    for f in ROW_FIELDS:
        a, b = getattr(enc, f), getattr(penc, f)
        if f == "lot_ref":
            a, b = rows_old(a), rows_part(b)
        elif f in ("sym", "target"):
            b = syms_part(b)
        out = np.empty(n_new, np.int64)
        out[old_to_new[kept]] = a[kept]
        out[part_rows] = b
        fields[f] = out
    encoded: Encoded = dataclasses.replace(
        enc, **fields, lot_names=lot_names, table=None, rows=None
    )
    source = LedgerSource(encoded, src.wash_sales, n_new, None)
    return dataclasses.replace(
        old,
        open_lots=open_lots,
        realized=realized,
        dividends=dividends,
        buys=buys,
        lot_names=lot_names,
        source=source,
    )
