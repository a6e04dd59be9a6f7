"""The rows a change of some assets reaches: those assets and every asset a spin-off or
merger links to them, in every portfolio of the user."""

from __future__ import annotations

from collections.abc import Collection, Iterable

import numpy as np
from numpy.typing import NDArray

from service.ledger.columns import LedgerColumns

__all__ = ["closure", "linked_assets", "rows_of_assets"]


def closure(asset_ids: Collection[int], links: Iterable[tuple[int, int]]) -> set[int]:
    """``asset_ids`` and every asset the (source, target) ``links`` join to them, transitively."""
    pairs = list(links)
    out = set(asset_ids)
    grew = bool(pairs)
    while grew:
        grew = False
        for a, b in pairs:
            if (a in out) != (b in out):
                out.update((a, b))
                grew = True
    return out


def linked_assets(cols: LedgerColumns, asset_ids: Collection[int]) -> frozenset[int]:
    """``asset_ids`` and every asset a spin-off or merger of ``cols`` links to them,
    transitively (their lots flow from one to the other)."""
    acting = np.flatnonzero(cols.target >= 0)
    pairs = set(
        zip(
            cols.asset_ids[cols.symbol[acting]].tolist(), cols.asset_ids[cols.target[acting]].tolist(),
            strict=True,
        )
    )  # fmt: skip
    return frozenset(closure(asset_ids, pairs))


def rows_of_assets(cols: LedgerColumns, asset_ids: Collection[int]) -> NDArray[np.intp]:
    """Indices of the rows (every portfolio, ledger order) of the assets ``asset_ids``."""
    codes = np.flatnonzero(np.isin(cols.asset_ids, np.fromiter(asset_ids, np.int64, len(asset_ids))))
    return np.flatnonzero(np.isin(cols.symbol, codes))
