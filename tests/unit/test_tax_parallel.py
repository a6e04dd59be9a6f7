"""The parallel lot matcher (symbol groups over threads) against the sequential one.

Both run the same per-group matcher; the parallel one writes each group into its own
slice and places the slices afterwards, so every output must be bit-identical,
including a group that outgrows its slice (it goes on in an array of its own), slices
in several batch buffers (each freed once placed) and the earliest error.
The results are also checked against the Decimal reference (tests/reference).
"""

from __future__ import annotations

import datetime as dt
import sys
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from quantcore._kernels import tax as k
from quantcore._kernels.tax_match import BATCH_ROWS, _batches, _plan
from quantcore._kernels.tax_splice import group_rows_nb
from quantcore._kernels.tax_table import R_BASIS, R_DISALLOWED, R_PROCEEDS
from quantcore.tax import match_lots
from quantcore.tax.lots import _encode, from_fixed, kernel_args

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reference"))
from tax_reference import history_from_closes, reference_match_lots

GROUPS = {"SP500": "index", "NASDAQ": "index"}  # two symbols in one group, GOOG alone


def _frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "symbol": [r["symbol"] for r in rows],
            "date": [pd.Timestamp(r["date"]) for r in rows],
            "type": [r["type"] for r in rows],
            "quantity": [str(r["quantity"]) for r in rows],  # the exact Decimal path of the reader
            "price": [str(r["price"]) for r in rows],
            "fees": [str(r["fees"]) for r in rows],
            "lot_id": [f"L{i}" if r["type"] == "buy" else (f"L{r['lot']}" if "lot" in r else None) for i, r in enumerate(rows)],
        }
    )


def _kernel_args(df: pd.DataFrame, method: str | dict[str, str], groups: dict[str, str] | None) -> tuple:
    return kernel_args(_encode(df, method, groups), True)


