"""Broker statement parsers: OFX 1.x SGML and 2.x XML, CSV presets and the generic mapping.

Every file is written here. The OFX aggregates follow the OFX 2.2 specification,
section 13.9.2 (investment transactions); the Schwab and Fidelity files follow
the headers those brokers' history downloads write (docs/service.md).
"""

from __future__ import annotations

import datetime as dt
import random
import re
from decimal import Decimal

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from service.imports import (
    CsvMapping,
    ImportRow,
    decode_mapping,
    parse_csv,
    parse_ofx,
    parse_statement,
)

D = Decimal
AAPL = "<SECID><UNIQUEID>037833100</UNIQUEID><UNIQUEIDTYPE>CUSIP</UNIQUEIDTYPE></SECID>"
SAP = "<SECID><UNIQUEID>DE0007164600</UNIQUEID><UNIQUEIDTYPE>ISIN</UNIQUEIDTYPE></SECID>"
FUND = "<SUBACCTSEC>CASH</SUBACCTSEC><SUBACCTFUND>CASH</SUBACCTFUND>"


def _invtran(fitid: str, day: str) -> str:
    return f"<INVTRAN><FITID>{fitid}</FITID><DTTRADE>2025{day}120000.000[-5:EST]</DTTRADE></INVTRAN>"


def _bank(fitid: str, day: str, kind: str, amount: str, name: str) -> str:
    return (
        f"<INVBANKTRAN><STMTTRN><TRNTYPE>{kind}</TRNTYPE><DTPOSTED>2025{day}</DTPOSTED>"
        f"<TRNAMT>{amount}</TRNAMT><FITID>{fitid}</FITID><NAME>{name}</NAME></STMTTRN>"
        "<SUBACCTFUND>CASH</SUBACCTFUND></INVBANKTRAN>"
    )


# one transaction per line, so each row's line number is known
TRANSACTIONS = [
    _bank("D1", "0102", "CREDIT", "10000.00", "Deposit"),
    f"<BUYSTOCK><INVBUY>{_invtran('B1', '0103')}{AAPL}<UNITS>10</UNITS><UNITPRICE>150.00</UNITPRICE>"
    f"<COMMISSION>1.00</COMMISSION><FEES>0.05</FEES><TOTAL>-1501.05</TOTAL>{FUND}</INVBUY>"
    "<BUYTYPE>BUY</BUYTYPE></BUYSTOCK>",
    f"<SELLSTOCK><INVSELL>{_invtran('S1', '0210')}{AAPL}<UNITS>-4</UNITS><UNITPRICE>160.00</UNITPRICE>"
    f"<COMMISSION>1.00</COMMISSION><TOTAL>639.00</TOTAL>{FUND}</INVSELL><SELLTYPE>SELL</SELLTYPE></SELLSTOCK>",
    f"<INCOME>{_invtran('I1', '0215')}{AAPL}<INCOMETYPE>DIV</INCOMETYPE><TOTAL>1.50</TOTAL>{FUND}"
    "<WITHHOLDING>0.10</WITHHOLDING></INCOME>",
    f"<REINVEST>{_invtran('R1', '0216')}{AAPL}<INCOMETYPE>DIV</INCOMETYPE><TOTAL>-20.00</TOTAL>"
    "<SUBACCTSEC>CASH</SUBACCTSEC><UNITS>0.125</UNITS><UNITPRICE>160.00</UNITPRICE></REINVEST>",
    f"<SPLIT>{_invtran('P1', '0301')}{AAPL}<SUBACCTSEC>CASH</SUBACCTSEC><OLDUNITS>6.125</OLDUNITS>"
    "<NEWUNITS>24.5</NEWUNITS><NUMERATOR>4</NUMERATOR><DENOMINATOR>1</DENOMINATOR></SPLIT>",
    f"<TRANSFER>{_invtran('T1', '0302')}{AAPL}<SUBACCTSEC>CASH</SUBACCTSEC><UNITS>5</UNITS>"
    "<TFERACTION>IN</TFERACTION><POSTYPE>LONG</POSTYPE><AVGCOSTBASIS>200.00</AVGCOSTBASIS></TRANSFER>",
    f"<TRANSFER>{_invtran('T2', '0303')}{AAPL}<SUBACCTSEC>CASH</SUBACCTSEC><UNITS>2</UNITS>"
    "<TFERACTION>OUT</TFERACTION><POSTYPE>LONG</POSTYPE></TRANSFER>",
    f"<INVEXPENSE>{_invtran('E1', '0304')}{AAPL}<TOTAL>-2.00</TOTAL>{FUND}</INVEXPENSE>",
    f"<MARGININTEREST>{_invtran('M1', '0305')}<TOTAL>-3.25</TOTAL><SUBACCTFUND>CASH</SUBACCTFUND>"
    "</MARGININTEREST>",
    f"<INCOME>{_invtran('I2', '0306')}{AAPL}<INCOMETYPE>INTEREST</INCOMETYPE><TOTAL>0.75</TOTAL>{FUND}</INCOME>",
    _bank("W1", "0307", "DEBIT", "-500.00", "Withdrawal"),
    _bank("N1", "0308", "INT", "4.20", "Interest"),
    _bank("F1", "0309", "SRVCHG", "-9.99", "Account fee"),
    f"<JRNLFUND>{_invtran('J1', '0310')}<SUBACCTTO>MARGIN</SUBACCTTO><SUBACCTFROM>CASH</SUBACCTFROM>"
    "<TOTAL>100.00</TOTAL></JRNLFUND>",
    f"<BUYSTOCK><INVBUY>{_invtran('X1', '0311')}{SAP}<UNITS>3</UNITS><UNITPRICE>120.00</UNITPRICE>"
    f"<TOTAL>-360.00</TOTAL><CURRENCY><CURRATE>1.08</CURRATE><CURSYM>EUR</CURSYM></CURRENCY>{FUND}</INVBUY>"
    "<BUYTYPE>BUY</BUYTYPE></BUYSTOCK>",
]

