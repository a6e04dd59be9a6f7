"""Parity of the purged splits with skfolio's ``CombinatorialPurgedCV``.

Mapping: ``n_groups`` is ``n_folds``, ``n_test_groups`` is ``n_test_folds``,
``purge`` is ``purged_size``, ``embargo`` is ``embargo_size``; skfolio yields the
test folds as a list, we concatenate them. skfolio needs ``n_test_folds >= 2``
and ``purged_size + embargo_size < n // n_folds - 1``; the cases stay inside.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import skfolio.model_selection as skm  # the dev extra's oracle: these tests never skip
from hypothesis import given, settings
from hypothesis import strategies as hs

from quantcore.backtest import combinatorial_purged_splits


def _theirs(n: int, g: int, t: int, purge: int, embargo: int) -> list[tuple[list, list]]:
    cv = skm.CombinatorialPurgedCV(
        n_folds=g, n_test_folds=t, purged_size=purge, embargo_size=embargo
    )
    return [
        (train.tolist(), np.concatenate(tests).tolist())
        for train, tests in cv.split(np.zeros((n, 1)))
    ]


def _ours(n: int, g: int, t: int, purge: int, embargo: int) -> list[tuple[list, list]]:
    return [
        (train.tolist(), test.tolist())
        for train, test in combinatorial_purged_splits(n, g, t, purge=purge, embargo=embargo)
    ]


@pytest.mark.parametrize(
    ("n", "g", "t", "purge", "embargo"),
    [
        (12, 3, 2, 0, 0),  # skfolio's docstring examples
        (12, 3, 2, 1, 0),
        (12, 3, 2, 0, 1),
        (2520, 10, 2, 5, 10),  # ten years of days, a week purged, two weeks embargoed
        (1000, 6, 3, 20, 3),
        (1003, 7, 4, 4, 4),  # uneven: the last group takes the remainder
    ],
)
def test_equal_to_skfolio(n: int, g: int, t: int, purge: int, embargo: int) -> None:
    ours = _ours(n, g, t, purge, embargo)
    assert ours == _theirs(n, g, t, purge, embargo)
    assert len(ours) == math.comb(g, t)


@settings(max_examples=150, deadline=None)
@given(hs.data())
def test_equal_to_skfolio_generated(data: hs.DataObject) -> None:
    g = data.draw(hs.integers(3, 8), label="n_groups")
    t = data.draw(hs.integers(2, g - 1), label="n_test_groups")
    n = data.draw(hs.integers(g * 3, 400), label="n")
    room = n // g - 2  # skfolio: purge + embargo < n // g - 1
    purge = data.draw(hs.integers(0, room), label="purge")
    embargo = data.draw(hs.integers(0, room - purge), label="embargo")
    assert _ours(n, g, t, purge, embargo) == _theirs(n, g, t, purge, embargo)