def _same(a: object, b: object) -> bool:
    """Kernel outputs equal: arrays, or lists of arrays (the parts by group)."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.shape == b.shape and np.array_equal(a, b)
    return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))  # type: ignore[arg-type]


def _assert_same(args: tuple) -> tuple[np.ndarray, ...]:
    """Parallel == sequential, and without the pieces (``args[-1]``): no pieces, the rest the same."""
    par = k.match_lots_nb(*args)
    seq = k.match_lots_seq_nb(*args)
    for a, b in zip(par, seq, strict=True):
        assert _same(a, b)
    assert len(par[5]) == 0  # in sell order: no parts
    assert args[-1] is True
    for kernel in (k.match_lots_nb, k.match_lots_seq_nb):
        realized, open_lots, dividends, status, part_start, parts = kernel(*args[:-1], False)
        assert realized.shape == (0, par[0].shape[1]) and not part_start.any() and len(parts) == 0
        for a, b in zip((open_lots, dividends, status), par[1:4], strict=True):
            assert a.shape == b.shape and np.array_equal(a, b)
    # by group: the same pieces, each group's in its own array, rows numbered in the group
    by_group = (*args[:-2], True, args[-1])
    gpar, gseq = k.match_lots_nb(*by_group), k.match_lots_seq_nb(*by_group)
    for a, b in zip(gpar, gseq, strict=True):
        assert _same(a, b)
    assert gpar[0].shape == (0, par[0].shape[1])
    for a, b in zip(gpar[1:5], par[1:5], strict=True):
        assert np.array_equal(a, b)
    links = args[11]
    n_groups = args[12].shape[0] - 1
    _, _, local = group_rows_nb(links[args[0]], n_groups)
    of_piece = links[par[0][:, 0]]
    want = par[0][np.argsort(of_piece, kind="stable")]
    for c in (1, 2):  # lot, row
        want[:, c] = np.where(want[:, c] >= 0, local[np.maximum(want[:, c], 0)], want[:, c])
    if par[3][0] == 0:
        at = np.searchsorted(np.sort(of_piece), np.arange(n_groups + 1))
        assert np.array_equal(gpar[4], at)
        assert _same(gpar[5], [want[at[g] : at[g + 1]] for g in range(n_groups)])
    else:
        assert len(gpar[5]) == 0
    return par


@pytest.fixture(scope="module")
def history(close_panel: pd.DataFrame) -> list[dict]:
    return history_from_closes(close_panel.loc["2005-01-01":"2006-12-31"], np.random.default_rng(7))


MIXED = [{"SP500": "hifo", "NASDAQ": "average", "GOOG": "specific"}, {"SP500": "specific", "NASDAQ": "lifo"}]  # GOOG: fifo


@pytest.mark.parametrize("method", ["fifo", "lifo", "hifo", "specific", "average", *MIXED])
def test_parallel_equals_sequential_on_real_prices(history: list[dict], method: str | dict[str, str]) -> None:
    df = _frame(history)
    realized, _, _, status, _, _ = _assert_same(_kernel_args(df, method, GROUPS))
    assert status[0] == 0 and df["symbol"].nunique() == 3
    assert (realized[:, R_DISALLOWED] > 0).any()  # wash sales happened
    ledger = match_lots(df, method=method, substantially_identical=GROUPS)  # type: ignore[arg-type]
    ref = reference_match_lots(history, method=method, groups=GROUPS)
    got = [(from_fixed(r["proceeds"]), from_fixed(r["basis"]), from_fixed(r["disallowed"])) for r in ledger.realized]
    assert got == [(p["proceeds"], p["basis"], p["disallowed"]) for p in ref.realized]
    assert [from_fixed(b) for b in ledger.open_lots["basis"]] == [lot.basis for lot in ref.open_lots]


def _fragmenting_rows(n_lots: int, cycles: int, symbols: tuple[str, ...]) -> list[dict]:
    """Per symbol, ``n_lots`` one-share buys, then sells of everything at a loss, each followed
    next day by a buy that absorbs the pending wash sales lot by lot: the open lots stay
    fragmented, so the realized pieces far outnumber the rows (about n_lots per 2 rows)."""
    rows: list[dict] = []
    day = dt.date(2024, 1, 2)
    for s in symbols:
        for _ in range(n_lots):
            rows.append({"symbol": s, "date": day, "type": "buy", "quantity": Decimal(1), "price": Decimal(100), "fees": Decimal(0)})
    for c in range(cycles):
        for step, (kind, price) in enumerate((("sell", 90 - c), ("buy", 95 - c))):
            for s in symbols:
                rows.append({"symbol": s, "date": day + dt.timedelta(days=2 * c + step + 1), "type": kind,
                             "quantity": Decimal(n_lots), "price": Decimal(price), "fees": Decimal(0)})
    return rows


def test_group_outgrowing_its_slice_gives_the_same_results() -> None:
    rows = _fragmenting_rows(60, 16, ("A", "B", "C"))
    df = _frame(rows)
    args = _kernel_args(df, "fifo", None)
    realized, open_lots, _, _, _, _ = _assert_same(args)
    _, _, _, cap_start = _plan(args[0], args[11], args[12], args[13])
    assert realized.shape[0] + open_lots.shape[0] > cap_start[-1]  # so at least one group overflowed its slice
    ref = reference_match_lots(rows)
    got = [(from_fixed(r[R_PROCEEDS]), from_fixed(r[R_BASIS]), from_fixed(r[R_DISALLOWED])) for r in realized]
    assert got == [(p["proceeds"], p["basis"], p["disallowed"]) for p in ref.realized]


def test_groups_in_several_batches_give_the_same_results() -> None:
    """Enough rows for the slices to span several batch buffers, each freed once placed,
    one group outgrowing its slice: the placed output is the sequential one's."""
    n = BATCH_ROWS // 48 * 2  # four groups of n buys: their slices fill more than one batch
    symbols = np.repeat(np.array(["A", "B", "C", "D"]), n)
    day = np.tile(pd.date_range("2020-01-01", periods=n, freq="h").normalize(), 4)
    df = pd.DataFrame({"symbol": symbols, "date": day, "type": "buy", "quantity": 1.0, "price": 10.0})
    tail = _frame(_fragmenting_rows(60, 16, ("E",)))  # more pieces than its slice holds
    sells = pd.DataFrame({"symbol": ["A", "B", "C", "D"], "date": [day.max() + pd.Timedelta(days=40)] * 4,
                          "type": "sell", "quantity": [n - 1.0, n / 2, 3.0, float(n)], "price": 9.0})
    df = pd.concat([df, sells, tail.drop(columns="lot_id").astype({"quantity": float, "price": float, "fees": float})])
    args = _kernel_args(df.reset_index(drop=True), "fifo", None)
    realized, open_lots, _, status, _, _ = _assert_same(args)
    _, _, _, cap_start = _plan(args[0], args[11], args[12], args[13])
    batch_start, _ = _batches(cap_start)
    assert status[0] == 0 and batch_start.size - 1 >= 2
    assert realized.shape[0] == (n - 1) + n // 2 + 3 + n + 60 * 16
    assert open_lots.shape[0] == 1 + n // 2 + (n - 3) + 60


def test_earliest_error_over_groups_is_reported() -> None:
    rows = [
        ("A", "2024-01-02", "buy", 1, 10.0),
        ("B", "2024-01-02", "buy", 1, 10.0),
        ("B", "2024-01-03", "sell", 2, 10.0),  # the first oversold row
        ("A", "2024-01-04", "sell", 5, 10.0),
    ]
    df = pd.DataFrame(rows, columns=["symbol", "date", "type", "quantity", "price"])
    _, _, _, status, _, _ = _assert_same(_kernel_args(df, "fifo", None))
    assert list(status) == [k.ERR_OVERSOLD, 2]
    with pytest.raises(ValueError, match=r"row 2 .*sells more B than held"):
        match_lots(df)
