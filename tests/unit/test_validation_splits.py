"""Purged k-fold and combinatorial purged CV splits: worked cases and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from quantcore.backtest import combinatorial_purged_splits, purged_kfold


def _lists(splits) -> list[tuple[list[int], list[int]]]:
    return [(a.tolist(), b.tolist()) for a, b in splits]


def test_purged_kfold_is_combinatorial_with_one_test_group() -> None:
    for n, k, purge, embargo in [(10, 2, 0, 0), (100, 5, 3, 2), (101, 7, 0, 4), (2520, 10, 5, 21)]:
        assert _lists(purged_kfold(n, k, purge=purge, embargo=embargo)) == _lists(
            combinatorial_purged_splits(n, k, 1, purge=purge, embargo=embargo)
        )


def test_kfold_by_hand() -> None:
    # 10 rows, 3 groups of 3 (the last takes the remainder: 6..9); purge 1, embargo 1.
    assert _lists(purged_kfold(10, 3, purge=1, embargo=1)) == [
        ([5, 6, 7, 8, 9], [0, 1, 2]),  # rows 3, 4 purged + embargoed after the block
        ([0, 1, 8, 9], [3, 4, 5]),  # row 2 purged before, 6, 7 after
        ([0, 1, 2, 3, 4], [6, 7, 8, 9]),  # row 5 purged before
    ]


def test_adjacent_test_groups_form_one_block() -> None:
    # groups 1 and 2 are tested together: nothing between them is purged
    splits = _lists(combinatorial_purged_splits(12, 4, 2, purge=1))
    assert splits[3] == ([0, 1, 10, 11], [3, 4, 5, 6, 7, 8])  # (1, 2): rows 2 and 9 purged


def test_splits_are_lazy_and_restartable() -> None:
    gen = combinatorial_purged_splits(30, 5, 2)
    assert iter(gen) is gen
    assert len(list(gen)) == 10
    assert len(list(combinatorial_purged_splits(30, 5, 2))) == 10


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        ((10, 1, 1), {}, "n_groups must be >= 2"),
        ((10, 3, 3), {}, "n_test_groups must be smaller than n_groups"),
        ((10, 3, 0), {}, "n_test_groups must be >= 1"),
        ((2, 3, 1), {}, "n must be >= n_groups"),
        ((10, 3, 1), {"purge": -1}, "purge must be >= 0"),
        ((10, 3, 1), {"embargo": 1.5}, "embargo must be an integer"),
        ((30, 3, 1), {"purge": 6, "embargo": 4}, "purge \\+ embargo must be smaller"),
        ((np.float64(10), 3, 1), {}, "n must be an integer"),
        ((10, True, 1), {}, "n_groups must be an integer"),
    ],
)
def test_bad_arguments_raise_at_call(args: tuple, kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        combinatorial_purged_splits(*args, **kwargs)


def test_purged_kfold_bad_arguments() -> None:
    with pytest.raises(ValueError, match="n_groups must be >= 2"):
        purged_kfold(10, 1)
