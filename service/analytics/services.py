"""Analytics over the ledger and price history, computed with ``quantcore``.

Every figure starts from :func:`service.analytics.history.value_history` (securities and
cash in the portfolio's base currency, external flows, time-weighted daily returns; see
:func:`quantcore.valuation.ledger_value_history` for the method). Amounts are in the
portfolio's ``base_currency``: closes and cash in another currency are converted at the
day's rate (``MarketData.fx_rates``), current quotes at the latest one (``fx_quote``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from quantcore import drawdown, metrics, returns, valuation
from quantcore import risk as qrisk
from service import formatting as fmt
from service.analytics import technical
from service.analytics.history import HistoryInput, ValueHistory, row_currencies, value_history
from service.analytics.periods import Window, WindowQuery, resolve
from service.analytics.periods import market_today as _today
from service.analytics.prices import ClosePanel, fx_panel, panel
from service.analytics.schemas import (
    AllocationItem,
    AllocationRead,
    MetricsRead,
    PerformancePoint,
    PerformanceRead,
    RiskRead,
    TechnicalRead,
)
from service.assets.market import MarketData
from service.db.models import Asset, Portfolio, Position
from service.errors import NotFoundError, ValidationError
from service.formatting import frac, ratio
from service.ledger import read
from service.ledger.owned import get_owned

__all__ = [
    "allocation",
    "allocation_of",
    "frac",
    "ledger_rows",
    "metrics_of",
    "performance",
    "performance_of",
    "portfolio_metrics",
    "portfolio_risk",
    "ratio",
    "technical_indicators",
]

F64 = NDArray[np.float64]
CORRELATION_SYMBOL = "SPY"


async def ledger_rows(session: AsyncSession, portfolio_id: int) -> HistoryInput:
    """The portfolio's ledger as the value history reads it (:func:`service.ledger.read.history_input`:
    the owner's ledger columns, cached per ledger version)."""
    owner = (
        await session.execute(select(Portfolio.user_id).where(Portfolio.id == portfolio_id))
    ).scalar_one()
    return await read.history_input(await session.connection(), owner, portfolio_id)


@dataclass(frozen=True, slots=True)
class _Ledger:
    """A portfolio's ledger rows, its base currency and the currency of each symbol it
    names (with the benchmarks asked for)."""

    rows: HistoryInput
    base: str
    currency_of: Mapping[str, str]
    user_id: int

    def symbols(self) -> list[str]:
        """The symbols the rows hold, sorted."""
        return sorted(self.rows.names[s] for s in np.unique(self.rows.symbol).tolist() if s >= 0)


async def _ledger(session: AsyncSession, p: Portfolio, extra: Sequence[str] = ()) -> _Ledger:
    rows = await read.history_input(await session.connection(), p.user_id, p.id)
    currency_of = dict(rows.currency_of)
    missing = set(extra) - set(currency_of)  # the benchmarks
    if missing:
        found = await session.execute(
            select(Asset.symbol, Asset.currency).where(Asset.symbol.in_(sorted(missing)))
        )
        currency_of.update({sym: cur.upper() for sym, cur in found.tuples()})
    return _Ledger(rows, (p.base_currency or "USD").upper(), currency_of, p.user_id)


def _benchmark(market: MarketData, symbol: str, field: str = "benchmark") -> str:
    symbol = symbol.strip().upper()
    if market.quote(symbol) is None:
        raise ValidationError(field, "not_found", f"Unknown benchmark symbol {symbol!r}.")
    return symbol


