"""OFX/QFX investment statements (``INVSTMTRS``) read with ``ofxtools``.

``ofxtools`` reads the header and the markup of OFX 1.x (SGML) and 2.x (XML) and
validates every transaction aggregate against the OFX 2.2 specification
(section 13). Each transaction is converted on its own, so one bad entry is
reported with its line while the others are still checked.

Mapping (OFX 2.2 section 13.9.2.4):

=====================================  =====================================
``BUYSTOCK`` ``BUYMF`` ``BUYDEBT``     ``buy`` (fees: commission + fees +
``BUYOTHER``                           taxes + load)
``SELLSTOCK`` ``SELLMF`` ``SELLDEBT``  ``sell`` (fees also take withholding)
``SELLOTHER``
``INCOME``                             ``dividend`` (``interest`` when
                                       ``INCOMETYPE`` is ``INTEREST``)
``REINVEST``                           a ``dividend`` and a ``buy`` of the
                                       same amount (ids ``FITID#income`` and
                                       ``FITID#buy``)
``INVEXPENSE`` ``MARGININTEREST``      ``fee``
``SPLIT``                              ``split`` (ratio numerator/denominator)
``TRANSFER``                           ``transfer`` (in: +units, out: -units)
``INVBANKTRAN``                        by ``STMTTRN/TRNTYPE`` (below)
``JRNLFUND`` ``JRNLSEC``               skipped: a move between sub-accounts
                                       of the same account changes nothing
options, ``RETOFCAP``                  an ``unsupported`` error
=====================================  =====================================

``INVBANKTRAN`` holds a bank ``STMTTRN`` (OFX 2.2 section 11.4.3; the ``TRNTYPE``
values are the ones ofxtools validates, its section 11.3.1.1), whose ``TRNAMT`` is
signed from the customer's side (section 3.2.9.2: received positive, paid negative):

=======================================  =====================================
``INT`` ``DIV``                          ``interest`` (a negative amount is
                                         interest charged: ``fee``)
``FEE`` ``SRVCHG``                       ``fee`` (a positive amount is a fee
                                         refunded: income, ``interest``)
``CREDIT`` ``DEP`` ``DIRECTDEP``         ``deposit`` when the amount is
``DEBIT`` ``ATM`` ``CHECK`` ``PAYMENT``  positive, else ``withdrawal``: the
``DIRECTDEBIT`` ``XFER`` ``POS``         sign decides, whatever the type says
``CASH`` ``REPEATPMT`` ``OTHER`` ...
=======================================  =====================================

Currencies (OFX 2.2 section 5.2): amounts are in the statement's ``CURDEF`` unless
the transaction has a ``CURRENCY`` aggregate (amounts in its ``CURSYM``) or an
``ORIGCURRENCY`` one (amounts converted into ``CURDEF`` from ``CURSYM``; ``CURRATE``
is ``CURDEF`` per unit of ``CURSYM`` in both). A row with a symbol is kept in the
security's currency: ``CURSYM`` for either aggregate, its ``ORIGCURRENCY`` amounts
divided by ``CURRATE`` (8 decimal places). A cash row is in the currency its cash
moved in: ``CURSYM`` with ``CURRENCY``, ``CURDEF`` otherwise.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import warnings
import xml.etree.ElementTree as ET
from decimal import Decimal
from typing import Any

from ofxtools.header import OFXHeaderError, parse_header
from ofxtools.models.base import Aggregate, UnknownTagWarning
from ofxtools.Parser import ParseError, TreeBuilder

from service.imports.rows import ONE, ImportRow, ParseResult, RowError

__all__ = ["parse_ofx"]

_BUYS = ("BUYSTOCK", "BUYMF", "BUYDEBT", "BUYOTHER")
_SELLS = ("SELLSTOCK", "SELLMF", "SELLDEBT", "SELLOTHER")
#: Elements of an investment transaction whose text is a decimal number (OFX 2.1.1, 13.9).
_NUMERIC_TAGS = frozenset({
    "UNITS", "UNITPRICE", "COMMISSION", "FEES", "TAXES", "TOTAL", "TRNAMT", "MARKUP",
    "MARKDOWN", "LOAD", "WITHHOLDING", "STATEWITHHOLDING", "PENALTY", "CURRATE", "ACCRDINT",
    "NUMERATOR", "DENOMINATOR", "OLDUNITS", "NEWUNITS", "FRACCASH", "GAIN",
})  # fmt: skip
_UNSUPPORTED = {
    "BUYOPT": "options are not supported",
    "SELLOPT": "options are not supported",
    "CLOSUREOPT": "options are not supported",
    "RETOFCAP": "return of capital is not supported yet",
}
_SKIPPED = ("JRNLFUND", "JRNLSEC")
_TRANSACTION_TAGS = (
    *_BUYS, *_SELLS, *_UNSUPPORTED, *_SKIPPED,
    "INCOME", "REINVEST", "INVEXPENSE", "MARGININTEREST", "SPLIT", "TRANSFER", "INVBANKTRAN",
)
_OPENING = re.compile(r"<(" + "|".join(_TRANSACTION_TAGS) + r")>")
_POSITION = re.compile(r"position=\[(\d+):")
_END = re.compile(r"</OFX>\s*$")
_ZERO = Decimal(0)
_EIGHT = Decimal("1e-8")


def _line_of(text: str, offset: int, first_line: int) -> int:
    return first_line + text.count("\n", 0, offset)


def _opening_lines(body: str, first_line: int) -> list[int]:
    """Line of each transaction's opening tag, in file order (one pass over the body)."""
    out: list[int] = []
    line, pos = first_line, 0
    for m in _OPENING.finditer(body):
        line += body.count("\n", pos, m.start())
        pos = m.start()
        out.append(line)
    return out


