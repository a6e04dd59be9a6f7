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
from decimal import Decimal, InvalidOperation
from typing import Literal

import msgspec

__all__ = [
    "ACTION_TYPES",
    "CASH_TYPES",
    "ImportRow",
    "ParseResult",
    "RowError",
    "RowType",
    "content_key",
    "parse_amount",
    "parse_date",
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


class ParseResult(msgspec.Struct, kw_only=True):
    """What a parser read: the rows, every error, and lines dropped as duplicates."""

    format: str
    rows: list[ImportRow]
    errors: list[RowError]
    duplicates: list[int]  # lines whose source id an earlier line of the file already had

    @property
    def ok(self) -> bool:
        return not self.errors

    def counts(self) -> dict[str, int]:
        """Rows per type, for a dry run's summary."""
        return dict(sorted(Counter(r.type for r in self.rows).items()))


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
