"""A CSV file's records as columns, for the column reader (``service.imports.csvfile``).

Two ways in: the text split once at its delimiter when the CSV reader would do no more
(:func:`plain_cells`, :func:`cells_table`), or the CSV reader's records taken apart
(:func:`records_table`). Either gives a :class:`Table`.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["Table", "cells_table", "plain_cells", "records_table"]


@dataclass(slots=True)
class Table:
    """Records as columns: ``columns[i]`` the ``i``-th cell of each (records longer than the
    columns read cut), ``record(k)`` the ``k``-th record whole (None once taken: the
    records go as soon as the column reader has their keys), ``lines`` the line of each."""

    columns: dict[int, Sequence[str]]
    record: Callable[[int], list[str]] | None
    lines: list[int] | range


def plain_cells(data: bytes, delimiter: str, header_line: int) -> tuple[list[str], int] | None:
    """The cells of the records after the header (line ``header_line``), one record after
    the other, and the cells a record has, when the CSV reader would only split each line
    at the delimiter: no quote, carriage return or NUL in the text, every line (none blank)
    with as many cells, none longer than the reader's field limit; else None. One split of
    the text, instead of a list per record taken apart again into columns."""
    text = data.decode("utf-8-sig")
    if '"' in text or "\r" in text or "\0" in text:
        return None
    parts = text.split("\n", header_line)
    if len(parts) <= header_line:
        return None
    body = parts[header_line]
    del text, parts
    if body.endswith("\n"):
        body = body[:-1]
    lines = body.split("\n")
    size = lines[0].count(delimiter) + 1
    if (
        not body or size < 2 or max(map(len, lines)) > csv.field_size_limit()
        or any(line.count(delimiter) != size - 1 for line in lines)
    ):  # fmt: skip
        return None
    del lines
    return body.replace("\n", delimiter).split(delimiter), size


def cells_table(cells: list[str], size: int, header_line: int) -> Table:
    """The records of :func:`plain_cells` as columns (each a slice of ``cells``)."""
    n = len(cells) // size
    return Table(
        {i: cells[i::size] for i in range(size)},
        lambda k: cells[k * size : (k + 1) * size],
        range(header_line + 1, header_line + 1 + n),
    )


def records_table(records: list[list[str]], width: int, header_line: int) -> Table | None:
    """``records`` (each one line) as columns of ``width`` cells (blank lines left out), or
    None when a record other than a blank line is shorter (the row-by-row reader pads it).
    It takes ``records`` over (the list is emptied): each column's text then goes as soon
    as it is converted, instead of a file's worth of cells staying alive under the objects
    made from them. The caller reads the records again if it needs them."""
    lines: list[int] | range = range(header_line + 1, header_line + 1 + len(records))
    kept = records
    if not records or min(map(len, records)) < width:
        lines, kept = [], []
        for k, record in enumerate(records):
            if len(record) < width:
                if any(c.strip() for c in record):
                    return None  # short rows: the row-by-row reader pads them
                continue  # a blank line
            lines.append(header_line + 1 + k)
            kept.append(record)
    if not kept:
        return None
    # records longer than width are cut, as the reads of the column reader cut them
    columns: dict[int, Sequence[str]] = dict(zip(range(width), zip(*kept, strict=False), strict=False))
    whole = kept if kept is not records else list(records)
    records.clear()
    return Table(columns, whole.__getitem__, lines)
