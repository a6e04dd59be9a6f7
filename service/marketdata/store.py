"""Price history on disk: one Parquet file per symbol and interval.

Layout: ``<root>/<interval>/<SYMBOL>.parquet`` (the service uses
``<QC_DATA_DIR>/prices`` as the root). Columns: ``timestamp`` (UTC, microseconds;
daily bars at midnight), ``open``, ``high``, ``low``, ``close`` (float64),
``volume`` (int64) and, when the source had it, ``adj_close`` (float64), sorted by
timestamp without duplicates.

Writes are atomic: a file is written to a temporary name in the same directory,
flushed to disk and renamed over the old one with ``os.replace``, so a reader sees
either the old or the new file, never a partial one, even if the writer is killed.
Writers in one process are serialized by a lock; the last writer wins between
processes.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from service.marketdata.provider import Interval

__all__ = ["PRICE_COLUMNS", "PriceStore", "StoredSpan", "normalize_symbol"]

PRICE_COLUMNS = ("open", "high", "low", "close", "volume")
_INTERVALS: tuple[str, ...] = ("1d", "1h", "5m")
_SYMBOL = re.compile(r"^[A-Z0-9^][A-Z0-9.^=_-]{0,31}$")
_SCHEMA = pa.schema(
    [
        ("timestamp", pa.timestamp("us", tz="UTC")),
        ("open", pa.float64()),
        ("high", pa.float64()),
        ("low", pa.float64()),
        ("close", pa.float64()),
        ("volume", pa.int64()),
        ("adj_close", pa.float64()),
    ]
)


def normalize_symbol(symbol: str) -> str:
    """Upper-cased ``symbol``, checked to be a safe ticker (letters, digits, ``.^=_-``).

    Raises:
        ValueError: The symbol is empty, too long or has other characters.
    """
    text = symbol.strip().upper()
    if not _SYMBOL.match(text):
        raise ValueError(
            f"invalid symbol {symbol!r}: use 1-32 letters, digits or . ^ = _ - "
            "(not starting with . _ = or -)"
        )
    return text


@dataclass(frozen=True, slots=True)
class StoredSpan:
    """What a stored file holds."""

    symbol: str
    interval: Interval
    rows: int
    first: dt.datetime
    last: dt.datetime


class PriceStore:
    """Parquet price files under ``root``.

    Args:
        root: Directory holding the files (created on first write).

    Example:
        >>> import tempfile
        >>> store = PriceStore(tempfile.mkdtemp())
        >>> bars = pd.DataFrame(
        ...     {"open": [10.0], "high": [11.0], "low": [9.5], "close": [10.5], "volume": [1200]},
        ...     index=pd.DatetimeIndex(["2024-01-02"], tz="UTC"),
        ... )
        >>> store.write("ABC", bars)
        >>> store.read("ABC")["close"].tolist()
        [10.5]
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self._lock = threading.Lock()

    @classmethod
    def in_data_dir(cls, data_dir: str | os.PathLike[str]) -> PriceStore:
        """The store of a service data directory: ``<data_dir>/prices``."""
        return cls(Path(data_dir) / "prices")

    def path(self, symbol: str, interval: Interval = "1d") -> Path:
        """File of ``symbol`` at ``interval`` (whether or not it exists)."""
        if interval not in _INTERVALS:
            raise ValueError(f"interval must be one of {', '.join(_INTERVALS)}, got {interval!r}")
        return self.root / interval / f"{normalize_symbol(symbol)}.parquet"

    def exists(self, symbol: str, interval: Interval = "1d") -> bool:
        """Whether a file is stored for ``symbol`` at ``interval``."""
        return self.path(symbol, interval).is_file()

    def symbols(self, interval: Interval = "1d") -> list[str]:
        """Stored symbols at ``interval``, sorted."""
        folder = self.root / interval
        if not folder.is_dir():
            return []
        return sorted(p.stem for p in folder.glob("*.parquet"))

    def write(self, symbol: str, bars: pd.DataFrame, interval: Interval = "1d") -> None:
        """Replace the stored bars of ``symbol`` with ``bars`` (atomically).

        Args:
            symbol: Ticker.
            bars: Columns ``open, high, low, close, volume`` (and optionally
                ``adj_close``) indexed by timestamps (naive ones are taken as UTC).
            interval: ``1d``, ``1h`` or ``5m``.
        """
        target = self.path(symbol, interval)
        table = _to_table(bars)
        with self._lock:
            _atomic_write(table, target)

    def upsert(self, symbol: str, bars: pd.DataFrame, interval: Interval = "1d") -> bool:
        """Merge ``bars`` into the stored ones (new rows win on equal timestamps).

        Returns:
            ``True`` if the file was created, ``False`` if it was updated.
        """
        target = self.path(symbol, interval)
        new = _to_table(bars)
        with self._lock:
            created = not target.is_file()
            if not created:
                old = pq.read_table(target, schema=_SCHEMA)
                keep = pc.invert(pc.is_in(old["timestamp"], value_set=new["timestamp"]))
                new = pa.concat_tables([old.filter(keep), new]).sort_by("timestamp")
            _atomic_write(new, target)
        return created

    def read(
        self,
        symbol: str,
        interval: Interval = "1d",
        start: dt.date | dt.datetime | None = None,
        end: dt.date | dt.datetime | None = None,
    ) -> pd.DataFrame:
        """Stored bars between ``start`` and ``end`` inclusive.

        A ``date`` bound covers that whole UTC day; a ``datetime`` is exact (naive
        ones are taken as UTC). The frame has the provider's shape: ``open, high,
        low, close`` (float64) and ``volume`` (int64) indexed by a UTC
        ``DatetimeIndex`` named ``timestamp``, plus ``adj_close`` when stored.

        Raises:
            KeyError: Nothing is stored for ``symbol`` at ``interval``.
        """
        target = self.path(symbol, interval)
        if not target.is_file():
            raise KeyError(f"no {interval} prices stored for {normalize_symbol(symbol)}")
        filters = []
        if start is not None:
            filters.append(("timestamp", ">=", _bound(start, upper=False)))
        if end is not None:
            filters.append(("timestamp", "<", _bound(end, upper=True)))
        table = pq.read_table(target, schema=_SCHEMA, filters=filters or None)
        frame: pd.DataFrame = table.to_pandas().set_index("timestamp")
        if frame["adj_close"].isna().all():
            frame = frame.drop(columns="adj_close")
        return frame

    def span(self, symbol: str, interval: Interval = "1d") -> StoredSpan:
        """Row count and first and last timestamps of a stored file.

        Raises:
            KeyError: Nothing is stored for ``symbol`` at ``interval``.
        """
        target = self.path(symbol, interval)
        if not target.is_file():
            raise KeyError(f"no {interval} prices stored for {normalize_symbol(symbol)}")
        stamps = pq.read_table(target, columns=["timestamp"])["timestamp"]
        bounds = pc.min_max(stamps)
        return StoredSpan(
            symbol=normalize_symbol(symbol),
            interval=interval,
            rows=len(stamps),
            first=bounds["min"].as_py().astimezone(dt.UTC),
            last=bounds["max"].as_py().astimezone(dt.UTC),
        )

    def delete(self, symbol: str, interval: Interval = "1d") -> bool:
        """Remove a stored file; ``True`` if there was one."""
        target = self.path(symbol, interval)
        with self._lock:
            try:
                target.unlink()
            except FileNotFoundError:
                return False
        return True


