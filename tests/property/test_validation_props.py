"""Invariants of the purged splits against a plain-Python twin of the purging rule.

The twin states the rule by distance instead of by blocks: a non-test row ``i`` is
dropped from training when some test row ``j`` lies ``1..purge`` rows after it,
or ``1..purge + embargo`` rows before it.
"""

from __future__ import annotations

import itertools
import math

from hypothesis import given, settings
from hypothesis import strategies as hs

from quantcore.backtest import combinatorial_purged_splits


def _twin(n: int, g: int, t: int, purge: int, embargo: int) -> list[tuple[list, list]]:
    size = n // g
    group = [min(i // size, g - 1) for i in range(n)]
    out = []
    for combo in itertools.combinations(range(g), t):
        test = [i for i in range(n) if group[i] in combo]
        tested = set(test)
        train = [
            i
            for i in range(n)
            if i not in tested
            and not any(i + d in tested for d in range(1, purge + 1))
            and not any(i - d in tested for d in range(1, purge + embargo + 1))
        ]
        out.append((train, test))
    return out


@hs.composite
def configs(draw: hs.DrawFn) -> tuple[int, int, int, int, int]:
    g = draw(hs.integers(2, 7))
    t = draw(hs.integers(1, g - 1))
    n = draw(hs.integers(g, 150))
    room = n // g - 1
    purge = draw(hs.integers(0, room))
    embargo = draw(hs.integers(0, room - purge))
    return n, g, t, purge, embargo


@settings(max_examples=300, deadline=None)
@given(configs())
def test_equal_to_twin(cfg: tuple[int, int, int, int, int]) -> None:
    ours = [(a.tolist(), b.tolist()) for a, b in combinatorial_purged_splits(
        cfg[0], cfg[1], cfg[2], purge=cfg[3], embargo=cfg[4])]  # fmt: skip
    assert ours == _twin(*cfg)


@settings(max_examples=200, deadline=None)
@given(configs())
def test_partition_and_coverage(cfg: tuple[int, int, int, int, int]) -> None:
    n, g, t, purge, embargo = cfg
    seen = [0] * n
    splits = list(combinatorial_purged_splits(n, g, t, purge=purge, embargo=embargo))
    assert len(splits) == math.comb(g, t)
    for train, test in splits:
        assert not set(train.tolist()) & set(test.tolist())
        assert (train[1:] > train[:-1]).all() and (test[1:] > test[:-1]).all()
        # without purging the two sets cover every row
        dropped = n - len(train) - len(test)
        assert dropped >= 0
        assert (dropped == 0) or purge + embargo > 0
        for i in test.tolist():
            seen[i] += 1
    # every row is tested in comb(g - 1, t - 1) splits
    assert seen == [math.comb(g - 1, t - 1)] * n


@settings(max_examples=100, deadline=None)
@given(configs())
def test_more_purge_never_adds_training_rows(cfg: tuple[int, int, int, int, int]) -> None:
    n, g, t, purge, embargo = cfg
    if purge + embargo + 1 >= n // g:
        return
    for (a, _), (b, _) in zip(
        combinatorial_purged_splits(n, g, t, purge=purge, embargo=embargo),
        combinatorial_purged_splits(n, g, t, purge=purge, embargo=embargo + 1),
        strict=True,
    ):
        assert set(b.tolist()) <= set(a.tolist())
