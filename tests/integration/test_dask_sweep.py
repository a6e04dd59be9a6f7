"""The Dask path: chunks on a LocalCluster of two worker processes equal the local sweep."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from quantcore.backtest import sweep
from tests.conftest import require_oracle

distributed = require_oracle("dask.distributed")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None
    )
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_dask_sweep_equals_local(client, goog: pd.DataFrame) -> None:
    grid = {
        "short_window": range(5, 30, 3),
        "long_window": range(20, 60, 8),
        "ma_type": ["sma", "ema"],
    }
    options = {"fees": 0.001, "slippage": 0.0005, "fill": "next_open", "direction": "both"}
    local = sweep(goog, "moving_average", grid, **options)
    remote = sweep(goog, "moving_average", grid, client=client, chunk_size=17, **options)
    pd.testing.assert_frame_equal(local, remote)
    workers = client.run(lambda: 1)
    assert len(workers) == 2


def test_dask_errors_reach_the_caller(client) -> None:
    with pytest.raises(ValueError, match=r"client must be a dask\.distributed\.Client"):
        sweep(np.arange(1.0, 100.0), "momentum", {"window": [3]}, client=object())