def _history(
    market: MarketData,
    ledger: _Ledger,
    start: dt.date,
    end: dt.date,
    extra: Sequence[str],
) -> tuple[ValueHistory, dict[str, F64]]:
    """Value history on ``[first transaction, end]`` and the closes of ``extra`` symbols
    (in the base currency) on the same calendar; ``start`` only bounds the price window
    from below. The calendar is the union of the held symbols' trading days, or of the
    ``extra`` symbols' when the ledger holds cash only."""
    rows = ledger.rows
    symbols = ledger.symbols()
    first = rows.date.min().astype(dt.date) if len(rows) else start
    lo = min(first, start)
    if symbols:
        prices = panel(market, symbols, lo, end)
    else:
        days = panel(market, list(extra), lo, end).dates
        prices = ClosePanel(days, np.empty((days.size, 0)), ())
    codes = row_currencies(rows, ledger.currency_of, ledger.base)
    fx = fx_panel(market, codes, prices.dates)
    hist = value_history(rows, prices, fx=fx, asset_currency=ledger.currency_of)
    if not extra:
        return hist, {}
    bench = panel(market, list(extra), lo, end, calendar=hist.dates)
    return hist, {s: _in_base(market, ledger, s, bench.column(s), hist.dates) for s in extra}


def _in_base(
    market: MarketData, ledger: _Ledger, symbol: str, close: F64, days: NDArray[np.datetime64]
) -> F64:
    """``symbol``'s closes in the base currency (a benchmark in another currency)."""
    code = ledger.currency_of.get(symbol, ledger.base)
    if code == ledger.base:
        return close
    return np.asarray(close * fx_panel(market, (ledger.base, code), days).rates[:, 1])


def _simple(close: F64) -> F64:
    return np.asarray(returns.simple_returns(close), dtype=np.float64)


def _in_window(hist: ValueHistory, window: Window) -> NDArray[np.bool_]:
    """Rows of ``window`` (``after < date <= end``)."""
    return (hist.dates > np.datetime64(window.after, "D")) & (
        hist.dates <= np.datetime64(window.end, "D")
    )


def _window(ledger: _Ledger, query: WindowQuery, market: MarketData) -> Window:
    """The window ``query`` asks for on the market's current day (``max``: from the first row)."""
    return resolve(query, _today(market), ledger.rows.first_date)


async def portfolio_metrics(
    session: AsyncSession,
    market: MarketData,
    user_id: int,
    portfolio_id: int,
    query: WindowQuery,
    benchmark: str | None,
) -> MetricsRead:
    """Total, annualized, volatility, Sharpe, max drawdown, alpha, beta and benchmark return.

    All from ``quantcore.metrics.summary`` on the time-weighted daily returns of the
    window (:mod:`service.analytics.periods`) against the benchmark's daily
    close-to-close returns on the same days.
    """
    p = await get_owned(session, user_id, portfolio_id)
    bench = _benchmark(market, benchmark or p.benchmark_symbol)
    ledger = await _ledger(session, p, [bench])
    window = _window(ledger, query, market)
    if not ledger.rows:
        return metrics_of(None, None, window, bench)
    hist, extra = _history(market, ledger, window.after, window.end, [bench])
    return metrics_of(hist, extra[bench], window, bench)


def metrics_of(
    hist: ValueHistory | None, bench_close: F64 | None, window: Window, bench: str
) -> MetricsRead:
    """The metrics reply of a value history over ``window`` against the benchmark's closes
    on the same calendar (None: no history, every figure null)."""
    empty = MetricsRead(
        period=window.label, start_date=None, end_date=None, observations=0, benchmark=bench,
        total_return=None, annualized_return=None, volatility=None, sharpe_ratio=None,
        max_drawdown=None, alpha=None, beta=None, benchmark_return=None,
    )  # fmt: skip
    if hist is None or bench_close is None:
        return empty
    keep = _in_window(hist, window) & np.isfinite(hist.returns)
    if not keep.any():
        return empty
    r = hist.returns[keep]
    b = _simple(bench_close)[keep]
    names = [
        "total_return",
        "annualized_return",
        "volatility",
        "sharpe_ratio",
        "max_drawdown",
        "alpha",
        "beta",
    ]
    ppy = valuation.infer_periods_per_year(hist.dates[keep])
    s = metrics.summary(r, b, periods_per_year=ppy, metrics=names)
    assert isinstance(s, pd.Series)  # one series in (1-D), one column of metrics out
    days = hist.dates[keep]
    return MetricsRead(
        period=window.label,
        start_date=days[0].astype(dt.date),
        end_date=days[-1].astype(dt.date),
        observations=int(r.size),
        benchmark=bench,
        total_return=frac(s["total_return"]),
        annualized_return=frac(s["annualized_return"]),
        volatility=frac(s["volatility"]),
        sharpe_ratio=ratio(s["sharpe_ratio"]),
        max_drawdown=frac(s["max_drawdown"]),
        alpha=frac(s["alpha"]),
        beta=ratio(s["beta"]),
        benchmark_return=frac(float(returns.total_return(b))),
        money_weighted_return=frac(_money_weighted(hist, keep)),
    )


