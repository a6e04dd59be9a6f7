"""Strategies and backtests: CRUD, and runs through the worker pool.

A run loads the closes of the strategy's assets (the union of their trading days,
carried forward) and of the benchmark, hands them to
:func:`service.backtesting.worker.execute` (``quantcore.backtest.run_strategy`` in
a worker process) and stores the metrics, the equity curve and the trades on the
backtest row. Status: ``pending`` (created) -> ``running`` -> ``completed`` or
``failed`` (with ``error``); a completed or failed backtest may be run again.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from decimal import Decimal
from typing import Any

import anyio.to_thread
import numpy as np
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from service import formatting as fmt
from service.analytics.prices import is_cached, panel
from service.assets.market import MarketData
from service.backtesting import worker
from service.backtesting.params import (
    check_parameters,
    check_strategy_type,
    library_parameters,
)
from service.backtesting.schemas import (
    BacktestCreate,
    BacktestDetail,
    BacktestRead,
    BacktestStatus,
    EquityPoint,
    QuickBacktestCreate,
    QuickBacktestRead,
    RunMetrics,
    RunResult,
    StrategyCreate,
    StrategyRead,
    StrategyUpdate,
    TradeRead,
)
from service.db import Database
from service.db.models import Backtest, Strategy, utcnow
from service.errors import ApiError, NotFoundError, ValidationError
from service.pagination import PageParams

__all__ = [
    "create_backtest",
    "create_strategy",
    "delete_strategy",
    "get_backtest",
    "get_strategy",
    "list_backtests",
    "list_strategies",
    "list_trades",
    "quick_backtest",
    "run_backtest",
    "update_strategy",
]

log = logging.getLogger("service")
_MAX_CAPITAL = Decimal("1e15")
#: A run still marked ``running`` after this long was lost (server stopped mid-run): it may be rerun.
STALE_RUN = dt.timedelta(minutes=10)


class Conflict(ApiError):
    status_code = 409
    error = "conflict"


def _fraction(
    value: Decimal, field: str, *, low: Decimal, high: Decimal, open_low: bool = False
) -> Decimal:
    if not value.is_finite():
        raise ValidationError(field, "invalid", f"{field} must be a finite number.")
    if value < low or (open_low and value == low):
        raise ValidationError(
            field, "min_value", f"{field} must be {'>' if open_low else '>='} {low}."
        )
    if value > high:
        raise ValidationError(field, "max_value", f"{field} must be <= {high}.")
    return value


def _capital(value: Decimal) -> Decimal:
    return _fraction(value, "initial_capital", low=Decimal(0), high=_MAX_CAPITAL, open_low=True)


def _symbols(market: MarketData, symbols: list[str], field: str = "asset_symbols") -> list[str]:
    out = list(dict.fromkeys(s.strip().upper() for s in symbols))
    for i, s in enumerate(out):
        if market.quote(s) is None:
            raise ValidationError(
                f"{field}[{i}]" if field == "asset_symbols" else field,
                "not_found",
                f"Unknown asset symbol {s!r}.",
            )
    return out


def _strategy_read(s: Strategy) -> StrategyRead:
    return StrategyRead(
        id=s.id, name=s.name, strategy_type=s.strategy_type, description=s.description,
        parameters=dict(s.parameters), initial_capital=fmt.dec(s.initial_capital),
        max_position_size=fmt.dec(s.max_position_size), asset_symbols=list(s.asset_symbols),
        created_at=s.created_at, updated_at=s.updated_at,
    )  # fmt: skip


async def _owned_strategy(session: AsyncSession, user_id: int, strategy_id: int) -> Strategy:
    row = (
        await session.execute(
            select(Strategy).where(Strategy.id == strategy_id, Strategy.user_id == user_id)
        )
    ).scalar_one_or_none()
    if row is None:
        raise NotFoundError(f"Strategy {strategy_id} not found.")
    return row


async def create_strategy(
    session: AsyncSession, market: MarketData, user_id: int, data: StrategyCreate
) -> StrategyRead:
    params = check_parameters(
        data.strategy_type, data.parameters, symbols=[a.strip().upper() for a in data.asset_symbols]
    )
    now = utcnow()
    row = Strategy(
        user_id=user_id, name=data.name, strategy_type=data.strategy_type, description=data.description,
        parameters=params, initial_capital=_capital(data.initial_capital),
        max_position_size=_fraction(data.max_position_size, "max_position_size", low=Decimal(0), high=Decimal(1), open_low=True),
        asset_symbols=_symbols(market, data.asset_symbols), created_at=now, updated_at=now,
    )  # fmt: skip
    session.add(row)
    await session.flush()  # the id
    return _strategy_read(row)


async def list_strategies(
    session: AsyncSession, user_id: int, page: PageParams
) -> tuple[list[StrategyRead], int]:
    where = Strategy.user_id == user_id
    count = int((await session.execute(select(func.count()).where(where))).scalar_one())
    rows = await session.execute(
        select(Strategy)
        .where(where)
        .order_by(Strategy.id.desc())
        .limit(page.limit)
        .offset(page.offset)
    )
    return [_strategy_read(r) for r in rows.scalars()], count


async def get_strategy(session: AsyncSession, user_id: int, strategy_id: int) -> StrategyRead:
    return _strategy_read(await _owned_strategy(session, user_id, strategy_id))


async def update_strategy(
    session: AsyncSession, market: MarketData, user_id: int, strategy_id: int, data: StrategyUpdate
) -> StrategyRead:
    row = await _owned_strategy(session, user_id, strategy_id)
    kind = (
        check_strategy_type(data.strategy_type)
        if data.strategy_type is not None
        else row.strategy_type
    )
    params = data.parameters if data.parameters is not None else dict(row.parameters)
    assets = data.asset_symbols if data.asset_symbols is not None else row.asset_symbols
    row.parameters = check_parameters(kind, params, symbols=[a.strip().upper() for a in assets])
    row.strategy_type = kind
    if data.name is not None:
        row.name = data.name
    if data.description is not None:
        row.description = data.description
    if data.initial_capital is not None:
        row.initial_capital = _capital(data.initial_capital)
    if data.max_position_size is not None:
        row.max_position_size = _fraction(
            data.max_position_size,
            "max_position_size",
            low=Decimal(0),
            high=Decimal(1),
            open_low=True,
        )
    if data.asset_symbols is not None:
        row.asset_symbols = _symbols(market, data.asset_symbols)
    row.updated_at = utcnow()
    await session.flush()
    return _strategy_read(row)


async def delete_strategy(session: AsyncSession, user_id: int, strategy_id: int) -> None:
    """Delete a strategy and its backtests."""
    await session.delete(await _owned_strategy(session, user_id, strategy_id))


def _metrics(stored: dict[str, Any] | None) -> RunMetrics | None:
    if not stored or "metrics" not in stored:
        return None
    m = stored["metrics"]
    nan = float("nan")

    def g(name: str) -> float:
        v = m.get(name)
        return nan if v is None else float(v)

    equity = stored.get("equity") or []
    return RunMetrics(
        total_return=fmt.frac(g("total_return")), annualized_return=fmt.frac(g("annualized_return")),
        sharpe_ratio=fmt.ratio(g("sharpe_ratio")), max_drawdown=fmt.frac(g("max_drawdown")),
        win_rate=fmt.frac(g("win_rate")), total_trades=int(g("total_trades")),
        sortino_ratio=fmt.ratio(g("sortino_ratio")), profit_factor=fmt.ratio(g("profit_factor")),
        exposure=fmt.frac(g("exposure")), benchmark_return=fmt.frac(g("benchmark_return")),
        alpha=fmt.frac(g("alpha")), beta=fmt.ratio(g("beta")),
        final_value=fmt.money(float(equity[-1])) if equity else None,
    )  # fmt: skip


def _backtest_read(b: Backtest) -> BacktestRead:
    return BacktestRead(
        id=b.id, strategy=b.strategy_id, name=b.name, start_date=b.start_date, end_date=b.end_date,
        benchmark_symbol=b.benchmark_symbol, transaction_costs=fmt.dec(b.transaction_costs),
        slippage=fmt.dec(b.slippage), status=b.status, error=b.error or None,  # type: ignore[arg-type]
        result=_metrics(b.result), execution_time=b.execution_time,
        created_at=b.created_at, updated_at=b.updated_at,
    )  # fmt: skip


def _detail(b: Backtest) -> BacktestDetail:
    base = _backtest_read(b)
    stored = b.result or {}
    days = [dt.date.fromisoformat(d) for d in stored.get("dates", [])]
    curve = [
        EquityPoint(date=d, equity=fmt.money(float(e)) or "0.00")
        for d, e in zip(days, stored.get("equity", []), strict=True)
    ]
    trades = _trade_reads(stored.get("trades", []), days)
    fields = {f: getattr(base, f) for f in base.__struct_fields__}
    return BacktestDetail(**fields, equity_curve=curve, trades=trades)


def _trade_reads(stored: list[dict[str, Any]], days: list[dt.date]) -> list[TradeRead]:
    """Stored trade dicts (bar indices) as :class:`TradeRead` (dates, decimal strings)."""
    trades = []
    for t in stored:
        closed = t["exit_idx"] >= 0
        trades.append(
            TradeRead(
                symbol=t["symbol"],
                direction=t["direction"],
                status=t["status"],
                entry_date=days[t["entry_idx"]],
                exit_date=days[t["exit_idx"]] if closed else None,
                size=fmt.quantity(Decimal(repr(t["size"]))),
                entry_price=fmt.price(t["entry_price"]) or "0",
                exit_price=fmt.price(t["exit_price"]) if closed else None,
                fees=fmt.money(t["fees"]) or "0.00",
                pnl=fmt.money(t["pnl"]) or "0.00",
                return_=fmt.frac(t["return"]),
                exit_reason=t.get("exit_reason"),
            )
        )
    return trades


async def list_trades(
    session: AsyncSession, user_id: int, backtest_id: int, paging: PageParams
) -> tuple[list[TradeRead], int]:
    """One page of a backtest's trades, in the order the engine recorded them."""
    stored = (await _owned_backtest(session, user_id, backtest_id)).result or {}
    rows = stored.get("trades", [])
    days = [dt.date.fromisoformat(d) for d in stored.get("dates", [])]
    return _trade_reads(rows[paging.offset : paging.offset + paging.limit], days), len(rows)


