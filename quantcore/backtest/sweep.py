"""Parameter sweeps of the built-in strategies on the fused kernel."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from quantcore._kernels.backtest import STAT_NAMES
from quantcore._kernels.backtest_signals import signals_1d
from quantcore._kernels.backtest_sweep import (
    N_OPT,
    OPT_FEES,
    OPT_SIZE,
    OPT_SL,
    OPT_TIME,
    OPT_TP,
    OPT_TRAIL,
    run_sweep,
    sweep_signals_nb,
)
from quantcore._kernels.backtest_sweep_stops import stop_grid_nb
from quantcore.backtest.engine import (
    EngineOptions,
    PriceData,
    as_signal,
    close_part,
    first_valid,
    load_prices,
    price_parts,
    simulate,
)
from quantcore.backtest.strategies import Strategy, get_strategy

__all__ = [
    "ENGINE_GRID",
    "SWEEP_METRICS",
    "Grid",
    "OptionGrid",
    "expand_grid",
    "run_chunks",
    "run_signals",
    "sweep",
]

#: Metric columns of a sweep (``final_equity`` included), in order.
SWEEP_METRICS: tuple[str, ...] = STAT_NAMES
#: Engine options a sweep's grid may sweep beside the strategy's parameters.
ENGINE_GRID: tuple[str, ...] = ("sl_stop", "tp_stop", "trail_stop", "time_stop", "fees", "size")


class Grid:
    """A strategy's validated parameter grid: the kernel's (m, 3) array and the labels.

    Attributes
    ----------
    params : ndarray
        (m, 3) float64 ``(p0, p1, p2)`` per admissible combination.
    labels : dict of ndarray
        Each parameter's value per combination, as the user gave it.
    """

    def __init__(self, strategy: Strategy, grid: Mapping[str, Any]) -> None:
        if not isinstance(grid, Mapping):
            raise ValueError(
                f"grid must be a mapping of parameter name to values, got {type(grid).__name__}"
            )
        grid = strategy.resolve(grid)
        axes: list[np.ndarray] = []
        codes: list[np.ndarray] = []
        for p in strategy.params:
            raw = grid.get(p.name, [p.default])
            values = (
                [raw]
                if isinstance(raw, (str, bytes)) or not isinstance(raw, Iterable)
                else list(raw)
            )
            if not values:
                raise ValueError(f"grid[{p.name!r}] is empty")
            codes.append(np.array([p.check(v, p.name) for v in values], dtype=np.float64))
            axes.append(np.array(values, dtype=object if isinstance(values[0], str) else None))
        m_axes = [len(a) for a in axes]
        idx = np.indices(m_axes).reshape(len(m_axes), -1) if m_axes else np.zeros((0, 1), np.int64)
        params = np.zeros((idx.shape[1], 3))
        for d, p in enumerate(strategy.params):
            params[:, p.slot] = codes[d][idx[d]]
        keep = np.ones(idx.shape[1], dtype=bool)
        if strategy.ordered is not None:
            slot = {p.name: p.slot for p in strategy.params}
            lo, hi = strategy.ordered
            keep = params[:, slot[lo]] < params[:, slot[hi]]
            if not keep.any():
                raise ValueError(f"the grid has no combination with {lo} < {hi}")
        self.params = np.ascontiguousarray(params[keep])
        self.labels = {p.name: axes[d][idx[d][keep]] for d, p in enumerate(strategy.params)}

    def __len__(self) -> int:
        return int(self.params.shape[0])


def expand_grid(strategy: str, grid: Mapping[str, Any]) -> Grid:
    """Validate ``grid`` for ``strategy`` and expand it (see :class:`Grid`)."""
    return Grid(get_strategy(strategy), grid)


def _values(raw: Any) -> list[Any]:
    if isinstance(raw, (str, bytes)) or not isinstance(raw, Iterable):
        return [raw]
    return list(raw)


class OptionGrid:
    """The engine options a grid sweeps (:data:`ENGINE_GRID`), validated and expanded.

    Attributes
    ----------
    table : ndarray
        (m, N_OPT) float64: per combination ``sl, tp, trail, time, fees, size``
        (NaN for a stop that is off).
    labels : dict of ndarray
        Each swept option's value per combination.
    """

    def __init__(self, grid: Mapping[str, Any], engine_options: Mapping[str, Any]) -> None:
        axes = {name: _values(grid[name]) for name in ENGINE_GRID if name in grid}
        for name, values in axes.items():
            if not values:
                raise ValueError(f"grid[{name!r}] is empty")
            _check_axis(name, values, engine_options)
        base = EngineOptions(**engine_options)
        names = list(axes)
        shape = [len(axes[n]) for n in names]
        idx = np.indices(shape).reshape(len(shape), -1) if shape else np.zeros((0, 1), np.int64)
        m = idx.shape[1]
        table = np.empty((m, N_OPT))
        sl, tp, trail, time_stop = base.stops()
        table[:, OPT_SL] = sl
        table[:, OPT_TP] = tp
        table[:, OPT_TRAIL] = trail
        table[:, OPT_TIME] = time_stop
        table[:, OPT_FEES] = float(base.fees)
        table[:, OPT_SIZE] = base.size_value
        column = {"sl_stop": OPT_SL, "tp_stop": OPT_TP, "trail_stop": OPT_TRAIL,
                  "time_stop": OPT_TIME, "fees": OPT_FEES, "size": OPT_SIZE}  # fmt: skip
        self.labels: dict[str, np.ndarray] = {}
        for d, name in enumerate(names):
            values = axes[name]
            coded = np.array([np.nan if v is None else float(v) for v in values])
            table[:, column[name]] = coded[idx[d]]
            self.labels[name] = np.array(values, dtype=object if None in values else None)[idx[d]]
        self.table = np.ascontiguousarray(table)
        self.intrabar = base.has_stops or any(
            n in axes for n in ("sl_stop", "tp_stop", "trail_stop", "time_stop")
        )

    def __len__(self) -> int:
        return int(self.table.shape[0])


def _check_axis(name: str, values: list[Any], engine_options: Mapping[str, Any]) -> None:
    """Check every value of a swept option as the engine option it is.

    The numeric options are intervals (``fees`` in [0, 1), stops in (0, 1) or
    above 0, ``size`` up to the leverage), so for plain finite numbers the
    smallest and the largest value (and ``None`` if present) stand for all;
    anything else (``time_stop``'s whole numbers, strings, NaN) is checked value
    by value, so the error names the offending value either way.
    """
    if name != "time_stop":
        numbers = [v for v in values if v is not None]
        arr = np.asarray(numbers)  # plain numbers give a numeric dtype, no per-value loop
        if numbers and arr.dtype.kind in "iuf" and bool(np.isfinite(arr).all()):
            probes: list[Any] = [float(arr.min()), float(arr.max())]
            if len(numbers) < len(values):
                probes.append(None)
            for v in probes:
                EngineOptions(**{**engine_options, name: v})
            return
    for v in values:
        EngineOptions(**{**engine_options, name: v})


def run_chunks(
    code: int,
    data: PriceData,
    params: np.ndarray,
    table: np.ndarray,
    opts: EngineOptions,
    *,
    chunk_size: int,
    progress: bool = False,
) -> np.ndarray:
    """Run the fused kernel over ``params`` (and option rows ``table``) in chunks."""
    o, h, lo, close = data.fortran_ohlc()
    use_open = opts.fill == "next_open"
    first = first_valid(close)
    init, slip, size_type, lev, borrow, direction, integer, ppy = opts.kernel_scalars()
    m = params.shape[0]
    k = close.shape[1]
    out = np.empty((m * k, len(SWEEP_METRICS)))
    bar = _bar(progress, m)
    try:
        for start in range(0, m, chunk_size):
            stop = min(start + chunk_size, m)
            out[start * k : stop * k] = run_sweep(
                code, o, h, lo, close, use_open, first, params[start:stop], table[start:stop],
                init, slip, size_type, lev, borrow, direction, integer, ppy,
            )  # fmt: skip
            if bar is not None:
                bar.update(stop - start)
    finally:
        if bar is not None:
            bar.close()
    return out


def _bar(progress: bool, total: int) -> Any:
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="comb", desc="sweep")


def run_signals(
    data: PriceData, entries: np.ndarray, exits: np.ndarray, table: np.ndarray,
    opts: EngineOptions,
) -> np.ndarray:  # fmt: skip
    """Metrics of one signal set under every option row (row ``c * k + j``).

    Long-only, all-in, fractional, close-filled grids go through
    :func:`~quantcore._kernels.backtest_sweep_stops.stop_grid_nb` (O(log n) per trade, any
    stops); anything else through the per-bar :func:`~quantcore._kernels.backtest_sweep.sweep_signals_nb`.
    """
    o, h, lo, close = data.fortran_ohlc()
    use_open = opts.fill == "next_open"
    if use_open:
        entries = np.vstack([np.zeros((1, entries.shape[1]), np.bool_), entries[:-1]])
        exits = np.vstack([np.zeros((1, exits.shape[1]), np.bool_), exits[:-1]])
    init, slip, size_type, lev, borrow, direction, integer, ppy = opts.kernel_scalars()
    fast = (
        not use_open
        and opts.direction == "long"
        and opts.size_type == "percent"
        and lev == 1.0
        and not integer
        and bool((table[:, OPT_SIZE] >= 1.0).all())
    )
    if fast:
        m, k = table.shape[0], close.shape[1]
        first = first_valid(close)
        out = np.empty((m * k, len(SWEEP_METRICS)))
        sl, tp, trail, ts, fees, size = (
            np.ascontiguousarray(table[:, i])
            for i in (OPT_SL, OPT_TP, OPT_TRAIL, OPT_TIME, OPT_FEES, OPT_SIZE)
        )
        for j in range(k):
            e = np.ascontiguousarray(entries[:, j])
            x = np.ascontiguousarray(exits[:, j])
            out[j::k] = stop_grid_nb(
                np.ascontiguousarray(o[:, j]), np.ascontiguousarray(h[:, j]),
                np.ascontiguousarray(lo[:, j]), np.ascontiguousarray(close[:, j]), int(first[j]),
                e, x, sl, tp, trail, ts, fees, size, init, slip, ppy,
            )  # fmt: skip
        return out
    return sweep_signals_nb(
        o, h, lo, close, use_open, np.asfortranarray(entries), np.asfortranarray(exits), table,
        init, slip, size_type, lev, borrow, direction, integer, ppy,
    )  # fmt: skip


def _frame(
    labels: dict[str, np.ndarray], m: int, assets: list[Any], out: np.ndarray
) -> pd.DataFrame:
    k = len(assets)
    cols: dict[str, Any] = {name: np.repeat(values, k) for name, values in labels.items()}
    codes = np.tile(np.arange(k), m)
    cols["asset"] = pd.Categorical.from_codes(codes, categories=pd.Index(assets))
    by_metric = np.ascontiguousarray(out.T)  # one contiguous column per metric
    for i, name in enumerate(SWEEP_METRICS):
        cols[name] = by_metric[i].astype(np.int64) if name == "total_trades" else by_metric[i]
    return pd.DataFrame(cols, copy=False)


def _user_combos(grid: Mapping[str, Any]) -> tuple[list[dict[str, Any]], dict[str, np.ndarray]]:
    names = list(grid)
    axes = [_values(grid[n]) for n in names]
    for n, values in zip(names, axes, strict=True):
        if not values:
            raise ValueError(f"grid[{n!r}] is empty")
    shape = [len(a) for a in axes]
    idx = np.indices(shape).reshape(len(shape), -1) if shape else np.zeros((0, 1), np.int64)
    combos = [{n: axes[d][idx[d, i]] for d, n in enumerate(names)} for i in range(idx.shape[1])]
    labels = {n: np.array(axes[d], dtype=object)[idx[d]] for d, n in enumerate(names)}
    return combos, labels


def _signal_sets(
    strategy: Any, data: PriceData, closes: Any, grid: Mapping[str, Any], labels_only: bool
) -> tuple[list[tuple[np.ndarray, np.ndarray]] | Grid, dict[str, np.ndarray], int]:
    """Signals per strategy combination: a :class:`Grid` for a built-in (fused
    kernels make them), else the user function's ``(entries, exits)`` per combination."""
    if isinstance(strategy, str):
        g = Grid(get_strategy(strategy), grid)
        return g, g.labels, len(g)
    if not callable(strategy):
        raise ValueError(f"strategy must be a built-in name or a function, got {strategy!r}")
    combos, labels = _user_combos(grid)
    if labels_only:  # the fused kernel computes the signals
        return [], labels, len(combos)
    if _jitted(strategy):  # numba takes arrays, not pandas
        closes = data.close[:, 0] if data.close.shape[1] == 1 else data.close
    n, k = data.close.shape
    sets = []
    for params in combos:
        got = strategy(closes, **params)
        if not (isinstance(got, tuple) and len(got) == 2):
            raise ValueError("a strategy function must return (entries, exits)")
        e, x = got
        e_arr = np.asarray(e.to_numpy() if hasattr(e, "to_numpy") else e)
        width = e_arr.shape[1] if e_arr.ndim == 2 else 1
        shape = (n, max(k, width)) if k == 1 else (n, k)
        sets.append((as_signal(e, "entries", shape), as_signal(x, "exits", shape)))
    return sets, labels, len(combos)


def _jitted(strategy: Any) -> bool:
    """Whether ``strategy`` is a numba ``@njit`` function (a CPU dispatcher)."""
    from numba.core.registry import CPUDispatcher

    return isinstance(strategy, CPUDispatcher)


def _fused_user(
    f: Any, data: PriceData, grid: Mapping[str, Any], table: np.ndarray, opts: EngineOptions
) -> np.ndarray:
    """A jitted strategy's rows from :func:`~quantcore._kernels.backtest_sweep_user.fused_signals_nb`."""
    from quantcore._kernels.backtest_sweep_user import fused_signals_nb, signal_adapter

    combos, _ = _user_combos(grid)
    names = tuple(grid)
    try:
        params = np.array([[float(c[n]) for n in names] for c in combos], dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("a jitted strategy's parameters must be numbers") from None
    params = np.ascontiguousarray(params.reshape(len(combos), len(names)))
    adapter = signal_adapter(f, names)
    o, h, lo, close = data.fortran_ohlc()
    init, slip, size_type, lev, borrow, direction, integer, ppy = opts.kernel_scalars()
    k = close.shape[1]
    out = np.empty((params.shape[0] * table.shape[0] * k, len(SWEEP_METRICS)))
    for j in range(k):
        cj = [np.array(a[:, j], dtype=np.float64) for a in (o, h, lo, close)]  # writable
        out[j::k] = fused_signals_nb(
            adapter, cj[0], cj[1], cj[2], cj[3], opts.fill == "next_open", params, np.ascontiguousarray(table), init,
            slip, size_type, lev, borrow, direction, integer, ppy,
        )  # fmt: skip
    return out


def _combine(
    s_labels: dict[str, np.ndarray], m_s: int, o_labels: dict[str, np.ndarray], m_o: int
) -> dict[str, np.ndarray]:
    """Labels of the strategy-major product of strategy and option combinations."""
    labels = {n: np.repeat(v, m_o) for n, v in s_labels.items()}
    labels.update({n: np.tile(v, m_s) for n, v in o_labels.items()})
    return labels


def sweep(
    prices: Any,
    strategy: str | Callable[..., tuple[Any, Any]],
    grid: Mapping[str, Any],
    *,
    group: str = "column",
    progress: bool = False,
    client: Any = None,
    chunk_size: int | None = None,
    **engine_options: Any,
) -> pd.DataFrame:
    """Backtest every combination of a strategy's grid (and of engine options) on every asset.

    Parameters
    ----------
    prices : Series, DataFrame, ndarray or mapping
        As in :func:`quantcore.backtest.run` (an OHLC frame gives the stops their
        highs and lows); each column is swept on its own (its own initial
        capital), unlike ``run`` where columns share cash.
    strategy : str or callable
        A name in :data:`quantcore.backtest.strategies.STRATEGIES`, or a function
        ``f(close, **params) -> (entries, exits)`` called once per parameter
        combination with the closes as given (a Series, DataFrame or array).
        It may return several signal columns for a one-asset ``prices``.
    grid : mapping
        Parameter name to a list (or range) of values; a scalar is one value. For a
        built-in, missing parameters take their defaults and combinations breaking
        the strategy's order constraint (``short_window < long_window``,
        ``oversold < overbought``) are skipped. The keys of :data:`ENGINE_GRID`
        (``sl_stop``, ``tp_stop``, ``trail_stop``, ``time_stop``, ``fees``,
        ``size``) sweep those engine options (``None`` turns a stop off).
    group : {"column", "portfolio"}, default "column"
        For a function returning several signal columns on one asset: each column
        its own backtest on its own capital (one row per column), or all columns
        one portfolio sharing cash (one row per combination, ``asset`` 0).
    progress : bool, default False
        Show a tqdm progress bar (``tqdm.auto``: works in notebooks).
    client : dask.distributed.Client, optional
        Run the chunks on the cluster's workers instead of local cores (built-in
        strategies).
    chunk_size : int, optional
        Combinations per kernel call (default: the whole grid; with ``progress``
        about 1% of it, at least 1,000; with a client, about four chunks per
        worker thread).
    **engine_options
        The options of :func:`quantcore.backtest.run` but ``benchmark``.

    Returns
    -------
    DataFrame
        One row per combination and asset (strategy parameters outermost, then
        engine options, then assets): the parameters, the swept options,
        ``asset`` (categorical: the column labels, or 0..k-1 for arrays; the
        signal column for a function's columns) and :data:`SWEEP_METRICS`.

    Notes
    -----
    A built-in strategy without swept options runs one fused pass per row
    (indicator, signals, simulation and online metrics), parallel over rows;
    ``moving_average`` with ``fill="close"``, ``direction="long"``, percent size
    ``>= 1``, ``leverage=1``, fractional shares and no stop takes a fast path
    (:mod:`quantcore._kernels.backtest_sweep_fast`): per asset, the averages of the grid's
    distinct windows, return prefix sums and range structures are built once; a
    combination then costs one crossing scan and O(log n) per trade. With swept
    options, the signals of each strategy combination are computed once and
    every option row runs on them in parallel, skipping flat stretches. Memory is
    O(rows + bars x assets), never rows x bars. A row equals
    :func:`quantcore.backtest.run_strategy` (or :func:`~quantcore.backtest.run`
    on the function's signals) with its parameters on that asset alone (to
    1e-12; on the fast path Sharpe and Sortino of a near-zero mean return agree
    to ~1e-15 absolute instead).

    Examples
    --------
    >>> close = 100.0 + np.sin(np.arange(200) / 7.0) * 10.0
    >>> table = sweep(close, "moving_average", {"short_window": [2, 5], "long_window": [10, 20]})
    >>> table[["short_window", "long_window", "total_trades"]].shape
    (4, 3)
    """
    engine_names = set(EngineOptions.__dataclass_fields__)
    unknown = set(engine_options) - engine_names
    if unknown:
        raise ValueError(f"unknown engine option(s): {', '.join(sorted(unknown))}")
    if group not in ("column", "portfolio"):
        raise ValueError(f"group must be 'column' or 'portfolio', got {group!r}")
    if not isinstance(grid, Mapping):
        raise ValueError(
            f"grid must be a mapping of parameter name to values, got {type(grid).__name__}"
        )
    opts = EngineOptions(**engine_options)
    options = OptionGrid(grid, engine_options)
    strategy_grid = {k: v for k, v in grid.items() if k not in ENGINE_GRID}
    if chunk_size is not None and (
        isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1
    ):
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    parts = price_parts(prices)
    data = load_prices(parts, opts.fill, allow_gaps=False, intrabar=options.intrabar)
    fused = _jitted(strategy) and group == "column" and client is None
    sets, s_labels, m_s = _signal_sets(strategy, data, close_part(parts), strategy_grid, fused)
    m_o = len(options)
    labels = _combine(s_labels, m_s, options.labels, m_o)
    w = data.wrapper
    if w.kind == "frame" and w.columns is not None:
        assets: Any = list(w.columns)
    elif w.kind == "series" and w.name is not None:
        assets = [w.name]
    else:
        assets = list(range(data.close.shape[1]))
    if fused:
        out = _fused_user(strategy, data, strategy_grid, options.table, opts)
        return _frame(labels, m_s * m_o, assets, out)
    if isinstance(sets, Grid):
        code = get_strategy(strategy).code
        if client is None and m_o > 1:
            out = _per_signal_set(data, sets.params, code, options.table, opts)
        else:
            params = np.repeat(sets.params, m_o, axis=0)
            table = np.tile(options.table, (m_s, 1))
            if client is not None:
                from quantcore.backtest.distributed import run_on_client

                out = run_on_client(
                    client, code, data, params, table, opts, chunk_size=chunk_size,
                    progress=progress,
                )  # fmt: skip
            else:
                m = params.shape[0]
                size = chunk_size or (max(1000, -(-m // 100)) if progress else m)
                out = run_chunks(
                    code, data, params, table, opts, chunk_size=size, progress=progress
                )
        return _frame(labels, m_s * m_o, assets, out)
    return _user_sweep(data, sets, options.table, opts, group, labels, m_s * m_o, assets)


def _per_signal_set(
    data: PriceData, params: np.ndarray, code: int, table: np.ndarray, opts: EngineOptions
) -> np.ndarray:
    """A built-in's signals per strategy combination, then every option row on them."""
    close = data.close
    first = first_valid(close)
    n, k = close.shape
    parts = []
    for p0, p1, p2 in params:
        entries = np.zeros((n, k), dtype=np.bool_)
        exits = np.zeros((n, k), dtype=np.bool_)
        for j in range(k):
            col = np.array(close[:, j], dtype=np.float64)  # writable: one type per argument
            entries[:, j], exits[:, j] = signals_1d(code, col, int(first[j]), p0, p1, p2)
        parts.append(run_signals(data, entries, exits, table, opts))
    return np.vstack(parts)


def _user_sweep(
    data: PriceData, sets: list[tuple[np.ndarray, np.ndarray]], table: np.ndarray,
    opts: EngineOptions, group: str, labels: dict[str, np.ndarray], m: int, assets: list[Any],
) -> pd.DataFrame:  # fmt: skip
    """Rows of a function strategy: per column (own capital) or one shared-cash portfolio."""
    parts = []
    width = sets[0][0].shape[1] if sets else data.close.shape[1]
    if any(e.shape[1] != width for e, _ in sets):
        raise ValueError("a strategy function must return the same number of columns each time")
    one_asset = data.close.shape[1] == 1 and width > 1
    if one_asset:

        def wide(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else np.repeat(a, width, axis=1)

        data = PriceData(
            np.repeat(data.close, width, axis=1), wide(data.open), data.wrapper, wide(data.high),
            wide(data.low),
        )  # fmt: skip
        assets = list(range(width))
    if group == "portfolio":
        from quantcore._kernels.backtest import equity_stats_nb
        from quantcore._records import TRADE_CLOSED

        for e, x in sets:
            for row in table:
                row_opts = _with_row(opts, row)
                equity, positions, trades = simulate(data, e, x, row_opts)
                parts.append(equity_stats_nb(
                    equity, (positions != 0.0).any(axis=1), trades["pnl"].copy(),
                    trades["status"] == TRADE_CLOSED, float(opts.initial_capital),
                    float(opts.periods_per_year),
                )[None, :])  # fmt: skip
        return _frame(labels, m, [0], np.vstack(parts))
    for e, x in sets:
        parts.append(run_signals(data, e, x, table, opts))
    return _frame(labels, m, assets, np.vstack(parts))


def _with_row(opts: EngineOptions, row: np.ndarray) -> EngineOptions:
    """``opts`` with one option row of :class:`OptionGrid` put back as engine options."""
    from dataclasses import replace

    def stop(v: float) -> float | None:
        return None if np.isnan(v) else float(v)

    ts = row[OPT_TIME]
    return replace(
        opts, sl_stop=stop(row[OPT_SL]), tp_stop=stop(row[OPT_TP]),
        trail_stop=stop(row[OPT_TRAIL]), time_stop=None if np.isnan(ts) else int(ts),
        fees=float(row[OPT_FEES]), size=float(row[OPT_SIZE]),
    )  # fmt: skip
