"""Tax-loss harvesting: open lots below their basis, the tax they could save, the wash-sale risk."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

import numpy as np
import pandas as pd

from quantcore._kernels.tax import muldiv_nb
from quantcore._kernels.tax_reports import harvest_lots_nb
from quantcore._validation import read_only
from quantcore.tax.lots import SCALE, LotLedger, as_ledger
from quantcore.tax.money import from_fixed, to_cents
from quantcore.tax.rates import TaxRates
from quantcore.tax.wash_sales import WASH_SALE_WINDOW_DAYS

__all__ = ["MAX_AS_OF", "MAX_MIN_LOSS", "HarvestInputError", "HarvestOpportunity", "harvest_inputs", "harvest_opportunities"]

_EPOCH_DATE = date(1970, 1, 1)
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


class HarvestInputError(ValueError):
    """An argument of :func:`harvest_opportunities` out of its domain, naming it:
    ``field`` (``as_of``, ``min_loss``, ``min_loss_pct``) and ``code`` (``invalid``,
    ``min_value``, ``max_value``)."""

    def __init__(self, field: str, code: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.code = code


#: The latest ``as_of``: every date a proposal names (a sale up to 61 days later, a
#: repurchase 31 days after that) must exist.
MAX_AS_OF = date.max - timedelta(days=2 * WASH_SALE_WINDOW_DAYS + 32)
#: ``min_loss`` must be below this (the exact int64 fixed point's range, in dollars).
MAX_MIN_LOSS = Decimal("9.2e10")


def _day(value: Any, name: str) -> int:
    if isinstance(value, date):
        d = value.date() if isinstance(value, datetime) else value
    else:
        try:
            ts = pd.Timestamp(value)
        except (TypeError, ValueError, OverflowError):
            ts = None
        if ts is None or pd.isna(ts):
            try:
                d = date.fromisoformat(str(value))
            except ValueError:
                raise HarvestInputError(name, "invalid", f"{name} must be a date, got {value!r}") from None
        else:
            d = ts.date()
    if d > MAX_AS_OF:
        raise HarvestInputError(name, "max_value", f"{name} must be on or before {MAX_AS_OF.isoformat()}, got {d.isoformat()}")
    return (d - _EPOCH_DATE).days


def _as_date(day: int) -> date:
    return _EPOCH_DATE + timedelta(days=int(day))


def _fixed(value: Any, name: str) -> int:
    try:
        d = Decimal(str(value))
    except (InvalidOperation, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not d.is_finite() or d < 0 or d >= MAX_MIN_LOSS:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return int(d.scaleb(8).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def harvest_inputs(as_of: Any, min_loss: Any = 0, min_loss_pct: Any = 0) -> tuple[int, int, Decimal]:
    """``as_of`` as a day number, ``min_loss`` in 1e-8 dollars and ``min_loss_pct``, checked.

    Raises
    ------
    HarvestInputError
        Naming the argument: ``as_of`` not a date or after :data:`MAX_AS_OF`;
        ``min_loss`` not a finite number, negative, or from :data:`MAX_MIN_LOSS` up;
        ``min_loss_pct`` not a finite number, negative or above 1 (a loss is at most
        its lots' whole basis).

    Examples
    --------
    >>> harvest_inputs("2025-06-02", "10.5", "0.05")
    (20241, 1050000000, Decimal('0.05'))
    """
    day = _day(as_of, "as_of")
    bounds = {"min_loss": (min_loss, MAX_MIN_LOSS), "min_loss_pct": (min_loss_pct, Decimal(1))}
    checked: dict[str, Decimal] = {}
    for name, (value, high) in bounds.items():
        try:
            d = Decimal(str(value))
        except (InvalidOperation, ValueError):
            raise HarvestInputError(name, "invalid", f"{name} must be a number, got {value!r}") from None
        if not d.is_finite():
            raise HarvestInputError(name, "invalid", f"{name} must be a finite number, got {value!r}")
        if d < 0:
            raise HarvestInputError(name, "min_value", f"{name} must be at least 0, got {value!r}")
        if d > high or (name == "min_loss" and d == high):
            limit = "below 92,000,000,000 (92 billion dollars)" if name == "min_loss" else "at most 1 (the whole basis)"
            raise HarvestInputError(name, "max_value", f"{name} must be {limit}, got {value!r}")
        checked[name] = d
    floor = int(checked["min_loss"].scaleb(8).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    return day, floor, checked["min_loss_pct"]


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
        Price per symbol on ``as_of``; symbols without a price are skipped.
    as_of : date-like
        The day the sale would happen, at the latest :data:`MAX_AS_OF`.
    rates : TaxRates, optional
        Rates for the benefit estimate (short-term at the ordinary rate,
        long-term at the long-term rate, plus NIIT when set).
    min_loss : number
        Smallest potential loss in dollars to report (below :data:`MAX_MIN_LOSS`).
    min_loss_pct : number
        Smallest loss as a fraction of the loss lots' basis (0.05 = 5%; at most 1).

    Returns
    -------
    list of HarvestOpportunity
        ``id`` numbers them from 1.

    Raises
    ------
    HarvestInputError
        A ``ValueError`` naming ``as_of``, ``min_loss`` or ``min_loss_pct`` when
        out of its domain (:func:`harvest_inputs`).

    Notes
    -----
    Only the lots held at the end of ``as_of`` count, as they were that day
    (:meth:`LotLedger.as_of`: bought on or before it, after the splits and other
    corporate actions up to it only, nothing sold later taken away), and of those
    only the lots whose value ``quantity x price`` is below their basis are
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
    today, floor, pct = harvest_inputs(as_of, min_loss, min_loss_pct)
    ledger = as_ledger(lots)
    held = ledger.as_of(today)  # the lots held at the end of as_of, as they were then
    price_map = dict(prices.items()) if isinstance(prices, pd.Series) else dict(prices)
    price = np.full(len(ledger.symbols), -1, dtype=np.int64)
    for code, sym in enumerate(ledger.symbols):
        if sym in price_map:
            price[code] = _fixed(price_map[sym], f"prices[{sym!r}]")
    o = held.open_lots
    lot_sym = np.ascontiguousarray(o["symbol"])
    # read-only for a cached ledger's lots and fresh ones alike: one compiled kernel
    acquired, quantity, basis = (
        read_only(np.ascontiguousarray(o[f])) for f in ("acquired", "quantity", "basis")
    )
    loss, totals = harvest_lots_nb(read_only(lot_sym), acquired, quantity, basis, price, today)
    window = WASH_SALE_WINDOW_DAYS
    b = ledger.buys
    found: list[dict[str, Any]] = []
    for code in np.flatnonzero((totals[:, 0] + totals[:, 1]) > 0).tolist():
        st_loss, lt_loss, loss_q, loss_basis, total_q, total_b = totals[code].tolist()
        loss_total = st_loss + lt_loss
        if loss_total < floor or Decimal(loss_total) < pct * Decimal(loss_basis):
            continue
        mine = loss & (lot_sym == code)
        origins = o["lot"][mine]
        near = b[
            (ledger.groups[b[:, 0]] == ledger.groups[code])
            & (b[:, 1] >= today - window)
            & (b[:, 1] <= today + window)
            & ~np.isin(b[:, 3], origins)
        ]
        risk = near.shape[0] > 0
        safe_sale = max(int(near[:, 1].max()) + window + 1 if risk else today, today)
        st_c, lt_c = to_cents(st_loss), to_cents(lt_loss)
        benefit = (
            st_c * (rates.ordinary_rate + rates.niit_rate) + lt_c * (rates.long_term_rate + rates.niit_rate)
        ).quantize(_CENT, rounding=ROUND_HALF_UP)
        found.append(
            {
                "symbol": ledger.symbols[code],
                "quantity": from_fixed(total_q).normalize(),
                "average_cost": to_cents(muldiv_nb(total_b, SCALE, total_q)),
                "current_price": from_fixed(int(price[code])).normalize(),
                "lots": tuple(ledger.lot_labels(origins).tolist()),
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
