"""The user's ledger as one ``quantcore.tax`` lot ledger.

Lots belong to a portfolio (an account): each portfolio's symbols are namespaced
``"<portfolio id>:<symbol>"`` so that a sale relieves only that portfolio's lots,
each with that portfolio's ``lot_method`` (a per-symbol method mapping), while a
``substantially_identical`` map back to the bare symbol lets the wash-sale rule
see purchases in every portfolio of the user, whatever their methods. All of it is
one :func:`quantcore.tax.match_lots` call.

Rows are applied in :func:`service.ledger.checks.ledger_key` order (date, then
dividends, buys, sells, then amounts), so the order of entry never changes a figure.

Corporate actions (``split``, ``stock_dividend``, ``return_of_capital``, ``spin_off``,
``merger``) carry their fields in an :class:`Action` per transaction id; a spin-off's
or merger's target is namespaced with the portfolio too, so its new lots stay in the
portfolio that held the old shares.

Lots are named by transaction id: a buy's ``lot_id`` is its own id, a sell's the id
of the buy it names (sells that name none relieve first in, first out under
``specific``). Harvesting proposals and reports therefore label lots with the ids a
sell can name.

Cash rows (no asset) hold no lots and are not read. The tax figures read the ledger
in US dollars (:func:`load_ledger` with ``market``, :mod:`service.ledger.usd`); the
positions read it in each asset's own currency.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
import pandas as pd
import pyarrow as pa
from numpy.typing import NDArray
from sqlalchemy import Select, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from quantcore.tax import LotLedger, LotMethod, match_lots
from quantcore.tax.lots import LedgerError
from quantcore.tax.splice import GroupedLedger, grouped
from service.db.models import Asset, Portfolio, Transaction
from service.errors import ValidationError
from service.ledger import read
from service.ledger.checks import CORPORATE_ACTIONS, ledger_key
from service.ledger.columns import KIND_CODE, KINDS, LedgerColumns
from service.ledger.fixed import Fixed
from service.ledger.linked import closure
from service.ledger.rows import Action, LedgerCheckError, LedgerRow
from service.ledger.usd import USD, in_usd

if TYPE_CHECKING:
    from service.assets.market import MarketData

_Matched = TypeVar("_Matched", LotLedger, GroupedLedger)

__all__ = [
    "Action",
    "LedgerCheckError",
    "LedgerRow",
    "columns_rows",
    "display",
    "frozen_ledger",
    "grouped_rows",
    "ledger_rows",
    "linked_ledger_rows",
    "load_ledger",
    "lot_table",
    "match_rows",
    "split_symbol",
]


def split_symbol(name: str) -> tuple[int, str]:
    """``"12:AAPL"`` -> ``(12, "AAPL")``."""
    pid, _, symbol = name.partition(":")
    return int(pid), symbol


def display(ledger: LotLedger) -> LotLedger:
    """The ledger with bare symbols (for reports: ``"100 sh. AAPL"``)."""
    return dataclasses.replace(ledger, symbols=tuple(split_symbol(s)[1] for s in ledger.symbols))


async def ledger_rows(
    session: AsyncSession, portfolio_ids: Collection[int], asset_ids: Collection[int] | None
) -> list[LedgerRow]:
    """The rows of ``portfolio_ids`` (of ``asset_ids``; ``None``: all assets), any order."""
    return (await ledger_rows_with_actions(session, portfolio_ids, asset_ids))[0]


async def ledger_rows_with_actions(
    session: AsyncSession, portfolio_ids: Collection[int], asset_ids: Collection[int] | None
) -> tuple[list[LedgerRow], dict[int, Action]]:
    """:func:`ledger_rows` and the :class:`Action` of each corporate action among them, by id
    (read by a second query, only when the rows hold corporate actions)."""
    query = _rows_query(portfolio_ids)
    if asset_ids is not None:
        query = query.where(Transaction.asset_id.in_(list(asset_ids)))
    rows = [cast(LedgerRow, tuple(r[:9])) for r in (await session.execute(query)).tuples()]
    return rows, await _actions(session, rows)


def _rows_query(portfolio_ids: Collection[int]) -> Select[Any]:
    # the inner join leaves out cash rows (no asset): they hold no lots
    return (
        select(
            Transaction.id,
            Transaction.portfolio_id,
            Asset.symbol,
            Transaction.transaction_date,
            Transaction.transaction_type,
            Transaction.quantity,
            Transaction.price,
            Transaction.fees,
            Transaction.lot_id,
            Transaction.asset_id,
            Transaction.target_asset_id,
        )
        .join(Asset, Asset.id == Transaction.asset_id)
        .where(Transaction.portfolio_id.in_(list(portfolio_ids)))
    )


async def _actions(session: AsyncSession, rows: Iterable[LedgerRow]) -> dict[int, Action]:
    """The :class:`Action` of the corporate actions among ``rows``, by id (no query if none)."""
    ids = [r[0] for r in rows if r[4] in CORPORATE_ACTIONS]
    actions: dict[int, Action] = {}
    if ids:
        target = aliased(Asset)
        found = await session.execute(
            select(
                Transaction.id, Transaction.ratio, target.symbol, Transaction.basis_allocation,
                Transaction.cash,
            )
            .outerjoin(target, target.id == Transaction.target_asset_id)
            .where(Transaction.id.in_(ids))
        )  # fmt: skip
        for tid, ratio, sym, share, cash in found.tuples():
            actions[tid] = Action(ratio, sym, share, cash)
    return actions


async def linked_ledger_rows(
    session: AsyncSession, portfolio_ids: Collection[int], asset_ids: Collection[int]
) -> tuple[list[LedgerRow], dict[int, Action], frozenset[int]]:
    """The rows of ``asset_ids`` and of every asset spin-offs and mergers link to them
    (transitively: their lots flow from one to the other), their actions, and those assets.

    One query in the usual case: it reads the assets' rows and every spin-off or merger
    of the portfolios (an index on ``target_asset_id`` finds them); only when these link
    further assets are those assets' rows read by a second one.
    """
    ids = set(asset_ids)
    query = _rows_query(portfolio_ids).where(
        or_(Transaction.asset_id.in_(list(ids)), Transaction.target_asset_id.is_not(None))
    )
    fetched = list((await session.execute(query)).tuples())
    assets = closure(ids, ((r[9], r[10]) for r in fetched if r[10] is not None))
    rows = [cast(LedgerRow, tuple(r[:9])) for r in fetched if r[9] in assets]
    extra = assets - ids
    if extra:
        more = _rows_query(portfolio_ids).where(
            Transaction.asset_id.in_(list(extra)), Transaction.target_asset_id.is_(None)
        )
        rows += [cast(LedgerRow, tuple(r[:9])) for r in (await session.execute(more)).tuples()]
    return rows, await _actions(session, rows), frozenset(assets)


def match_rows(
    rows: Iterable[LedgerRow], methods: Mapping[int, str], actions: Mapping[int, Action] | None = None
) -> LotLedger:
    """One :func:`quantcore.tax.match_lots` call over ``rows`` (any order, any portfolios of
    one user; ``methods``: each portfolio's lot method), symbols named ``"<pid>:<symbol>"``.
    ``actions``: the fields of the corporate actions among the rows, by transaction id.

    Raises:
        ValidationError: ``lot_method`` ``invalid`` when ``quantcore`` cannot relieve the lots.
    """
    return _valid(match_lots, rows, methods, actions)


def grouped_rows(
    rows: Iterable[LedgerRow], methods: Mapping[int, str], actions: Mapping[int, Action] | None = None
) -> GroupedLedger:
    """:func:`match_rows`, its realized pieces kept per processing group: the one match of
    :func:`quantcore.tax.splice.grouped`, which lays them out so (no reordering after).

    Raises:
        ValidationError: ``lot_method`` ``invalid``, as :func:`match_rows`.
    """
    return _valid(grouped, rows, methods, actions)


def _valid(
    match: Callable[..., _Matched],
    rows: Iterable[LedgerRow],
    methods: Mapping[int, str],
    actions: Mapping[int, Action] | None,
) -> _Matched:
    try:
        return _checked(match, rows, methods, actions)
    except LedgerCheckError as exc:
        raise ValidationError(
            "lot_method", "invalid", f"The ledger cannot be matched: {exc}"
        ) from None


_ROW_LABEL = re.compile(r"^row \d+ \(index [^)]*\): ")
_LOT_NAME = re.compile(r"lot_id '(\d+)'")
_REPEAT = re.compile(r" \([^()]*, [^()]*\)$")


def _user_message(text: str, ordered: list[LedgerRow], at: int, bare: Mapping[str, str]) -> str:
    """``quantcore``'s message in the user's words: the row it stops at by its type, symbol
    and date instead of ``row 18 (index 18)``, bare symbols instead of the internal
    ``"4:AAPL"`` keys, a named lot by its buy's date instead of its id."""
    _tid, _pid, sym, day, kind = ordered[at][:5]
    if _ROW_LABEL.match(text):  # the row is named up front: drop its "(SYM, date)" repeat
        text = _ROW_LABEL.sub(f"the {kind} of {sym} on {day.isoformat()}: ", text)
        text = _REPEAT.sub("", text)
    for name in sorted(bare, key=len, reverse=True):
        text = text.replace(name, bare[name])
    buys = {str(r[0]): r for r in ordered if r[4] == "buy"}

    def lot(m: re.Match[str]) -> str:
        buy = buys.get(m.group(1))
        return f"the lot bought on {buy[3].isoformat()}" if buy is not None else "the lot named"

    return _LOT_NAME.sub(lot, text)


def check_rows(
    rows: Iterable[LedgerRow], methods: Mapping[int, str], actions: Mapping[int, Action] | None = None
) -> LotLedger:
    """:func:`match_rows`, raising :class:`LedgerCheckError` (naming the transaction) instead."""
    return _checked(match_lots, rows, methods, actions)


def _checked(
    match: Callable[..., _Matched],
    rows: Iterable[LedgerRow],
    methods: Mapping[int, str],
    actions: Mapping[int, Action] | None,
) -> _Matched:
    """``match`` (:func:`quantcore.tax.match_lots` or :func:`quantcore.tax.splice.grouped`)
    of the table of ``rows``, raising :class:`LedgerCheckError` (naming the transaction)."""
    ordered = sorted(rows, key=lambda r: ledger_key(r[3], r[4], r[6], r[5], r[7], r[0]))
    records: list[tuple[object, ...]] = []
    bare: dict[str, str] = {}
    by_symbol: dict[str, LotMethod] = {}
    with_actions = bool(actions)
    for tid, pid, sym, day, kind, qty, price, fees, lot in ordered:
        name = f"{pid}:{sym}"
        if name not in bare:
            bare[name] = sym
            by_symbol[name] = cast(LotMethod, methods[pid])  # a Literal column
        lot_name = str(tid) if kind == "buy" else (str(lot) if lot is not None else None)
        if not with_actions:
            records.append((name, day, kind, qty, price, fees, lot_name))
            continue
        act = actions.get(tid) if actions else None
        if act is None:
            records.append((name, day, kind, qty, price, fees, lot_name, None, None, None, None))
            continue
        target = None
        if act.target is not None:
            target = f"{pid}:{act.target}"
            if target not in bare:
                bare[target] = act.target
                by_symbol[target] = cast(LotMethod, methods[pid])
        records.append(
            (name, day, kind, qty, price, fees, lot_name, act.ratio, target, act.basis_allocation, act.cash)
        )
    columns = ["symbol", "date", "type", "quantity", "price", "fees", "lot_id"]
    if with_actions:
        columns += ["ratio", "target_symbol", "basis_allocation", "cash"]
    table = pd.DataFrame.from_records(records, columns=columns)
    try:
        return match(table, method=by_symbol, substantially_identical=bare)
    except LedgerError as exc:
        message = _user_message(str(exc), ordered, exc.row, bare)
        raise LedgerCheckError(message, ordered[exc.row][0], exc.column, exc.code) from None
    except ValueError as exc:
        raise LedgerCheckError(str(exc), -1, None, "invalid") from None


async def load_ledger(
    session: AsyncSession,
    user_id: int,
    portfolio_id: int | None,
    *,
    asset_ids: Collection[int] | None = None,
    market: MarketData | None = None,
) -> GroupedLedger | None:
    """The lot ledger of one of the user's portfolios, or of all of them (``None``: no portfolio),
    its realized pieces kept per processing group (:class:`quantcore.tax.splice.GroupedLedger`).

    ``asset_ids`` limits it to those assets (exact: wash sales only join a symbol's
    own purchases). With ``market``, the amounts of assets quoted in other currencies
    are converted to US dollars at their rows' dates' rates before matching
    (:mod:`service.ledger.usd`): the ledger of the tax figures. Without, every amount is
    in its asset's currency (the positions' ledger).

    One portfolio's ledger is cut from the ledger of all of them (:meth:`LotLedger.only`),
    so its wash sales include those caused by purchases in the user's other portfolios.

    Raises:
        ValidationError: ``lot_method`` ``invalid`` when ``quantcore`` cannot relieve
            the lots (e.g. a sell dated before the shares it sells were bought);
            ``currency`` when a rate is missing (:func:`service.ledger.usd.usd_rates`).
    """
    if asset_ids is None:
        return await _user_ledger(session, user_id, portfolio_id, market)
    else:
        query = select(Portfolio.id, Portfolio.lot_method).where(Portfolio.user_id == user_id)
        methods: dict[int, str] = dict((await session.execute(query)).tuples().all())
        if not methods or (portfolio_id is not None and portfolio_id not in methods):
            return None
        rows, actions, _ = await linked_ledger_rows(session, list(methods), asset_ids)
        if market is not None:
            rows, actions = await in_usd(session, market, rows, actions)
        ledger = grouped_rows(rows, methods, actions)
    return _portfolio_view(ledger, portfolio_id)


def _portfolio_view(ledger: GroupedLedger | None, portfolio_id: int | None) -> GroupedLedger | None:
    """One portfolio's part of the user's lot ledger (``None``: the whole of it)."""
    if ledger is None or portfolio_id is None:
        return ledger
    return ledger.only(_names_of(ledger, portfolio_id))


def _names_of(ledger: GroupedLedger, portfolio_id: int) -> set[str]:
    """The ledger's symbols (``"<portfolio id>:<symbol>"``) of one portfolio."""
    return {name for name in ledger.ledger.symbols if split_symbol(name)[0] == portfolio_id}


def columns_rows(cols: LedgerColumns) -> tuple[list[LedgerRow], dict[int, Action]]:
    """The security rows of ``cols`` as :data:`LedgerRow` (exact ``Decimal`` amounts) and
    the :class:`Action` of each corporate action among them, by id."""
    at = np.flatnonzero(cols.symbol >= 0)
    names = np.array(cols.symbols, dtype=object)
    owners = np.array(cols.portfolios.ids, np.int64)[cols.portfolio[at]].tolist()
    kinds = cols.kind_names(at).tolist()
    rows: list[LedgerRow] = list(
        zip(
            cols.id[at].tolist(), owners, names[cols.symbol[at]].tolist(), cols.date[at].tolist(),
            kinds, cols.quantity.take(at).to_decimal(), cols.price.take(at).to_decimal(),
            cols.fees.take(at).to_decimal(),
            [None if lot < 0 else lot for lot in cols.lot[at].tolist()],
            strict=True,
        )
    )  # fmt: skip
    acting = np.flatnonzero(np.isin(cols.kind_names(at), list(CORPORATE_ACTIONS)))
    actions: dict[int, Action] = {}
    if acting.size:
        sub = at[acting]
        targets = cols.symbol_names(cols.target[sub]).tolist()
        for tid, ratio, target, share, cash in zip(
            cols.id[sub].tolist(), cols.ratio.take(sub).to_decimal(), targets,
            cols.basis_allocation.take(sub).to_decimal(), cols.cash.take(sub).to_decimal(),
            strict=True,
        ):  # fmt: skip
            actions[tid] = Action(ratio, target, share, cash)
    return rows, actions


def lot_table(
    cols: LedgerColumns, rows: NDArray[np.bool_] | None = None
) -> tuple[pd.DataFrame, dict[str, str], dict[str, LotMethod]]:
    """The user's security rows as :func:`quantcore.tax.match_lots`' transaction table, built
    from the columns as columns: the table :func:`check_rows` builds from rows, with the
    same values in the same (ledger) order, without a Python object per row.

    Symbols are ``"<portfolio id>:<symbol>"`` (categorical), amounts exact Arrow decimals
    (:meth:`~service.ledger.fixed.Fixed.to_arrow`), a buy's ``lot_id`` its own id and a
    sell's the buy it names (Arrow integers, read as numbers: a lot is named by the id's
    text, as :func:`check_rows` names it). Returns the table, the bare symbol of each name
    (the ``substantially_identical`` map) and each name's lot method. ``rows``: only those
    rows (a mask of the columns' rows)."""
    at = np.flatnonzero(cols.symbol >= 0 if rows is None else (cols.symbol >= 0) & rows)
    n_sym = max(len(cols.symbols), 1)
    owner = cols.portfolio[at]
    kind = cols.kind[at]
    acting = np.isin(kind, [KIND_CODE[k] for k in CORPORATE_ACTIONS])
    target = np.where(acting, cols.target[at], -1)
    # one code per (portfolio, symbol), targets of spin-offs and mergers included
    pairs = owner * n_sym + cols.symbol[at]
    linked = target >= 0
    # a hash, not a sort of a million rows (np.unique): the few distinct pairs alone are sorted
    inverse, used = pd.factorize(np.concatenate([pairs, owner[linked] * n_sym + target[linked]]), sort=True)
    pids = np.array(cols.portfolios.ids, np.int64)
    methods = cols.portfolios.lot_method
    bare: dict[str, str] = {}
    by_symbol: dict[str, LotMethod] = {}
    names = []
    for code in used.tolist():
        p, sym = divmod(code, n_sym)
        name = f"{pids[p]}:{cols.symbols[sym]}"
        names.append(name)
        bare[name] = cols.symbols[sym]
        by_symbol[name] = cast(LotMethod, methods[p])
    is_buy = kind == KIND_CODE["buy"]
    lot = np.where(is_buy, cols.id[at], np.where(kind == KIND_CODE["sell"], cols.lot[at], -1))
    data: dict[str, Any] = {
        "symbol": pd.Categorical.from_codes(inverse[: at.size], dtype=pd.CategoricalDtype(names)),
        "date": cols.date[at],
        "type": pd.Categorical.from_codes(kind.astype(np.int64), dtype=pd.CategoricalDtype(list(KINDS))),
        "quantity": _decimals(cols.quantity.take(at)),
        "price": _decimals(cols.price.take(at)),
        "fees": _decimals(cols.fees.take(at)),
        "lot_id": pd.array(pa.array(lot, mask=lot < 0), dtype=pd.ArrowDtype(pa.int64())),
    }
    if acting.any():
        codes = np.full(at.size, -1, np.int64)
        codes[linked] = inverse[at.size :]
        data["ratio"] = _decimals(cols.ratio.take(at), acting)
        data["target_symbol"] = pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(names))
        data["basis_allocation"] = _decimals(cols.basis_allocation.take(at), acting)
        data["cash"] = _decimals(cols.cash.take(at), acting)
    return pd.DataFrame(data), bare, by_symbol