async def _owned_backtest(session: AsyncSession, user_id: int, backtest_id: int) -> Backtest:
    row = (
        await session.execute(
            select(Backtest).where(Backtest.id == backtest_id, Backtest.user_id == user_id)
        )
    ).scalar_one_or_none()
    if row is None:
        raise NotFoundError(f"Backtest {backtest_id} not found.")
    return row


def _check_window(start: dt.date, end: dt.date) -> None:
    if start >= end:
        raise ValidationError("end_date", "invalid", "end_date must be after start_date.")


def _new_backtest(
    user_id: int,
    strategy_id: int,
    market: MarketData,
    data: BacktestCreate | QuickBacktestCreate,
    name: str,
    status: str,
) -> Backtest:
    _check_window(data.start_date, data.end_date)
    now = utcnow()
    return Backtest(
        user_id=user_id, strategy_id=strategy_id, name=name, start_date=data.start_date, end_date=data.end_date,
        benchmark_symbol=_symbols(market, [data.benchmark_symbol], "benchmark_symbol")[0],
        transaction_costs=_fraction(data.transaction_costs, "transaction_costs", low=Decimal(0), high=Decimal("0.5")),
        slippage=_fraction(data.slippage, "slippage", low=Decimal(0), high=Decimal("0.5")),
        status=status, error="", result=None, created_at=now, updated_at=now,
    )  # fmt: skip


