"""Parameter sweeps of the built-in strategies on the fused kernel."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from quantcore._kernels.backtest import STAT_NAMES
from quantcore._kernels.sweep import sweep_nb
from quantcore.backtest.engine import EngineOptions, PriceData, first_valid, load_prices
from quantcore.backtest.strategies import Strategy, get_strategy

__all__ = ["SWEEP_METRICS", "Grid", "expand_grid", "run_chunks", "sweep"]

#: Metric columns of a sweep (``final_equity`` included), in order.
SWEEP_METRICS: tuple[str, ...] = STAT_NAMES


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
        strategy.check_names(grid)
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


def run_chunks(
    code: int,
    data: PriceData,
    params: np.ndarray,
    opts: EngineOptions,
    *,
    chunk_size: int,
    progress: bool = False,
) -> np.ndarray:
    """Run the fused kernel over ``params`` in chunks (for the progress bar)."""
    close = np.asfortranarray(data.close)
    use_open = opts.fill == "next_open"
    open_ = np.asfortranarray(data.open) if use_open and data.open is not None else close
    first = first_valid(close)
    init, fees, slip, mps, direction, integer = opts.kernel_args()
    m = params.shape[0]
    out = np.empty((m * close.shape[1], len(SWEEP_METRICS)))
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=m, unit="comb", desc="sweep")
    try:
        for start in range(0, m, chunk_size):
            stop = min(start + chunk_size, m)
            k = close.shape[1]
            out[start * k : stop * k] = sweep_nb(
                code, close, open_, use_open, first, params[start:stop], init, fees, slip,
                mps, direction, integer, float(opts.periods_per_year),
            )  # fmt: skip
            if bar is not None:
                bar.update(stop - start)
    finally:
        if bar is not None:
            bar.close()
    return out


def _frame(grid: Grid, assets: pd.Index | list[Any], out: np.ndarray) -> pd.DataFrame:
    k = len(assets)
    cols: dict[str, Any] = {name: np.repeat(values, k) for name, values in grid.labels.items()}
    codes = np.tile(np.arange(k), len(grid))
    cols["asset"] = pd.Categorical.from_codes(codes, categories=pd.Index(assets))
    by_metric = np.ascontiguousarray(out.T)  # one contiguous column per metric
    for i, name in enumerate(SWEEP_METRICS):
        cols[name] = by_metric[i].astype(np.int64) if name == "total_trades" else by_metric[i]
    return pd.DataFrame(cols, copy=False)


def sweep(
    prices: Any,
    strategy: str,
    grid: Mapping[str, Any],
    *,
    progress: bool = False,
    client: Any = None,
    chunk_size: int | None = None,
    **engine_options: Any,
) -> pd.DataFrame:
    """Backtest every combination of a strategy's parameter grid on every asset.

    Parameters
    ----------
    prices : Series, DataFrame, ndarray or mapping
        As in :func:`quantcore.backtest.run`; each column is swept on its own
        (its own initial capital), unlike ``run`` where columns share cash.
    strategy : str
        A name in :data:`quantcore.backtest.strategies.STRATEGIES`.
    grid : mapping
        Parameter name to a list (or range) of values; a scalar is one value;
        missing parameters take their defaults. Combinations breaking the
        strategy's order constraint (``short_window < long_window``,
        ``oversold < overbought``) are skipped.
    progress : bool, default False
        Show a tqdm progress bar (``tqdm.auto``: works in notebooks).
    client : dask.distributed.Client, optional
        Run the chunks on the cluster's workers instead of local cores.
    chunk_size : int, optional
        Combinations per kernel call (default: the whole grid; with ``progress``
        about 1% of it, at least 1,000; with a client, about four chunks per
        worker thread).
    **engine_options
        ``initial_capital``, ``fees``, ``slippage``, ``max_position_size``,
        ``fill``, ``direction``, ``integer_shares``, ``periods_per_year``.

    Returns
    -------
    DataFrame
        One row per combination and asset (combination-major): the parameters,
        ``asset`` (categorical: the column labels, or 0..k-1 for arrays) and
        :data:`SWEEP_METRICS`.

    Notes
    -----
    Each row is computed by one fused pass (indicator, signals, simulation and
    online metrics), parallel over rows; memory is O(rows), never rows x bars.
    ``moving_average`` with ``fill="close"``, ``direction="long"``,
    ``max_position_size=1`` and fractional shares takes a fast path
    (:mod:`quantcore._kernels.sweep_fast`): per asset, the averages of the
    grid's distinct windows, return prefix sums and range structures are built
    once; a combination then costs one crossing scan and O(log n) per trade.
    A row equals :func:`quantcore.backtest.run_strategy` with its parameters on
    that asset alone (to 1e-12; on the fast path Sharpe and Sortino of a
    near-zero mean return agree to ~1e-15 absolute instead).

    Examples
    --------
    >>> close = 100.0 + np.sin(np.arange(200) / 7.0) * 10.0
    >>> table = sweep(close, "moving_average", {"short_window": [2, 5], "long_window": [10, 20]})
    >>> table[["short_window", "long_window", "total_trades"]].shape
    (4, 3)
    """
    spec = get_strategy(strategy)
    unknown = set(engine_options) - set(EngineOptions.__dataclass_fields__)
    if unknown:
        raise ValueError(f"unknown engine option(s): {', '.join(sorted(unknown))}")
    opts = EngineOptions(**engine_options)
    g = Grid(spec, grid)
    data = load_prices(prices, opts.fill, allow_gaps=False)
    if chunk_size is not None and (
        isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1
    ):
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    w = data.wrapper
    if w.kind == "frame" and w.columns is not None:
        assets: Any = list(w.columns)
    elif w.kind == "series" and w.name is not None:
        assets = [w.name]
    else:
        assets = list(range(data.close.shape[1]))
    if client is not None:
        from quantcore.backtest.distributed import run_on_client

        out = run_on_client(
            client, spec.code, data, g.params, opts, chunk_size=chunk_size, progress=progress
        )
    else:
        size = chunk_size or (max(1000, -(-len(g) // 100)) if progress else len(g))
        out = run_chunks(spec.code, data, g.params, opts, chunk_size=size, progress=progress)
    return _frame(g, assets, out)
