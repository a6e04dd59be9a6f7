"""Out-of-sample validation: purged (combinatorial) cross-validation splits.

López de Prado's purged k-fold and combinatorial purged cross-validation (CPCV),
*Advances in Financial Machine Learning* (2018), chapters 7 and 12. Observations
are cut into contiguous groups; each split tests some groups and trains on the
rest, minus the observations next to a test block whose labels could overlap it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np

from quantcore._validation import check_int

__all__ = ["combinatorial_purged_splits", "purged_kfold"]

Split = tuple[np.ndarray, np.ndarray]


def combinatorial_purged_splits(
    n: int, n_groups: int, n_test_groups: int, *, purge: int = 0, embargo: int = 0
) -> Iterator[Split]:
    """Yield the ``(train_index, test_index)`` pairs of combinatorial purged CV.

    Parameters
    ----------
    n : int
        Number of observations (rows, in time order).
    n_groups : int
        Number of contiguous groups, at least 2. Each holds ``n // n_groups``
        observations; the last one also takes the remainder.
    n_test_groups : int
        Groups tested per split, in ``[1, n_groups)``; there are
        ``comb(n_groups, n_test_groups)`` splits, in ``itertools.combinations``
        order of the test groups.
    purge : int, default 0
        Training observations dropped on each side of every test block: the
        ``purge`` rows just before it and the ``purge`` rows just after it.
    embargo : int, default 0
        Further training observations dropped after every test block (after the
        purged ones).

    Yields
    ------
    train_index, test_index : ndarray of intp
        Sorted row positions. ``test_index`` concatenates the test groups.

    Raises
    ------
    ValueError
        For a non-integer or out-of-range argument, or ``purge + embargo`` not
        smaller than the group size ``n // n_groups``.

    Notes
    -----
    A test block is a maximal run of adjacent test groups; rows between two
    adjacent test groups are never purged. The splits equal skfolio's
    ``CombinatorialPurgedCV(n_folds=n_groups, n_test_folds=n_test_groups,
    purged_size=purge, embargo_size=embargo)`` (its test folds concatenated),
    which accepts ``n_test_groups >= 2`` and ``purge + embargo < n // n_groups - 1``.

    References
    ----------
    M. López de Prado, *Advances in Financial Machine Learning*, Wiley (2018),
    sections 7.4 (purging, embargo) and 12.4 (combinatorial purged CV).

    Examples
    --------
    >>> for train, test in combinatorial_purged_splits(12, 3, 2, purge=1):
    ...     print(train, test)
    [ 9 10 11] [0 1 2 3 4 5 6 7]
    [5 6] [ 0  1  2  3  8  9 10 11]
    [0 1 2] [ 4  5  6  7  8  9 10 11]
    """
    n = check_int(n, "n")
    n_groups = check_int(n_groups, "n_groups", minimum=2)
    n_test_groups = check_int(n_test_groups, "n_test_groups")
    purge = check_int(purge, "purge", minimum=0)
    embargo = check_int(embargo, "embargo", minimum=0)
    if n_test_groups >= n_groups:
        raise ValueError(
            f"n_test_groups must be smaller than n_groups ({n_groups}), got {n_test_groups}"
        )
    if n < n_groups:
        raise ValueError(f"n must be >= n_groups ({n_groups}), got {n}")
    size = n // n_groups
    if purge + embargo >= size:
        raise ValueError(
            f"purge + embargo must be smaller than the group size n // n_groups = {size}, "
            f"got {purge} + {embargo}"
        )
    return _splits(n, n_groups, n_test_groups, size, purge, embargo)


def _splits(
    n: int, n_groups: int, n_test_groups: int, size: int, purge: int, embargo: int
) -> Iterator[Split]:
    starts = np.arange(n_groups) * size
    stops = starts + size
    stops[-1] = n
    for combo in itertools.combinations(range(n_groups), n_test_groups):
        tested = set(combo)
        train = np.ones(n, dtype=bool)
        for g in combo:
            train[starts[g] : stops[g]] = False
            if g > 0 and g - 1 not in tested:
                train[max(0, starts[g] - purge) : starts[g]] = False
            if g < n_groups - 1 and g + 1 not in tested:
                train[stops[g] : stops[g] + purge + embargo] = False
        test = np.concatenate([np.arange(starts[g], stops[g]) for g in combo])
        yield np.flatnonzero(train), test


def purged_kfold(n: int, n_splits: int, *, purge: int = 0, embargo: int = 0) -> Iterator[Split]:
    """Yield the ``(train_index, test_index)`` pairs of purged k-fold CV.

    Exactly :func:`combinatorial_purged_splits` with one test group: split ``i``
    tests group ``i`` of ``n_splits`` contiguous groups.

    Parameters
    ----------
    n : int
        Number of observations.
    n_splits : int
        Number of folds, at least 2.
    purge, embargo : int, default 0
        As in :func:`combinatorial_purged_splits`.

    Yields
    ------
    train_index, test_index : ndarray of intp

    Examples
    --------
    >>> [test.tolist() for _, test in purged_kfold(6, 3)]
    [[0, 1], [2, 3], [4, 5]]
    >>> [train.tolist() for train, _ in purged_kfold(9, 3, purge=1, embargo=1)]
    [[5, 6, 7, 8], [0, 1, 8], [0, 1, 2, 3, 4]]
    """
    return combinatorial_purged_splits(n, n_splits, 1, purge=purge, embargo=embargo)