# (type, symbol, quantity, price, fees, date, source id) of each transaction above, in order
EXPECTED = [
    ("deposit", None, D(1), D("10000.00"), D(0), "2025-01-02", "D1"),
    ("buy", "AAPL", D(10), D("150.00"), D("1.05"), "2025-01-03", "B1"),
    ("sell", "AAPL", D(4), D("160.00"), D("1.00"), "2025-02-10", "S1"),
    ("dividend", "AAPL", D(1), D("1.50"), D("0.10"), "2025-02-15", "I1"),
    ("dividend", "AAPL", D(1), D("20.00"), D(0), "2025-02-16", "R1#income"),
    ("buy", "AAPL", D("0.125"), D("160.00"), D(0), "2025-02-16", "R1#buy"),
    ("split", "AAPL", D("18.375"), D(0), D(0), "2025-03-01", "P1"),
    ("transfer", "AAPL", D(5), D(40), D(0), "2025-03-02", "T1"),
    ("transfer", "AAPL", D(-2), D(0), D(0), "2025-03-03", "T2"),
    ("fee", None, D(1), D("2.00"), D(0), "2025-03-04", "E1"),
    ("fee", None, D(1), D("3.25"), D(0), "2025-03-05", "M1"),
    ("interest", None, D(1), D("0.75"), D(0), "2025-03-06", "I2"),
    ("withdrawal", None, D(1), D("500.00"), D(0), "2025-03-07", "W1"),
    ("interest", None, D(1), D("4.20"), D(0), "2025-03-08", "N1"),
    ("fee", None, D(1), D("9.99"), D(0), "2025-03-09", "F1"),
    ("buy", "SAP", D(3), D("120.00"), D(0), "2025-03-11", "X1"),
]
# the transaction each expected row comes from (the reinvestment gives two rows; the journal none)
SOURCE_INDEX = [0, 1, 2, 3, 4, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15]

V2_HEADER = (
    '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n'
    '<?OFX OFXHEADER="200" VERSION="220" SECURITY="NONE" OLDFILEUID="NONE" NEWFILEUID="NONE"?>\n'
)
V1_HEADER = (
    "OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nSECURITY:NONE\nENCODING:USASCII\nCHARSET:1252\n"
    "COMPRESSION:NONE\nOLDFILEUID:NONE\nNEWFILEUID:NONE\n\n"
)
SECLIST = (
    "<SECLISTMSGSRSV1><SECLIST>"
    f"<STOCKINFO><SECINFO>{AAPL}<SECNAME>Apple Inc.</SECNAME><TICKER>AAPL</TICKER></SECINFO></STOCKINFO>"
    f"<STOCKINFO><SECINFO>{SAP}<SECNAME>SAP SE</SECNAME><TICKER>SAP</TICKER></SECINFO></STOCKINFO>"
    "</SECLIST></SECLISTMSGSRSV1>"
)


def _body(transactions: list[str], *, seclist: str = SECLIST) -> str:
    lines = [
        "<OFX>",
        "<SIGNONMSGSRSV1><SONRS><STATUS><CODE>0</CODE><SEVERITY>INFO</SEVERITY></STATUS>"
        "<DTSERVER>20250401</DTSERVER><LANGUAGE>ENG</LANGUAGE></SONRS></SIGNONMSGSRSV1>",
        "<INVSTMTMSGSRSV1><INVSTMTTRNRS><TRNUID>1</TRNUID>"
        "<STATUS><CODE>0</CODE><SEVERITY>INFO</SEVERITY></STATUS>",
        "<INVSTMTRS><DTASOF>20250401</DTASOF><CURDEF>USD</CURDEF>"
        "<INVACCTFROM><BROKERID>broker.example</BROKERID><ACCTID>X123</ACCTID></INVACCTFROM>",
        "<INVTRANLIST><DTSTART>20250101</DTSTART><DTEND>20250401</DTEND>",
        *transactions,
        "</INVTRANLIST></INVSTMTRS></INVSTMTTRNRS></INVSTMTMSGSRSV1>",
        seclist,
        "</OFX>",
    ]
    return "\n".join(lines) + "\n"


