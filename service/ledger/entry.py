"""A ledger entry as a write receives it, validated field by field (400s naming the field).

Amounts are exact decimals with at most eight fractional digits, below ``1e20``
(:func:`check_amount`): what :mod:`service.ledger.fixed` represents exactly.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from service.db.types import quantize
from service.errors import ValidationError
from service.ledger import checks as lots
from service.ledger.checks import CASH_TYPES
from service.ledger.fixed import MAX_VALUE
from service.ledger.rows import Action

__all__ = ["LedgerEntry", "check_amount"]

_MAX = MAX_VALUE
_SPLITS = ("split", "stock_dividend")
_PLAIN = frozenset(("buy", "sell", "dividend"))
_LINKED = ("spin_off", "merger")
_EARLIEST = dt.date(1900, 1, 1)


def check_amount(value: Decimal | str | float, field: str, *, positive: bool) -> Decimal:
    """A finite decimal with at most 8 fractional digits, > 0 (or >= 0).

    ``value`` is a ``Decimal``, the text of one (as :data:`DecimalInput` admits it) or
    a JSON number (a float is read by its shortest repr: ``0.1`` is ``Decimal("0.1")``).

    Raises:
        ValidationError: naming ``field`` (codes ``invalid``, ``max_decimal_places``,
            ``min_value``, ``max_value``).
    """
    if isinstance(value, float):
        value = repr(value)
    if not isinstance(value, Decimal):
        try:
            value = Decimal(value)
        except ArithmeticError:
            raise ValidationError(field, "invalid", f"{field} must be a decimal number.") from None
    if not value.is_finite():
        raise ValidationError(field, "invalid", f"{field} must be a finite decimal number.")
    if value.as_tuple().exponent < -8 and value != quantize(value):  # type: ignore[operator]
        raise ValidationError(
            field, "max_decimal_places", f"{field} allows at most 8 fractional digits."
        )
    if value < 0 or (positive and value == 0):
        bound = "greater than 0" if positive else "at least 0"
        raise ValidationError(field, "min_value", f"{field} must be {bound}.")
    if value >= _MAX:
        raise ValidationError(field, "max_value", f"{field} must be less than {_MAX:.0e}.")
    return quantize(value)


class LedgerEntry:
    """A validated ledger entry about to be written.

    A corporate action (``kind`` in :data:`service.ledger.checks.CORPORATE_ACTIONS`)
    takes no quantity, fees or lot: it acts on every share held; its fields are
    ``ratio`` (``split_ratio`` of a split or stock dividend), ``cash`` (``cash_in_lieu``,
    or a merger's ``cash_per_share``), ``basis_allocation`` and ``target_symbol``.
    """

    __slots__ = (
        "basis_allocation", "cash", "currency", "date", "fees", "kind", "lot_id", "price",
        "quantity", "ratio", "symbol", "target_symbol",
    )  # fmt: skip

    def __init__(
        self,
        symbol: str | None,
        kind: str,
        quantity: Decimal | str | float | None,
        price: Decimal | str | float | None,
        fees: Decimal | str | float,
        date: dt.date,
        *,
        price_field: str = "price",
        date_field: str = "transaction_date",
        lot_id: int | None = None,
        split_ratio: Decimal | str | float | None = None,
        cash_in_lieu: Decimal | str | float | None = None,
        ratio: Decimal | str | float | None = None,
        target_symbol: str | None = None,
        basis_allocation: Decimal | str | float | None = None,
        cash_per_share: Decimal | str | float | None = None,
        currency: str | None = None,
    ) -> None:
        self.symbol = symbol.upper() if symbol is not None else None
        self.kind = kind
        self.currency = currency
        self.ratio: Decimal | None = None
        self.cash: Decimal | None = None
        self.basis_allocation: Decimal | None = None
        self.target_symbol: str | None = None
        if date > dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1):
            raise ValidationError(date_field, "max_value", f"{date_field} cannot be in the future.")
        if date < _EARLIEST:
            raise ValidationError(
                date_field, "min_value", f"{date_field} must be on or after {_EARLIEST}."
            )
        self.date = date
        if lot_id is not None and kind != "sell":
            raise ValidationError(
                "lot_id", "invalid", "lot_id names the lot a sell relieves; only sells take one."
            )
        self.lot_id = lot_id
        given = {
            "split_ratio": split_ratio, "cash_in_lieu": cash_in_lieu, "ratio": ratio,
            "target_symbol": target_symbol, "basis_allocation": basis_allocation,
            "cash_per_share": cash_per_share,
        }  # fmt: skip
        allowed = {
            "split": ("split_ratio", "cash_in_lieu"),
            "stock_dividend": ("split_ratio", "cash_in_lieu"),
            "spin_off": ("ratio", "target_symbol", "basis_allocation"),
            "merger": ("ratio", "target_symbol", "cash_per_share"),
        }.get(kind, ())
        for name, value in given.items():
            if value is not None and name not in allowed:
                raise ValidationError(name, "invalid", f"{name} does not apply to a {kind}.")
        if kind in CASH_TYPES:
            self._cash(kind, symbol, quantity, price, fees, price_field)
            return
        if self.symbol is None:
            raise ValidationError("asset_symbol", "required", f"A {kind} needs asset_symbol.")
        if currency is not None:
            raise ValidationError(
                "currency", "invalid",
                f"A {kind}'s cash moves in its asset's currency; currency is for cash rows.",
            )  # fmt: skip
        if kind in lots.CORPORATE_ACTIONS:
            self._action(kind, quantity, price, fees, price_field, given)
            return
        for name, value in (("quantity", quantity), (price_field, price)):
            if value is None:
                raise ValidationError(name, "required", f"A {kind} needs {name}.")
        assert quantity is not None and price is not None
        self.quantity = check_amount(quantity, "quantity", positive=True)
        self.price = check_amount(price, price_field, positive=kind != "dividend")
        self.fees = check_amount(fees, "fees", positive=False)
        if kind != "buy" and self.fees > self.quantity * self.price:
            # a sale or a dividend never costs money: fees above the gross amount are a typo
            raise ValidationError(
                "fees", "max_value", f"fees of a {kind} cannot exceed quantity x {price_field}."
            )

    def _cash(
        self,
        kind: str,
        symbol: str | None,
        quantity: Decimal | str | float | None,
        price: Decimal | str | float | None,
        fees: Decimal | str | float,
        price_field: str,
    ) -> None:
        """A cash row: no asset, no quantity; ``price`` is the amount."""
        if symbol is not None:
            raise ValidationError(
                "asset_symbol", "invalid", f"A {kind} moves cash only; it takes no asset_symbol."
            )
        if quantity is not None:
            raise ValidationError(
                "quantity", "invalid", f"A {kind} takes no quantity; {price_field} is the amount."
            )
        if price is None:
            raise ValidationError(price_field, "required", f"A {kind} needs {price_field}, the amount.")
        self.quantity = Decimal(1)
        self.price = check_amount(price, price_field, positive=True)
        self.fees = check_amount(fees, "fees", positive=False)
        if kind == "fee" and self.fees != 0:
            raise ValidationError("fees", "invalid", f"A fee row's amount is its {price_field}; it takes no fees.")
        if kind in ("deposit", "interest") and self.fees > self.price:
            raise ValidationError("fees", "max_value", f"fees of a {kind} cannot exceed its {price_field}.")

    @classmethod
    def plain(
        cls,
        symbol: str | None,
        kind: str,
        quantity: Decimal,
        price: Decimal,
        fees: Decimal,
        date: dt.date,
        latest: dt.date,
        currency: str | None = None,
    ) -> LedgerEntry | None:
        """The entry ``LedgerEntry(...)`` makes of a buy, sell or dividend (``currency``
        None) or a cash row (``symbol`` None, ``price`` the amount) whose amounts are
        ``Decimal`` values, without its per-field errors: None whenever the constructor
        would raise, so a caller builds that row with the constructor to word its error.
        A bulk import's fast path (``latest``: the last date allowed, today + 1).
        """
        if not (_EARLIEST <= date <= latest):
            return None
        cash = kind in CASH_TYPES
        if cash:
            if symbol is not None or currency is None:
                return None
        elif kind not in _PLAIN or symbol is None or currency is not None:
            return None
        if not (price.is_finite() and fees.is_finite() and 0 <= price < _MAX and 0 <= fees < _MAX):
            return None
        p, f = quantize(price), quantize(fees)
        if p != price or f != fees:
            return None
        if cash:
            if p == 0 or (kind == "fee" and f != 0) or (kind in ("deposit", "interest") and f > p):
                return None
            q = Decimal(1)
        else:
            if not (quantity.is_finite() and 0 < quantity < _MAX):
                return None
            q = quantize(quantity)
            if q != quantity or (p == 0 and kind != "dividend") or (kind != "buy" and f > q * p):
                return None
        self = cls.__new__(cls)
        self.symbol = symbol.upper() if symbol is not None else None
        self.kind, self.currency, self.date, self.lot_id = kind, currency, date, None
        self.quantity, self.price, self.fees = q, p, f
        self.ratio = self.cash = self.basis_allocation = None
        self.target_symbol = None
        return self

    @property
    def is_cash(self) -> bool:
        """Whether the entry moves cash only (no asset)."""
        return self.kind in CASH_TYPES

    def _action(
        self,
        kind: str,
        quantity: Decimal | str | float | None,
        price: Decimal | str | float | None,
        fees: Decimal | str | float,
        price_field: str,
        given: dict[str, Any],
    ) -> None:
        if quantity is not None:
            raise ValidationError(
                "quantity", "invalid", f"A {kind} acts on every share held; it takes no quantity."
            )
        if check_amount(fees, "fees", positive=False) != 0:
            raise ValidationError("fees", "invalid", f"A {kind} takes no fees.")
        self.quantity = Decimal(0)
        self.fees = Decimal(0)
        self.price = Decimal(0)

        def need(name: str) -> Any:
            if given[name] is None:
                raise ValidationError(name, "required", f"A {kind} needs {name}.")
            return given[name]

        if kind in _SPLITS:
            self.ratio = check_amount(need("split_ratio"), "split_ratio", positive=True)
            if given["cash_in_lieu"] is not None:
                self.cash = check_amount(given["cash_in_lieu"], "cash_in_lieu", positive=True)
        elif kind == "return_of_capital":
            if price is None:
                raise ValidationError(
                    price_field, "required", f"A {kind} needs {price_field} (per share)."
                )
            self.price = check_amount(price, price_field, positive=True)
        else:
            self.target_symbol = str(need("target_symbol")).strip().upper()
            if self.target_symbol == self.symbol:
                raise ValidationError(
                    "target_symbol", "invalid", "target_symbol must differ from asset_symbol."
                )
            if kind == "spin_off":
                self.ratio = check_amount(need("ratio"), "ratio", positive=True)
                share = check_amount(need("basis_allocation"), "basis_allocation", positive=False)
                if share > 1:
                    raise ValidationError(
                        "basis_allocation", "max_value", "basis_allocation must be at most 1."
                    )
                self.basis_allocation = share
            else:
                if given["ratio"] is None and given["cash_per_share"] is None:
                    raise ValidationError(
                        "ratio", "required", "A merger needs ratio, cash_per_share or both."
                    )
                if given["ratio"] is not None:
                    self.ratio = check_amount(given["ratio"], "ratio", positive=True)
                if given["cash_per_share"] is not None:
                    self.cash = check_amount(
                        given["cash_per_share"], "cash_per_share", positive=True
                    )
                if self.ratio is not None and self.cash is not None:
                    if price is None:
                        raise ValidationError(
                            price_field, "required",
                            "A merger paying shares and cash needs price, the value of one new "
                            "share (it splits the basis between the cash and the shares).",
                        )  # fmt: skip
                    self.price = check_amount(price, price_field, positive=True)
        if price is not None and kind in (*_SPLITS, "spin_off"):
            raise ValidationError(price_field, "invalid", f"A {kind} takes no {price_field}.")

    @property
    def is_action(self) -> bool:
        """Whether the entry is a corporate action."""
        return self.kind in lots.CORPORATE_ACTIONS

    def action(self) -> Action | None:
        """The corporate-action fields as the tax ledger reads them."""
        if not self.is_action:
            return None
        return Action(self.ratio, self.target_symbol, self.basis_allocation, self.cash)