def _to_table(bars: pd.DataFrame) -> pa.Table:
    missing = [c for c in PRICE_COLUMNS if c not in bars.columns]
    if missing:
        raise ValueError(f"bars lack column(s): {', '.join(missing)}")
    index = pd.DatetimeIndex(bars.index)
    index = index.tz_localize("UTC") if index.tz is None else index.tz_convert("UTC")
    if index.has_duplicates:
        raise ValueError("bars have duplicate timestamps")
    frame = pd.DataFrame(
        {
            "timestamp": index.as_unit("us"),
            **{c: bars[c].to_numpy(dtype="float64") for c in PRICE_COLUMNS[:4]},
            "volume": bars["volume"].to_numpy(dtype="int64"),
            "adj_close": (
                bars["adj_close"].to_numpy(dtype="float64")
                if "adj_close" in bars.columns
                else pd.array([None] * len(bars), dtype="Float64")
            ),
        }
    )
    table = pa.Table.from_pandas(frame, schema=_SCHEMA, preserve_index=False)
    return table.sort_by("timestamp")


def _bound(value: dt.date | dt.datetime, *, upper: bool) -> pd.Timestamp:
    if isinstance(value, dt.datetime):
        stamp = pd.Timestamp(value)
        stamp = stamp.tz_localize("UTC") if stamp.tz is None else stamp.tz_convert("UTC")
        return stamp + pd.Timedelta(microseconds=1) if upper else stamp
    day = pd.Timestamp(value, tz="UTC")
    return day + pd.Timedelta(days=1) if upper else day


def _atomic_write(table: pa.Table, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            pq.write_table(table, handle, compression="zstd")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