def ofx_v2(transactions: list[str] = TRANSACTIONS, **kw: str) -> bytes:
    return (V2_HEADER + _body(transactions, **kw)).encode()


def ofx_v1(transactions: list[str] = TRANSACTIONS, **kw: str) -> bytes:
    """OFX 1.x SGML: the same markup without the end tags of elements (only aggregates close)."""
    sgml = re.sub(r"(<([A-Z0-9.]+)>[^<]+)</\2>", r"\1", _body(transactions, **kw))
    return (V1_HEADER + sgml).encode("ascii")


# line of the first transaction: the header's lines, then five lines of the body
FIRST_LINE = {"v2": 2 + 6, "v1": 11 + 6}


def _check(rows: list[ImportRow], first_line: int) -> None:
    assert len(rows) == len(EXPECTED)
    for row, expected, src in zip(rows, EXPECTED, SOURCE_INDEX, strict=True):
        kind, symbol, qty, price, fees, date, source_id = expected
        got = (row.type, row.symbol, row.quantity, row.price, row.fees, row.date.isoformat(), row.source_id)
        assert got == (kind, symbol, qty, price, fees, date, source_id)
        assert row.line == first_line + src


@pytest.mark.parametrize(("version", "make"), [("v2", ofx_v2), ("v1", ofx_v1)])
def test_ofx_investment_statement_every_transaction_kind(version: str, make: object) -> None:
    data = make()  # type: ignore[operator]
    if version == "v1":
        assert b"</UNITS>" not in data and b"<UNITS>10\n" not in data  # really SGML leaves
    result = parse_statement(data, "ofx")
    assert result.errors == [] and result.duplicates == []
    _check(result.rows, FIRST_LINE[version])
    assert result.counts() == {
        "buy": 3, "deposit": 1, "dividend": 2, "fee": 3, "interest": 2, "sell": 1, "split": 1,
        "transfer": 2, "withdrawal": 1,
    }
    split = result.rows[6]
    assert split.ratio == D(4)
    eur = result.rows[-1]
    assert (eur.currency, eur.fx_rate) == ("EUR", D("1.08"))
    assert all(r.currency == "USD" and r.fx_rate is None for r in result.rows[:-1])
    # the trade date is the statement's calendar date (12:00 EST), not shifted to UTC
    assert result.rows[1].date == dt.date(2025, 1, 3)


def test_ofx_cash_adds_up_to_the_hand_computed_balance() -> None:
    # deposit 10000 - buy (1500 + 1.05) + sell (640 - 1) + dividend (1.50 - 0.10)
    # + reinvested dividend 20 - its buy 20 - expense 2 - margin interest 3.25 + interest 0.75
    # - withdrawal 500 + interest 4.20 - fee 9.99 (the EUR buy is in another currency)
    expected = D("10000") - D("1501.05") + D("639.00") + D("1.40") + D("20") - D("20") - D("2") - D("3.25") \
        + D("0.75") - D("500") + D("4.20") - D("9.99")
    sign = {"deposit": 1, "sell": 1, "dividend": 1, "interest": 1, "buy": -1, "withdrawal": -1, "fee": -1}
    cash = D(0)
    for row in parse_ofx(ofx_v2()).rows:
        if row.currency != "USD" or row.type not in sign:
            continue
        gross = row.quantity * row.price
        cash += sign[row.type] * gross - row.fees
    assert cash == expected == D("8629.06")


def test_ofx_same_file_twice_gives_the_same_keys_and_duplicate_fitids_are_dropped() -> None:
    first = [r.source_id for r in parse_ofx(ofx_v2()).rows]
    assert first == [r.source_id for r in parse_ofx(ofx_v2()).rows]
    assert len(set(first)) == len(first)
    doubled = [*TRANSACTIONS[:3], TRANSACTIONS[1], TRANSACTIONS[2]]
    result = parse_ofx(ofx_v2(doubled))
    assert [r.source_id for r in result.rows] == ["D1", "B1", "S1"]
    assert result.duplicates == [FIRST_LINE["v2"] + 3, FIRST_LINE["v2"] + 4]
    assert result.errors == []
    # one FITID on two different transactions is an error, not a duplicate
    other = TRANSACTIONS[1].replace("<UNITS>10</UNITS>", "<UNITS>11</UNITS>")
    result = parse_ofx(ofx_v2([TRANSACTIONS[1], other]))
    assert result.duplicates == []
    assert [(e.line, e.field, e.code) for e in result.errors] == [(FIRST_LINE["v2"] + 1, "FITID", "invalid")]
    assert f"of line {FIRST_LINE['v2']}" in result.errors[0].message