def _money_weighted(hist: ValueHistory, keep: NDArray[np.bool_]) -> float:
    """XIRR of the window's external flows: the value held before it put in on its eve,
    each day's inflow in and outflow out, the last day's value as the final value."""
    at = np.flatnonzero(keep)
    first, last = int(at[0]), int(at[-1])
    span = slice(first, last + 1)
    return valuation.ledger_money_weighted_return(
        hist.dates[span],
        hist.inflow[span],
        hist.outflow[span],
        float(hist.value[last]),
        opening_value=float(hist.value[first - 1]) if first > 0 else 0.0,
        opening_date=hist.dates[first - 1] if first > 0 else None,
    )


async def performance(
    session: AsyncSession,
    market: MarketData,
    user_id: int,
    portfolio_id: int,
    query: WindowQuery,
    interval: str,
    benchmark: str | None,
) -> PerformanceRead:
    """Value, interval return, cumulative return, benchmark cumulative return and drawdown.

    Cumulative figures start at 0 on the first day of the period
    (``quantcore.returns.cumulative_returns``); drawdown is
    ``quantcore.drawdown.drawdown_series`` of the period's returns; the interval
    return compounds the daily returns since the previous point.
    """
    p = await get_owned(session, user_id, portfolio_id)
    bench = _benchmark(market, benchmark or p.benchmark_symbol)
    ledger = await _ledger(session, p, [bench])
    window = _window(ledger, query, market)
    if not len(ledger.rows):
        return performance_of(None, None, window, interval, bench)
    hist, extra = _history(market, ledger, window.after, window.end, [bench])
    return performance_of(hist, extra[bench], window, interval, bench)


def performance_of(
    hist: ValueHistory | None,
    bench_close: F64 | None,
    window: Window,
    interval: str,
    bench: str,
) -> PerformanceRead:
    """The performance reply of a value history over ``window`` (None: an empty series)."""
    out = PerformanceRead(period=window.label, interval=interval, benchmark=bench, series=[])
    if hist is None or bench_close is None:
        return out
    keep = _in_window(hist, window)
    keep &= np.cumsum(np.isfinite(hist.returns)) > 0  # from the first day with capital
    if not keep.any():
        return out
    r = np.where(np.isfinite(hist.returns[keep]), hist.returns[keep], 0.0)
    b = np.nan_to_num(_simple(bench_close)[keep])
    cum = returns.cumulative_returns(r)
    bcum = returns.cumulative_returns(b)
    dd = drawdown.drawdown_series(r)
    dates, value = hist.dates[keep], hist.value[keep]
    picks = valuation.period_ends(dates, interval)  # type: ignore[arg-type]
    step = valuation.interval_returns(cum, picks)
    out.series = [
        PerformancePoint(
            date=dates[i].astype(dt.date),
            value=fmt.money(float(value[i])),
            daily_return=frac(float(step[n])),
            cumulative_return=frac(float(cum[i])),
            benchmark_cumulative_return=frac(float(bcum[i])),
            drawdown=frac(float(dd[i])),
        )
        for n, i in enumerate(picks.tolist())
    ]
    return out


