"""Sweeps on a Dask cluster: the fused kernel runs on the workers, chunk by chunk.

Point :func:`quantcore.backtest.sweep` at any ``dask.distributed.Client``::

    from dask.distributed import Client
    client = Client("tcp://scheduler-host:8786")   # or Client(LocalCluster(...))
    table = qc.backtest.sweep(prices, "moving_average", grid, client=client)

The workers need ``quantcore`` (and numba) installed in the same version as the
client. Prices are scattered once to every worker; each task sweeps a slice of
the parameter grid and sends back only its metric rows, so the traffic is
O(combinations). Chunks are gathered in grid order, so the table is identical
to the local run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from quantcore._kernels.backtest import N_STATS
from quantcore.backtest.engine import EngineOptions, PriceData, first_valid

__all__ = ["run_on_client", "sweep_chunk"]


def sweep_chunk(
    code: int,
    close: np.ndarray,
    open_: np.ndarray,
    use_open: bool,
    params: np.ndarray,
    kernel_args: tuple[float, float, float, float, int, bool],
    periods_per_year: float,
) -> np.ndarray:
    """One task on a worker: the fused kernel on a slice of the grid."""
    from quantcore._kernels.sweep import sweep_nb

    first = first_valid(close)
    init, fees, slip, mps, direction, integer = kernel_args
    return sweep_nb(
        code, np.asfortranarray(close), np.asfortranarray(open_), use_open, first, params,
        init, fees, slip, mps, direction, integer, periods_per_year,
    )  # fmt: skip


def run_on_client(
    client: Any,
    code: int,
    data: PriceData,
    params: np.ndarray,
    opts: EngineOptions,
    *,
    chunk_size: int | None = None,
    progress: bool = False,
) -> np.ndarray:
    """Split ``params`` into chunks, run them on ``client``'s workers, stack in order."""
    if not hasattr(client, "submit") or not hasattr(client, "scatter"):
        raise ValueError(f"client must be a dask.distributed.Client, got {type(client).__name__}")
    from dask.distributed import as_completed

    m = params.shape[0]
    if chunk_size is None:
        threads = max(1, sum(client.nthreads().values()))
        chunk_size = max(1, -(-m // (4 * threads)))
    use_open = opts.fill == "next_open"
    close = np.asfortranarray(data.close)
    open_ = np.asfortranarray(data.open) if use_open and data.open is not None else close
    close_f, open_f = client.scatter([close, open_], broadcast=True)
    args = (opts.kernel_args(), float(opts.periods_per_year))
    futures = [
        client.submit(
            sweep_chunk,
            code,
            close_f,
            open_f,
            use_open,
            params[s : s + chunk_size],
            *args,
            pure=False,
        )
        for s in range(0, m, chunk_size)
    ]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=m, unit="comb", desc="sweep (dask)")
    try:
        sizes = {f.key: min(chunk_size, m - i * chunk_size) for i, f in enumerate(futures)}
        for fut in as_completed(futures):
            if fut.status == "error":
                fut.result()  # re-raises the worker's exception here
            if bar is not None:
                bar.update(sizes[fut.key])
        parts = client.gather(futures)
    finally:
        if bar is not None:
            bar.close()
    return np.vstack(parts) if parts else np.empty((0, N_STATS))
