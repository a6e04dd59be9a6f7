"""Foreign exchange: values in a base currency, cross rates, and gains under the IRS rule.

A *rate* here is always the price of one unit of the asset's currency in the
base currency (``EURUSD`` = 1.08 means 1 EUR is worth 1.08 USD), so a value in
base is ``quantity * price * rate``.

Inputs are scalars, NumPy arrays, ``pd.Series`` or ``pd.DataFrame``. They
broadcast as NumPy does, with one exception that matches how the data arrive:
a ``pd.Series`` beside a 2-D input is a time series (axis 0), so one rate
series converts every column of a price panel. The result takes the index and
columns of the first pandas input of its shape; NaN (a missing price or rate)
gives NaN, never 0.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple, TypeAlias, overload

import numpy as np
import pandas as pd

from quantcore._typing import Float64Array

__all__ = ["RealizedInBase", "cross_rate", "realized_in_base", "to_base", "value_in_base"]

#: What the conversions and cross rates give back: a float for scalars, else an
#: array, or a Series or DataFrame when a pandas input has the result's shape.
Converted: TypeAlias = "float | Float64Array | pd.Series | pd.DataFrame"

_CURRENCY = re.compile(r"^[A-Z]{3}$")
_PAIR = re.compile(r"^[A-Z]{6}$")


def _arrays(named: dict[str, Any]) -> tuple[list[np.ndarray], tuple[int, ...], Any]:
    """float64 arrays of the inputs, their broadcast shape, and the pandas template."""
    raw: list[np.ndarray] = []
    series: list[bool] = []
    template: Any = None
    for name, x in named.items():
        if isinstance(x, pd.Series | pd.DataFrame):
            template = x if template is None or (template.ndim == 1 and x.ndim == 2) else template
            values = x.to_numpy(dtype=np.float64, na_value=np.nan)
        else:
            try:
                values = np.asarray(x, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{name} must be numeric (float64-convertible): {exc}") from None
        if values.ndim > 2:
            raise ValueError(f"{name} must be a scalar, 1-D or 2-D, got {values.ndim} dimensions")
        raw.append(values)
        series.append(isinstance(x, pd.Series))
    panel = any(a.ndim == 2 for a in raw)
    arrays = [a.reshape(-1, 1) if panel and is_series else a for a, is_series in zip(raw, series, strict=True)]
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        shapes = ", ".join(f"{n} {a.shape}" for n, a in zip(named, raw, strict=True))
        raise ValueError(f"shapes do not broadcast: {shapes}") from None
    return arrays, shape, template


def _check_rates(rates: np.ndarray, name: str) -> None:
    finite = rates[np.isfinite(rates)]
    if np.any(finite <= 0.0):
        raise ValueError(f"{name} must be positive (base currency per unit of the asset's currency)")
    if np.any(np.isinf(rates)):
        raise ValueError(f"{name} must be finite")


def _wrap(out: np.ndarray, template: Any) -> Converted:
    if out.ndim == 0:
        return float(out)
    if isinstance(template, pd.DataFrame) and template.shape == out.shape:
        return pd.DataFrame(out, index=template.index, columns=template.columns)
    if isinstance(template, pd.Series) and out.ndim == 1 and template.shape == out.shape:
        return pd.Series(out, index=template.index, name=template.name)
    if isinstance(template, pd.Series) and out.ndim == 2 and out.shape[0] == template.shape[0]:
        return pd.DataFrame(out, index=template.index)
    return out


@overload
def to_base(amounts: float, rates: float) -> float: ...


@overload
def to_base(amounts: Any, rates: Any) -> Converted: ...


def to_base(amounts: Any, rates: Any) -> Converted:
    """Amounts in the asset's currency converted to the base currency.

    Parameters
    ----------
    amounts : float, ndarray, Series or DataFrame
        Money in the asset's currency (prices, cash balances, values).
    rates : float, ndarray, Series or DataFrame
        Base currency per unit of the asset's currency, positive; broadcast
        against ``amounts`` (a Series against a panel runs along time).

    Returns
    -------
    float, ndarray, Series or DataFrame
        ``amounts * rates``.

    Raises
    ------
    ValueError
        If an input is not numeric, the shapes do not broadcast, or a rate is
        zero, negative or infinite.

    Examples
    --------
    >>> to_base(100.0, 1.08)  # 100 EUR in USD at EURUSD 1.08
    108.0
    """
    (a, r), _, template = _arrays({"amounts": amounts, "rates": rates})
    _check_rates(r, "rates")
    return _wrap(np.multiply(a, r), template)


@overload
def value_in_base(quantities: float, prices: float, rates: float) -> float: ...


@overload
def value_in_base(quantities: Any, prices: Any, rates: Any) -> Converted: ...


def value_in_base(quantities: Any, prices: Any, rates: Any) -> Converted:
    """Market value in the base currency: ``quantities * prices * rates``.

    Parameters
    ----------
    quantities : float, ndarray, Series or DataFrame
        Units held (one per asset, or a time x asset panel).
    prices : float, ndarray, Series or DataFrame
        Prices in each asset's own currency.
    rates : float, ndarray, Series or DataFrame
        Base currency per unit of each asset's currency (1 for assets already
        in the base currency).

    Returns
    -------
    float, ndarray, Series or DataFrame
        Values in base, in the broadcast shape. Sum along axis 1 for the
        portfolio's value.

    Raises
    ------
    ValueError
        As :func:`to_base`.

    Examples
    --------
    Two assets, one in USD and one in EUR, valued in USD:

    >>> value_in_base(np.array([10.0, 4.0]), np.array([150.0, 120.0]), np.array([1.0, 1.08]))
    array([1500. ,  518.4])
    """
    (q, p, r), _, template = _arrays({"quantities": quantities, "prices": prices, "rates": rates})
    _check_rates(r, "rates")
    return _wrap(q * p * r, template)


class RealizedInBase(NamedTuple):
    """Basis, proceeds and gain of sales, in the base (tax) currency."""

    basis: Converted
    proceeds: Converted
    gain: Converted


def realized_in_base(
    quantities: Any,
    cost_prices: Any,
    acquisition_rates: Any,
    sale_prices: Any,
    sale_rates: Any,
    *,
    buy_fees: Any = 0.0,
    sell_fees: Any = 0.0,
) -> RealizedInBase:
    """Gain on the sale of assets bought and sold in a foreign currency.

    Parameters
    ----------
    quantities : float, ndarray, Series or DataFrame
        Units sold, one per lot.
    cost_prices, sale_prices : float, ndarray, Series or DataFrame
        Per-unit cost and sale price in the asset's currency.
    acquisition_rates, sale_rates : float, ndarray, Series or DataFrame
        Base currency per unit of the asset's currency on the acquisition date
        and on the sale date.
    buy_fees, sell_fees : float, ndarray, Series or DataFrame, keyword-only
        Commissions in the asset's currency: added to the basis at the
        acquisition rate, subtracted from the proceeds at the sale rate.

    Returns
    -------
    RealizedInBase
        ``basis``, ``proceeds`` and ``gain = proceeds - basis``, each in the
        broadcast shape.

    Raises
    ------
    ValueError
        As :func:`to_base`.

    Notes
    -----
    .. math::

        B = (q\\,c + f_b)\\,x_a, \\qquad P = (q\\,s - f_s)\\,x_s, \\qquad G = P - B

    A US taxpayer reports in US dollars: every item paid or received in a
    foreign currency is translated at the exchange rate prevailing when it is
    paid or received [1]_, so the basis (cost plus commissions [2]_) uses the
    rate of the acquisition date and the amount realized the rate of the sale
    date. The gain therefore includes the currency's move over the holding
    period, and a sale at a gain in euros can be a loss in dollars.

    References
    ----------
    .. [1] IRS Publication 54, *Tax Guide for U.S. Citizens and Resident Aliens
       Abroad*, chapter 1, "Foreign Currency" (functional currency; "use the
       exchange rate prevailing when you receive, pay, or accrue the item").
    .. [2] IRS Publication 550, *Investment Income and Expenses*, chapter 4,
       "Basis of Investment Property" (cost basis includes commissions) and
       "How To Figure Gain or Loss" (amount realized less selling expenses).

    Examples
    --------
    10 shares bought at 30 EUR when 1 EUR = 1.10 USD, sold at 32 EUR when
    1 EUR = 1.00 USD: a 20 EUR gain is a 10 USD loss.

    >>> r = realized_in_base(10.0, 30.0, 1.10, 32.0, 1.00)
    >>> round(r.basis, 10), round(r.proceeds, 10), round(r.gain, 10)
    (330.0, 320.0, -10.0)
    """
    named = {
        "quantities": quantities, "cost_prices": cost_prices, "acquisition_rates": acquisition_rates,
        "sale_prices": sale_prices, "sale_rates": sale_rates, "buy_fees": buy_fees, "sell_fees": sell_fees,
    }
    (q, c, xa, s, xs, fb, fs), _, template = _arrays(named)
    _check_rates(xa, "acquisition_rates")
    _check_rates(xs, "sale_rates")
    basis = (q * c + fb) * xa
    proceeds = (q * s - fs) * xs
    return RealizedInBase(_wrap(basis, template), _wrap(proceeds, template), _wrap(proceeds - basis, template))


def _pair_values(value: Any) -> Converted:
    if isinstance(value, pd.Series | pd.DataFrame):
        return value
    return np.asarray(value, dtype=np.float64) if np.ndim(value) else float(value)


@overload
def cross_rate(pairs: Mapping[str, float], from_currency: str, to_currency: str) -> float: ...


@overload
def cross_rate(pairs: Mapping[str, Any], from_currency: str, to_currency: str) -> Converted: ...


def cross_rate(pairs: Mapping[str, Any], from_currency: str, to_currency: str) -> Converted:
    """The rate converting ``from_currency`` into ``to_currency`` from quoted pairs.

    Parameters
    ----------
    pairs : mapping of str to float, ndarray or Series
        FX quotes by pair name, ``"EURUSD"`` being the price of 1 EUR in USD;
        series must share their index.
    from_currency, to_currency : str
        ISO 4217 codes.

    Returns
    -------
    float, ndarray or Series
        ``1.0`` for the same currency; the direct quote; the inverse of the
        opposite quote; else the cross through one common currency
        (``EURGBP = EURUSD / GBPUSD``).

    Raises
    ------
    ValueError
        If a code is not three capital letters or no pair (direct, inverse or
        through one other currency) connects the two.

    Examples
    --------
    >>> pairs = {"EURUSD": 1.08, "USDJPY": 150.0}
    >>> round(cross_rate(pairs, "EUR", "JPY"), 10)
    162.0
    >>> round(cross_rate(pairs, "USD", "EUR"), 10)
    0.9259259259
    """
    for code in (from_currency, to_currency):
        if not isinstance(code, str) or not _CURRENCY.match(code):
            raise ValueError(f"currency codes are three capital letters (ISO 4217), got {code!r}")
    if from_currency == to_currency:
        return 1.0
    quotes = {k.upper(): v for k, v in pairs.items()}
    bad = [k for k in quotes if not _PAIR.match(k)]
    if bad:
        raise ValueError(f"FX pairs are named by two ISO 4217 codes (e.g. 'EURUSD'), got {bad[0]!r}")

    def leg(a: str, b: str) -> Converted | None:
        if a + b in quotes:
            return _pair_values(quotes[a + b])
        if b + a in quotes:
            return 1.0 / _pair_values(quotes[b + a])
        return None

    direct = leg(from_currency, to_currency)
    if direct is not None:
        return direct
    via = sorted({k[:3] for k in quotes} | {k[3:] for k in quotes})
    for middle in via:
        first, second = leg(from_currency, middle), leg(middle, to_currency)
        if first is not None and second is not None:
            return first * second
    raise ValueError(f"no FX pair converts {from_currency} to {to_currency} (pairs: {', '.join(sorted(quotes))})")
