"""Plain-Python ``Decimal`` twin of ``quantcore.tax.match_lots`` (the kernel's oracle).

Written from the rules, not from the kernel: Python lists of lot objects,
``datetime.date`` arithmetic, ``Decimal`` money and ``Fraction`` for exact
proportional splits. The numeric rules are the documented ones:

* every product ``quantity x price`` and every proportional split
  ``amount x part / whole`` is rounded half-up to 1e-8 (``q8``), and the last
  piece of a split takes the remainder;
* a buy's basis is ``q8(qty x price) + fees``; a sell's proceeds
  ``q8(qty x price) - fees``;
* a loss piece is matched with replacement shares in acquisition order: open
  lots bought within 30 days before the sale (not the same purchase, not
  already a replacement), then buys within 30 days after; the disallowed part
  is ``q8(loss_left x shares / shares_left)``; the replacement's holding
  period starts ``(sale - acquired)`` days before its purchase;
* ``method`` is one method or a mapping symbol -> method (unlisted: fifo); a
  sale relieves its own symbol's lots by its symbol's method, and a
  ``specific`` sale naming no lot relieves first in, first out.
* corporate actions (IRS Publication 550; Form 8937 for a spin-off's allocation),
  on every open lot of the symbol: ``split`` / ``stock_dividend`` (quantity
  ``q8(qty x ratio)``, basis and dates kept; ``cash`` in lieu sells the fraction of
  the total like a sale without fees), ``return_of_capital`` (basis minus
  ``q8(qty x price)``, the excess a gain piece of no shares), ``spin_off`` (a lot of
  ``q8(qty x ratio)`` target shares with ``q8(basis x basis_allocation)``, same dates,
  never a wash-sale replacement), ``merger`` (with cash, a sale of
  ``split(qty, cash, q8(ratio x price) + cash)`` shares for ``q8(qty x cash)``; the rest
  of the basis to ``q8(qty x ratio)`` target shares). New lots of a target are placed
  in purchase order; a loss sale waiting for replacement counts post-split shares.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, localcontext
from fractions import Fraction
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = ["RefLedger", "RefLot", "history_from_closes", "is_long_term", "q8", "reference_match_lots", "split"]

E8 = Decimal("0.00000001")
WINDOW = 30
FAR_FUTURE = dt.date(9999, 12, 31)


def _round_fraction(f: Fraction) -> Decimal:
    """Half-up (away from zero) rounding of an exact fraction of dollars to 1e-8."""
    scaled = abs(f) * 10**8
    q, r = divmod(scaled.numerator, scaled.denominator)
    if 2 * r >= scaled.denominator:
        q += 1
    return Decimal(-q if f < 0 else q).scaleb(-8)


def q8(x: Decimal) -> Decimal:
    return _round_fraction(Fraction(x))


def split(amount: Decimal, part: Decimal, whole: Decimal) -> Decimal:
    """``amount x part / whole`` rounded half-up to 1e-8 (``amount`` when part == whole).

    All three carry at most 8 decimals, so with ``A = amount x 1e8`` (and so on) the
    result is ``A x P / W`` units of 1e-8, divided exactly in integers.
    """
    if part == whole:
        return amount
    a, p, w = int(amount.scaleb(8)), int(part.scaleb(8)), int(whole.scaleb(8))
    q, r = divmod(abs(a) * p, w)
    if 2 * r >= w:
        q += 1
    return Decimal(-q if a < 0 else q).scaleb(-8)


def is_long_term(acquired: dt.date, sold: dt.date) -> bool:
    """More than one year: sold after the anniversary (29 Feb -> 28 Feb)."""
    try:
        anniversary = acquired.replace(year=acquired.year + 1)
    except ValueError:
        anniversary = dt.date(acquired.year + 1, 2, 28)
    return sold > anniversary


@dataclass(eq=False)  # lots are compared by identity
class RefLot:
    symbol: str
    origin: int
    purchased: dt.date
    acquired: dt.date
    qty: Decimal
    basis: Decimal
    used: bool = False
    adj: Decimal = Decimal(0)
    received: bool = False  # delivered by a spin-off or merger: never a wash-sale replacement


@dataclass
class _Pending:
    piece: int
    qty: Decimal
    loss: Decimal
    sale: dt.date
    acquired: dt.date
    symbol: str = ""


@dataclass
class RefLedger:
    realized: list[dict] = field(default_factory=list)
    open_lots: list[RefLot] = field(default_factory=list)
    dividends: list[dict] = field(default_factory=list)


def reference_match_lots(
    rows: list[dict], *, method: str | Mapping[str, str] = "fifo", wash: bool = True, groups: dict[str, str] | None = None
) -> RefLedger:
    """Rows: dicts with symbol, date (date), type, quantity, price, fees (Decimal), lot (buy row index for specific sells), ex_date.

    ``method``: one method for every symbol, or a mapping symbol -> method (unlisted symbols: fifo)."""
    with localcontext() as ctx:
        ctx.prec = 80
        ctx.rounding = ROUND_HALF_UP
        return _run(rows, method, wash, groups or {})


def _run(rows: list[dict], method: str | Mapping[str, str], wash: bool, groups: dict[str, str]) -> RefLedger:
    group_of = lambda s: groups.get(s, "sym:" + s)  # noqa: E731
    method_of = (lambda s: method) if isinstance(method, str) else (lambda s: method.get(s, "fifo"))
    lots: dict[str, list[RefLot]] = {}
    pool: dict[str, list[Decimal]] = {}
    pending: dict[str, list[_Pending]] = {}
    out = RefLedger()
    for i, row in enumerate(rows):
        s, d = row["symbol"], row["date"]
        qty, price, fees = row["quantity"], row["price"], row.get("fees", Decimal(0))
        lst = lots.setdefault(s, [])
        pl = pool.setdefault(s, [Decimal(0), Decimal(0)])
        g = group_of(s)
        if row["type"] == "dividend":
            out.dividends.append({"row": i, "symbol": s, "date": d, "ex": row.get("ex_date") or d, "amount": q8(qty * price)})
        elif row["type"] == "buy":
            q_rem, b_rem = qty, q8(qty * price) + fees
            if wash:
                queue = pending.setdefault(g, [])
                keep: list[_Pending] = []
                for e in queue:
                    expired = e.sale + dt.timedelta(days=WINDOW) < d
                    if q_rem > 0 and not expired:
                        take = min(q_rem, e.qty)
                        dis = split(e.loss, take, e.qty)
                        own = split(b_rem, take, q_rem)
                        acq = d - (e.sale - e.acquired)
                        lst.append(RefLot(s, i, d, acq, take, own + dis, True, dis))
                        pl[0] += take
                        pl[1] += own + dis
                        out.realized[e.piece]["disallowed"] += dis
                        q_rem -= take
                        b_rem -= own
                        e.qty -= take
                        e.loss -= dis
                    if e.qty > 0 and not expired:
                        keep.append(e)
                queue[:] = keep
            if q_rem > 0:
                lst.append(RefLot(s, i, d, d, q_rem, b_rem))
                pl[0] += q_rem
                pl[1] += b_rem
        else:
            sold: list[tuple[int, RefLot]] = []
            lot_ref = row.get("lot")
            if row["type"] == "sell":
                qty, p_sell = qty, q8(qty * price) - fees
            else:
                qty, p_sell = _action(out, row, i, s, lst, pl, lots, pool, pending.get(g, []), sold, method_of(s))
                lot_ref = None
            m = method_of(s)
            if m == "specific" and lot_ref is None:
                m = "fifo"  # no lot named: the earliest acquired shares are sold
            if m == "specific":
                if sum((lot.qty for lot in lst if lot.origin == lot_ref), Decimal(0)) < qty:
                    raise ValueError(f"row {i}: lot holds fewer shares than sold")
            elif pl[0] < qty:
                raise ValueError(f"row {i}: sells more than held")
            q_left, p_left = qty, p_sell
            while q_left > 0:
                lot = _pick(lst, m, lot_ref)
                take = min(q_left, lot.qty)
                pr = split(p_left, take, q_left)
                part = split(lot.basis, take, lot.qty)
                bs = split(pl[1], take, pl[0]) if m == "average" else part
                out.realized.append({
                    "symbol": s, "lot": lot.origin, "row": i, "purchased": lot.purchased, "acquired": lot.acquired,
                    "sold": d, "quantity": take, "proceeds": pr, "basis": bs, "disallowed": Decimal(0),
                    "long_term": is_long_term(lot.acquired, d),
                })
                sold.append((len(out.realized) - 1, lot))
                lot.qty -= take
                lot.basis -= part
                if lot.qty == 0:
                    lst.remove(lot)
                pl[0] -= take
                pl[1] -= bs
                q_left -= take
                p_left -= pr
            # wash sales only after the whole sale left: shares sold together never replace each other
            for r, _lot in sold if wash else []:
                piece = out.realized[r]
                if piece["basis"] > piece["proceeds"]:
                    _wash(out, r, piece, piece["quantity"], piece["basis"] - piece["proceeds"], d, g, group_of, lots, pool, pending)
    for s in sorted(lots):
        q_pool, b_pool = pool[s]
        for lot in lots[s]:
            if method_of(s) == "average":
                b = split(b_pool, lot.qty, q_pool)
                lot.basis = b
                q_pool -= lot.qty
                b_pool -= b
            out.open_lots.append(lot)
    _qualify(out)
    return out


def _piece(out: RefLedger, lot: RefLot, row: int, d: dt.date, qty: Decimal, proceeds: Decimal, basis: Decimal) -> int:
    out.realized.append({
        "symbol": lot.symbol, "lot": lot.origin, "row": row, "purchased": lot.purchased, "acquired": lot.acquired,
        "sold": d, "quantity": qty, "proceeds": proceeds, "basis": basis, "disallowed": Decimal(0),
        "long_term": is_long_term(lot.acquired, d),
    })
    return len(out.realized) - 1


def _place(lst: list[RefLot], lot: RefLot) -> None:
    """Insert a received lot before the first lot purchased after it."""
    k = next((k for k, x in enumerate(lst) if x.purchased > lot.purchased), len(lst))
    lst.insert(k, lot)


def _action(out, row, i, s, lst, pl, lots, pool, pending, sold, method) -> tuple[Decimal, Decimal]:
    """Apply a corporate action to symbol ``s``'s lots; return the shares it sells (cash in
    lieu) and their proceeds; pieces it realizes itself go to ``sold`` for the wash-sale pass."""
    kind, d = row["type"], row["date"]
    ratio = row.get("ratio") or Decimal(0)
    cash = row.get("cash") or Decimal(0)
    if not lst:
        raise ValueError(f"row {i}: no shares held")
    if kind in ("split", "stock_dividend"):
        for lot in lst:
            lot.qty = q8(lot.qty * ratio)
            if lot.qty == 0:
                raise ValueError(f"row {i}: ratio leaves a lot with no shares")
        pl[0] = sum((lot.qty for lot in lst), Decimal(0))
        for e in pending:
            if e.symbol == s:
                e.qty = max(E8, q8(e.qty * ratio))
        if cash > 0:
            frac = pl[0] - int(pl[0])
            if frac == 0:
                raise ValueError(f"row {i}: no fractional share")
            return frac, cash
        return Decimal(0), Decimal(0)
    if kind == "return_of_capital":
        cut = Decimal(0)
        for lot in lst:
            red = q8(lot.qty * row["price"])
            if red <= lot.basis:
                lot.basis -= red
                cut += red
            else:
                cut += lot.basis
                sold.append((_piece(out, lot, i, d, Decimal(0), red - lot.basis, Decimal(0)), lot))
                lot.basis = Decimal(0)
        pl[1] = max(Decimal(0), pl[1] - cut)
        return Decimal(0), Decimal(0)
    t = row["target_symbol"]
    tl = lots.setdefault(t, [])
    tp = pool.setdefault(t, [Decimal(0), Decimal(0)])
    pooled = method == "average"
    if kind == "spin_off":
        share = row["basis_allocation"]
        moved_q = moved_b = Decimal(0)
        for lot in list(lst):
            nq = q8(lot.qty * ratio)
            if nq == 0:
                raise ValueError(f"row {i}: ratio leaves a lot with no shares")
            mb, ma = q8(lot.basis * share), q8(lot.adj * share)
            lot.basis -= mb
            lot.adj -= ma
            _place(tl, RefLot(t, lot.origin, lot.purchased, lot.acquired, nq, mb, False, ma, True))
            moved_q += nq
            moved_b += mb
        if pooled:
            moved_b = q8(pl[1] * share)
        pl[1] -= moved_b
        tp[0] += moved_q
        tp[1] += moved_b
        return Decimal(0), Decimal(0)
    per_share = q8(ratio * (row["price"] or Decimal(0))) + cash
    q_all, b_all = pl
    for lot in list(lst):
        b = lot.basis
        if pooled:
            b = split(b_all, lot.qty, q_all)
            q_all -= lot.qty
            b_all -= b
        if cash > 0:
            sq = lot.qty if ratio == 0 else split(lot.qty, cash, per_share)
            sb = b if ratio == 0 else split(b, cash, per_share)
            sold.append((_piece(out, lot, i, d, sq, q8(lot.qty * cash), sb), lot))
            b -= sb
        if ratio > 0:
            nq = q8(lot.qty * ratio)
            if nq == 0:
                raise ValueError(f"row {i}: ratio leaves a lot with no shares")
            _place(tl, RefLot(t, lot.origin, lot.purchased, lot.acquired, nq, b, False, lot.adj, True))
            tp[0] += nq
            tp[1] += b
    lst.clear()
    pl[0] = pl[1] = Decimal(0)
    return Decimal(0), Decimal(0)


def _pick(lst: list[RefLot], method: str, ref: int | None) -> RefLot:
    if method == "lifo":
        return lst[-1]
    if method == "hifo":
        best = lst[0]
        for lot in lst[1:]:
            if lot.basis * best.qty > best.basis * lot.qty:  # exact: the context has 80 digits
                best = lot
        return best
    if method == "specific":
        return next(lot for lot in lst if lot.origin == ref)
    return lst[0]


def _wash(out, r, piece, need, loss, d, g, group_of, lots, pool, pending) -> None:
    cutoff = d - dt.timedelta(days=WINDOW)
    candidates = []
    for sym in _members(g, group_of, lots):
        lst = lots[sym]
        k = len(lst) - 1
        while k >= 0 and lst[k].purchased >= cutoff:  # lists are in purchase order
            lot = lst[k]
            if not lot.used and not lot.received and lot.origin != piece["lot"]:
                candidates.append((lot.origin, k, sym, lot))
            k -= 1
    candidates.sort(key=lambda c: (c[0], c[1]))
    for _, _, sym, lot in candidates:
        if need == 0:
            break
        take = min(need, lot.qty)
        dis = split(loss, take, need)
        target = lot
        if take < lot.qty:
            cb = split(lot.basis, take, lot.qty)
            target = RefLot(sym, lot.origin, lot.purchased, lot.acquired, take, cb, False, lot.adj)
            lst = lots[sym]
            lst.insert(next(k for k, x in enumerate(lst) if x is lot), target)
            lot.qty -= take
            lot.basis -= cb
        target.basis += dis
        target.adj += dis
        target.used = True
        target.acquired = target.purchased - (d - piece["acquired"])
        pool[sym][1] += dis
        out.realized[r]["disallowed"] += dis
        need -= take
        loss -= dis
    if need > 0:
        pending.setdefault(g, []).append(_Pending(r, need, loss, d, piece["acquired"], piece["symbol"]))


def _members(g: str, group_of, lots: dict) -> list[str]:
    return [g[4:]] if g.startswith("sym:") else [s for s in lots if group_of(s) == g]


def _qualify(out: RefLedger) -> None:
    """Qualified part of each dividend: a sweep per symbol over the share intervals
    (purchase, disposal, quantity) in purchase order and the dividends in ex-date order."""
    by_symbol: dict[str, list] = {}
    for p in out.realized:
        by_symbol.setdefault(p["symbol"], []).append((p["purchased"], p["sold"], p["quantity"]))
    for lot in out.open_lots:
        by_symbol.setdefault(lot.symbol, []).append((lot.purchased, FAR_FUTURE, lot.qty))
    for intervals in by_symbol.values():
        intervals.sort(key=lambda iv: iv[0])
    divs: dict[str, list[dict]] = {}
    for div in out.dividends:
        divs.setdefault(div["symbol"], []).append(div)
    for sym, items in divs.items():
        intervals = by_symbol.get(sym, [])
        nxt = 0
        active: list[tuple] = []
        for div in sorted(items, key=lambda d: d["ex"]):
            ex = div["ex"]
            while nxt < len(intervals) and intervals[nxt][0] < ex:  # bought before the ex-date
                active.append(intervals[nxt])
                nxt += 1
            active = [iv for iv in active if iv[1] >= ex]  # still held on the ex-date
            w0, w1 = ex - dt.timedelta(days=60), ex + dt.timedelta(days=60)
            entitled = good = Decimal(0)
            for start, end, q in active:
                entitled += q
                held = (min(end, w1) - max(start + dt.timedelta(days=1), w0)).days + 1
                if held > 60:
                    good += q
            div["qualified"] = split(div["amount"], good, entitled) if entitled > 0 else Decimal(0)


def history_from_closes(closes: pd.DataFrame, rng: np.random.Generator, *, activity: float = 0.3) -> list[dict]:
    """A valid trading history at real closing prices (rounded to cents), seeded.

    Each day and symbol trades with probability ``activity``: a buy (1 to 50
    shares with 2 decimals), a sell of part of one open buy (named in ``lot``, so
    every method including ``specific`` can replay it), or, at month ends, a
    dividend of 0.4% of the price per share (ex-date 3 days before the payment).
    """
    rows: list[dict] = []
    open_buys: dict[str, list[list]] = {c: [] for c in closes.columns}
    for ts, prices in closes.iterrows():
        day = ts.date()
        for sym, px in prices.items():
            if not px == px or rng.random() > activity:  # NaN price or no trade
                continue
            price = Decimal(str(round(float(px), 2)))
            held = [b for b in open_buys[sym] if b[1] > 0]
            u = rng.random()
            if day.day >= 26 and held and u < 0.15:
                qty = sum((b[1] for b in held), Decimal(0))
                dps = (price * Decimal("0.004")).quantize(Decimal("0.0001"))
                rows.append({"symbol": sym, "date": day, "type": "dividend", "quantity": qty, "price": dps,
                             "fees": Decimal(0), "ex_date": day - dt.timedelta(days=3)})
            elif held and u < 0.55:
                pick = held[int(rng.integers(len(held)))]
                qty = min(pick[1], Decimal(int(rng.integers(1, 5000))).scaleb(-2))
                pick[1] -= qty
                rows.append({"symbol": sym, "date": day, "type": "sell", "quantity": qty, "price": price,
                             "fees": Decimal("0.99") if rng.random() < 0.5 else Decimal(0), "lot": pick[0]})
            else:
                qty = Decimal(int(rng.integers(100, 5000))).scaleb(-2)
                open_buys[sym].append([len(rows), qty])
                rows.append({"symbol": sym, "date": day, "type": "buy", "quantity": qty, "price": price,
                             "fees": Decimal("0.99") if rng.random() < 0.5 else Decimal(0)})
    return rows