def test_ofx_bad_transactions_are_all_reported_with_their_lines() -> None:
    bad_units = TRANSACTIONS[1].replace("<UNITS>10</UNITS>", "<UNITS>ten</UNITS>")
    option = (
        f"<BUYOPT><INVBUY>{_invtran('O1', '0104')}{AAPL}<UNITS>1</UNITS><UNITPRICE>2.00</UNITPRICE>"
        f"<TOTAL>-200.00</TOTAL>{FUND}</INVBUY><OPTBUYTYPE>BUYTOOPEN</OPTBUYTYPE>"
        "<SHPERCTRCT>100</SHPERCTRCT></BUYOPT>"
    )
    no_fitid = TRANSACTIONS[0].replace("<FITID>D1</FITID>", "")
    result = parse_ofx(ofx_v2([TRANSACTIONS[0], bad_units, option, TRANSACTIONS[2], no_fitid]))
    first = FIRST_LINE["v2"]
    assert [(e.line, e.field, e.code) for e in result.errors] == [
        (first + 1, "UNITS", "invalid"),  # the element that is not a number
        (first + 2, "BUYOPT", "unsupported"),
        (first + 4, "FITID", "required"),
    ]
    assert "B1" in result.errors[0].message and "UNITS 'ten' is not a number" in result.errors[0].message
    assert not result.ok
    assert [r.source_id for r in result.rows] == ["D1", "S1"]


@pytest.mark.parametrize(
    ("data", "line", "code", "words"),
    [
        (b"this is not OFX\n", 1, "malformed", "not an OFX file"),
        (b"", 1, "malformed", "not an OFX file"),
        # text between two tags, on the file's 9th line
        (ofx_v2([TRANSACTIONS[0], TRANSACTIONS[1].replace("</UNITPRICE>", "</UNITPRICE>oops")]), 9,
         "malformed", "Tail text 'oops'"),
        # an end tag that closes the wrong aggregate
        (ofx_v2([TRANSACTIONS[0], TRANSACTIONS[1].replace("</INVBUY>", "</INVTRAN>")]), 9, "malformed",
         "</INVTRAN> closes <INVBUY>"),
        # a download cut short: the last line of what is left is named
        (ofx_v2([TRANSACTIONS[0]])[:-40], 10, "malformed", "incomplete"),
        # a bank statement has no INVSTMTRS
        (V2_HEADER.encode() + b"<OFX><BANKMSGSRSV1></BANKMSGSRSV1></OFX>\n", 0, "unsupported", "INVSTMTRS"),
    ],
)
def test_ofx_broken_files_are_one_clear_error(data: bytes, line: int, code: str, words: str) -> None:
    result = parse_ofx(data)
    assert result.rows == []
    assert len(result.errors) == 1
    err = result.errors[0]
    assert (err.line, err.field, err.code) == (line, "file", code)
    assert words in err.message


def test_ofx_security_without_ticker_uses_its_id() -> None:
    result = parse_ofx(ofx_v2(TRANSACTIONS[1:2], seclist=""))
    assert result.rows[0].symbol == "037833100"


SCHWAB = '''"Date","Action","Symbol","Description","Quantity","Price","Fees & Comm","Amount"
"03/10/2025","Stock Split","AAPL","APPLE INC","18","","",""
"03/03/2025 as of 02/28/2025","Bank Interest","","BANK INT 020125-022825","","","","$4.20"
"02/20/2025","Journal","AAPL","JOURNALED SHARES IN","5","","","$0.00"
"02/16/2025","Reinvest Shares","AAPL","APPLE INC","0.125","$160.00","","-$20.00"
"02/16/2025","Reinvest Dividend","AAPL","APPLE INC","","","","$20.00"
"02/15/2025","Qualified Dividend","AAPL","APPLE INC","","","","$1.50"
"02/10/2025","Sell","AAPL","APPLE INC","4","$160.00","$1.00","$639.00"
"01/31/2025","MoneyLink Transfer","","Tfr BANK, JANE DOE","","","","-$500.00"
"01/03/2025","Buy","AAPL","APPLE INC","10","$150.00","$1.05","-$1,501.05"
"01/03/2025","Buy","AAPL","APPLE INC","10","$150.00","$1.05","-$1,501.05"
"01/02/2025","MoneyLink Transfer","","Tfr BANK, JANE DOE","","","","$10,000.00"
"01/02/2025","ADR Mgmt Fee","","ADR FEE","","","","-$0.30"
"Transactions Total","","","","","","","$6,640.05"
'''


def test_schwab_preset_detected_and_read() -> None:
    result = parse_statement(SCHWAB.encode(), "csv")
    assert result.errors == [] and result.duplicates == []
    got = [(r.line, r.type, r.symbol, r.quantity, r.price, r.fees, r.date.isoformat()) for r in result.rows]
    assert got == [
        (2, "split", "AAPL", D(18), D(0), D(0), "2025-03-10"),
        (3, "interest", None, D(1), D("4.20"), D(0), "2025-02-28"),  # the "as of" date
        (4, "transfer", "AAPL", D(5), D(0), D(0), "2025-02-20"),
        (5, "buy", "AAPL", D("0.125"), D("160.00"), D(0), "2025-02-16"),
        (6, "dividend", "AAPL", D(1), D("20.00"), D(0), "2025-02-16"),
        (7, "dividend", "AAPL", D(1), D("1.50"), D(0), "2025-02-15"),
        (8, "sell", "AAPL", D(4), D("160.00"), D("1.00"), "2025-02-10"),
        (9, "withdrawal", None, D(1), D("500.00"), D(0), "2025-01-31"),
        (10, "buy", "AAPL", D(10), D("150.00"), D("1.05"), "2025-01-03"),
        (11, "buy", "AAPL", D(10), D("150.00"), D("1.05"), "2025-01-03"),
        (12, "deposit", None, D(1), D("10000.00"), D(0), "2025-01-02"),
        (13, "fee", None, D(1), D("0.30"), D(0), "2025-01-02"),
    ]
    assert all(r.source_id.startswith("csv:schwab:") for r in result.rows)