@dataclass(frozen=True, slots=True)
class _Line:
    """A line of the book at current quotes: a position, or the cash of one currency."""

    symbol: str
    name: str
    asset_type: str
    sector: str


#: Cash below half a cent is float residue of amounts given to the cent, not a line.
_CASH_TOLERANCE = 0.005


def _quote_rate(market: MarketData, code: str, base: str) -> float:
    """The latest rate of ``code`` in ``base`` (NaN when the market has none)."""
    quote = market.fx_quote(code, base)
    return quote.rate if quote is not None else float("nan")


async def _marked_book(
    session: AsyncSession, market: MarketData, ledger: _Ledger, portfolio_id: int
) -> tuple[list[_Line], F64]:
    """Positions and positive cash balances, each valued in the base currency at current
    quotes and rates (NaN: no price or no rate)."""
    rows = list(
        (
            await session.execute(
                select(Position, Asset)
                .join(Asset, Asset.id == Position.asset_id)
                .where(Position.portfolio_id == portfolio_id)
                .order_by(Asset.symbol)
            )
        ).tuples()
    )
    assets = [a for _, a in rows]
    quotes = market.quotes([a.symbol for a in assets])
    price = np.array([quotes[a.symbol].price if a.symbol in quotes else np.nan for a in assets])
    rate = np.array(
        [_quote_rate(market, (a.currency or "USD").upper(), ledger.base) for a in assets]
    )
    qty = np.array([float(pos.quantity) for pos, _ in rows])
    lines = [_Line(a.symbol, a.name, a.asset_type, a.sector) for a in assets]
    values = [qty * price * rate]
    # the portfolio's cash as its read model derives it (service.ledger.cash)
    balances = await read.balances(await session.connection(), ledger.user_id)
    held = {code: v for code, v in balances.get(portfolio_id, {}).items() if v > _CASH_TOLERANCE}
    lines += [_Line(code, f"Cash ({code})", "cash", "Cash") for code in held]
    values.append(np.array([v * _quote_rate(market, c, ledger.base) for c, v in held.items()]))
    return lines, np.concatenate(values)


def _group(keys: Sequence[str], weight: F64) -> dict[str, str]:
    grouped = valuation.group_weights(keys, weight)
    return {k: frac(v) or "0.000000" for k, v in grouped.items()}


async def allocation(
    session: AsyncSession, market: MarketData, user_id: int, portfolio_id: int
) -> AllocationRead:
    """Weights of each position and of cash (value / total at current quotes and rates, in
    the base currency), by sector and by asset type (cash: sector ``Cash``, type ``cash``)."""
    p = await get_owned(session, user_id, portfolio_id)
    ledger = await _ledger(session, p)
    lines, value = await _marked_book(session, market, ledger, p.id)
    return allocation_of(lines, value)


def allocation_of(lines: Sequence[_Line], value: F64) -> AllocationRead:
    """The allocation reply of book lines and their values (one currency)."""
    total, weight = valuation.position_weights(value)
    items = [
        AllocationItem(
            asset_symbol=a.symbol,
            asset_name=a.name,
            asset_type=a.asset_type,
            sector=a.sector,
            weight=frac(float(weight[i])),
            value=fmt.money(float(value[i])),
        )
        for i, a in enumerate(lines)
    ]
    items.sort(key=lambda it: -float(it.value or 0))
    return AllocationRead(
        total_value=fmt.money(total) or "0.00",
        allocations=items,
        by_sector=_group([a.sector for a in lines], weight),
        by_asset_type=_group([a.asset_type for a in lines], weight),
    )


