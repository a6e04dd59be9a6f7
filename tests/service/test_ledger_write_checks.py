"""A write's checks over the ledger columns (``service.ledger.writecheck``) against the
row-by-row checks they replace, on generated ledgers: the first sell or dividend short
(``service.ledger.checks.first_shortfall``), and a strict portfolio's overdraft
(``quantcore.cash.first_overdraft`` over the rows as a table)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quantcore.cash import first_overdraft
from service.errors import ValidationError
from service.ledger import derived, writecheck
from service.ledger.checks import first_shortfall
from service.ledger.columns import build

PORTFOLIOS = [(1, "fifo", "USD", "strict")]
ASSETS = [(11, "AAA", "USD"), (12, "BBB", "EUR")]
DAY = dt.date(2024, 1, 2)

quantities = st.decimals(min_value=Decimal("0.5"), max_value=40, places=2)
prices = st.decimals(min_value=1, max_value=500, places=2)


@st.composite
def trades(draw: st.DrawFn, *, named: bool) -> list[tuple]:
    """Rows of one (portfolio, symbol): buys, sells (some naming a buy when ``named``) and
    dividends over a few days, short or not."""
    rows: list[tuple] = []
    buys: list[int] = []
    for tid in range(1, draw(st.integers(1, 40)) + 1):
        kind = draw(st.sampled_from(["buy", "buy", "sell", "sell", "dividend"]))
        day = DAY + dt.timedelta(days=draw(st.integers(0, 12)))
        lot = None
        if kind == "sell" and named and buys and draw(st.booleans()):
            lot = draw(st.sampled_from(buys))
        if kind == "buy":
            buys.append(tid)
        q, p = draw(quantities), draw(prices)
        rows.append(
            (tid, 1, 11, None, day, kind, str(q), str(p), "0.5", lot, None, None, None, None)
        )
    return rows


@settings(max_examples=150, deadline=None)
@given(trades(named=False) | trades(named=True))
def test_the_columns_find_the_shortfall_the_walk_finds(rows: list[tuple]) -> None:
    cols = build(1, PORTFOLIOS, ASSETS, rows)
    at = np.arange(len(cols))
    want = first_shortfall(writecheck.lot_rows(cols, at))  # the columns are in ledger order
    got = writecheck.shortfall(cols, at)
    if want is None:
        assert got is None
        return
    assert got is not None
    assert (got.row.id, got.held) == (want.row.id, want.held)


def test_a_written_row_short_is_worded_as_the_written_one() -> None:
    rows = [
        (1, 1, 11, None, DAY, "buy", "5", "10", "0", None, None, None, None, None),
        (
            2,
            1,
            11,
            None,
            DAY + dt.timedelta(days=1),
            "sell",
            "7",
            "10",
            "0",
            None,
            None,
            None,
            None,
            None,
        ),
        (
            3,
            1,
            11,
            None,
            DAY + dt.timedelta(days=2),
            "sell",
            "1",
            "10",
            "0",
            None,
            None,
            None,
            None,
            None,
        ),
    ]
    cols = build(1, PORTFOLIOS, ASSETS, rows)
    with pytest.raises(ValidationError) as written:
        writecheck.check_shares(cols, 1, "AAA", written=2, action="Recording this sell")
    assert written.value.field == "quantity" and written.value.code == "insufficient_quantity"
    assert "Cannot sell 7.00000000 AAA on " in str(written.value)
    assert "the portfolio held 5.00000000" in str(written.value)
    with pytest.raises(ValidationError) as other:
        writecheck.check_shares(cols, 1, "AAA", written=3, action="Changing transaction 3")
    assert other.value.details["transaction_id"] == 2


@st.composite
def cash_ledgers(draw: st.DrawFn) -> list[tuple]:
    rows: list[tuple] = []
    for tid in range(1, draw(st.integers(1, 30)) + 1):
        day = DAY + dt.timedelta(days=draw(st.integers(0, 20)))
        kind = draw(
            st.sampled_from(["deposit", "withdrawal", "fee", "interest", "buy", "sell", "dividend"])
        )
        amount = str(draw(prices))
        if kind in ("deposit", "withdrawal", "fee", "interest"):
            currency = draw(st.sampled_from(["USD", "EUR"]))
            rows.append(
                (tid, 1, None, None, day, kind, "1", amount, "0", None, None, None, None, currency)
            )
        else:
            asset = draw(st.sampled_from([11, 12]))
            rows.append(
                (
                    tid,
                    1,
                    asset,
                    None,
                    day,
                    kind,
                    str(draw(quantities)),
                    amount,
                    "1",
                    None,
                    None,
                    None,
                    None,
                    None,
                )
            )
    if draw(st.booleans()):  # a return of capital pays cash on the shares held
        rows.append(
            (
                999,
                1,
                11,
                None,
                DAY + dt.timedelta(days=10),
                "return_of_capital",
                "0",
                "2",
                "0",
                None,
                None,
                None,
                None,
                None,
            )
        )
    return rows


@settings(max_examples=150, deadline=None)
@given(cash_ledgers())
def test_the_columns_find_the_overdraft_the_table_finds(rows: list[tuple]) -> None:
    cols = build(1, PORTFOLIOS, ASSETS, rows)
    want = first_overdraft(derived.action_frame(cols, np.arange(len(cols))), default_currency="USD")
    if want is None:
        writecheck.check_cash(cols, 1, "USD", "price", "This change")
        return
    with pytest.raises(ValidationError) as refused:
        writecheck.check_cash(cols, 1, "USD", "price", "This change")
    assert refused.value.code == "insufficient_cash"
    assert refused.value.details["date"] == want.date.date().isoformat()
    assert refused.value.details["currency"] == want.currency
