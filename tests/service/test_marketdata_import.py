"""import_prices: Yahoo-style CSV and Parquet in, validated bars out, nothing written on error."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from service.marketdata import ImportResult, PriceImportError, PriceStore, import_prices

HEADER = "Date,Open,High,Low,Close,Adj Close,Volume"
ROWS = [
    "2024-01-02,187.15,188.44,183.89,185.64,185.40,82488700",
    "2024-01-03,184.22,185.88,183.43,184.25,184.01,58414500",
    "2024-01-04,182.15,183.09,180.88,181.91,181.67,71983600",
]


@pytest.fixture
def store(tmp_path: Path) -> PriceStore:
    return PriceStore.in_data_dir(tmp_path / "var")


def write_csv(tmp_path: Path, name: str, lines: list[str]) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def yahoo_csv(goog: pd.DataFrame, path: Path) -> pd.DataFrame:
    """Write the real GOOG bars as a Yahoo CSV; return what the store should hold."""
    frame = goog[["Open", "High", "Low", "Close"]].copy()
    frame["Adj Close"] = goog["Close"] * 0.98
    frame["Volume"] = goog["Volume"].astype(np.int64)
    frame.index.name = "Date"
    frame.to_csv(path, date_format="%Y-%m-%d", float_format="%.17g")
    expected = frame.rename(columns={"Adj Close": "adj_close"}).rename(columns=str.lower)
    expected = expected[["open", "high", "low", "close", "volume", "adj_close"]]
    expected.index = (
        pd.DatetimeIndex(expected.index, name="timestamp").tz_localize("UTC").as_unit("us")
    )
    return expected


# -- happy paths ------------------------------------------------------------------------


def test_imports_a_real_yahoo_csv(tmp_path: Path, store: PriceStore, goog: pd.DataFrame) -> None:
    expected = yahoo_csv(goog, tmp_path / "goog.csv")
    result = import_prices(tmp_path / "goog.csv", store=store, sector="Technology", name="Alphabet")
    assert isinstance(result, ImportResult)
    assert (result.symbol, result.name, result.asset_type, result.sector) == (
        "GOOG", "Alphabet", None, "Technology",
    )  # fmt: skip  # asset_type not given: kept for an existing asset, stock for a new one
    assert (result.rows, result.stored_rows, result.created, result.action) == (
        len(goog), len(goog), True, "created",
    )  # fmt: skip
    assert (result.first, result.last) == (goog.index[0].date(), goog.index[-1].date())
    assert result.path == tmp_path / "var" / "prices" / "1d" / "GOOG.parquet"
    pd.testing.assert_frame_equal(store.read("GOOG"), expected, check_exact=True, check_freq=False)


@pytest.mark.parametrize("named_index", [True, False])
def test_imports_parquet(
    tmp_path: Path, store: PriceStore, goog: pd.DataFrame, named_index: bool
) -> None:
    frame = goog.iloc[:250].copy()
    frame.columns = [c.upper() for c in frame.columns]  # headers are case-insensitive
    frame.index.name = "Date" if named_index else None
    frame.to_parquet(tmp_path / "data.bin")  # recognised by content, not by name
    result = import_prices(tmp_path / "data.bin", symbol="goog", asset_type="etf", store=store)
    assert (result.symbol, result.asset_type, result.rows) == ("GOOG", "etf", 250)
    stored = store.read("GOOG")
    np.testing.assert_array_equal(stored["close"].to_numpy(), goog["Close"].iloc[:250].to_numpy())
    assert "adj_close" not in stored.columns


def test_a_second_import_updates_and_keeps_other_rows(tmp_path: Path, store: PriceStore) -> None:
    import_prices(write_csv(tmp_path, "AAPL.csv", [HEADER, *ROWS[:2]]), store=store)
    newer = ["2024-01-03,184.22,185.88,183.43,184.30,184.06,58414500", ROWS[2]]
    result = import_prices(write_csv(tmp_path, "aapl.csv", [HEADER, *reversed(newer)]), store=store)
    assert (result.created, result.action, result.rows, result.stored_rows) == (
        False,
        "updated",
        2,
        3,
    )
    stored = store.read("AAPL")
    assert stored["close"].tolist() == [185.64, 184.30, 181.91]
    assert stored.index.is_monotonic_increasing


def test_accepts_yahoo_variants(tmp_path: Path, store: PriceStore) -> None:
    lines = [
        "\ufeffdate , open,HIGH,low,close,adj_close,volume",  # BOM, spacing, case
        "",
        '2024-01-02 00:00:00-05:00,187.15,188.44,183.89,185.64,185.40,"82,488,700"',
        "2024-01-03T00:00:00,184.22,185.88,183.43,184.25,184.01,58414500.0",
        "",
    ]
    result = import_prices(write_csv(tmp_path, "brk.b.csv", lines), store=store)
    assert result.symbol == "BRK.B"
    stored = store.read("BRK.B")
    assert [d.date() for d in stored.index] == [dt.date(2024, 1, 2), dt.date(2024, 1, 3)]
    assert stored["volume"].tolist() == [82488700, 58414500]


def test_imports_hourly_bars(tmp_path: Path, store: PriceStore, eurusd: pd.DataFrame) -> None:
    frame = eurusd.iloc[:500].copy()
    frame.index.name = "Datetime"
    frame["Volume"] = frame["Volume"].astype(np.int64)
    frame.to_csv(tmp_path / "EURUSD.csv")
    result = import_prices(tmp_path / "EURUSD.csv", store=store, interval="1h")
    assert result.first == eurusd.index[0].to_pydatetime().replace(tzinfo=dt.UTC)
    stored = store.read("EURUSD", "1h")
    assert len(stored) == 500
    np.testing.assert_allclose(stored["close"].to_numpy(), frame["Close"].to_numpy(), rtol=1e-15)


# -- errors: each names the file, the place and the column, and writes nothing ----------


BAD_CSV = [
    pytest.param([], "empty file", None, None, id="empty"),
    pytest.param([HEADER], "no price rows", None, None, id="header-only"),
    pytest.param(
        ["Date,Open,High,Close,Volume", "2024-01-02,1,2,1.5,10"],
        "missing column(s): Low", None, None, id="missing-column",
    ),
    pytest.param([HEADER, ROWS[0], "2024-13-03,1,2,0.5,1.5,1.5,10"], "bad date '2024-13-03'", 3, "Date", id="bad-date"),
    pytest.param([HEADER, ROWS[0], ",1,2,0.5,1.5,1.5,10"], "missing date", 3, "Date", id="no-date"),
    pytest.param([HEADER, "2024-01-02,1,2,0,1.5,1.5,10"], "price must be positive, got 0", 2, "Low", id="zero-price"),
    pytest.param([HEADER, "2024-01-02,-1,2,0.5,1.5,1.5,10"], "price must be positive, got -1", 2, "Open", id="negative"),
    pytest.param([HEADER, "2024-01-02,1,2,0.5,1.5,null,10"], "not a number: 'null'", 2, "Adj Close", id="null"),
    pytest.param([HEADER, "2024-01-02,1,2,0.5,,1.5,10"], "missing value", 2, "Close", id="empty-value"),
    pytest.param([HEADER, "2024-01-02,1,2,0.5,inf,1.5,10"], "not a finite number", 2, "Close", id="inf"),
    pytest.param([HEADER, "2024-01-02,1,0.5,2,1,1,10"], "high 0.5 is below low 2", 2, "High", id="high-below-low"),
    pytest.param([HEADER, "2024-01-02,1,2,0.5,2.5,2.5,10"], "high 2 is below close 2.5", 2, "High", id="high-below-close"),
    pytest.param([HEADER, "2024-01-02,0.4,2,0.5,1,1,10"], "low 0.5 is above open 0.4", 2, "Low", id="low-above-open"),
    pytest.param([HEADER, "2024-01-02,1,2,0.5,1,1,-5"], "volume must be a whole number", 2, "Volume", id="neg-volume"),
    pytest.param([HEADER, "2024-01-02,1,2,0.5,1,1,2.5"], "volume must be a whole number", 2, "Volume", id="frac-volume"),
    pytest.param(
        [HEADER, *ROWS, "", ROWS[1]], "duplicate date 2024-01-03 (also on line 3)", 6, "Date", id="duplicate",
    ),
    pytest.param([HEADER, ROWS[0], "2024-01-03,1,2"], "expected 7 fields", 3, None, id="short-row"),
]  # fmt: skip


@pytest.mark.parametrize(("lines", "message", "line", "column"), BAD_CSV)
def test_bad_csv_is_rejected_with_its_location(
    tmp_path: Path,
    store: PriceStore,
    lines: list[str],
    message: str,
    line: int | None,
    column: str | None,
) -> None:
    path = tmp_path / "AAPL.csv"
    path.write_text("\n".join(lines) + ("\n" if lines else ""))
    with pytest.raises(PriceImportError) as info:
        import_prices(path, store=store)
    error = info.value
    assert isinstance(error, ValueError)
    assert message in str(error)
    assert str(error).startswith(str(path))
    assert (error.path, error.row, error.column) == (path, line, column)
    if line is not None:
        assert f"line {line}" in str(error)
    assert not store.root.exists()


def test_a_failed_import_leaves_stored_prices_untouched(tmp_path: Path, store: PriceStore) -> None:
    import_prices(write_csv(tmp_path, "AAPL.csv", [HEADER, *ROWS]), store=store)
    before = store.path("AAPL").read_bytes()
    bad = write_csv(
        tmp_path, "AAPL2.csv", [HEADER, "2024-01-05,1,2,0.5,1,1,10", "2024-01-08,1,2,3,1,1,10"]
    )
    with pytest.raises(PriceImportError, match="line 3"):
        import_prices(bad, symbol="AAPL", store=store)
    assert store.path("AAPL").read_bytes() == before
    assert sorted(p.name for p in store.path("AAPL").parent.iterdir()) == ["AAPL.parquet"]


def test_bad_parquet_values_name_the_row(
    tmp_path: Path, store: PriceStore, goog: pd.DataFrame
) -> None:
    frame = goog.iloc[:10].copy()
    frame.iloc[6, frame.columns.get_loc("High")] = frame["Low"].iloc[6] - 1.0
    frame.to_parquet(tmp_path / "GOOG.parquet")
    with pytest.raises(
        PriceImportError, match=r"GOOG.parquet, row 7, column 'High': high .* is below low"
    ) as info:
        import_prices(tmp_path / "GOOG.parquet", store=store)
    assert info.value.row == 7
    assert not store.root.exists()


def test_unreadable_files_and_bad_options(tmp_path: Path, store: PriceStore) -> None:
    with pytest.raises(PriceImportError, match="file not found"):
        import_prices(tmp_path / "nope.csv", store=store)
    corrupt = tmp_path / "X.parquet"
    corrupt.write_bytes(b"PAR1" + b"\x00" * 64)
    with pytest.raises(PriceImportError, match="unreadable Parquet"):
        import_prices(corrupt, store=store)
    binary = tmp_path / "Y.csv"
    binary.write_bytes(b"\xff\xfe\x00garbage\x81")
    with pytest.raises(PriceImportError, match="not a UTF-8"):
        import_prices(binary, store=store)
    good = write_csv(tmp_path, "my prices.csv", [HEADER, *ROWS])
    with pytest.raises(PriceImportError, match="file name; pass a symbol"):
        import_prices(good, store=store)
    with pytest.raises(PriceImportError, match="asset_type must be one of"):
        import_prices(good, symbol="OK", asset_type="fund", store=store)  # type: ignore[arg-type]
    with pytest.raises(PriceImportError, match="invalid symbol"):
        import_prices(good, symbol="A/B", store=store)
    dup = write_csv(
        tmp_path, "Z.csv", ["Date,Open,open,High,Low,Close,Volume", "2024-01-02,1,1,2,0.5,1,1"]
    )
    with pytest.raises(PriceImportError, match="appears twice"):
        import_prices(dup, store=store)
    assert not store.root.exists()
