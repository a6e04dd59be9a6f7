"""Tax-loss harvesting: open lots below their basis, the tax they could save, the wash-sale risk."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

import numpy as np
import pandas as pd

from quantcore._kernels.tax import is_long_term_nb, muldiv_nb
from quantcore.tax.lots import SCALE, LotLedger, as_ledger, from_fixed, to_cents
from quantcore.tax.rates import TaxRates
from quantcore.tax.wash_sales import WASH_SALE_WINDOW_DAYS

__all__ = ["HarvestOpportunity", "harvest_opportunities"]

_EPOCH = np.datetime64("1970-01-01", "D")
_CENT = Decimal("0.01")


@dataclass(frozen=True)
class HarvestOpportunity:
    """One position with lots below their basis (dollar amounts rounded to cents).

    ``potential_loss_amount`` is the loss realized by selling ``lots``
    (``loss_quantity`` shares) at ``current_price``; ``tax_benefit_estimate``
    prices its short- and long-term parts at their rates.
    """

    id: int
    symbol: str
    quantity: Decimal
    average_cost: Decimal
    current_price: Decimal
    lots: tuple[str, ...]
    loss_quantity: Decimal
    potential_loss_amount: Decimal
    short_term_loss: Decimal
    long_term_loss: Decimal
    tax_benefit_estimate: Decimal
    wash_sale_risk: bool
    earliest_safe_sale: date
    earliest_safe_repurchase: date
    recommendation: str

    def position(self) -> dict[str, Any]:
        """The service's ``position`` object."""
        return {
            "asset_symbol": self.symbol,
            "quantity": self.quantity,
            "average_cost": self.average_cost,
            "current_price": self.current_price,
        }