def _decimals(amounts: Fixed, rows: NDArray[np.bool_] | None = None) -> pd.api.extensions.ExtensionArray:
    """Exact amounts as a pandas Arrow decimal column (null outside ``rows``, when given)."""
    if rows is not None:
        amounts = Fixed(amounts.hi, amounts.lo, amounts.null | ~rows)
    return pd.array(amounts.to_arrow(), dtype=pd.ArrowDtype(pa.decimal128(38, 8)))


def _match_columns(cols: LedgerColumns) -> GroupedLedger:
    """The user's lot ledger, its realized pieces per processing group, its arrays read-only.

    Raises:
        ValidationError: ``lot_method`` ``invalid``, as :func:`match_rows` (the rows
            are then built once more, to word the message as it words it).
    """
    table, bare, by_symbol = lot_table(cols)
    try:
        ledger = grouped(table, method=by_symbol, substantially_identical=bare)
    except (LedgerError, ValueError):
        rows, actions = columns_rows(cols)
        ledger = grouped_rows(rows, dict(zip(cols.portfolios.ids, cols.portfolios.lot_method, strict=True)), actions)
    return frozen_ledger(ledger)


def frozen_ledger(ledger: GroupedLedger) -> GroupedLedger:
    """``ledger`` with its arrays read-only: requests share the cached value."""
    for value in (*vars(ledger.ledger).values(), *ledger.parts):
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    return ledger