def test_csv_identical_rows_are_two_entries_with_stable_keys() -> None:
    # two equal buys on one day are two purchases, and the same file read again gives the same keys
    first = [r.source_id for r in parse_csv(SCHWAB.encode()).rows]
    assert first[9] != first[10]
    assert len(set(first)) == len(first)
    assert first == [r.source_id for r in parse_csv(SCHWAB.encode()).rows]
    # a key does not depend on the line: the same row in another export keeps its key
    shifted = SCHWAB.replace('"03/10/2025","Stock Split","AAPL","APPLE INC","18","","",""\n', "")
    assert set(r.source_id for r in parse_csv(shifted.encode()).rows) == set(first[1:])


FIDELITY = """
Brokerage

Run Date,Action,Symbol,Description,Type,Quantity,Price ($),Commission ($),Fees ($),Accrued Interest ($),Amount ($),Settlement Date
02/10/2025, YOU SOLD APPLE INC (AAPL) (Cash), AAPL,APPLE INC,Cash,-4,160,1,0.02,,638.98,02/11/2025
02/15/2025, DIVIDEND RECEIVED APPLE INC (AAPL) (Cash), AAPL,APPLE INC,Cash,,,,,,1.50,
02/16/2025, REINVESTMENT APPLE INC (AAPL) (Cash), AAPL,APPLE INC,Cash,0.125,160,,,,-20.00,
01/03/2025, YOU BOUGHT APPLE INC (AAPL) (Cash), AAPL,APPLE INC,Cash,10,150,1,0.05,,-1501.05,01/06/2025
01/02/2025, Electronic Funds Transfer Received (Cash), ,No Description,Cash,,,,,,10000,
01/31/2025, INTEREST EARNED FDIC INSURED DEPOSIT AT JPMORGAN (QPRMQ) (Cash), ,FDIC INSURED,Cash,,,,,,0.42,

"The data and information in this spreadsheet is provided to you solely for your use and is not for distribution."
"Date downloaded 04/01/2025 10:00 am"
"""


def test_fidelity_preset_with_preamble_and_footer() -> None:
    result = parse_csv(FIDELITY.encode("utf-8-sig"))
    assert result.errors == []
    got = [(r.line, r.type, r.symbol, r.quantity, r.price, r.fees, r.date.isoformat()) for r in result.rows]
    assert got == [
        (5, "sell", "AAPL", D(4), D(160), D("1.02"), "2025-02-10"),  # commission and fees both count
        (6, "dividend", "AAPL", D(1), D("1.50"), D(0), "2025-02-15"),
        (7, "buy", "AAPL", D("0.125"), D(160), D(0), "2025-02-16"),
        (8, "buy", "AAPL", D(10), D(150), D("1.05"), "2025-01-03"),
        (9, "deposit", None, D(1), D(10000), D(0), "2025-01-02"),
        (10, "interest", None, D(1), D("0.42"), D(0), "2025-01-31"),
    ]
    assert parse_csv(FIDELITY.encode(), preset="fidelity").rows == result.rows


GENERIC = """Datum;Art;Wertpapier;Stück;Kurs;Gebühren;Betrag;Währung;Ref
31.01.2025;Kauf;SAP;3;120,50;1,00;;EUR;A-1
31.01.2025;Kauf;SAP;3;120,50;1,00;;EUR;A-1
03.02.2025;Einzahlung;;;;;1.000,00;EUR;A-2
04.02.2025;Dividende;SAP;;;;2,20;EUR;A-3
05.02.2025;Verkauf;SAP;1;130;;;EUR;A-4
"""
GENERIC_MAPPING = {
    "columns": {"date": "Datum", "type": "Art", "symbol": "Wertpapier", "quantity": "Stück",
                "price": "Kurs", "fees": "Gebühren", "amount": "Betrag", "currency": "Währung", "id": "Ref"},
    "types": {"Kauf": "buy", "Verkauf": "sell", "Einzahlung": "deposit", "Dividende": "dividend"},
    "date_format": "%d.%m.%Y",
    "decimal_comma": True,
    "delimiter": ";",
}


