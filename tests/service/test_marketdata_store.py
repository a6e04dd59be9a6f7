"""PriceStore: Parquet round trips, date-range reads, merges and atomic writes."""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from service.marketdata import PriceStore, SimulatedMarket
from service.marketdata.store import normalize_symbol

NOW = dt.datetime(2026, 11, 20, 22, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def market() -> SimulatedMarket:
    return SimulatedMarket(clock=lambda: NOW)


@pytest.fixture
def store(tmp_path: Path) -> PriceStore:
    return PriceStore.in_data_dir(tmp_path)


def yahoo_frame(goog: pd.DataFrame) -> pd.DataFrame:
    """The real GOOG bars in the store's shape."""
    bars = goog.rename(columns=str.lower)[["open", "high", "low", "close", "volume"]].copy()
    bars["volume"] = bars["volume"].astype(np.int64)
    bars.index = pd.DatetimeIndex(bars.index, name="timestamp").tz_localize("UTC").as_unit("us")
    return bars


@pytest.mark.parametrize("interval", ["1d", "1h", "5m"])
def test_round_trip_is_exact(store: PriceStore, market: SimulatedMarket, interval: str) -> None:
    bars = market.history("CAT", dt.date(2026, 10, 1), dt.date(2026, 10, 31), interval)  # type: ignore[arg-type]
    store.write("CAT", bars, interval)  # type: ignore[arg-type]
    assert store.path("CAT", interval) == store.root / interval / "CAT.parquet"  # type: ignore[arg-type]
    assert store.root.name == "prices"
    pd.testing.assert_frame_equal(store.read("cat", interval), bars, check_exact=True)  # type: ignore[arg-type]


def test_real_data_round_trip(store: PriceStore, goog: pd.DataFrame) -> None:
    bars = yahoo_frame(goog)
    store.write("GOOG", bars)
    pd.testing.assert_frame_equal(store.read("GOOG"), bars, check_exact=True, check_freq=False)
    span = store.span("GOOG")
    assert (span.rows, span.first, span.last) == (
        len(goog),
        goog.index[0].to_pydatetime().replace(tzinfo=dt.UTC),
        goog.index[-1].to_pydatetime().replace(tzinfo=dt.UTC),
    )


def test_reads_by_date_range(store: PriceStore, market: SimulatedMarket) -> None:
    bars = market.history("V", dt.date(2026, 11, 2), dt.date(2026, 11, 13), "1h")
    store.write("V", bars, "1h")
    day = store.read("V", "1h", dt.date(2026, 11, 4), dt.date(2026, 11, 4))
    pd.testing.assert_frame_equal(day, bars.loc["2026-11-04"])
    exact = store.read(
        "V", "1h", dt.datetime(2026, 11, 4, 15, 30, tzinfo=dt.UTC), dt.datetime(2026, 11, 4, 17, 30)
    )
    assert list(exact.index.hour) == [15, 16, 17]  # both bounds inclusive, naive = UTC
    assert store.read("V", "1h", start=dt.date(2026, 11, 13)).index[0].date() == dt.date(
        2026, 11, 13
    )
    assert store.read("V", "1h", end=dt.date(2026, 11, 2)).index[-1].date() == dt.date(2026, 11, 2)
    assert store.read("V", "1h", dt.date(2027, 1, 1), dt.date(2027, 2, 1)).empty


def test_upsert_creates_then_merges(store: PriceStore, market: SimulatedMarket) -> None:
    bars = market.history("HON", dt.date(2026, 1, 1), dt.date(2026, 6, 30))
    assert store.upsert("HON", bars.iloc[:100]) is True
    changed = bars.iloc[90:].copy()
    changed["close"] = changed[["close", "high"]].mean(axis=1)
    assert store.upsert("HON", changed) is False
    stored = store.read("HON")
    expected = pd.concat([bars.iloc[:90], changed])
    pd.testing.assert_frame_equal(stored, expected, check_exact=True)
    assert store.symbols() == ["HON"] and store.symbols("5m") == []


def test_adj_close_and_naive_index(store: PriceStore, goog: pd.DataFrame) -> None:
    bars = (
        goog.rename(columns=str.lower)[["open", "high", "low", "close", "volume"]].iloc[:30].copy()
    )
    bars["adj_close"] = bars["close"] * 0.5
    store.write("GOOG", bars)  # naive index taken as UTC
    back = store.read("GOOG")
    assert str(back.index.tz) == "UTC"
    np.testing.assert_array_equal(back["adj_close"].to_numpy(), bars["adj_close"].to_numpy())


def test_bad_input_raises(store: PriceStore, market: SimulatedMarket) -> None:
    bars = market.history("SO", dt.date(2026, 11, 2), dt.date(2026, 11, 6))
    with pytest.raises(ValueError, match="invalid symbol"):
        store.write("../etc", bars)
    with pytest.raises(ValueError, match="interval"):
        store.write("SO", bars, "1w")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="volume"):
        store.write("SO", bars.drop(columns="volume"))
    with pytest.raises(ValueError, match="duplicate"):
        store.write("SO", pd.concat([bars, bars.iloc[:1]]))
    with pytest.raises(KeyError, match="SO"):
        store.read("SO")
    with pytest.raises(KeyError):
        store.span("SO")
    assert store.delete("SO") is False
    assert not store.root.exists() or not any(store.root.rglob("*"))


def test_symbols_are_normalized() -> None:
    assert normalize_symbol(" brk.b ") == "BRK.B"
    assert normalize_symbol("^gspc") == "^GSPC"
    assert normalize_symbol("BTC-USD") == "BTC-USD"
    for bad in ("", ".hidden", "A/B", "A B", "X" * 33, "-X"):
        with pytest.raises(ValueError, match="invalid symbol"):
            normalize_symbol(bad)


def test_a_failed_write_leaves_the_old_file_and_no_temporary(
    store: PriceStore, market: SimulatedMarket, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = market.history("BA", dt.date(2026, 1, 1), dt.date(2026, 3, 31))
    store.write("BA", old)
    real_write = pq.write_table

    def crash(table: object, where: object, **kwargs: object) -> None:
        real_write(table.slice(0, 5), where, **kwargs)  # type: ignore[attr-defined]
        raise OSError("disk full")

    monkeypatch.setattr(pq, "write_table", crash)
    with pytest.raises(OSError, match="disk full"):
        store.write("BA", market.history("BA", dt.date(2025, 1, 1), dt.date(2026, 3, 31)))
    with pytest.raises(OSError, match="disk full"):
        store.upsert("BA", market.history("BA", dt.date(2026, 4, 1), dt.date(2026, 4, 30)))
    monkeypatch.undo()
    pd.testing.assert_frame_equal(store.read("BA"), old)
    assert sorted(p.name for p in (store.root / "1d").iterdir()) == ["BA.parquet"]


def test_readers_never_see_a_partial_file(store: PriceStore, market: SimulatedMarket) -> None:
    small = market.history("DUK", dt.date(2026, 11, 2), dt.date(2026, 11, 6))
    large = market.history("DUK", dt.date(2020, 1, 1), dt.date(2026, 11, 6))
    store.write("DUK", small)
    seen: list[int] = []
    errors: list[BaseException] = []
    done = threading.Event()

    def reader() -> None:
        try:
            while not done.is_set():
                seen.append(len(store.read("DUK")))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    thread = threading.Thread(target=reader)
    thread.start()
    for i in range(20):
        store.write("DUK", large if i % 2 == 0 else small)
    done.set()
    thread.join()
    assert not errors
    assert set(seen) <= {len(small), len(large)} and seen
