"""Shared pieces of the tax reports' exports: cents to ``Decimal``, JSON-ready values,
CSV and JSON text written to a path when given."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["export_csv", "export_json", "jsonable", "money", "write_json"]


def money(c: int | np.integer) -> Decimal:
    """Cents (an int) as a ``Decimal`` of dollars with two places."""
    return Decimal(int(c)).scaleb(-2)


def jsonable(value: Any) -> Any:
    """Decimals and dates as text, through dicts, lists and tuples."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def export_csv(frame: pd.DataFrame, path: str | Path | None) -> str:
    """The frame's CSV text (no index, ``\\n`` line ends), written to ``path`` when given."""
    text = frame.to_csv(index=False, lineterminator="\n")
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text


def write_json(text: str, path: str | Path | None) -> str:
    """``text``, written to ``path`` (with a final newline) when given."""
    if path is not None:
        Path(path).write_text(text + "\n", encoding="utf-8")
    return text


def export_json(payload: Any, path: str | Path | None) -> str:
    """The payload as indented JSON text (:func:`jsonable`), written to ``path`` when given."""
    return write_json(json.dumps(jsonable(payload), indent=2), path)