def _day(value: Any, name: str) -> int:
    try:
        ts = pd.Timestamp(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a date, got {value!r}") from None
    if pd.isna(ts):
        raise ValueError(f"{name} must be a date, got {value!r}")
    return int((np.datetime64(ts.date(), "D") - _EPOCH).astype(np.int64))


def _as_date(day: int) -> date:
    return date(1970, 1, 1) + timedelta(days=int(day))


def _fixed(value: Any, name: str) -> int:
    try:
        d = Decimal(str(value))
    except (InvalidOperation, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not d.is_finite() or d < 0 or d >= Decimal("9.2e10"):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return int(d.scaleb(8).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def harvest_opportunities(
    lots: LotLedger | pd.DataFrame,
    prices: Mapping[str, Any] | pd.Series,
    as_of: Any,
    *,
    rates: TaxRates | None = None,
    min_loss: Any = 0,
    min_loss_pct: Any = 0,
) -> list[HarvestOpportunity]:
    """Positions worth selling for a tax loss, largest loss first.

    Parameters
    ----------
    lots : LotLedger or DataFrame
        The ledger of :func:`quantcore.tax.match_lots` (or a transaction table).
    prices : mapping or Series
        Current price per symbol; symbols without a price are skipped.
    as_of : date-like
        The day the sale would happen.
    rates : TaxRates, optional
        Rates for the benefit estimate (short-term at the ordinary rate,
        long-term at the long-term rate, plus NIIT when set).
    min_loss : number
        Smallest potential loss in dollars to report.
    min_loss_pct : number
        Smallest loss as a fraction of the loss lots' basis (0.05 = 5%).

    Returns
    -------
    list of HarvestOpportunity
        ``id`` numbers them from 1.

    Notes
    -----
    Only lots whose value ``quantity x price`` is below their basis are
    proposed. ``wash_sale_risk`` is set when substantially identical shares
    outside the proposed lots were bought in the 30 days before ``as_of`` or
    are recorded in the 30 days after (a pending replacement): the loss would
    then be disallowed in proportion. The earliest safe sale is the day after
    the last such window closes; the earliest safe repurchase is 31 days after
    the sale.

    Examples
    --------
    >>> import pandas as pd
    >>> from quantcore.tax import match_lots
    >>> tx = pd.DataFrame({"symbol": ["X"], "date": ["2025-01-02"], "type": ["buy"],
    ...                    "quantity": [100], "price": [50]})
    >>> [o] = harvest_opportunities(match_lots(tx), {"X": 40}, "2025-06-02")
    >>> o.potential_loss_amount, o.tax_benefit_estimate, o.wash_sale_risk, o.earliest_safe_repurchase
    (Decimal('1000.00'), Decimal('240.00'), False, datetime.date(2025, 7, 3))
    """
    rates = TaxRates() if rates is None else rates
    ledger = as_ledger(lots)
    today = _day(as_of, "as_of")
    floor = _fixed(min_loss, "min_loss")
    try:
        pct = Decimal(str(min_loss_pct))
    except (InvalidOperation, ValueError):
        raise ValueError(f"min_loss_pct must be a number, got {min_loss_pct!r}") from None
    if not pct.is_finite() or pct < 0:
        raise ValueError(f"min_loss_pct must be >= 0, got {min_loss_pct!r}")
    price_map = dict(prices.items()) if isinstance(prices, pd.Series) else dict(prices)
    o = ledger.open_lots
    window = WASH_SALE_WINDOW_DAYS
    found: list[dict[str, Any]] = []
    for code, sym in enumerate(ledger.symbols):
        if sym not in price_map:
            continue
        price = _fixed(price_map[sym], f"prices[{sym!r}]")
        mine = o[o["symbol"] == code]
        if mine.size == 0:
            continue
        labels: list[str] = []
        origins: set[int] = set()
        loss_q = st_loss = lt_loss = loss_basis = 0
        for lot in mine.tolist():
            _, origin, _, acquired, qty, basis, _, _ = lot
            value = muldiv_nb(qty, price, SCALE)
            if value >= basis:
                continue
            labels.append(ledger.lot_label(origin))
            origins.add(origin)
            loss_q += qty
            loss_basis += basis
            if is_long_term_nb(acquired, today):
                lt_loss += basis - value
            else:
                st_loss += basis - value
        loss = st_loss + lt_loss
        if loss == 0 or loss < floor or Decimal(loss) < pct * Decimal(loss_basis):
            continue
        group = ledger.groups[code]
        b = ledger.buys
        near = b[
            (ledger.groups[b[:, 0]] == group)
            & (b[:, 1] >= today - window)
            & (b[:, 1] <= today + window)
            & ~np.isin(b[:, 3], list(origins))
        ]
        risk = near.shape[0] > 0
        safe_sale = int(near[:, 1].max()) + window + 1 if risk else today
        safe_sale = max(safe_sale, today)
        st_c, lt_c = to_cents(st_loss), to_cents(lt_loss)
        benefit = (
            st_c * (rates.ordinary_rate + rates.niit_rate) + lt_c * (rates.long_term_rate + rates.niit_rate)
        ).quantize(_CENT, rounding=ROUND_HALF_UP)
        total_q = int(mine["quantity"].sum())
        total_b = int(mine["basis"].sum())
        found.append(
            {
                "symbol": sym,
                "quantity": from_fixed(total_q).normalize(),
                "average_cost": to_cents(muldiv_nb(total_b, SCALE, total_q)),
                "current_price": from_fixed(price).normalize(),
                "lots": tuple(labels),
                "loss_quantity": from_fixed(loss_q).normalize(),
                "potential_loss_amount": st_c + lt_c,
                "short_term_loss": st_c,
                "long_term_loss": lt_c,
                "tax_benefit_estimate": benefit,
                "wash_sale_risk": risk,
                "earliest_safe_sale": _as_date(safe_sale),
                "earliest_safe_repurchase": _as_date(safe_sale + window + 1),
            }
        )
    found.sort(key=lambda f: (-f["potential_loss_amount"], f["symbol"]))
    out = []
    for i, f in enumerate(found, start=1):
        sell = (
            f"Sell {f['loss_quantity']:f} sh. of {f['symbol']} (lot{'s' if len(f['lots']) > 1 else ''} "
            f"{', '.join(f['lots'])}) to realize a ${f['potential_loss_amount']:,} loss "
            f"(${f['short_term_loss']:,} short-term, ${f['long_term_loss']:,} long-term), "
            f"an estimated ${f['tax_benefit_estimate']:,} tax benefit"
        )
        if f["wash_sale_risk"]:
            text = (
                f"Wash-sale risk: {f['symbol']} or a substantially identical security was bought within "
                f"30 days of {_as_date(today).isoformat()}, so a sale now would be (partly) disallowed. "
                f"{sell}, on or after {f['earliest_safe_sale'].isoformat()}; do not buy it again before "
                f"{f['earliest_safe_repurchase'].isoformat()}."
            )
        else:
            text = (
                f"{sell}. Do not buy {f['symbol']} or a substantially identical security before "
                f"{f['earliest_safe_repurchase'].isoformat()} (31 days after the sale)."
            )
        out.append(HarvestOpportunity(id=i, recommendation=text, **f))
    return out
