"""Import real OHLCV price files into the :class:`~service.marketdata.store.PriceStore`.

Accepted files:

* CSV in the Yahoo Finance layout ``Date,Open,High,Low,Close,Adj Close,Volume``
  (UTF-8, comma separated, header names case-insensitive, ``Adj Close`` optional,
  rows in any order, blank lines ignored);
* Parquet with the same columns (a ``Date`` index written by pandas counts too).

The file type is recognised by content (Parquet's ``PAR1`` magic), not by name.
A six-letter symbol made of two supported currency codes (``EURUSD``) is an FX
pair: its bars are stored like an asset's and become that pair's rates
(:meth:`service.assets.market.MarketData.fx_rates`); it describes no asset, so the
asset options (name, type, sector, currency) do not apply to it.
Every row is checked before anything is written; the first problem raises
:class:`PriceImportError`, whose message names the file, the line (CSV, the header
is line 1) or row (Parquet, first data row is 1) and the column. The store is only
touched once the whole file is valid, and its write is atomic.
"""

from __future__ import annotations

import csv
import datetime as dt
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from numpy.typing import NDArray

from service.marketdata.fx import CURRENCIES, fx_pair
from service.marketdata.provider import AssetType, Interval
from service.marketdata.store import PriceStore, normalize_symbol

__all__ = ["ImportResult", "PriceImportError", "import_prices", "read_price_file"]

_REQUIRED = ("date", "open", "high", "low", "close", "volume")
_ALIASES = {"datetime": "date", "timestamp": "date", "adjclose": "adj_close"}
_PRICES = ("open", "high", "low", "close", "adj_close")
_DISPLAY = {
    "date": "Date",
    "open": "Open",
    "high": "High",
    "low": "Low",
    "close": "Close",
    "adj_close": "Adj Close",
    "volume": "Volume",
}


