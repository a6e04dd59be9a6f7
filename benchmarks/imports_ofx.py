"""Reading a 50,000-transaction OFX investment statement: rows per second and peak memory.

    python benchmarks/imports_ofx.py              # 50,000 transactions, OFX 2.x XML and 1.x SGML
    python benchmarks/imports_ofx.py --n 5000

Each format is parsed in a fresh subprocess: once timed, once under
``tracemalloc`` (the parser's own peak allocation, the file's bytes excluded),
and the child's peak resident set size after the timed run (``ru_maxrss``:
interpreter, the generated file and the parse) is reported beside it. The statement mixes buys, sells, dividends and cash
transactions over 100 securities. Reported, never asserted.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=50_000, help="transactions in the statement")
    args = parser.parse_args(argv)
    for version, label in (("v2", "OFX 2.x XML"), ("v1", "OFX 1.x SGML")):
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(args.n), version], capture_output=True, text=True, check=True
        )
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        print(
            f"{label}: {res['rows']:,} transactions ({res['bytes'] / 2**20:.1f} MiB) parsed in "
            f"{res['seconds']:.2f} s = {res['rows'] / res['seconds']:,.0f} rows/s; "
            f"parser peak allocation {res['peak_bytes'] / 2**20:.0f} MiB (tracemalloc), "
            f"process peak RSS {res['rss_bytes'] / 2**20:.0f} MiB"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
