"""A 50,000-transaction OFX investment statement: parsed, then imported; rows/s and peak memory.

    python benchmarks/imports_ofx.py              # 50,000 transactions, OFX 2.x XML and 1.x SGML
    python benchmarks/imports_ofx.py --n 5000
    python benchmarks/imports_ofx.py --database-url postgresql+asyncpg://127.0.0.1/test

Each format is parsed in a fresh subprocess: once timed, once under
``tracemalloc`` (the parser's own peak allocation, the file's bytes excluded),
and the child's peak resident set size after the timed run (``ru_maxrss``:
interpreter, the generated file and the parse) is reported beside it. The statement mixes buys, sells, dividends and cash
transactions over 100 securities. Reported, never asserted.

The imported statement's cash rows (deposits, with interest, service charges and
withdrawals among them) are imported too, into a portfolio with
``cash_policy="strict"``, so the import also runs the overdraft check.

Then the import service (``service.imports.services``, what
``POST /api/portfolios/{id}/import/`` and ``import-transactions`` call) loads a
valid 50,000-transaction OFX 2.x statement (:func:`statement`) into an empty
portfolio of a fresh database (SQLite in a temporary directory unless
``--database-url`` names a PostgreSQL server, where a scratch database is created
and dropped), in a fresh subprocess (``benchmarks/_import_child.py``, shared with
``imports_csv.py``): the parser alone (the same file, for the ratio), a dry run,
the import itself (parse, duplicate check against the portfolio's source ids, the
whole-ledger check of every symbol, the cash check of the strict portfolio, one
multi-row insert, positions re-derived once; unknown tickers created as assets),
and the same file again (every row a duplicate). Each is timed after a warm-up
import of a few rows into another portfolio (numba's cached kernels loaded once per
process); the child's peak RSS is read before the first import and after the last.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, re, resource, sys, time, tracemalloc

from service.imports import parse_ofx

n, version = int(sys.argv[1]), sys.argv[2]

def sec(i):
    return f"<SECID><UNIQUEID>SEC{i % 100:05d}</UNIQUEID><UNIQUEIDTYPE>CUSIP</UNIQUEIDTYPE></SECID>"

def tran(i):
    day = f"2024{1 + i % 12:02d}{1 + i % 28:02d}"
    inv = f"<INVTRAN><FITID>T{i}</FITID><DTTRADE>{day}</DTTRADE></INVTRAN>"
    fund = "<SUBACCTSEC>CASH</SUBACCTSEC><SUBACCTFUND>CASH</SUBACCTFUND>"
    kind = i % 4
    if kind == 0:
        return (f"<BUYSTOCK><INVBUY>{inv}{sec(i)}<UNITS>10</UNITS><UNITPRICE>{50 + i % 50}.25</UNITPRICE>"
                f"<COMMISSION>1.00</COMMISSION><TOTAL>-{10 * (50 + i % 50) + 3.5:.2f}</TOTAL>{fund}</INVBUY>"
                "<BUYTYPE>BUY</BUYTYPE></BUYSTOCK>")
    if kind == 1:
        return (f"<SELLSTOCK><INVSELL>{inv}{sec(i)}<UNITS>-5</UNITS><UNITPRICE>{60 + i % 40}.50</UNITPRICE>"
                f"<COMMISSION>1.00</COMMISSION><TOTAL>{5 * (60 + i % 40) + 1.5:.2f}</TOTAL>{fund}</INVSELL>"
                "<SELLTYPE>SELL</SELLTYPE></SELLSTOCK>")
    if kind == 2:
        return f"<INCOME>{inv}{sec(i)}<INCOMETYPE>DIV</INCOMETYPE><TOTAL>{1 + i % 9}.10</TOTAL>{fund}</INCOME>"
    return (f"<INVBANKTRAN><STMTTRN><TRNTYPE>CREDIT</TRNTYPE><DTPOSTED>{day}</DTPOSTED><TRNAMT>1000.00</TRNAMT>"
            f"<FITID>T{i}</FITID><NAME>Deposit</NAME></STMTTRN><SUBACCTFUND>CASH</SUBACCTFUND></INVBANKTRAN>")

secinfo = "".join(
    f"<STOCKINFO><SECINFO>{sec(i)}<SECNAME>Security {i}</SECNAME><TICKER>S{i:03d}</TICKER></SECINFO></STOCKINFO>"
    for i in range(100)
)
body = "\n".join([
    "<OFX><SIGNONMSGSRSV1><SONRS><STATUS><CODE>0</CODE><SEVERITY>INFO</SEVERITY></STATUS>"
    "<DTSERVER>20250101</DTSERVER><LANGUAGE>ENG</LANGUAGE></SONRS></SIGNONMSGSRSV1>",
    "<INVSTMTMSGSRSV1><INVSTMTTRNRS><TRNUID>1</TRNUID><STATUS><CODE>0</CODE><SEVERITY>INFO</SEVERITY></STATUS>",
    "<INVSTMTRS><DTASOF>20250101</DTASOF><CURDEF>USD</CURDEF>"
    "<INVACCTFROM><BROKERID>b.example</BROKERID><ACCTID>1</ACCTID></INVACCTFROM>",
    "<INVTRANLIST><DTSTART>20240101</DTSTART><DTEND>20241231</DTEND>",
    *(tran(i) for i in range(n)),
    "</INVTRANLIST></INVSTMTRS></INVSTMTTRNRS></INVSTMTMSGSRSV1>",
    f"<SECLISTMSGSRSV1><SECLIST>{secinfo}</SECLIST></SECLISTMSGSRSV1></OFX>",
]) + "\n"
if version == "v2":
    data = ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<?OFX OFXHEADER="200" VERSION="220" SECURITY="NONE" OLDFILEUID="NONE" NEWFILEUID="NONE"?>\n'
            + body).encode()
else:
    header = ("OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nSECURITY:NONE\nENCODING:USASCII\nCHARSET:1252\n"
              "COMPRESSION:NONE\nOLDFILEUID:NONE\nNEWFILEUID:NONE\n\n")
    data = (header + re.sub(r"(<([A-Z0-9.]+)>[^<]+)</\2>", r"\1", body)).encode()

parse_ofx(data[:0])  # imports settled
t0 = time.perf_counter()
result = parse_ofx(data)
seconds = time.perf_counter() - t0
assert not result.errors and len(result.rows) == n, (result.errors[:3], len(result.rows))
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # before tracemalloc's own bookkeeping
del result
tracemalloc.start()
parse_ofx(data)
_, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
print(json.dumps({"rows": n, "bytes": len(data), "seconds": seconds, "peak_bytes": peak, "rss_bytes": rss}))
"""

