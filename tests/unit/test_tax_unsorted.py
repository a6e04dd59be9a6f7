"""``match_lots`` sorts a table that is not in date order (stably) instead of refusing it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quantcore.tax import match_lots


def _grouped_by_symbol() -> pd.DataFrame:
    """A researcher's table: all of X, then all of Y (dates interleave across the groups)."""
    return pd.DataFrame(
        {
            "symbol": ["X", "X", "X", "Y", "Y"],
            "date": ["2025-01-02", "2025-03-03", "2025-03-20", "2025-01-02", "2025-02-10"],
            "type": ["buy", "sell", "buy", "buy", "sell"],
            "quantity": [100, 100, 100, 10, 4],
            "price": [10.0, 7.5, 8.0, 50.0, 55.0],
            "lot_id": ["x1", None, "x2", "y1", None],
        }
    )


def test_grouped_table_is_sorted_and_rows_keep_the_callers_numbers() -> None:
    tx = _grouped_by_symbol()
    ledger = match_lots(tx)
    by_date = tx.sort_values("date", kind="stable")  # rows 0, 3, 4, 1, 2
    ref = match_lots(by_date.reset_index(drop=True))
    got, want = ledger.realized_frame(), ref.realized_frame()
    # the same pieces; ``row`` is the caller's row number in each table
    assert list(got["row"]) == [4, 1]
    assert list(want["row"]) == [2, 3]
    cols = ["symbol", "lot", "quantity", "proceeds", "basis", "disallowed", "gain"]
    pd.testing.assert_frame_equal(got[cols], want[cols])
    pd.testing.assert_frame_equal(ledger.open_lots_frame(), ref.open_lots_frame())
    assert ledger.lot_names == ("x1", "", "x2", "y1", "")
    assert ledger.lot_label(int(ledger.open_lots["lot"][0])) in {"x2", "y1"}


def test_rows_of_one_day_keep_their_table_order() -> None:
    # two buys of one day, listed after a later sell: FIFO relieves the one listed first
    tx = pd.DataFrame(
        {
            "symbol": ["A"] * 3,
            "date": ["2025-02-03", "2025-01-02", "2025-01-02"],
            "type": ["sell", "buy", "buy"],
            "quantity": [5, 5, 5],
            "price": [30.0, 20.0, 10.0],
        }
    )
    r = match_lots(tx).realized_frame()
    assert list(r["basis"]) == [100.0]  # the 5 @ 20 listed first
    assert list(r["row"]) == [0]


def test_errors_name_the_callers_row() -> None:
    tx = _grouped_by_symbol()
    tx.loc[4, "quantity"] = 11  # sells more Y than held
    with pytest.raises(ValueError, match=r"row 4 \(index .*4\)\): sells more Y than held"):
        match_lots(tx)


@settings(max_examples=40, deadline=None)
@given(st.randoms(use_true_random=False))
def test_any_shuffle_equals_the_date_sorted_table(rnd) -> None:  # type: ignore[no-untyped-def]
    """Rows shuffled (one day's rows kept in order) give the sorted table's figures."""
    tx = _grouped_by_symbol()
    shuffled = tx.iloc[rnd.sample(range(len(tx)), len(tx))]
    # a stable sort of the shuffle is the reference: the same day order as the kernel sees
    ref = match_lots(shuffled.sort_values("date", kind="stable").reset_index(drop=True))
    got = match_lots(shuffled)
    cols = ["symbol", "lot", "quantity", "proceeds", "basis", "disallowed", "gain", "long_term"]
    pd.testing.assert_frame_equal(got.realized_frame()[cols], ref.realized_frame()[cols])
    pd.testing.assert_frame_equal(got.open_lots_frame(), ref.open_lots_frame())
    # row numbers point at the shuffled table's rows
    assert np.array_equal(
        shuffled["type"].to_numpy()[got.realized["row"]], np.array(["sell"] * len(got.realized))
    )