async def create_backtest(
    session: AsyncSession, market: MarketData, user_id: int, data: BacktestCreate
) -> BacktestRead:
    """A pending backtest of one of the user's strategies (another user's strategy: 404)."""
    strategy = await _owned_strategy(session, user_id, data.strategy)
    row = _new_backtest(user_id, strategy.id, market, data, data.name, "pending")
    session.add(row)
    await session.flush()  # the id
    return _backtest_read(row)


async def list_backtests(
    session: AsyncSession,
    user_id: int,
    page: PageParams,
    *,
    strategy_id: int | None,
    status: str | None,
) -> tuple[list[BacktestRead], int]:
    query = select(Backtest).where(Backtest.user_id == user_id)
    if strategy_id is not None:
        query = query.where(Backtest.strategy_id == strategy_id)
    if status is not None:
        query = query.where(Backtest.status == status)
    count = int(
        (await session.execute(select(func.count()).select_from(query.subquery()))).scalar_one()
    )
    rows = await session.execute(
        query.order_by(Backtest.id.desc()).limit(page.limit).offset(page.offset)
    )
    return [_backtest_read(r) for r in rows.scalars()], count


async def get_backtest(session: AsyncSession, user_id: int, backtest_id: int) -> BacktestDetail:
    return _detail(await _owned_backtest(session, user_id, backtest_id))


def _job(
    market: MarketData, strategy: Strategy, bt: Backtest
) -> tuple[worker.BacktestJob, list[str]]:
    """Load the prices of a run (in a thread: the first load of a symbol simulates it)."""
    symbols = list(strategy.asset_symbols)
    prices = panel(market, symbols, bt.start_date, bt.end_date)
    if prices.dates.size < 2:
        raise ValueError(
            f"fewer than 2 daily bars of {', '.join(symbols)} between {bt.start_date} and {bt.end_date}"
        )
    missing = [s for j, s in enumerate(symbols) if np.isnan(prices.close[:, j]).all()]
    if missing:
        raise ValueError(
            f"no prices of {', '.join(missing)} between {bt.start_date} and {bt.end_date}"
        )
    bench = panel(market, [bt.benchmark_symbol], bt.start_date, bt.end_date, calendar=prices.dates)
    b = bench.close[:, 0]
    job = worker.BacktestJob(
        days=prices.dates.astype(np.int64), close=np.array(prices.close), symbols=tuple(symbols),
        strategy_type=strategy.strategy_type,
        parameters=library_parameters(strategy.strategy_type, strategy.parameters),
        initial_capital=float(strategy.initial_capital), fees=float(bt.transaction_costs),
        slippage=float(bt.slippage), max_position_size=float(strategy.max_position_size),
        benchmark=None if np.isnan(b).all() else np.array(b),
    )  # fmt: skip
    return job, [str(d) for d in prices.dates]


