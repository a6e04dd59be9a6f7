"""CSV statements: a generic column mapping and presets for broker exports.

A layout says which header holds each field and how a row's type is read.
The generic layout takes a :class:`CsvMapping` from the user; the presets are
the files two widely used US brokers let their customers download:

* ``schwab``: Charles Schwab, Accounts > History > Export, header
  ``"Date","Action","Symbol","Description","Quantity","Price","Fees & Comm","Amount"``;
  dates ``MM/DD/YYYY`` (``"01/02/2027 as of 12/31/2026"`` applies on the "as of"
  date), money as ``$1,234.56`` / ``-$90.00``, a ``Transactions Total`` line at the end.
* ``fidelity``: Fidelity, Activity & Orders > History > Download
  (``Accounts_History.csv``), header ``Run Date,Action,Symbol,Description,Type,
  Quantity,Price ($),Commission ($),Fees ($),Accrued Interest ($),Amount ($),...``
  after a few preamble lines, a free-text ``Action`` ("YOU BOUGHT ...", "DIVIDEND
  RECEIVED ..."), sells with a negative quantity, and a disclaimer after a blank line.

Neither broker publishes a specification of its file: the layouts are the ones
those downloads write, as docs/service.md shows with an example of each.

Cash rows. Both downloads sign ``Amount`` from the account's side, the net cash
the row moved (a buy's is ``-(quantity x price + fees)``, a deposit's positive),
in US dollars (US accounts). The actions that move cash only:

============================================  =========================================
Schwab "MoneyLink Transfer", "MoneyLink       ``deposit`` when the amount is positive,
Deposit", "Wire Funds", "Wire Received",      else ``withdrawal`` (a "Journal" or
"Funds Received", "Journal", "Security        transfer naming a symbol and a quantity
Transfer"; Fidelity "ELECTRONIC FUNDS         moves shares: ``transfer``)
TRANSFER ...", "CASH CONTRIBUTION ...",
"TRANSFERRED FROM/TO ...", "DIRECT
DEPOSIT/DEBIT ...", "DEPOSIT", "WITHDRAWAL",
"CHECK RECEIVED/PAID", "BILL PAYMENT",
"WIRE TRANSFER ..."
Schwab "Bank Interest", "Credit Interest",    ``interest`` (a negative amount: ``fee``)
"Bond Interest"; Fidelity "INTEREST EARNED"
Schwab "Service Fee", "ADR Mgmt Fee",         ``fee`` (a positive amount, a refund:
"Margin Interest", "Foreign Tax Paid",        ``interest``)
"NRA Tax Adj"; Fidelity "FEE CHARGED",
"FOREIGN TAX PAID", "MARGIN INTEREST",
"ADVISORY FEE"
============================================  =========================================
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import get_args

import msgspec

from service.imports.rows import RowType, parse_date

__all__ = [
    "ACTION_FIELDS", "PRESETS", "CsvMapping", "Layout", "detect_preset", "generic_layout", "parse_date_any",
]  # fmt: skip

#: The corporate actions' columns, named as the typed transaction's fields.
ACTION_FIELDS = (
    "split_ratio", "cash_in_lieu", "ratio", "target_symbol", "basis_allocation", "cash_per_share",
)  # fmt: skip
FIELDS = (
    "date", "type", "symbol", "quantity", "price", "fees", "amount", "currency", "id",
    *ACTION_FIELDS, "lot_id",
)  # fmt: skip
ROW_TYPES: frozenset[str] = frozenset(get_args(RowType))


class CsvMapping(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """How to read a CSV the presets do not know.

    ``columns`` maps a field (``date``, ``type``, ``symbol``, ``quantity``,
    ``price``, ``fees``, ``amount``, ``currency``, ``id``, ``lot_id``, and the corporate
    actions' ``split_ratio``, ``cash_in_lieu``, ``ratio``, ``target_symbol``,
    ``basis_allocation``, ``cash_per_share``) to the header of the column holding it; unmapped fields use a column named like the field, if any.
    ``types`` maps the file's type words (case-insensitive) to row types; the row
    types' own names are always understood. ``date_format`` uses ``strptime``
    codes (default ISO ``YYYY-MM-DD``); ``decimal_comma`` reads ``1.234,56``.
    ``currency`` (ISO 4217) applies to rows without a currency cell; unset, such a
    row is in its asset's currency (a cash row: the portfolio's base currency).
    """

    columns: dict[str, str] = {}
    types: dict[str, str] = {}
    date_format: str | None = None
    decimal_comma: bool = False
    delimiter: str = ","
    currency: str | None = None


#: Decides a row's type from its cells (field -> text) and signed amount; None if unknown.
Classifier = Callable[[dict[str, str], Decimal | None], "str | None"]


@dataclass(frozen=True)
class Layout:
    """Where each field is and how to read types, dates and numbers."""

    name: str
    # field -> accepted headers: the first present wins, except ``fees``, which sums
    # every present one (Fidelity splits commission and fees in two columns)
    headers: dict[str, tuple[str, ...]]
    classify: Classifier
    date_formats: tuple[str | None, ...] = (None,)
    decimal_comma: bool = False
    delimiter: str = ","
    currency: str | None = None  # of rows without a currency cell (None: the file does not say)
    stop_at_blank: bool = False  # a blank line ends the data (a footer follows)
    skip_dates: frozenset[str] = field(default_factory=frozenset)  # summary lines, not rows


def _by_sign(amount: Decimal | None) -> str:
    return "withdrawal" if amount is not None and amount < 0 else "deposit"


def _signed(kind: str | None, amount: Decimal | None) -> str | None:
    """A broker's signed amount over its word: interest paid is a cost (``fee``), a
    cost paid back (a fee or tax refund) is income (``interest``)."""
    if kind == "interest" and amount is not None and amount < 0:
        return "fee"
    if kind == "fee" and amount is not None and amount > 0:
        return "interest"
    return kind


def _moves_shares(cells: dict[str, str]) -> bool:
    """A transfer or journal row naming a symbol and a quantity moves shares, not cash."""
    return bool(cells.get("symbol", "").strip() and cells.get("quantity", "").strip())


def generic_layout(mapping: CsvMapping | None = None) -> Layout:
    """The layout a :class:`CsvMapping` describes (defaults: headers named like the fields)."""
    m = mapping or CsvMapping()
    unknown = sorted(set(m.columns) - set(FIELDS))
    if unknown:
        raise ValueError(f"mapping.columns: unknown field {unknown[0]!r} (fields: {', '.join(FIELDS)})")
    bad = sorted(v for v in m.types.values() if v not in ROW_TYPES)
    if bad:
        raise ValueError(f"mapping.types: {bad[0]!r} is not a row type ({', '.join(sorted(ROW_TYPES))})")
    words = {k.strip().lower(): v for k, v in m.types.items()}

    def classify(cells: dict[str, str], amount: Decimal | None) -> str | None:
        word = cells.get("type", "").strip().lower()
        return words.get(word) or (word if word in ROW_TYPES else None)

    headers: dict[str, tuple[str, ...]] = {f: (m.columns[f],) if f in m.columns else (f,) for f in FIELDS}
    return Layout(
        name="generic", headers=headers, classify=classify, date_formats=(m.date_format,),
        decimal_comma=m.decimal_comma, delimiter=m.delimiter,
        currency=m.currency.strip().upper() if m.currency else None,
    )


_SCHWAB_TYPES = {
    "buy": "buy", "reinvest shares": "buy",
    "sell": "sell",
    "qualified dividend": "dividend", "cash dividend": "dividend", "non-qualified div": "dividend",
    "reinvest dividend": "dividend", "special dividend": "dividend", "qual div reinvest": "dividend",
    "pr yr div reinvest": "dividend", "long term cap gain": "dividend", "short term cap gain": "dividend",
    "bank interest": "interest", "credit interest": "interest", "bond interest": "interest",
    "adr mgmt fee": "fee", "service fee": "fee", "margin interest": "fee", "foreign tax paid": "fee",
    "nra tax adj": "fee",
    "stock split": "split",
}
_SCHWAB_CASH_MOVES = frozenset({"moneylink transfer", "moneylink deposit", "wire funds", "wire received",
                                "funds received", "journal", "security transfer"})


def _schwab(cells: dict[str, str], amount: Decimal | None) -> str | None:
    action = cells.get("type", "").strip().lower()
    if action in _SCHWAB_CASH_MOVES:
        return "transfer" if _moves_shares(cells) else _by_sign(amount)
    return _signed(_SCHWAB_TYPES.get(action), amount)


_FIDELITY_PREFIXES = (
    ("YOU BOUGHT", "buy"), ("REINVESTMENT", "buy"), ("YOU SOLD", "sell"),
    ("DIVIDEND RECEIVED", "dividend"), ("LONG-TERM CAP GAIN", "dividend"),
    ("SHORT-TERM CAP GAIN", "dividend"), ("INTEREST EARNED", "interest"),
    ("FEE CHARGED", "fee"), ("FOREIGN TAX PAID", "fee"), ("MARGIN INTEREST", "fee"),
    ("ADVISORY FEE", "fee"), ("DISTRIBUTION", "split"),
)
_FIDELITY_CASH = re.compile(
    r"^(ELECTRONIC FUNDS TRANSFER|CASH CONTRIBUTION|TRANSFERRED (FROM|TO)|DIRECT (DEPOSIT|DEBIT)|"
    r"DEPOSIT|WITHDRAWAL|CHECK (RECEIVED|PAID)|BILL PAYMENT|WIRE TRANSFER)"
)


def _fidelity(cells: dict[str, str], amount: Decimal | None) -> str | None:
    action = " ".join(cells.get("type", "").upper().split())
    for prefix, kind in _FIDELITY_PREFIXES:
        if action.startswith(prefix):
            return _signed(kind, amount)
    if _FIDELITY_CASH.match(action):
        return "transfer" if _moves_shares(cells) else _by_sign(amount)
    return None


_BASE_HEADERS: dict[str, tuple[str, ...]] = {
    "currency": ("Currency",), "id": (), "lot_id": (), **dict.fromkeys(ACTION_FIELDS, ()),
}  # fmt: skip
#: Both brokers' downloads are of US accounts, in US dollars.
_US_ACCOUNT = "USD"

PRESETS: dict[str, Layout] = {
    "schwab": Layout(
        name="schwab",
        headers={
            **_BASE_HEADERS, "date": ("Date",), "type": ("Action",), "symbol": ("Symbol",),
            "quantity": ("Quantity",), "price": ("Price",), "fees": ("Fees & Comm",), "amount": ("Amount",),
        },
        classify=_schwab, date_formats=("%m/%d/%Y",), skip_dates=frozenset({"transactions total"}),
        currency=_US_ACCOUNT,
    ),
    "fidelity": Layout(
        name="fidelity",
        headers={
            **_BASE_HEADERS, "date": ("Run Date",), "type": ("Action",), "symbol": ("Symbol",),
            "quantity": ("Quantity",), "price": ("Price ($)", "Price"),
            "fees": ("Commission ($)", "Commission", "Fees ($)", "Fees"),
            "amount": ("Amount ($)", "Amount"),
        },
        classify=_fidelity, date_formats=("%m/%d/%Y", "%m-%d-%Y"), stop_at_blank=True,
        currency=_US_ACCOUNT,
    ),
}

def detect_preset(header: list[str]) -> str | None:
    """The preset whose header this is, or None."""
    names = [h.strip() for h in header]
    if names[:3] == ["Date", "Action", "Symbol"] and "Fees & Comm" in names:
        return "schwab"
    if names and names[0] == "Run Date" and "Action" in names:
        return "fidelity"
    return None


def parse_date_any(text: str, formats: tuple[str | None, ...]) -> dt.date:
    """The first of ``formats`` that reads ``text``; ValueError naming them otherwise."""
    for fmt in formats:
        try:
            return parse_date(text, fmt)
        except ValueError:
            continue
    shown = ", ".join(f or "YYYY-MM-DD" for f in formats)
    raise ValueError(f"not a date in the format {shown}: {text!r}")
