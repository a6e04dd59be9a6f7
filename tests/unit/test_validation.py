"""quantcore._validation: conversions, kinds restored, clear errors naming the argument."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from quantcore import metrics, returns
from quantcore._validation import (
    as_float64_1d,
    as_float64_2d,
    check_int,
    check_level,
    check_positive,
    check_same_shape,
)


def test_as_float64_2d_kinds_and_layout() -> None:
    x, w = as_float64_2d([1, 2, 3], "prices")
    assert x.shape == (3, 1) and x.dtype == np.float64 and w.is_1d
    df = pd.DataFrame({"a": [1.0, 2.0], "b": [3, 4]}, index=["x", "y"])
    x, w = as_float64_2d(df)
    assert x.flags.f_contiguous and x.shape == (2, 2)
    out = w.wrap(x * 2)
    pd.testing.assert_frame_equal(out, df.astype(float) * 2)
    series = pd.Series([1.0, None], index=[10, 20], name="s", dtype="Float64")
    x, w = as_float64_2d(series)
    assert np.isnan(x[1, 0])
    restored = w.wrap(x)
    assert restored.name == "s" and list(restored.index) == [10, 20]
    assert w.wrap_reduced(np.array([1.5])) == 1.5


def test_as_float64_1d() -> None:
    x, _ = as_float64_1d(np.ones((4, 1)))
    assert x.shape == (4,)
    with pytest.raises(ValueError, match="flows must be one series, got 2 columns"):
        as_float64_1d(np.ones((4, 2)), "flows")


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ("abc", "returns must be numeric"),
        (3.0, "returns must be a 1-D or 2-D array, got a scalar"),
        (np.ones((2, 2, 2)), "returns must be a 1-D or 2-D array, got 3 dimensions"),
    ],
)
def test_bad_data_is_named(value: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        metrics.sharpe_ratio(value)  # type: ignore[arg-type]


def test_bad_prices_name_their_argument() -> None:
    with pytest.raises(ValueError, match="prices must be numeric"):
        returns.simple_returns(["a", "b"])


def test_check_helpers() -> None:
    assert check_int(np.int64(3), "window") == 3
    for bad in (True, 2.5, "3"):
        with pytest.raises(ValueError, match="window must be an integer"):
            check_int(bad, "window")
    with pytest.raises(ValueError, match="window must be >= 2"):
        check_int(1, "window", minimum=2)
    assert check_positive("2.5", "periods_per_year") == 2.5
    assert check_positive(0, "x", allow_zero=True) == 0.0
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="periods_per_year must be finite and > 0"):
            check_positive(bad, "periods_per_year")
    with pytest.raises(ValueError, match="periods_per_year must be a number"):
        check_positive(None, "periods_per_year")
    assert check_level(0.95) == 0.95
    for bad in (0, 1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="level must be in"):
            check_level(bad)
    with pytest.raises(ValueError, match="level must be a number"):
        check_level("high")


def test_check_same_shape() -> None:
    check_same_shape(np.ones((3, 2)), np.ones((3, 1)), ("returns", "benchmark"))
    with pytest.raises(ValueError, match="returns and benchmark must have the same length, got 3 and 2"):
        check_same_shape(np.ones((3, 2)), np.ones((2, 1)), ("returns", "benchmark"))
    with pytest.raises(ValueError, match="benchmark must have 1 or 2 columns like returns, got 3"):
        check_same_shape(np.ones((3, 2)), np.ones((3, 3)), ("returns", "benchmark"))