def test_generic_mapping_with_types_dates_decimal_comma_and_an_id_column() -> None:
    mapping = decode_mapping(str(GENERIC_MAPPING).replace("'", '"').replace("True", "true"))
    assert mapping == decode_mapping(GENERIC_MAPPING)
    result = parse_csv(GENERIC.encode(), mapping=mapping)
    assert result.errors == []
    assert result.duplicates == [3]  # the id column repeats A-1
    got = [(r.line, r.type, r.symbol, r.quantity, r.price, r.fees, r.currency, r.source_id) for r in result.rows]
    assert got == [
        (2, "buy", "SAP", D(3), D("120.50"), D("1.00"), "EUR", "csv:generic:A-1"),
        (4, "deposit", None, D(1), D("1000.00"), D(0), "EUR", "csv:generic:A-2"),
        (5, "dividend", "SAP", D(1), D("2.20"), D(0), "EUR", "csv:generic:A-3"),
        (6, "sell", "SAP", D(1), D(130), D(0), "EUR", "csv:generic:A-4"),
    ]


@pytest.mark.parametrize("header", ["date,type,symbol,quantity,price,fees", "Date,Type,Symbol,Quantity,Price,Fees"])
def test_generic_default_columns_are_the_field_names(header: str) -> None:
    data = f"{header}\n2025-01-02,deposit,,,5000,\n2025-01-03,BUY,msft,2,400.5,0.5\n".encode()
    rows = parse_csv(data).rows
    assert [(r.line, r.type, r.symbol, r.quantity, r.price, r.fees) for r in rows] == [
        (2, "deposit", None, D(1), D(5000), D(0)),
        (3, "buy", "MSFT", D(2), D("400.5"), D("0.5")),
    ]


def test_csv_every_bad_line_is_reported_with_its_field() -> None:
    data = (
        b"date,type,symbol,quantity,price\n"
        b"2025-01-02,buy,AAPL,10,150\n"
        b"2025-13-02,buy,AAPL,10,150\n"  # no 13th month
        b"2025-01-04,buy,AAPL,ten,150\n"
        b"2025-01-05,swap,AAPL,1,1\n"
        b"2025-01-06,sell,,1,\n"  # no symbol, no price
        b"2025-01-07,deposit,,,\n"
        b"2025-01-08,buy,AAPL,1,-5\n"
    )
    result = parse_csv(data)
    assert [(e.line, e.field, e.code) for e in result.errors] == [
        (3, "date", "invalid"),
        (4, "quantity", "invalid"),
        (4, "quantity", "required"),
        (5, "type", "unknown_type"),
        (6, "symbol", "required"),
        (6, "price", "required"),
        (7, "amount", "required"),
        (8, "price", "invalid"),
    ]
    assert "'swap'" in result.errors[3].message
    assert [r.line for r in result.rows] == [2]
    assert not result.ok


@pytest.mark.parametrize(
    ("data", "kw", "field", "code"),
    [
        (b"\xff\xfe\x00bad", {}, "file", "malformed"),
        (b"when,what\n2025-01-01,buy\n", {}, "file", "required"),
        (b"date,symbol\n2025-01-01,A\n", {}, "type", "required"),
        (SCHWAB.encode(), {"preset": "robinhood"}, "preset", "invalid"),
        (b"date,type\n", {"mapping": CsvMapping(columns={"ticker": "x"})}, "mapping", "invalid"),
        (b"date,type\n", {"mapping": CsvMapping(types={"Kauf": "purchase"})}, "mapping", "invalid"),
    ],
)
def test_csv_broken_files_and_mappings(data: bytes, kw: dict[str, object], field: str, code: str) -> None:
    result = parse_csv(data, **kw)  # type: ignore[arg-type]
    assert result.rows == []
    assert [(e.field, e.code) for e in result.errors] == [(field, code)]


def test_decode_mapping_rejects_unknown_keys_and_bad_json() -> None:
    assert decode_mapping(None) is None and decode_mapping("") is None
    with pytest.raises(ValueError, match="mapping: Object contains unknown field `colums`"):
        decode_mapping('{"colums": {}}')
    with pytest.raises(ValueError, match="mapping is not JSON"):
        decode_mapping("{")
    with pytest.raises(ValueError, match="format must be"):
        parse_statement(b"", "qif")  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(
    picks=st.lists(st.integers(0, 5), min_size=1, max_size=30),
    order=st.randoms(use_true_random=False),
)
def test_csv_keys_do_not_depend_on_row_order(picks: list[int], order: random.Random) -> None:
    # the same rows exported sorted another way (repeats included) give the same keys,
    # so importing the second export after the first adds nothing
    pool = [f"2025-01-0{1 + i % 3},buy,S{i % 2},{1 + i},10.5" for i in range(6)]
    lines = [pool[i] for i in picks]
    shuffled = list(lines)
    order.shuffle(shuffled)

    def keys(rows: list[str]) -> list[str]:
        result = parse_csv(("date,type,symbol,quantity,price\n" + "\n".join(rows) + "\n").encode())
        assert result.errors == []
        return sorted(r.source_id for r in result.rows)

    first = keys(lines)
    assert len(set(first)) == len(lines)
    assert first == keys(shuffled)


def _bank_tran(fitid: str, kind: str, amount: str, extra: str = "") -> str:
    return (
        f"<INVBANKTRAN><STMTTRN><TRNTYPE>{kind}</TRNTYPE><DTPOSTED>20250102</DTPOSTED>"
        f"<TRNAMT>{amount}</TRNAMT><FITID>{fitid}</FITID><NAME>x</NAME>{extra}</STMTTRN>"
        "<SUBACCTFUND>CASH</SUBACCTFUND></INVBANKTRAN>"
    )


