"""``max_position_size``, the percent size's earlier name, keeps working everywhere."""

import numpy as np
import pytest

from quantcore.backtest import run, run_strategy, sweep


def test_max_position_size_is_the_percent_size() -> None:
    close = np.array([10.0, 11.0, 12.0, 11.0, 13.0])
    entries = [True, False, False, False, False]
    exits = [False, False, True, False, False]
    a = run(close, entries, exits, max_position_size=0.5)
    b = run(close, entries, exits, size=0.5)
    assert np.array_equal(np.asarray(a.equity), np.asarray(b.equity))
    # Half of 100,000 bought at 10 and sold at 12: a 10 % gain on the whole account.
    assert a.total_return == pytest.approx(0.1, abs=1e-12)
    with pytest.raises(ValueError, match="max_position_size"):
        run(close, entries, exits, max_position_size=1.5)
    with pytest.raises(ValueError, match="max_position_size"):
        run(close, entries, exits, max_position_size=0.5, size=0.4)


def test_max_position_size_in_run_strategy_and_sweep(goog) -> None:
    close = goog["Close"]
    params = {"short_window": 10, "long_window": 30}
    a = run_strategy(close, "moving_average", **params, max_position_size=0.5)
    b = run_strategy(close, "moving_average", **params, size=0.5)
    assert a.total_return == b.total_return
    grid = {"short_window": [10], "long_window": [30]}
    sa = sweep(close, "moving_average", grid, max_position_size=0.5)
    sb = sweep(close, "moving_average", grid, size=0.5)
    assert sa.equals(sb)
