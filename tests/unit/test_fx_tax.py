"""``service.ledger.usd.rows_in_usd``: the ledger in US dollars, matched by ``quantcore.tax``.

Against an exact ``Decimal`` twin of the rule (basis at the purchase date's rate,
proceeds at the sale date's, see ``service/tax/usd.py``) and
:func:`quantcore.fx.realized_in_base`; the only difference allowed is the ledger's
1e-8 rounding of the converted per-share price (at most ``quantity x 0.5e-8`` plus one
unit per amount).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from quantcore.fx import realized_in_base
from quantcore.tax.lots import SCALE, from_fixed
from service.ledger.lots import Action, LedgerRow, check_rows
from service.ledger.usd import rows_in_usd

D1, D2, D3 = dt.date(2025, 1, 6), dt.date(2025, 2, 3), dt.date(2025, 2, 20)

money = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("5000"), places=2)
fees = st.decimals(min_value=Decimal(0), max_value=Decimal("20"), places=2)
shares = st.decimals(min_value=Decimal("0.001"), max_value=Decimal("10000"), places=3)
rate = st.decimals(min_value=Decimal("0.005"), max_value=Decimal("2.5"), places=6)


def _rows(*rows: tuple[str, dt.date, str, Decimal, Decimal, Decimal]) -> list[LedgerRow]:
    return [(i + 1, 1, sym, day, kind, q, p, f, None) for i, (sym, day, kind, q, p, f) in enumerate(rows)]


@settings(max_examples=200, deadline=None)
@given(q=shares, cost=money, sale=money, fb=fees, fs=fees, xa=rate, xs=rate)
def test_one_lot_equals_the_exact_rule(
    q: Decimal, cost: Decimal, sale: Decimal, fb: Decimal, fs: Decimal, xa: Decimal, xs: Decimal
) -> None:
    rows = _rows(("SAP", D1, "buy", q, cost, fb), ("SAP", D2, "sell", q, sale, min(fs, q * sale)))
    usd, _ = rows_in_usd(rows, {}, {"SAP": "EUR"}, {("EUR", D1): xa, ("EUR", D2): xs})
    (piece,) = check_rows(usd, {1: "fifo"}).realized
    basis, proceeds = from_fixed(piece["basis"]), from_fixed(piece["proceeds"])
    slack = q * Decimal("0.5e-8") + Decimal("2e-8")
    assert abs(basis - (q * cost + fb) * xa) <= slack
    assert abs(proceeds - (q * sale - min(fs, q * sale)) * xs) <= slack
    ref = realized_in_base(float(q), float(cost), float(xa), float(sale), float(xs),
                           buy_fees=float(fb), sell_fees=float(min(fs, q * sale)))  # fmt: skip
    assert abs(float(proceeds - basis) - ref.gain) <= 1e-6 * max(1.0, abs(ref.gain))


def test_usd_rows_and_unlisted_symbols_pass_through() -> None:
    rows = _rows(("AAPL", D1, "buy", Decimal(3), Decimal("101.25"), Decimal(1)))
    out, acts = rows_in_usd(rows, {}, {"SAP": "EUR"}, {})
    assert out == rows and acts == {}


def test_wash_sale_is_decided_on_the_dollar_loss() -> None:
    """A flat euro price over a falling euro: a dollar loss, washed by the repurchase,
    whose dollar basis takes it; the euro ledger sees no loss at all."""
    rows = _rows(
        ("SAP", D1, "buy", Decimal(10), Decimal(100), Decimal(0)),
        ("SAP", D2, "sell", Decimal(10), Decimal(100), Decimal(0)),
        ("SAP", D3, "buy", Decimal(10), Decimal(100), Decimal(0)),
    )
    rates = {("EUR", D1): Decimal("1.10"), ("EUR", D2): Decimal("1.05"), ("EUR", D3): Decimal("1.07")}
    usd, _ = rows_in_usd(rows, {}, {"SAP": "EUR"}, rates)
    ledger = check_rows(usd, {1: "fifo"})
    (piece,) = ledger.realized
    assert from_fixed(piece["disallowed"]) == Decimal(50)  # 1100 - 1050 USD
    (lot,) = ledger.open_lots
    assert from_fixed(lot["basis"]) == Decimal(1070 + 50)
    assert check_rows(rows, {1: "fifo"}).realized["disallowed"].tolist() == [0]


def test_corporate_action_money_at_the_action_date_rate() -> None:
    """A return of capital per share and a merger's cash per share are converted at the
    action's date; ratios and basis fractions are not money and stay."""
    roc = _rows(
        ("SAP", D1, "buy", Decimal(10), Decimal(50), Decimal(0)),
        ("SAP", D2, "return_of_capital", Decimal(0), Decimal(2), Decimal(0)),
    )
    rates = {("EUR", D1): Decimal("1.2"), ("EUR", D2): Decimal("0.9"), ("EUR", D3): Decimal("1.1")}
    usd, _ = rows_in_usd(roc, {}, {"SAP": "EUR"}, rates)
    (lot,) = check_rows(usd, {1: "fifo"}, {2: Action()}).open_lots
    assert from_fixed(lot["basis"]) == Decimal(600) - 10 * 2 * Decimal("0.9")
    merger = [*roc[:1], (3, 1, "SAP", D3, "merger", Decimal(0), Decimal(0), Decimal(0), None)]
    action = {3: Action(ratio=Decimal(0), target="OTHER", cash=Decimal("55"))}
    usd, acts = rows_in_usd(merger, action, {"SAP": "EUR"}, rates)
    assert acts[3] == Action(ratio=Decimal(0), target="OTHER", cash=Decimal("60.5"))
    (piece,) = check_rows(usd, {1: "fifo"}, acts).realized
    assert (piece["proceeds"], piece["basis"]) == (10 * 605 * SCALE // 10, 600 * SCALE)