def _sum(*values: Decimal | None) -> Decimal:
    return sum((v for v in values if v is not None), _ZERO)


def _fail(line: int, field: str, code: str, message: str) -> ParseResult:
    return ParseResult(
        format="ofx", rows=[], errors=[RowError(line=line, field=field, code=code, message=message)],
        duplicates=[],
    )


def parse_ofx(data: bytes) -> ParseResult:
    """Read every investment transaction of an OFX/QFX file (1.x SGML or 2.x XML).

    Args:
        data: the file's bytes.

    Returns:
        The rows in file order, every error with its line, and the lines of
        entries whose ``FITID`` an earlier entry already had (dropped).
    """
    try:
        _header, body = parse_header(io.BytesIO(data))
    except (OFXHeaderError, ValueError, UnicodeDecodeError) as exc:
        return _fail(1, "file", "malformed", f"not an OFX file: {exc}")
    # the body is the file's tail: its first line follows the header's lines
    first_line = data.count(b"\n") - body.count("\n") + 1
    builder = _NestingBuilder()
    try:
        builder.feed(body)
        root = builder.close()
    except ParseError as exc:
        m = _POSITION.search(str(exc))
        line = _line_of(body, int(m.group(1)), first_line) if m else 0
        return _fail(line, "file", "malformed", f"OFX markup: {str(exc).split(' - position')[0][:200]}")
    except (ET.ParseError, IndexError, ValueError) as exc:  # end tags that close the wrong aggregate
        return _fail(0, "file", "malformed", f"OFX markup: aggregates do not nest ({exc})")
    if not _END.search(body):
        last = first_line + body.rstrip().count("\n")
        return _fail(last, "file", "malformed", "OFX markup is incomplete: no </OFX> at the end (truncated file?)")
    statements = root.findall(".//INVSTMTRS")
    if not statements:
        return _fail(0, "file", "unsupported", "no investment statement (INVSTMTRS) in the file")
    securities = _securities(root)
    lines = _opening_lines(body, first_line)
    reader = _Reader(securities)
    ordinal = 0
    with warnings.catch_warnings():
        # brokers add tags of their own; the spec's tags are what the rows need
        warnings.simplefilter("ignore", UnknownTagWarning)
        for stmt in statements:
            curdef = (stmt.findtext("CURDEF") or "USD").strip().upper()
            tranlist = stmt.find("INVTRANLIST")
            if tranlist is None:
                continue
            for elem in tranlist:
                if elem.tag not in _TRANSACTION_TAGS:
                    continue  # DTSTART, DTEND
                line = lines[ordinal] if ordinal < len(lines) else 0
                ordinal += 1
                reader.read(elem, line, curdef)
    return ParseResult(format="ofx", rows=reader.rows, errors=reader.errors, duplicates=reader.duplicates)


class _NestingBuilder(TreeBuilder):
    """ofxtools' builder, refusing an end tag that does not close the open aggregate.

    ElementTree's builder pops whatever is open, so a stray end tag would silently
    move the rest of the file under another aggregate.
    """

    def __init__(self) -> None:
        super().__init__()
        self._open: list[str] = []

    def start(self, tag: str, attrs: dict[str, str]) -> ET.Element:
        self._open.append(tag)
        return super().start(tag, attrs)

    def end(self, tag: str) -> ET.Element:
        if not self._open or self._open[-1] != tag:
            opened = f"<{self._open[-1]}>" if self._open else "nothing"
            raise ParseError(f"</{tag}> closes {opened}")
        self._open.pop()
        return super().end(tag)


