"""The window an analytics request covers: a named ``period`` or ``start_date``/``end_date``.

Named periods count back from the market's current day: ``1m`` ... ``5y`` in calendar
months, ``ytd`` from the last day of the previous year, ``max`` from the day before the
portfolio's first transaction. Instead of a name, ``start_date`` and/or ``end_date``
(both included) choose any window; a missing ``start_date`` is the first transaction,
a missing ``end_date`` (or one after the market's current day) that day.

A window is ``(after, end]``: the first return kept is the one of the first trading
day after ``after`` (measured from the close of ``after`` or the trading day before),
so ``1y`` on 2026-11-20 starts with the return of 2025-11-21.
A period longer than the portfolio's history gives the whole history: the figures start
on the first day with capital (the reply's ``start_date`` says which).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Annotated, Literal, get_args

import pandas as pd
from litestar.params import QueryParameter

from service.assets.market import MarketData
from service.errors import ValidationError

__all__ = [
    "PERIOD_MONTHS",
    "PeriodName",
    "Window",
    "WindowParams",
    "WindowQuery",
    "market_today",
    "provide_window",
    "resolve",
    "window_query",
]

PeriodName = Literal["1m", "3m", "6m", "ytd", "1y", "2y", "3y", "5y", "max"]
#: Calendar months back from the current day of each fixed-length period.
PERIOD_MONTHS = {"1m": 1, "3m": 3, "6m": 6, "1y": 12, "2y": 24, "3y": 36, "5y": 60}
DEFAULT_PERIOD: PeriodName = "1y"
assert set(get_args(PeriodName)) == {*PERIOD_MONTHS, "ytd", "max"}


#: The symbol whose latest quote dates the market's current day.
CLOCK_SYMBOL = "SPY"


def market_today(market: MarketData) -> dt.date:
    """The market's current day (the latest SPY quote, else the UTC date)."""
    quote = market.quote(CLOCK_SYMBOL)
    return quote.timestamp.date() if quote is not None else dt.datetime.now(dt.UTC).date()


@dataclass(frozen=True, slots=True)
class WindowQuery:
    """What the request asked for: a period name, or dates (validated against each other)."""

    period: PeriodName | None
    start_date: dt.date | None
    end_date: dt.date | None


@dataclass(frozen=True, slots=True)
class Window:
    """Days ``after < day <= end``, and the ``label`` the reply's ``period`` shows."""

    label: str
    after: dt.date
    end: dt.date


PeriodQ = Annotated[
    PeriodName | None,
    QueryParameter(
        description=(
            "Look-back: 1m, 3m, 6m, ytd, 1y (default), 2y, 3y, 5y or max (from the first "
            "transaction). Not with start_date/end_date."
        )
    ),
]
StartQ = Annotated[
    dt.date | None,
    QueryParameter(description="First day of the window (default: the first transaction)."),
]
EndQ = Annotated[
    dt.date | None,
    QueryParameter(description="Last day of the window (default: the market's current day)."),
]


@dataclass(frozen=True, slots=True)
class WindowParams:
    """The ``period``, ``start_date`` and ``end_date`` query parameters, each valid on its own.

    The ``window`` dependency of the analytics endpoints (:func:`provide_window`). They
    are checked against each other by :meth:`query`, which the handler calls: after
    Litestar has validated the handler's other parameters, so that a request with two
    faults is refused naming the same field whichever way it is declared.
    """

    period: PeriodName | None
    start_date: dt.date | None
    end_date: dt.date | None

    def query(self) -> WindowQuery:
        """:func:`window_query` of these parameters."""
        return window_query(self.period, self.start_date, self.end_date)


def provide_window(
    period: PeriodQ = None, start_date: StartQ = None, end_date: EndQ = None
) -> WindowParams:
    """The ``window`` dependency: the three window parameters of an analytics request."""
    return WindowParams(period, start_date, end_date)


def window_query(
    period: PeriodName | None, start_date: dt.date | None, end_date: dt.date | None
) -> WindowQuery:
    """Check that the request asks for one kind of window, in order.

    Raises:
        ValidationError: a date beside ``period`` (code ``conflict``, naming the date),
            or ``start_date`` after ``end_date`` (``invalid``, naming ``start_date``).
    """
    if period is not None:
        for name, value in (("start_date", start_date), ("end_date", end_date)):
            if value is not None:
                raise ValidationError(
                    name,
                    "conflict",
                    f"{name} cannot be combined with period: give one or the other.",
                )
    if start_date is not None and end_date is not None and start_date > end_date:
        raise ValidationError(
            "start_date",
            "invalid",
            f"start_date {start_date.isoformat()} is after end_date {end_date.isoformat()}.",
        )
    return WindowQuery(period, start_date, end_date)


def resolve(query: WindowQuery, today: dt.date, first: dt.date | None) -> Window:
    """The window of ``query`` on the market's current day ``today``.

    Args:
        query: from :func:`window_query`.
        today: the market's current day (the latest a window can reach).
        first: the portfolio's first transaction (None: an empty ledger).

    Raises:
        ValidationError: the dates leave no day up to ``today`` (code ``empty_window``,
            naming ``start_date``, or ``end_date`` when only it was given: an end before
            the first transaction).
    """
    if query.start_date is None and query.end_date is None:
        name = query.period or DEFAULT_PERIOD
        if name == "max":
            after = (first or today) - dt.timedelta(days=1)
        elif name == "ytd":
            after = dt.date(today.year - 1, 12, 31)
        else:
            after = (pd.Timestamp(today) - pd.DateOffset(months=PERIOD_MONTHS[name])).date()
        return Window(name, after, today)
    end = min(query.end_date or today, today)
    start = query.start_date or first or end
    if start > end:  # named by the date the request gave (only an end: before the history)
        raise ValidationError(
            "start_date" if query.start_date is not None else "end_date",
            "empty_window",
            f"The window from {start.isoformat()} to {end.isoformat()} holds no day "
            f"(the market's current day is {today.isoformat()}).",
        )
    return Window(f"{start.isoformat()}/{end.isoformat()}", start - dt.timedelta(days=1), end)
