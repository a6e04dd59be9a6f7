"""Out-of-sample validation: walk-forward optimisation and purged (combinatorial) CV splits.

López de Prado's purged k-fold and combinatorial purged cross-validation (CPCV),
*Advances in Financial Machine Learning* (2018), chapters 7 and 12. Observations
are cut into contiguous groups; each split tests some groups and trains on the
rest, minus the observations next to a test block whose labels could overlap it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from quantcore._validation import as_float64_2d, check_int

__all__ = ["WalkForwardResult", "combinatorial_purged_splits", "purged_kfold", "walk_forward"]

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


@dataclass(frozen=True, slots=True)
class WalkForwardResult:
    """Out-of-sample record of a walk-forward optimisation (see :func:`walk_forward`).

    Attributes
    ----------
    windows : DataFrame
        One row per window: ``train_start``, ``train_end``, ``test_start``,
        ``test_end`` (index labels, ends inclusive), the chosen parameters,
        ``in_sample`` and ``out_of_sample`` (the metric on each side) and
        ``test_return`` (the test window's total return).
    equity : Series or ndarray
        The test windows' equity curves chained: each window starts with the
        equity the previous one ended with (the first with the initial capital).
    metrics : dict
        :data:`quantcore.backtest.METRIC_NAMES` metrics of the stitched equity
        that depend on the curve alone (returns, Sharpe, Sortino, drawdown).
    """

    windows: pd.DataFrame
    equity: Any
    metrics: dict[str, float]


def _window_bounds(n: int, train: int, test: int, step: int) -> list[tuple[int, int, int]]:
    bounds = []
    start = 0
    while start + train < n:
        bounds.append((start, start + train, min(start + train + test, n)))
        start += step
    return bounds


def walk_forward(
    prices: Any,
    strategy: Any,
    grid: Mapping[str, Any],
    *,
    train: int,
    test: int,
    step: int | None = None,
    metric: str = "sharpe_ratio",
    **options: Any,
) -> WalkForwardResult:
    """Optimise on rolling train windows, trade the choice on the windows after.

    Parameters
    ----------
    prices : Series, one-column DataFrame or 1-D array
        Closes of one asset.
    strategy : str or callable
        What :func:`quantcore.backtest.sweep` accepts: a built-in strategy name
        (or a function ``f(close, **params) -> (entries, exits)``).
    grid : mapping
        The parameter grid of :func:`~quantcore.backtest.sweep`.
    train, test : int
        Bars in each train and test window.
    step : int, optional
        Bars between window starts; default ``test`` (test windows tile the
        history). Must be >= ``test`` so test windows never overlap.
    metric : str, default "sharpe_ratio"
        The sweep column maximised in sample (a name in both
        :data:`~quantcore.backtest.SWEEP_METRICS` and
        :data:`~quantcore.backtest.METRIC_NAMES`).
    **options
        Engine options for both sides (``fees``, ``slippage``,
        ``initial_capital``, ...).

    Returns
    -------
    WalkForwardResult

    Notes
    -----
    Window ``i`` trains on bars ``[i step, i step + train)`` and tests on the
    ``test`` bars after (the last test window may be shorter). The in-sample
    choice is the grid row with the highest ``metric`` (NaN rows never win; the
    first row on ties or when all are NaN). Out of sample, the strategy's
    signals are computed on all bars up to the test window's end (indicators
    are causal: they warm up on the bars before the window, never look ahead),
    and the window is backtested on its own, starting flat.

    Examples
    --------
    >>> close = pd.Series(100 + 10 * np.sin(np.arange(600) / 20.0),
    ...                   index=pd.bdate_range("2020-01-01", periods=600))
    >>> wf = walk_forward(close, "moving_average",
    ...                   {"short_window": [5, 10], "long_window": [20, 40]},
    ...                   train=250, test=100)
    >>> len(wf.windows), len(wf.equity)
    (4, 350)
    >>> list(wf.windows.columns[4:])
    ['short_window', 'long_window', 'ma_type', 'in_sample', 'out_of_sample', 'test_return']
    """
    import quantcore.backtest.strategies as builtins
    from quantcore.backtest.engine import EngineOptions, run
    from quantcore.backtest.result import METRIC_NAMES
    from quantcore.backtest.sweep import SWEEP_METRICS, sweep

    close, wrapper = as_float64_2d(prices, "prices")
    if close.shape[1] != 1:
        raise ValueError(f"walk_forward takes one asset's closes, got {close.shape[1]} columns")
    n = close.shape[0]
    train = check_int(train, "train", minimum=2)
    test = check_int(test, "test")
    step = test if step is None else check_int(step, "step")
    if step < test:
        raise ValueError(
            f"step must be >= test ({test}) so test windows do not overlap, got {step}"
        )
    if train + 1 > n:
        raise ValueError(f"train ({train}) leaves no bar to test in {n} bars")
    allowed = [m for m in SWEEP_METRICS if m in METRIC_NAMES]
    if metric not in allowed:
        raise ValueError(f"metric must be one of {', '.join(allowed)}, got {metric!r}")
    engine_names = set(EngineOptions.__dataclass_fields__)
    unknown = set(options) - engine_names
    if unknown:
        raise ValueError(f"unknown engine option(s): {', '.join(sorted(unknown))}")
    if callable(strategy):
        signals = strategy
    else:
        signals = getattr(builtins, builtins.get_strategy(strategy).name)
    series = pd.Series(close[:, 0], index=wrapper.index)
    capital = float(options.get("initial_capital", 100_000.0))
    rows: list[dict[str, Any]] = []
    curves: list[np.ndarray] = []
    for start, mid, stop in _window_bounds(n, train, test, step):
        table = sweep(series.iloc[start:mid], strategy, grid, **options)
        values = table[metric].to_numpy(dtype=np.float64)
        best = int(np.nanargmax(values)) if np.isfinite(values).any() else 0
        names = [c for c in table.columns if c not in SWEEP_METRICS and c != "asset"]
        chosen = {c: _scalar(table[c].iloc[best]) for c in names}
        strat_params = {k: v for k, v in chosen.items() if k not in engine_names}
        engine_params = {k: v for k, v in chosen.items() if k in engine_names}
        entries, exits = signals(series.iloc[:stop], **strat_params)
        ent = np.asarray(entries, dtype=bool).reshape(stop, -1)[mid:stop]
        ext = np.asarray(exits, dtype=bool).reshape(stop, -1)[mid:stop]
        res = run(
            close[mid:stop, 0], ent, ext, **{**options, **engine_params, "initial_capital": capital}
        )
        curve = np.asarray(res.equity, dtype=np.float64)
        rows.append(
            {
                "train_start": _label(wrapper.index, start),
                "train_end": _label(wrapper.index, mid - 1),
                "test_start": _label(wrapper.index, mid),
                "test_end": _label(wrapper.index, stop - 1),
                **chosen,
                "in_sample": float(values[best]),
                "out_of_sample": float(getattr(res, metric)),
                "test_return": float(res.total_return),
            }
        )
        curves.append(curve)
        capital = float(curve[-1])
    equity = np.concatenate(curves)
    covered = np.concatenate(
        [np.arange(mid, stop) for _, mid, stop in _window_bounds(n, train, test, step)]
    )
    stats = _curve_metrics(equity, float(options.get("initial_capital", 100_000.0)), options)
    out_equity: Any = (
        pd.Series(equity, index=wrapper.index[covered], name="equity")
        if wrapper.index is not None
        else equity
    )
    return WalkForwardResult(pd.DataFrame(rows), out_equity, stats)


def _curve_metrics(equity: np.ndarray, init: float, options: Mapping[str, Any]) -> dict[str, float]:
    from quantcore._kernels.backtest import STAT_NAMES, equity_stats_nb

    ppy = float(options.get("periods_per_year", 252.0))
    row = equity_stats_nb(
        equity, np.ones(equity.shape[0], dtype=np.bool_), np.empty(0),
        np.empty(0, dtype=np.bool_), init, ppy,
    )  # fmt: skip
    keep = ("total_return", "annualized_return", "sharpe_ratio", "sortino_ratio", "max_drawdown")
    return {name: float(row[STAT_NAMES.index(name)]) for name in keep}


def _scalar(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _label(index: pd.Index | None, i: int) -> Any:
    return i if index is None else index[i]