async def _user_ledger(
    session: AsyncSession, user_id: int, portfolio_id: int | None, market: MarketData | None
) -> GroupedLedger | None:
    """The user's lot ledger from the ledger columns, or one portfolio's part of it
    (``None``: no such portfolio).

    Matched once per ledger version (the derivation cache), and each portfolio's part
    cut once too, when no amount needs a rate: no market given, or every asset in US
    dollars. Otherwise the rows are converted at the market's rates
    (:func:`service.ledger.usd.in_usd`) and matched on each call.
    """
    conn = await session.connection()
    cols = await read.columns(conn, user_id)
    if not cols.portfolios.ids or (portfolio_id is not None and portfolio_id not in cols.portfolios.ids):
        return None
    if market is None or all(code == USD for code in cols.symbol_currency):
        whole = await read.derive(conn, user_id, "lots", _match_columns, at=cols.version)
        if portfolio_id is None:
            return whole
        return await read.derive(
            conn, user_id, f"lots:{portfolio_id}", lambda _: frozen_ledger(whole.only(_names_of(whole, portfolio_id))),
            at=cols.version,
        )  # fmt: skip
    rows, actions = columns_rows(cols)
    rows, actions = await in_usd(session, market, rows, actions)
    methods = dict(zip(cols.portfolios.ids, cols.portfolios.lot_method, strict=True))
    return _portfolio_view(grouped_rows(rows, methods, actions), portfolio_id)