def _securities(root: ET.Element) -> dict[str, str]:
    """``UNIQUEID`` -> ticker from the statement's ``SECLIST`` (the id itself without a ticker)."""
    out: dict[str, str] = {}
    seclist = root.find(".//SECLIST")
    if seclist is None:
        return out
    for info in seclist.iter("SECINFO"):
        uid = (info.findtext("SECID/UNIQUEID") or "").strip()
        ticker = (info.findtext("TICKER") or "").strip().upper()
        if uid:
            out[uid] = ticker or uid
    return out


class _Reader:
    """Turns converted transaction aggregates into rows, collecting errors and duplicates."""

    def __init__(self, securities: dict[str, str]) -> None:
        self.securities = securities
        self.rows: list[ImportRow] = []
        self.errors: list[RowError] = []
        self.duplicates: list[int] = []
        self.seen: dict[str, tuple[ET.Element, int]] = {}
        self.money = _Money("USD", None, None)

    def error(self, line: int, field: str, code: str, message: str) -> None:
        self.errors.append(RowError(line=line, field=field, code=code, message=message))

    def read(self, elem: ET.Element, line: int, curdef: str) -> None:
        tag = elem.tag
        if tag in _SKIPPED:
            return
        fitid = (elem.findtext(".//FITID") or "").strip()
        if not fitid:
            self.error(line, "FITID", "required", f"{tag} without a FITID")
            return
        if fitid in self.seen:
            first, first_line = self.seen[fitid]
            if ET.tostring(first) != ET.tostring(elem):
                # the same id on another transaction: one of them would be lost
                self.error(line, "FITID", "invalid", f"FITID {fitid} of line {first_line} names another transaction")
            else:
                self.duplicates.append(line)
            return
        self.seen[fitid] = (elem, line)
        if tag in _UNSUPPORTED:
            self.error(line, tag, "unsupported", f"{tag}: {_UNSUPPORTED[tag]}")
            return
        try:
            tx: Any = Aggregate.from_etree(elem)
        except Exception as exc:  # ofxtools raises ValueError/TypeError subclasses per element
            field_name, message = _element_problem(elem, exc)
            self.error(line, field_name or tag, "invalid", f"{tag} (FITID {fitid}): {message}")
            return
        date_text = elem.findtext(".//DTPOSTED" if tag == "INVBANKTRAN" else ".//DTTRADE") or ""
        try:
            # the statement's own calendar date (ofxtools would shift it to UTC)
            text = date_text.strip()
            date = dt.date(int(text[:4]), int(text[4:6]), int(text[6:8]))
        except ValueError:
            self.error(line, "DTTRADE", "invalid", f"not a date: {date_text!r}")
            return
        base = {"line": line, "date": date, "memo": ""}
        # amounts in CURSYM (CURRENCY), or converted into CURDEF from it (ORIGCURRENCY)
        self.money = _Money(curdef, getattr(tx, "currency", None), getattr(tx, "origcurrency", None))
        try:
            self._rows(tag, tx, fitid, base)
        except _RowProblem as exc:
            self.error(line, exc.field, "invalid", f"{tag} {fitid}: {exc.message}")

    def _symbol(self, tx: Any) -> str:
        uid = str(tx.secid.uniqueid).strip()
        return self.securities.get(uid, uid)

    def _add(self, source_id: str, **fields: Any) -> None:
        self.rows.append(ImportRow(source_id=source_id, **self.money.apply(fields)))

    def _rows(self, tag: str, tx: Any, fitid: str, base: dict[str, Any]) -> None:
        memo = (tx.invtran.memo or "") if hasattr(tx, "invtran") else ""
        if tag in _BUYS or tag in _SELLS:
            leg = tx.invbuy if tag in _BUYS else tx.invsell
            fees = _sum(leg.commission, leg.fees, leg.taxes, leg.load)
            if tag in _SELLS:
                fees += _sum(leg.withholding)
            self._add(
                fitid, **{**base, "memo": leg.invtran.memo or ""},
                type="buy" if tag in _BUYS else "sell", symbol=self._symbol(leg),
                quantity=abs(leg.units), price=_positive(leg.unitprice, "UNITPRICE"), fees=fees,
            )
        elif tag == "INCOME":
            kind = "interest" if tx.incometype == "INTEREST" else "dividend"
            symbol = self._symbol(tx)
            self._add(
                fitid, **{**base, "memo": memo or f"{tx.incometype} {symbol}"},
                type=kind, symbol=None if kind == "interest" else symbol, quantity=ONE,
                price=_positive(tx.total, "TOTAL"), fees=_sum(tx.withholding),
            )
        elif tag == "REINVEST":
            symbol = self._symbol(tx)
            fees = _sum(tx.commission, tx.fees, tx.taxes, tx.load)
            amount = abs(tx.total)
            self._add(
                f"{fitid}#income", **{**base, "memo": memo or f"{tx.incometype} {symbol} reinvested"},
                type="dividend", symbol=symbol, quantity=ONE, price=amount,
            )
            self._add(
                f"{fitid}#buy", **{**base, "memo": memo},
                type="buy", symbol=symbol, quantity=abs(tx.units),
                price=_positive(tx.unitprice, "UNITPRICE"), fees=fees,
            )
        elif tag in ("INVEXPENSE", "MARGININTEREST"):
            what = "margin interest" if tag == "MARGININTEREST" else f"expense {self._symbol(tx)}"
            self._add(
                fitid, **{**base, "memo": memo or what},
                type="fee", symbol=None, quantity=ONE, price=abs(tx.total),
            )
        elif tag == "SPLIT":
            if not tx.denominator:
                raise _RowProblem("DENOMINATOR", "a split's denominator must not be 0")
            self._add(
                fitid, **{**base, "memo": memo},
                type="split", symbol=self._symbol(tx), quantity=tx.newunits - tx.oldunits,
                price=_ZERO, ratio=tx.numerator / tx.denominator, fees=_ZERO,
            )
        elif tag == "TRANSFER":
            units = abs(tx.units)
            if tx.unitprice is not None:
                price = abs(tx.unitprice)
            elif tx.avgcostbasis is not None and units:
                price = abs(tx.avgcostbasis) / units
            else:
                price = _ZERO
            self._add(
                fitid, **{**base, "memo": memo},
                type="transfer", symbol=self._symbol(tx),
                quantity=units if tx.tferaction == "IN" else -units, price=price,
            )
        else:  # INVBANKTRAN
            st = tx.stmttrn
            amount = st.trnamt
            kind = _bank_kind(st.trntype, amount)
            memo = st.memo or st.name or st.trntype
            if kind == "interest" and st.trntype in _BANK_COSTS:
                memo = f"refund: {memo}"
            self._add(
                fitid, **{**base, "memo": memo},
                type=kind, symbol=None, quantity=ONE, price=abs(amount),
            )