# (TRNTYPE, TRNAMT, row type): the table of service/imports/ofx.py. TRNAMT is signed
# from the customer's side (OFX 2.2 section 3.2.9.2), so the sign decides in or out.
BANK_TYPES = [
    ("CREDIT", "100.00", "deposit"), ("DEP", "100.00", "deposit"),
    ("DIRECTDEP", "100.00", "deposit"), ("CREDIT", "-100.00", "withdrawal"),
    ("DEBIT", "-100.00", "withdrawal"), ("ATM", "-100.00", "withdrawal"),
    ("CHECK", "-100.00", "withdrawal"), ("PAYMENT", "-100.00", "withdrawal"),
    ("DIRECTDEBIT", "-100.00", "withdrawal"), ("XFER", "-100.00", "withdrawal"),
    ("XFER", "100.00", "deposit"), ("POS", "-100.00", "withdrawal"), ("OTHER", "100.00", "deposit"),
    ("INT", "100.00", "interest"), ("DIV", "100.00", "interest"), ("INT", "-100.00", "fee"),
    ("FEE", "-100.00", "fee"), ("SRVCHG", "-100.00", "fee"), ("FEE", "100.00", "interest"),
]  # fmt: skip


def test_ofx_bank_transactions_by_type_and_sign() -> None:
    trans = [_bank_tran(f"K{i}", kind, amount) for i, (kind, amount, _) in enumerate(BANK_TYPES)]
    result = parse_ofx(ofx_v2(trans))
    assert result.errors == []
    got = [(r.type, r.symbol, r.quantity, r.price, r.currency) for r in result.rows]
    assert got == [(kind, None, D(1), D("100.00"), "USD") for _, _, kind in BANK_TYPES]
    assert result.rows[-1].memo.startswith("refund")  # a fee paid back


def _statement_in(curdef: str, transactions: list[str]) -> bytes:
    return ofx_v2(transactions).replace(b"<CURDEF>USD</CURDEF>", f"<CURDEF>{curdef}</CURDEF>".encode())


def test_ofx_currencies_of_rows() -> None:
    orig = "<ORIGCURRENCY><CURRATE>1.08</CURRATE><CURSYM>EUR</CURSYM></ORIGCURRENCY>"
    cur = "<CURRENCY><CURRATE>0.79</CURRATE><CURSYM>GBP</CURSYM></CURRENCY>"
    # a SAP buy reported in USD converted from EUR at 1.08 (ORIGCURRENCY, OFX 2.2 section 5.2):
    # 129.60 USD a share and 2.16 USD commission are 120.00 and 2.00 EUR
    sap_in_usd = (
        f"<BUYSTOCK><INVBUY>{_invtran('X1', '0311')}{SAP}<UNITS>3</UNITS><UNITPRICE>129.60</UNITPRICE>"
        f"<COMMISSION>2.16</COMMISSION><TOTAL>-390.96</TOTAL>{orig}{FUND}</INVBUY>"
        "<BUYTYPE>BUY</BUYTYPE></BUYSTOCK>"
    )
    rows = parse_ofx(_statement_in("USD", [
        sap_in_usd,
        _bank_tran("C1", "DEP", "500.00", orig),  # converted into USD: the cash is USD
        _bank_tran("C2", "DEP", "400.00", cur),  # in GBP: the cash is GBP
        _bank_tran("C3", "DEP", "300.00"),  # the statement's CURDEF
    ])).rows  # fmt: skip
    got = [(r.type, r.symbol, r.price, r.fees, r.currency, r.fx_rate) for r in rows]
    assert got == [
        ("buy", "SAP", D("120.00"), D("2.00"), "EUR", D("1.08")),
        ("deposit", None, D("500.00"), D(0), "USD", None),
        ("deposit", None, D("400.00"), D(0), "GBP", D("0.79")),
        ("deposit", None, D("300.00"), D(0), "USD", None),
    ]
    # a statement kept in euros: rows without an aggregate are in EUR
    (row,) = parse_ofx(_statement_in("EUR", [_bank_tran("C4", "DEP", "50.00")])).rows
    assert (row.type, row.currency) == ("deposit", "EUR")
    bad = sap_in_usd.replace("<CURRATE>1.08</CURRATE>", "<CURRATE>0</CURRATE>")
    result = parse_ofx(ofx_v2([bad]))
    assert [(e.field, e.code) for e in result.errors] == [("CURRATE", "invalid")]