async def portfolio_risk(
    session: AsyncSession, market: MarketData, user_id: int, portfolio_id: int, lookback: int
) -> RiskRead:
    """One-day historical VaR and ES at 95 %, volatility, beta, correlation with SPY, concentration.

    Over the last ``lookback`` defined daily returns: ``quantcore.risk.value_at_risk`` and
    ``expected_shortfall`` (historical, level 0.95; positive fractions of value,
    also times the current value, positions and cash), ``volatility`` (annualized),
    ``beta`` on the portfolio's benchmark and ``correlation`` with SPY. Sector weights
    come from current quotes (cash is the sector ``Cash``); ``herfindahl_index`` is the
    sum of squared weights of the allocation's lines.
    """
    p = await get_owned(session, user_id, portfolio_id)
    bench = _benchmark(market, p.benchmark_symbol, "benchmark_symbol")
    extra = sorted({bench, CORRELATION_SYMBOL})
    ledger = await _ledger(session, p, extra)
    lines, value = await _marked_book(session, market, ledger, p.id)
    total, weight = valuation.position_weights(value)
    end = _today(market)
    start = end - dt.timedelta(days=int(lookback * 1.6) + 14)
    r = b = s = np.empty(0)
    ppy = 252.0
    if len(ledger.rows):
        hist, closes = _history(market, ledger, start, end, extra)
        ok = np.flatnonzero(np.isfinite(hist.returns))[-lookback:]
        r = hist.returns[ok]
        b = _simple(closes[bench])[ok]
        s = _simple(closes[CORRELATION_SYMBOL])[ok]
        ppy = valuation.infer_periods_per_year(hist.dates[ok]) if ok.size else ppy
    nan = float("nan")
    enough = r.size >= 2
    var = float(qrisk.value_at_risk(r, level=0.95, method="historical")) if enough else nan
    es = float(qrisk.expected_shortfall(r, level=0.95, method="historical")) if enough else nan
    return RiskRead(
        method="historical",
        confidence_level="0.95",
        horizon_days=1,
        lookback=lookback,
        observations=int(r.size),
        portfolio_value=fmt.money(total) or "0.00",
        var_95=frac(var),
        var_95_amount=fmt.money(var * total),
        expected_shortfall=frac(es),
        expected_shortfall_amount=fmt.money(es * total),
        volatility=frac(float(qrisk.volatility(r, periods_per_year=ppy)) if enough else nan),
        beta=ratio(float(qrisk.beta(r, b)) if enough else nan),
        benchmark=bench,
        correlation_spy=ratio(float(qrisk.correlation(r, s)) if enough else nan),
        sector_concentration=_group([a.sector for a in lines], weight),
        herfindahl_index=frac(valuation.herfindahl_index(weight)) if total > 0 else None,
    )


async def technical_indicators(
    session: AsyncSession, market: MarketData, asset_id: int, names: Sequence[str], period: int
) -> TechnicalRead:
    """Indicators over the last ``period`` daily bars of an asset (computed on those bars only,
    so the first values of each indicator are its warm-up, ``null``)."""
    requests = technical.parse(names)
    asset = (await session.execute(select(Asset).where(Asset.id == asset_id))).scalar_one_or_none()
    if asset is None:
        raise NotFoundError(f"Asset {asset_id} not found.")
    end = _today(market)
    start = end - dt.timedelta(days=int(period * 1.6) + 14)
    try:
        bars = market.history(asset.symbol, start, end, "1d").iloc[-period:]
    except KeyError:
        raise NotFoundError(f"No price history for {asset.symbol}.") from None
    arrays = {
        c: bars[c].to_numpy(dtype=np.float64) for c in ("open", "high", "low", "close", "volume")
    }
    values = technical.compute(requests, arrays)
    index = pd.DatetimeIndex(bars.index)
    return TechnicalRead(
        asset_id=asset.id,
        symbol=asset.symbol,
        period=period,
        dates=[ts.date() for ts in index],
        close=[fmt.price(float(x)) for x in arrays["close"]],
        indicators={k: [frac(float(x)) for x in v] for k, v in values.items()},
    )