_BANK_INCOME = frozenset({"INT", "DIV"})
_BANK_COSTS = frozenset({"FEE", "SRVCHG"})


def _bank_kind(trntype: str, amount: Decimal) -> str:
    """A bank transaction's row type (module docstring): income, cost, else by sign."""
    if trntype in _BANK_INCOME:
        return "interest" if amount >= 0 else "fee"
    if trntype in _BANK_COSTS:
        return "fee" if amount <= 0 else "interest"
    return "deposit" if amount >= 0 else "withdrawal"


class _Money:
    """The currency of one transaction's amounts, and where its rows' amounts go."""

    __slots__ = ("curdef", "currency", "original")

    def __init__(self, curdef: str, currency: Any, original: Any) -> None:
        self.curdef = curdef
        self.currency = currency  # CURRENCY: amounts in its CURSYM
        self.original = original  # ORIGCURRENCY: amounts in CURDEF, converted from CURSYM

    def apply(self, fields: dict[str, Any]) -> dict[str, Any]:
        """``fields`` with the row's ``currency`` (and ``fx_rate``), amounts converted.

        A row with a symbol is kept in the security's currency, CURSYM (ORIGCURRENCY
        amounts divided by CURRATE back into it); a cash row in the currency its cash
        moved in.
        """
        if self.currency is not None:
            return {**fields, "currency": str(self.currency.cursym), "fx_rate": self.currency.currate}
        if self.original is None or fields.get("symbol") is None:
            return {**fields, "currency": self.curdef}
        rate = self.original.currate
        if not rate or rate <= 0:
            raise _RowProblem("CURRATE", f"CURRATE must be positive, got {rate}")
        out = {**fields, "currency": str(self.original.cursym), "fx_rate": rate}
        for name in ("price", "fees"):
            if out.get(name):
                out[name] = (out[name] / rate).quantize(_EIGHT)
        return out


class _RowProblem(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def _positive(value: Decimal, field: str) -> Decimal:
    if value < 0:
        raise _RowProblem(field, f"{field} must not be negative, got {value}")
    return value


def _element_problem(elem: ET.Element, exc: Exception) -> tuple[str | None, str]:
    """The element a failed conversion stopped at and a message a user can act on.

    ofxtools reports a bad number as ``decimal.InvalidOperation`` with only the
    decimal module's condition (``[<class 'decimal.ConversionSyntax'>]``): the element
    whose text is not a decimal is found here instead.
    """
    if isinstance(exc, ArithmeticError):
        for leaf in elem.iter():
            text = (leaf.text or "").strip()
            if len(leaf) or not text or leaf.tag not in _NUMERIC_TAGS:
                continue
            try:
                Decimal(text)
            except ArithmeticError:
                return leaf.tag, f"{leaf.tag} {text[:40]!r} is not a number"
        return None, "a number is not a decimal number"
    return None, str(exc)[:200]