SCHWAB_CASH = '''"Date","Action","Symbol","Description","Quantity","Price","Fees & Comm","Amount"
"03/02/2025","Credit Interest","","SCHWAB1 INT","","","","$1.10"
"03/03/2025","Bank Interest","","BANK INT ADJ","","","","-$0.20"
"03/04/2025","Service Fee","","SERVICE FEE","","","","-$25.00"
"03/05/2025","ADR Mgmt Fee","SAP","ADR FEE","","","","-$0.40"
"03/06/2025","NRA Tax Adj","","NRA TAX REFUND","","","","$3.00"
"03/07/2025","Wire Funds","","WIRED FUNDS DISBURSED","","","","-$2,000.00"
"03/08/2025","Wire Received","","WIRED FUNDS RECEIVED","","","$15.00","$4,985.00"
"03/09/2025","Journal","AAPL","JOURNALED SHARES","3","","",""
"03/10/2025","Journal","","JOURNAL FRM ...123","","","","$0.00"
'''


def test_schwab_cash_actions() -> None:
    result = parse_csv(SCHWAB_CASH.encode())
    assert result.errors == []
    got = [(r.line, r.type, r.symbol, r.price, r.fees, r.currency) for r in result.rows]
    assert got == [
        (2, "interest", None, D("1.10"), D(0), "USD"),
        (3, "fee", None, D("0.20"), D(0), "USD"),  # interest taken back: a cost
        (4, "fee", None, D("25.00"), D(0), "USD"),
        (5, "fee", None, D("0.40"), D(0), "USD"),
        (6, "interest", None, D("3.00"), D(0), "USD"),  # a tax refunded: income
        (7, "withdrawal", None, D("2000.00"), D(0), "USD"),
        (8, "deposit", None, D("5000.00"), D("15.00"), "USD"),  # 4,985.00 net of the 15.00 fee
        (9, "transfer", "AAPL", D(0), D(0), "USD"),  # shares journaled, not cash
        (10, "deposit", None, D(0), D(0), "USD"),  # nothing moved (the importer ignores it)
    ]


FIDELITY_CASH = """Run Date,Action,Symbol,Description,Type,Quantity,Price ($),Commission ($),Fees ($),Accrued Interest ($),Amount ($),Settlement Date
01/02/2025, ELECTRONIC FUNDS TRANSFER RECEIVED (Cash), ,No Description,Cash,,,,,,5000,
01/03/2025, CASH CONTRIBUTION CURRENT YEAR (Cash), ,No Description,Cash,,,,,,6500,
01/06/2025, ELECTRONIC FUNDS TRANSFER PAID (Cash), ,No Description,Cash,,,,,,-700,
01/07/2025, DIRECT DEBIT CARD PAYMENT (Cash), ,No Description,Cash,,,,,,-45.10,
01/08/2025, CHECK PAID # 1001 (Cash), ,No Description,Cash,,,,,,-120,
01/31/2025, INTEREST EARNED FDIC INSURED DEPOSIT (Cash), ,FDIC INSURED,Cash,,,,,,0.42,
02/03/2025, ADVISORY FEE (Cash), ,No Description,Cash,,,,,,-12.50,
02/04/2025, FEE CHARGED (Cash), ,No Description,Cash,,,,,,-5,
02/05/2025, TRANSFERRED FROM VS Z12-34567 (Cash), AAPL,APPLE INC,Cash,4,,,,,,
"""


def test_fidelity_cash_actions() -> None:
    result = parse_csv(FIDELITY_CASH.encode(), preset="fidelity")
    assert result.errors == []
    got = [(r.type, r.symbol, r.price) for r in result.rows]
    assert got == [
        ("deposit", None, D(5000)), ("deposit", None, D(6500)), ("withdrawal", None, D(700)),
        ("withdrawal", None, D("45.10")), ("withdrawal", None, D(120)),
        ("interest", None, D("0.42")), ("fee", None, D("12.50")), ("fee", None, D(5)),
        ("transfer", "AAPL", D(0)),  # shares moved between accounts, not cash
    ]  # fmt: skip


def test_generic_amounts_are_net_of_fees_and_currency_unset_unless_given() -> None:
    data = (
        b"date,type,symbol,quantity,price,fees,amount\n"
        b"2025-01-02,deposit,,,,2,100\n"  # 100 arrived after 2 of fees: 102 gross
        b"2025-01-03,withdrawal,,,,2,-50\n"  # 50 left, 2 of them fees: 48 paid out
        b"2025-01-04,fee,,,,1,-10\n"  # a fee's amount is all cost
        b"2025-01-05,dividend,AAPL,,,0.5,9.5\n"  # 9.50 received after 0.50 withheld
        b"2025-01-06,withdrawal,,,,60,-50\n"  # fees above the amount
    )
    result = parse_csv(data)
    got = [(r.type, r.price, r.fees, r.currency) for r in result.rows]
    assert got == [
        ("deposit", D(102), D(2), None), ("withdrawal", D(48), D(2), None),
        ("fee", D(10), D(0), None), ("dividend", D(10), D("0.5"), None),
    ]  # fmt: skip
    assert [(e.line, e.field, e.code) for e in result.errors] == [(6, "fees", "max_value")]
    first_two = b"\n".join(data.split(b"\n")[:2]) + b"\n"
    rows = parse_csv(first_two, mapping=CsvMapping(currency="eur")).rows
    assert [(r.type, r.currency) for r in rows] == [("deposit", "EUR")]
