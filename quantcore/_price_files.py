"""Price files as the command line reads them, and the one error it reports as a usage error.

``python -m quantcore`` and :func:`quantcore.report.report_from_files` both read
price files here. Keeping the reader out of ``quantcore/__main__.py`` matters:
under ``python -m quantcore`` that file runs as ``__main__``, and a module that
imported it back would load a second copy with a second :class:`UsageError`
class that ``main()`` does not catch.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

__all__ = ["UsageError", "read_prices"]


class UsageError(Exception):
    """A user-facing error: printed as one line, exit code 2."""


def read_prices(path: str) -> pd.DataFrame:
    """Read a CSV (first column: the date index) or Parquet price file.

    A frame with ``Open`` and ``Close`` columns is one asset's OHLC bars; any other
    frame's numeric columns are the closes of several assets.
    """
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"price file not found: {path}")
    try:
        if p.suffix.lower() in (".parquet", ".pq"):
            frame = pd.read_parquet(p)
        elif p.suffix.lower() in (".csv", ".txt"):
            frame = pd.read_csv(p, index_col=0, parse_dates=True)
        else:
            raise UsageError(f"price file must be .csv or .parquet, got {p.name}")
    except UsageError:
        raise
    except Exception as exc:
        raise UsageError(
            f"cannot read {p.name}: {type(exc).__name__}: {exc}".splitlines()[0]
        ) from None
    lower = {str(c).lower(): c for c in frame.columns}
    if "close" in lower:
        keep = [lower[c] for c in ("open", "high", "low", "close") if c in lower]
        frame = frame[keep]
    else:
        frame = frame.select_dtypes("number")
    if frame.empty or frame.shape[1] == 0:
        raise UsageError(f"{p.name} has no numeric price columns")
    return frame