async def _compute(
    market: MarketData, strategy: Strategy, bt: Backtest
) -> tuple[dict[str, Any] | None, str, float]:
    """Load the prices and run the backtest in the pool: ``(result, error, seconds)``.

    Prices already in the close cache are assembled inline; otherwise in a thread
    (the first load of a symbol simulates or reads its history).
    """
    t0 = time.perf_counter()
    try:
        symbols = [*strategy.asset_symbols, bt.benchmark_symbol]
        if all(is_cached(market, sym, bt.start_date, bt.end_date) for sym in symbols):
            job, dates = _job(market, strategy, bt)
        else:
            job, dates = await anyio.to_thread.run_sync(_job, market, strategy, bt)
        result = await worker.execute(job)
        result["dates"] = dates
        return result, "", time.perf_counter() - t0
    except (ValueError, KeyError, RuntimeError) as exc:
        error = str(exc).strip("'\"") or type(exc).__name__
    except Exception as exc:
        log.exception("backtest %s failed", bt.id)
        error = f"internal error ({type(exc).__name__})"
    return None, error, time.perf_counter() - t0


def _outcome(bt: Backtest, result: dict[str, Any] | None, error: str, elapsed: float) -> RunResult:
    """Write the outcome on the row and build the reply."""
    status: BacktestStatus = "failed" if result is None else "completed"
    bt.status, bt.error, bt.result = status, error, result
    bt.execution_time, bt.updated_at = elapsed, utcnow()
    return RunResult(
        status=status, result=_metrics(result), execution_time=elapsed, error=error or None
    )


async def run_backtest(
    db: Database, session: AsyncSession, market: MarketData, user_id: int, backtest_id: int
) -> RunResult:
    """Run (or re-run) one of the user's backtests.

    Two short transactions around the computation: the ``running`` mark commits in
    one of its own before the run starts (a second run of the backtest meanwhile sees
    it: 409), and the outcome is written in ``session``, the request's write
    transaction, which begins only after the run (no write lock is held while
    computing, which takes seconds).

    Raises:
        Conflict: 409 while it is already running (unless marked running for more
            than :data:`STALE_RUN`, e.g. after a server restart).
    """
    async with db.write() as s:
        bt = await _owned_backtest(s, user_id, backtest_id)
        if bt.status == "running" and utcnow() - bt.updated_at < STALE_RUN:
            raise Conflict(f"Backtest {backtest_id} is already running.")
        strategy = await s.get(Strategy, bt.strategy_id)
        assert strategy is not None  # FK with ON DELETE CASCADE
        bt.status, bt.error, bt.updated_at = "running", "", utcnow()
    result, error, elapsed = await _compute(market, strategy, bt)
    row = await session.get(Backtest, bt.id)
    if row is None:  # deleted while running
        raise NotFoundError(f"Backtest {bt.id} not found.")
    return _outcome(row, result, error, elapsed)


async def quick_backtest(
    session: AsyncSession, market: MarketData, user_id: int, data: QuickBacktestCreate
) -> QuickBacktestRead:
    """Create a strategy (defaults for omitted parameters) and a backtest, and run it.

    The run happens first; ``session`` (the request's write transaction, begun by its
    first statement, after the run) then stores the strategy and the backtest with
    its outcome (``completed`` or ``failed``).
    """
    params = check_parameters(
        data.strategy_type, data.parameters, fill_defaults=True,
        symbols=[a.strip().upper() for a in data.asset_symbols],
    )  # fmt: skip
    symbols = _symbols(market, data.asset_symbols)
    name = data.name or f"Quick {data.strategy_type} {', '.join(symbols)}"
    now = utcnow()
    strategy = Strategy(
        user_id=user_id, name=name, strategy_type=data.strategy_type, description="quick backtest",
        parameters=params, initial_capital=_capital(data.initial_capital),
        max_position_size=_fraction(data.max_position_size, "max_position_size", low=Decimal(0), high=Decimal(1), open_low=True),
        asset_symbols=symbols, created_at=now, updated_at=now,
    )  # fmt: skip
    bt = _new_backtest(user_id, 0, market, data, name, "running")
    result, error, elapsed = await _compute(market, strategy, bt)
    run = _outcome(bt, result, error, elapsed)
    session.add(strategy)
    await session.flush()
    bt.strategy_id = strategy.id
    session.add(bt)
    await session.flush()  # the id
    return QuickBacktestRead(
        backtest_id=bt.id, strategy_id=strategy.id, status=run.status, result=run.result,
        execution_time=run.execution_time, error=run.error,
    )  # fmt: skip
