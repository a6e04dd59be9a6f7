"""Normalized import rows, row errors, and the value parsers every format shares.

A broker statement, whatever its format, becomes a list of :class:`ImportRow` in
the ledger's vocabulary plus every :class:`RowError` found, each with the line of
the file it came from, so a caller can refuse the whole file and name every bad
line at once.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from operator import ne
from typing import Literal

import msgspec
import numpy as np
from numpy.typing import NDArray

__all__ = [
    "ACTION_TYPES",
    "CASH_TYPES",
    "ImportRow",
    "ParseResult",
    "ParsedColumns",
    "RowError",
    "RowType",
    "content_key",
    "parse_amount",
    "parse_date",
    "units",
]

RowType = Literal[
    "buy", "sell", "dividend", "deposit", "withdrawal", "interest", "fee", "split", "transfer",
    "stock_dividend", "return_of_capital", "spin_off", "merger",
]

#: Types that move cash only: ``quantity`` is 1 and ``price`` the amount, no symbol.
CASH_TYPES = frozenset({"deposit", "withdrawal", "interest", "fee"})
#: Corporate actions besides a split: they act on every share held (no quantity).
ACTION_TYPES = frozenset({"stock_dividend", "return_of_capital", "spin_off", "merger"})

ONE = Decimal(1)


class ImportRow(msgspec.Struct, kw_only=True, frozen=True, gc=False):
    """One ledger entry read from a statement.

    Conventions (the ledger's): ``quantity``, ``price`` and ``fees`` are
    non-negative, the type carries the direction. Cash rows (deposit,
    withdrawal, interest, fee) and dividends have ``quantity`` 1 and ``price``
    the amount: statements give a dividend's total, not its per-share rate.
    ``split``: ``ratio`` is new shares per old share when the statement says
    it (OFX, or a CSV's ``split_ratio``), else ``quantity`` the shares added
    (negative for a reverse split). The other corporate actions (``stock_dividend``,
    ``return_of_capital``, ``spin_off``, ``merger``) act on every share held:
    ``quantity`` 0, and the fields of a typed transaction: ``ratio`` (a stock
    dividend's ``split_ratio``, a spin-off's or merger's ``ratio``), ``cash`` (a
    split's or stock dividend's ``cash_in_lieu``, a merger's ``cash_per_share``),
    ``target_symbol``, ``basis_allocation``, and ``price`` (a return of capital's
    amount per share, a merger's value of one new share).
    ``transfer``: shares moved in (positive ``quantity``) or out (negative),
    ``price`` the per-share cost basis when given, else 0.

    ``currency``: a security row's amounts are in it (its asset's currency); a
    cash row's cash moves in it.
    """

    line: int  # 1-based line of the file where the entry starts
    source_id: str  # idempotency key: OFX FITID, or a hash of the CSV row
    date: dt.date
    type: RowType
    symbol: str | None
    quantity: Decimal
    price: Decimal
    fees: Decimal = Decimal(0)
    currency: str | None = None  # ISO 4217; None: the file does not say (the importer decides)
    ratio: Decimal | None = None
    fx_rate: Decimal | None = None  # statement currency per row currency (OFX CURRATE)
    memo: str = ""
    lot_source: str | None = None  # a sell of a specific lot: the source id of its buy
    cash: Decimal | None = None  # cash in lieu of a fraction (total), or a merger's per share
    target_symbol: str | None = None  # the shares a spin-off or merger delivers
    basis_allocation: Decimal | None = None  # a spin-off's share of the old basis


class RowError(msgspec.Struct, kw_only=True, frozen=True):
    """A problem with one line (or the file: ``line`` 0 when it has no line)."""

    line: int
    field: str
    code: str  # "invalid", "required", "unknown_type", "unsupported", "malformed", "mismatch"
    message: str


I64 = NDArray[np.int64]
#: The ledger's unit (``1e-8``): units of 1.
UNIT = 10**8
#: Row types whose plain rows (:class:`ParsedColumns`) carry only the common fields.
PLAIN_TYPES = frozenset({"buy", "sell", "dividend", *CASH_TYPES})
#: ``date.toordinal()`` of 1970-01-01, day 0 of ``datetime64[D]``.
_EPOCH = dt.date(1970, 1, 1).toordinal()


def units(values: Sequence[Decimal]) -> I64 | None:
    """Exact counts of ``1e-8`` units of ``values``, or None when one is not finite, has
    more than eight fractional digits or does not fit an int64 (the row path decides)."""
    try:
        scaled = [v.scaleb(8) for v in values]
        whole = [int(v) for v in scaled]
    except (ValueError, OverflowError):  # NaN, infinity
        return None
    if any(map(ne, whole, scaled)):
        return None
    try:
        return np.array(whole, np.int64) if whole else np.zeros(0, np.int64)
    except OverflowError:
        return None


@dataclass(frozen=True, slots=True)
class ParsedColumns:
    """Plain rows (buys, sells, dividends, cash rows naming no lot and no corporate-action
    field) as columns, in file order: what :class:`ImportRow` holds of them, the amounts
    as exact int64 counts of ``1e-8`` units, the dates as ``datetime64[D]``."""

    line: I64
    source: list[str]  # the statement's source ids (before :func:`~service.imports.write.source_id`)
    date: NDArray[np.datetime64]
    kind: NDArray[np.object_]
    symbol: NDArray[np.object_]  # None on cash rows
    currency: NDArray[np.object_]  # None: the file does not say
    quantity: I64
    price: I64
    fees: I64

    def __len__(self) -> int:
        return int(self.line.shape[0])

    def take(self, at: NDArray[np.intp]) -> ParsedColumns:
        """The rows at the indices ``at``."""
        return ParsedColumns(
            self.line[at], [self.source[i] for i in at.tolist()], self.date[at], self.kind[at],
            self.symbol[at], self.currency[at], self.quantity[at], self.price[at], self.fees[at],
        )  # fmt: skip

    @classmethod
    def from_rows(cls, rows: Sequence[ImportRow]) -> ParsedColumns | None:
        """``rows`` as columns, or None unless every row is plain and every amount exact to
        ``1e-8`` within an int64."""
        for r in rows:
            if r.type not in PLAIN_TYPES or r.lot_source is not None or r.ratio is not None:
                return None
            if r.cash is not None or r.target_symbol is not None or r.basis_allocation is not None:
                return None
        q, p, f = (units([getattr(r, name) for r in rows]) for name in ("quantity", "price", "fees"))
        if q is None or p is None or f is None:
            return None
        ordinals = np.fromiter((r.date.toordinal() for r in rows), np.int64, len(rows))
        return cls(
            line=np.array([r.line for r in rows], np.int64), source=[r.source_id for r in rows],
            date=(ordinals - _EPOCH).astype("datetime64[D]"),
            kind=np.array([r.type for r in rows], dtype=object),
            symbol=np.array([r.symbol for r in rows], dtype=object),
            currency=np.array([r.currency for r in rows], dtype=object),
            quantity=q, price=p, fees=f,
        )  # fmt: skip


class ParseResult(msgspec.Struct, kw_only=True):
    """What a parser read: the rows, every error, and lines dropped as duplicates.

    ``columns``: the rows as columns instead (``rows`` then empty), when the caller asked
    for them and the reader could; ``again`` then reads the rows themselves (the
    row-by-row reader, for the checks and words of the row-by-row plan)."""

    format: str
    rows: list[ImportRow]
    errors: list[RowError]
    duplicates: list[int]  # lines whose source id an earlier line of the file already had
    columns: ParsedColumns | None = None
    again: Callable[[], list[ImportRow]] | None = None

    @property
    def ok(self) -> bool:
        return not self.errors

    def counts(self) -> dict[str, int]:
        """Rows per type, for a dry run's summary."""
        kinds = self.columns.kind.tolist() if self.columns is not None else [r.type for r in self.rows]
        return dict(sorted(Counter(kinds).items()))

    def row_objects(self) -> list[ImportRow]:
        """The rows, read again if they came as columns (then kept as ``rows``)."""
        if self.columns is not None and self.again is not None:
            self.rows, self.columns, self.again = self.again(), None, None
        return self.rows


_NUMBER_JUNK = re.compile(r"[\s$€£¥,]")


def parse_amount(text: str | None, *, decimal_comma: bool = False) -> Decimal | None:
    """A money or quantity cell as a Decimal; None when empty.

    Accepts broker spellings: ``$1,234.56``, ``-$90.00``, ``($90.00)`` (negative),
    ``+5``; with ``decimal_comma``, ``1.234,56``. Raises ``ValueError`` otherwise.
    """
    if text is None:
        return None
    s = text.strip()
    if s in ("", "--", "-"):
        return None
    negative = s.startswith("(") and s.endswith(")")
    if negative:
        s = s[1:-1]
    if decimal_comma:
        s = s.replace(".", "").replace(",", ".")
    s = _NUMBER_JUNK.sub("", s)
    try:
        value = Decimal(s)
    except InvalidOperation:
        raise ValueError(f"not a number: {text!r}") from None
    if not value.is_finite():
        raise ValueError(f"not a finite number: {text!r}")
    return -value if negative else value


_AS_OF = re.compile(r"^\s*\S+\s+as of\s+(\S+)\s*$", re.IGNORECASE)


def parse_date(text: str, fmt: str | None = None) -> dt.date:
    """A date cell: ISO ``2025-01-31`` by default, else ``fmt`` (``strptime`` codes).

    Schwab's ``"01/02/2027 as of 12/31/2026"`` means the transaction applied on
    the "as of" date; that date is the one returned.
    """
    s = text.strip()
    m = _AS_OF.match(s)
    if m:
        s = m.group(1)
    if fmt is None:
        return dt.date.fromisoformat(s[:10])
    return dt.datetime.strptime(s, fmt).date()


def content_key(prefix: str, cells: list[str], seen: Counter[str]) -> str:
    """Idempotency key of a CSV row: a hash of its cells and its occurrence number.

    Two identical rows in one file (two equal buys on a day) are two entries, so
    the n-th copy hashes with ``n``; the same file read again gives the same keys.
    ``seen`` counts the copies met so far in the file.
    """
    body = "\x1f".join(c.strip() for c in cells)
    seen[body] += 1
    digest = hashlib.sha256(f"{body}\x1e{seen[body]}".encode()).hexdigest()[:32]
    return f"{prefix}:{digest}"
