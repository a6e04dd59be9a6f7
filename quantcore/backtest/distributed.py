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
    arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    use_open: bool,
    params: np.ndarray,
    table: np.ndarray,
    scalars: tuple[float, float, int, float, float, int, bool, float],
) -> np.ndarray:
    """One task on a worker: the fused kernel on a slice of the grid."""
    from quantcore._kernels.backtest_sweep import run_sweep

    o, h, lo, close = arrays
    first = first_valid(close)
    return run_sweep(code, o, h, lo, close, use_open, first, params, table, *scalars)


def run_on_client(
    client: Any,
    code: int,
    data: PriceData,
    params: np.ndarray,
    table: np.ndarray,
    opts: EngineOptions,
    *,
    chunk_size: int | None = None,
    progress: bool = False,
) -> np.ndarray:
    """Split ``params`` (and option rows ``table``) into chunks, run them on ``client``'s workers, stack in order."""
    if not hasattr(client, "submit") or not hasattr(client, "scatter"):
        raise ValueError(f"client must be a dask.distributed.Client, got {type(client).__name__}")
    from dask.distributed import as_completed

    m = params.shape[0]
    if chunk_size is None:
        threads = max(1, sum(client.nthreads().values()))
        chunk_size = max(1, -(-m // (4 * threads)))

    use_open = opts.fill == "next_open"
    arrays = client.scatter(data.fortran_ohlc(), broadcast=True)
    futures = [
        client.submit(
            sweep_chunk,
            code,
            arrays,
            use_open,
            params[s : s + chunk_size],
            table[s : s + chunk_size],
            opts.kernel_scalars(),
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