class PriceImportError(ValueError):
    """A price file (or an import option) is not acceptable.

    Attributes:
        path: The file.
        row: CSV line number (header = 1) or Parquet row number (first data row = 1).
        column: The offending column, as named in the file.
    """

    def __init__(
        self, message: str, *, path: str | os.PathLike[str], row: int | None = None,
        column: str | None = None, row_label: str = "line",
    ) -> None:  # fmt: skip
        self.path = Path(path)
        self.row = row
        self.column = column
        where = [str(self.path)]
        if row is not None:
            where.append(f"{row_label} {row}")
        if column is not None:
            where.append(f"column {column!r}")
        self.reason = message
        super().__init__(f"{', '.join(where)}: {message}")


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What :func:`import_prices` did.

    Attributes:
        symbol: The asset's ticker.
        name: Display name for the asset record; ``None``: not given (a new asset is
            named by its ticker, an existing one keeps its name).
        asset_type: ``stock``, ``etf``, ``bond`` or ``crypto``; ``None``: not given
            (new: ``stock``; existing: kept).
        sector: Sector for the asset record; ``None``: not given (new: ``""``; kept).
        currency: ISO 4217 code of the prices; ``None``: not given (new: ``USD``; kept).
        interval: Bar interval stored.
        rows: Rows read from the file.
        first: First bar (a date for daily bars, a UTC datetime otherwise).
        last: Last bar.
        created: ``True`` if the symbol had no stored prices at this interval before.
        stored_rows: Rows in the store after the import (old rows are kept unless replaced).
        path: The Parquet file written.
    """

    symbol: str
    name: str | None
    asset_type: AssetType | None
    sector: str | None
    currency: str | None
    interval: Interval
    rows: int
    first: dt.date
    last: dt.date
    created: bool
    stored_rows: int
    path: Path

    @property
    def action(self) -> Literal["created", "updated"]:
        """``"created"`` or ``"updated"``."""
        return "created" if self.created else "updated"

    @property
    def fx_pair(self) -> bool:
        """Whether the symbol is an FX pair (``EURUSD``): rates, no asset."""
        return fx_pair(self.symbol) is not None


def import_prices(
    path: str | os.PathLike[str],
    *,
    symbol: str | None = None,
    asset_type: AssetType | None = None,
    sector: str | None = None,
    name: str | None = None,
    currency: str | None = None,
    store: PriceStore,
    interval: Interval = "1d",
) -> ImportResult:
    """Validate a price file and merge it into ``store``.

    Rows already stored for other dates are kept; rows for the same dates are
    replaced by the file's.

    Args:
        path: CSV or Parquet file.
        symbol: Ticker; default: the file name without extension (``aapl.csv`` -> ``AAPL``).
        asset_type: ``stock``, ``etf``, ``bond`` or ``crypto``; default: keep an
            existing asset's, ``stock`` for a new one.
        sector: Sector of the asset; default: keep (new: ``""``).
        name: Display name; default: keep (new: the symbol).
        currency: ISO 4217 code of the prices, one of :data:`~service.marketdata.fx.CURRENCIES`
            (case-insensitive); default: keep (new: ``USD``).
        store: Where the bars go.
        interval: ``1d`` (dates) or ``1h``/``5m`` (timestamps; naive ones are UTC).

    Returns:
        What was imported.

    Raises:
        PriceImportError: The file or an option is invalid; nothing was written.
    """
    source = Path(path)
    if asset_type is not None and asset_type not in get_args(AssetType):
        raise PriceImportError(
            f"asset_type must be one of {', '.join(get_args(AssetType))}, got {asset_type!r}",
            path=source,
        )
    if interval not in get_args(Interval):
        raise PriceImportError(
            f"interval must be one of {', '.join(get_args(Interval))}, got {interval!r}",
            path=source,
        )
    code = None if currency is None else currency.strip().upper()
    if code is not None and code not in CURRENCIES:
        raise PriceImportError(
            f"currency must be one of {', '.join(CURRENCIES)}, got {currency!r}", path=source
        )
    raw_symbol = symbol if symbol is not None else source.stem
    try:
        ticker = normalize_symbol(raw_symbol)
    except ValueError as exc:
        hint = "" if symbol is not None else " (taken from the file name; pass a symbol)"
        raise PriceImportError(f"{exc}{hint}", path=source) from None
    given = {"name": name, "asset_type": asset_type, "sector": sector, "currency": currency}
    if fx_pair(ticker) is not None and (used := [k for k, v in given.items() if v is not None]):
        raise PriceImportError(
            f"{ticker} is an FX pair, not an asset ({', '.join(used)}: for assets only)",
            path=source,
        )
    bars = read_price_file(source, interval=interval)
    created = store.upsert(ticker, bars, interval)
    stamps = pd.DatetimeIndex(bars.index)
    first, last = stamps[0].to_pydatetime(), stamps[-1].to_pydatetime()
    return ImportResult(
        symbol=ticker,
        name=(name or "").strip() or None,
        asset_type=asset_type,
        sector=None if sector is None else sector.strip(),
        currency=code,
        interval=interval,
        rows=len(bars),
        first=first.date() if interval == "1d" else first,
        last=last.date() if interval == "1d" else last,
        created=created,
        stored_rows=store.span(ticker, interval).rows,
        path=store.path(ticker, interval),
    )


def read_price_file(path: str | os.PathLike[str], *, interval: Interval = "1d") -> pd.DataFrame:
    """Read and validate a CSV or Parquet price file.

    Returns:
        Bars sorted by time: ``open, high, low, close`` (float64), ``volume`` (int64)
        and ``adj_close`` if the file has it, indexed by UTC timestamps (daily bars
        at midnight).

    Raises:
        PriceImportError: The file cannot be read or a value is invalid.
    """
    source = Path(path)
    if not source.is_file():
        raise PriceImportError("file not found", path=source)
    with source.open("rb") as handle:
        parquet = handle.read(4) == b"PAR1"
    header, columns, rows, label = (_read_parquet if parquet else _read_csv)(source)
    return _validate(source, header, columns, rows, label, interval)


# -- reading --------------------------------------------------------------------------

_Read = tuple[list[str], list[list[Any]], list[int], str]


def _read_csv(source: Path) -> _Read:
    try:
        with source.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
            header: list[str] | None = None
            lines: list[int] = []
            records: list[list[str]] = []
            for record in reader:
                if not any(field.strip() for field in record):
                    continue
                if header is None:
                    header = record
                    continue
                if len(record) != len(header):
                    raise PriceImportError(
                        f"expected {len(header)} fields like the header, got {len(record)}",
                        path=source,
                        row=reader.line_num,
                    )
                records.append(record)
                lines.append(reader.line_num)
    except UnicodeDecodeError:
        raise PriceImportError(
            "not a UTF-8 text file (expected CSV or Parquet)", path=source
        ) from None
    except csv.Error as exc:
        raise PriceImportError(f"malformed CSV: {exc}", path=source) from None
    if header is None:
        raise PriceImportError("empty file", path=source)
    columns = [list(col) for col in zip(*records, strict=True)] if records else [[] for _ in header]
    return header, columns, lines, "line"


def _read_parquet(source: Path) -> _Read:
    try:
        table = pq.read_table(source)
    except (pa.ArrowException, OSError) as exc:
        raise PriceImportError(f"unreadable Parquet file: {exc}", path=source) from None
    names = [_normal(n) for n in table.column_names]
    index_cols = [n for n in table.column_names if n.startswith("__index_level_")]
    if "date" not in names and index_cols:  # an unnamed index written by pandas
        table = table.rename_columns(
            ["Date" if n == index_cols[0] else n for n in table.column_names]
        )
    header = [n for n in table.column_names if not n.startswith("__index_level_")]
    columns = [table.column(n).to_pylist() for n in header]
    return header, columns, list(range(1, table.num_rows + 1)), "row"


# -- validation -----------------------------------------------------------------------


def _normal(name: str) -> str:
    key = re.sub(r"[\s_]+", "", str(name).strip().lower())
    key = _ALIASES.get(key, key)
    return "adj_close" if key == "adjclose" else key


def _validate(
    source: Path,
    header: Sequence[str],
    columns: Sequence[list[Any]],
    rows: list[int],
    label: str,
    interval: Interval,
) -> pd.DataFrame:
    found: dict[str, int] = {}
    for i, raw in enumerate(header):
        key = _normal(raw)
        if key in found and key in _DISPLAY:
            raise PriceImportError(
                f"column {raw!r} appears twice (as {header[found[key]]!r} too)", path=source
            )
        found.setdefault(key, i)
    missing = [_DISPLAY[key] for key in _REQUIRED if key not in found]
    if missing:
        raise PriceImportError(
            f"missing column(s): {', '.join(missing)} (found: {', '.join(map(str, header)) or 'none'}; "
            "expected Date,Open,High,Low,Close,Adj Close,Volume)",
            path=source,
        )
    if not rows:
        raise PriceImportError("no price rows after the header", path=source)

    def fail(message: str, at: int, key: str | None) -> PriceImportError:
        col = header[found[key]] if key is not None else None
        return PriceImportError(message, path=source, row=rows[at], column=col, row_label=label)

    stamps = _parse_stamps(columns[found["date"]], interval, lambda m, at: fail(m, at, "date"))
    values: dict[str, NDArray[np.float64]] = {}
    for key in (*_PRICES, "volume"):
        if key in found:
            values[key] = _parse_numbers(columns[found[key]], lambda m, at, k=key: fail(m, at, k))
    for key in _PRICES:
        if key in values:
            bad = np.flatnonzero(~(values[key] > 0))
            if bad.size:
                raise fail(
                    f"price must be positive, got {_fmt(values[key][bad[0]])}", int(bad[0]), key
                )
    vol = values["volume"]
    bad = np.flatnonzero((vol < 0) | (vol != np.floor(vol)) | (vol >= 2.0**63))
    if bad.size:
        raise fail(
            f"volume must be a whole number >= 0, got {_fmt(vol[bad[0]])}", int(bad[0]), "volume"
        )
    high, low = values["high"], values["low"]
    checks = (
        ("low", high < low, "high {h} is below low {v}"),
        ("open", high < values["open"], "high {h} is below open {v}"),
        ("close", high < values["close"], "high {h} is below close {v}"),
        ("open", low > values["open"], "low {l} is above open {v}"),
        ("close", low > values["close"], "low {l} is above close {v}"),
    )
    for key, mask, text in checks:
        bad = np.flatnonzero(mask)
        if bad.size:
            at = int(bad[0])
            message = text.format(h=_fmt(high[at]), l=_fmt(low[at]), v=_fmt(values[key][at]))
            raise fail(message, at, "high" if text.startswith("high") else "low")
    order = np.argsort(stamps, kind="stable")
    sorted_stamps = stamps[order]
    dup = np.flatnonzero(sorted_stamps[1:] == sorted_stamps[:-1])
    if dup.size:
        first_at, again_at = sorted((int(order[dup[0]]), int(order[dup[0] + 1])))
        when = str(sorted_stamps[dup[0]])[: 10 if interval == "1d" else 19]
        raise fail(f"duplicate date {when} (also on {label} {rows[first_at]})", again_at, "date")
    frame = pd.DataFrame(
        {key: values[key][order] for key in ("open", "high", "low", "close")}
        | {"volume": vol[order].astype(np.int64)}
        | ({"adj_close": values["adj_close"][order]} if "adj_close" in values else {}),
        index=pd.DatetimeIndex(sorted_stamps, name="timestamp").tz_localize("UTC"),
    )
    return frame


def _parse_stamps(raw: list[Any], interval: Interval, fail: Any) -> NDArray[np.datetime64]:
    if interval == "1d" and all(type(v) is str and len(v) == 10 for v in raw):
        try:  # fast path: plain YYYY-MM-DD dates
            days = np.array(raw, dtype="datetime64[D]")
        except ValueError:
            days = None
        if days is not None and not np.isnat(days).any():
            return days.astype("datetime64[us]")
    out = [
        _parse_stamp(value, interval, lambda m, at=at: fail(m, at)) for at, value in enumerate(raw)
    ]
    return np.array(out, dtype="datetime64[us]")


def _parse_stamp(value: Any, interval: Interval, fail: Any) -> np.datetime64:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise fail("missing date")
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, dt.date):
        moment = dt.datetime(value.year, value.month, value.day)
    else:
        text = str(value).strip()
        try:
            moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise fail(f"bad date {text!r}: expected YYYY-MM-DD or an ISO 8601 date-time") from None
    if interval == "1d":
        return np.datetime64(moment.date(), "us")  # the trading date as written
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC).replace(tzinfo=None)
    return np.datetime64(moment, "us")


def _parse_numbers(raw: list[Any], fail: Any) -> NDArray[np.float64]:
    try:  # fast path: every value converts
        fast = np.array(raw, dtype=np.float64)
    except (TypeError, ValueError):
        fast = None
    if fast is not None and np.isfinite(fast).all():
        return fast
    out = np.empty(len(raw), dtype=np.float64)  # slow path: find the bad value
    for at, value in enumerate(raw):
        if value is None or (isinstance(value, str) and not value.strip()):
            raise fail("missing value", at)
        try:
            number = float(value.replace(",", "") if isinstance(value, str) else value)
        except (TypeError, ValueError):
            raise fail(f"not a number: {value!r}", at) from None
        if not math.isfinite(number):
            raise fail(f"not a finite number: {value!r}", at)
        out[at] = number
    return out


def _fmt(value: float) -> str:
    return f"{value:g}" if abs(value) < 1e15 else repr(value)
