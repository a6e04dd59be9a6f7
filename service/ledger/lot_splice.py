"""A user's lot ledger after a typed write, from the one before it: only the written
symbols' processing groups matched again.

The derivation cache keeps, beside each version's values, hints: ways to a value from
the previous version's (:class:`service.ledger.cache.DerivationCache`). A typed write
gives the ``"lots"`` hint (:func:`lot_hints`): a :class:`LotSplice` from the last lot
ledger derived, carried across up to :data:`CHAIN_DEPTH` writes nobody read. The splice
(:func:`spliced_names`, :func:`quantcore.tax.splice.splice_ledger`) equals a whole
match, record for record (``tests/service/test_ledger_lot_splice.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection
from typing import Any

import numpy as np
from numpy.typing import NDArray

from quantcore.tax import match_lots
from quantcore.tax.lots import LedgerError
from quantcore.tax.splice import GroupedLedger, splice_ledger
from service.ledger.columns import KIND_CODE, LedgerColumns, PortfolioInfo
from service.ledger.lots import frozen_ledger, lot_table, split_symbol

__all__ = ["CHAIN_DEPTH", "LotSplice", "RowKeys", "lot_hints", "spliced", "spliced_names", "touched"]

_LINKING = (KIND_CODE["spin_off"], KIND_CODE["merger"])

#: Writes a lot ledger is carried across, unread, before the next read derives it whole:
#: past that the union of their symbols is no longer a small part of the ledger.
CHAIN_DEPTH = 32


@dataclasses.dataclass(frozen=True, eq=False)
class RowKeys:
    """What a splice reads of the old version's columns: whose each row is, not its amounts
    (a hint carried across writes keeps these, not every column of a version gone)."""

    symbols: tuple[str, ...]
    portfolios: PortfolioInfo
    id: NDArray[np.int64]
    symbol: NDArray[np.int64]
    portfolio: NDArray[np.int64]

    @classmethod
    def of(cls, cols: LedgerColumns | RowKeys) -> RowKeys:
        if isinstance(cols, RowKeys):
            return cols
        return cls(cols.symbols, cols.portfolios, cols.id, cols.symbol, cols.portfolio)


@dataclasses.dataclass(frozen=True, eq=False)
class LotSplice:
    """The way to the lot ledger of ``cols`` from the last one derived (``lots``, that of
    ``base``): ``cols`` differ from ``base`` only in rows of the ``names`` (``"<portfolio
    id>:<symbol>"``) that the ``writes`` since touched. Called by the derivation cache in
    place of the derivation (:func:`spliced_names`)."""

    base: RowKeys
    lots: GroupedLedger
    cols: LedgerColumns
    names: frozenset[str]
    writes: int

    def __call__(self) -> GroupedLedger | None:
        return spliced_names(self.base, self.lots, self.cols, self.names)


def lot_hints(
    drop: int | None, add: int | None
) -> Callable[
    [dict[str, Any], dict[str, Callable[[], Any]], LedgerColumns], dict[str, Callable[[], Any]]
]:
    """For a typed write that dropped row ``drop`` and/or added row ``add`` (an edit: both):
    the derivation cache's hint for ``"lots"`` at the new version, a :class:`LotSplice` from
    the old version's lot ledger, or, when nobody read it, carried on from the old version's
    own hint (up to :data:`CHAIN_DEPTH` writes)."""

    def hints(
        old: dict[str, Any], old_hints: dict[str, Callable[[], Any]], cols: LedgerColumns
    ) -> dict[str, Callable[[], Any]]:
        old_cols = old.get("columns")
        names = None if old_cols is None else touched(old_cols, cols, (drop, add))
        if old_cols is None or names is None:
            return {}
        old_lots = old.get("lots")
        if old_lots is not None:
            return {"lots": LotSplice(RowKeys.of(old_cols), old_lots, cols, names, 1)}
        prev = old_hints.get("lots")
        if isinstance(prev, LotSplice) and prev.writes < CHAIN_DEPTH:
            carried = LotSplice(prev.base, prev.lots, cols, prev.names | names, prev.writes + 1)
            return {"lots": carried}
        return {}

    return hints


def touched(
    before: LedgerColumns, after: LedgerColumns, changed: tuple[int | None, int | None]
) -> frozenset[str] | None:
    """The ``"<portfolio id>:<symbol>"`` of the rows ``changed`` ids (dropped from ``before``,
    added to ``after``; a cash row has none); ``None`` when one of them is a spin-off or
    merger (it links groups: the splice does not apply)."""
    ids = [t for t in changed if t is not None]
    names: set[str] = set()
    for c in (before, after):
        pids = c.portfolios.ids
        for t in ids:
            for i in np.flatnonzero(c.id == t).tolist():
                if int(c.kind[i]) in _LINKING or c.target[i] >= 0:
                    return None
                if c.symbol[i] >= 0:
                    names.add(f"{pids[c.portfolio[i]]}:{c.symbols[c.symbol[i]]}")
    return frozenset(names)


def _pair_mask(cols: LedgerColumns | RowKeys, names: set[str]) -> NDArray[np.bool_]:
    """Which rows of ``cols`` are of a ``"<portfolio id>:<symbol>"`` in ``names``."""
    pick = np.zeros((len(cols.portfolios.ids), len(cols.symbols) + 1), np.bool_)
    for name in names:
        pid, sym = split_symbol(name)
        pick[cols.portfolios.index(pid), cols.symbols.index(sym)] = True
    return pick[cols.portfolio, cols.symbol]  # a cash row's -1 reads the last (False) column


def _find(ids: NDArray[np.int64], wanted: NDArray[np.int64]) -> NDArray[np.int64]:
    """The index in ``ids`` (distinct) of each of ``wanted``, -1 where absent: by a table
    over the ids' span when that is a few times their number (one user's rows, usually),
    else by sorting."""
    if ids.size == 0 or wanted.size == 0:
        return np.full(wanted.size, -1, np.int64)
    lo = min(int(ids.min()), int(wanted.min()))
    span = max(int(ids.max()), int(wanted.max())) - lo + 1
    if span <= 8 * (ids.size + wanted.size):
        where = np.full(span, -1, np.int64)
        where[ids - lo] = np.arange(ids.size)
        return where[wanted - lo]
    order = np.argsort(ids, kind="stable")
    pos = np.minimum(np.searchsorted(ids[order], wanted), ids.size - 1)
    return np.where(ids[order][pos] == wanted, order[pos], -1)


def spliced(
    old_cols: LedgerColumns, old: GroupedLedger, cols: LedgerColumns, changed: tuple[int | None, int | None]
) -> GroupedLedger | None:
    """The lot ledger of ``cols`` from ``old`` (that of ``old_cols``) when ``cols`` differ
    from ``old_cols`` by the rows ``changed`` ids (dropped from ``old_cols``, added to
    ``cols``): :func:`spliced_names` of the rows' symbols (:func:`touched`). ``None`` when
    the splice cannot apply: the caller derives it whole then."""
    names = touched(old_cols, cols, changed)
    return None if names is None else spliced_names(old_cols, old, cols, names)


def spliced_names(
    old_cols: LedgerColumns | RowKeys, old: GroupedLedger, cols: LedgerColumns, names: Collection[str]
) -> GroupedLedger | None:
    """The lot ledger of ``cols`` from ``old`` (that of ``old_cols``) when ``cols`` differ
    from ``old_cols`` only in rows of the ``names`` (``"<portfolio id>:<symbol>"``): only
    the processing groups of those symbols (the substantially identical ones in every
    portfolio, and what spin-offs and mergers join to them) are matched again
    (:func:`quantcore.tax.splice.splice_ledger`). ``None`` when that cannot apply (a
    symbol appearing or vanishing, a ledger that does not match): the caller derives it
    whole then."""
    led = old.ledger
    if old_cols.symbols != cols.symbols or old_cols.portfolios != cols.portfolios or led.source is None:
        return None
    wanted = set(names)
    index = {s: k for k, s in enumerate(led.symbols)}
    if not wanted <= index.keys():
        return None  # a new symbol: every code moves
    links = led.source.encoded.links
    group = np.isin(links, links[[index[n] for n in wanted]])
    replaced = {led.symbols[k] for k in np.flatnonzero(group).tolist()}
    new_rows = _pair_mask(cols, replaced)
    old_at = np.flatnonzero(old_cols.symbol >= 0)
    new_at = np.flatnonzero(cols.symbol >= 0)
    found = _find(cols.id[new_at], old_cols.id[old_at])
    old_to_new = np.where(_pair_mask(old_cols, replaced)[old_at], -1, found)
    if not replaced:  # a cash row: the security rows are the same
        same = old_at.size == new_at.size and (old_to_new == np.arange(old_at.size)).all()
        return old if same else None
    try:
        table, bare, by_symbol = lot_table(cols, new_rows)
        part = match_lots(table, method=by_symbol, substantially_identical=bare)
        return frozen_ledger(splice_ledger(old, part, replaced, old_to_new, np.flatnonzero(new_rows[new_at])))
    except (LedgerError, ValueError):
        return None