_FUND = "<SUBACCTSEC>CASH</SUBACCTSEC><SUBACCTFUND>CASH</SUBACCTFUND>"
_START = dt.date(1990, 1, 1)
_BANK = {0: ("INT", "2.50"), 1: ("SRVCHG", "-1.00"), 2: ("DEBIT", "-100.00")}


def _sec(k: int) -> str:
    return f"<SECID><UNIQUEID>SEC{k:05d}</UNIQUEID><UNIQUEIDTYPE>CUSIP</UNIQUEIDTYPE></SECID>"


def _tran(i: int) -> str:
    # rounds of four on one day: buy 10, sell 5, dividend (from the security's second
    # round on: shares held at the previous close), a cash row: a deposit of 1,000.00,
    # every fifth round interest, a service charge or a withdrawal instead (cash never
    # goes below zero: the portfolio is strict); rounds cycle over 100 securities
    r, kind = divmod(i, 4)
    k = r % 100
    day = (_START + dt.timedelta(days=r)).strftime("%Y%m%d")
    inv = f"<INVTRAN><FITID>T{i}</FITID><DTTRADE>{day}</DTTRADE></INVTRAN>"
    if kind == 0:
        return (f"<BUYSTOCK><INVBUY>{inv}{_sec(k)}<UNITS>10</UNITS><UNITPRICE>{50 + i % 50}.25</UNITPRICE>"
                f"<COMMISSION>1.00</COMMISSION><TOTAL>-1</TOTAL>{_FUND}</INVBUY><BUYTYPE>BUY</BUYTYPE></BUYSTOCK>")  # fmt: skip
    if kind == 1:
        return (f"<SELLSTOCK><INVSELL>{inv}{_sec(k)}<UNITS>-5</UNITS><UNITPRICE>{60 + i % 40}.50</UNITPRICE>"
                f"<COMMISSION>1.00</COMMISSION><TOTAL>1</TOTAL>{_FUND}</INVSELL><SELLTYPE>SELL</SELLTYPE></SELLSTOCK>")  # fmt: skip
    if kind == 2 and r >= 100:
        return f"<INCOME>{inv}{_sec(k)}<INCOMETYPE>DIV</INCOMETYPE><TOTAL>{1 + i % 9}.10</TOTAL>{_FUND}</INCOME>"
    trntype, amount = _BANK[(r // 5) % 3] if r % 5 == 4 else ("CREDIT", "1000.00")
    return (f"<INVBANKTRAN><STMTTRN><TRNTYPE>{trntype}</TRNTYPE><DTPOSTED>{day}</DTPOSTED><TRNAMT>{amount}</TRNAMT>"
            f"<FITID>T{i}</FITID><NAME>{trntype}</NAME></STMTTRN><SUBACCTFUND>CASH</SUBACCTFUND></INVBANKTRAN>")  # fmt: skip


def statement(m: int) -> bytes:
    """The imported statement: ``m`` valid transactions (OFX 2.x) over 100 securities."""
    secinfo = "".join(
        f"<STOCKINFO><SECINFO>{_sec(k)}<SECNAME>Security {k}</SECNAME><TICKER>BX{k:03d}</TICKER></SECINFO></STOCKINFO>"
        for k in range(100)
    )
    return ("\n".join([
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<?OFX OFXHEADER="200" VERSION="220" SECURITY="NONE" OLDFILEUID="NONE" NEWFILEUID="NONE"?>',
        "<OFX><SIGNONMSGSRSV1><SONRS><STATUS><CODE>0</CODE><SEVERITY>INFO</SEVERITY></STATUS>"
        "<DTSERVER>20250101</DTSERVER><LANGUAGE>ENG</LANGUAGE></SONRS></SIGNONMSGSRSV1>",
        "<INVSTMTMSGSRSV1><INVSTMTTRNRS><TRNUID>1</TRNUID><STATUS><CODE>0</CODE><SEVERITY>INFO</SEVERITY></STATUS>",
        "<INVSTMTRS><DTASOF>20250101</DTASOF><CURDEF>USD</CURDEF>"
        "<INVACCTFROM><BROKERID>b.example</BROKERID><ACCTID>1</ACCTID></INVACCTFROM>",
        "<INVTRANLIST><DTSTART>19900101</DTSTART><DTEND>20241231</DTEND>",
        *(_tran(i) for i in range(m)),
        "</INVTRANLIST></INVSTMTRS></INVSTMTTRNRS></INVSTMTMSGSRSV1>",
        f"<SECLISTMSGSRSV1><SECLIST>{secinfo}</SECLIST></SECLISTMSGSRSV1></OFX>",
    ]) + "\n").encode()  # fmt: skip


def _import_report(n: int, url: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(HERE / "_import_child.py"), "ofx", str(n), url, "--parse"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(HERE.parent)},  # this tree's service
    )
    if proc.returncode != 0:
        print(proc.stderr[-3000:], file=sys.stderr)
        raise SystemExit(proc.returncode)
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    backend = "SQLite" if url == "sqlite" else "PostgreSQL"
    ledger_rows = res["import_added"]
    cash_rows = sum(
        v for k, v in res["counts"].items() if k in ("deposit", "withdrawal", "interest", "fee")
    )
    print(
        f"import service, {backend}: {res['rows']:,} transactions ({res['bytes'] / 2**20:.1f} MiB, "
        f"{ledger_rows:,} ledger rows added, {cash_rows:,} of them cash rows, "
        f"{res['ignored']:,} ignored; strict cash policy)"
    )
    print(f"  rows by type: {res['counts']}")
    print(
        f"  {'parse only':<16} {res['parse'][0]:6.2f} s = {res['rows'] / res['parse'][0]:,.0f} transactions/s"
    )
    for label, text in (("dry_run", "dry run"), ("import", "import"), ("again", "same file again")):
        secs = res[label][0]  # wall; [1] is CPU
        print(
            f"  {text:<16} {secs:6.2f} s = {res['rows'] / secs:,.0f} transactions/s "
            f"(added {res[label + '_added']:,}, skipped duplicates {res[label + '_skipped']:,})"
        )
    print(
        f"  process peak RSS {res['rss_before'] / 2**20:.0f} MiB before the first import "
        f"(interpreter, statement, database), {res['rss_after'] / 2**20:.0f} MiB after the last"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=50_000, help="transactions in the statement")
    parser.add_argument(
        "--database-url", default="sqlite",
        help="PostgreSQL server URL (postgresql+asyncpg://host/db) for the import stage; default SQLite",
    )  # fmt: skip
    parser.add_argument("--skip-parser", action="store_true", help="only the import service stage")
    args = parser.parse_args(argv)
    for version, label in (("v2", "OFX 2.x XML"), ("v1", "OFX 1.x SGML")):
        if args.skip_parser:
            break
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(args.n), version],
            capture_output=True,
            text=True,
            check=True,
        )
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        print(
            f"{label}: {res['rows']:,} transactions ({res['bytes'] / 2**20:.1f} MiB) parsed in "
            f"{res['seconds']:.2f} s = {res['rows'] / res['seconds']:,.0f} rows/s; "
            f"parser peak allocation {res['peak_bytes'] / 2**20:.0f} MiB (tracemalloc), "
            f"process peak RSS {res['rss_bytes'] / 2**20:.0f} MiB"
        )
    _import_report(args.n, args.database_url)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
