"""Strategy parameters checked against the ``quantcore.backtest`` registry, with field paths.

Every parameter of a type is required when a strategy is created (a stored
strategy says what it runs), except :data:`OPTIONAL` ones; a quick backtest fills
omitted parameters with the registry's defaults. Errors name the field
``parameters.<name>`` with code ``required``, ``unknown_field``, ``invalid``,
``invalid_choice``, ``min_value`` or ``max_value``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from quantcore.backtest import STRATEGIES
from service.errors import ValidationError

__all__ = ["MAX_WINDOW", "OPTIONAL", "check_parameters", "check_strategy_type", "strategy_types"]

#: Parameters that keep the registry default when omitted at creation.
OPTIONAL = frozenset({"ma_type"})
#: Upper bound of window parameters (40 years of daily bars).
MAX_WINDOW = 10_000
_WINDOWS = frozenset({"short_window", "long_window", "window", "lookback"})
_BOUND = re.compile(r"must be (>=|>) ")


def strategy_types() -> dict[str, dict[str, Any]]:
    """Each registered type with its parameters' defaults."""
    return {name: dict(s.defaults) for name, s in STRATEGIES.items()}


def check_strategy_type(value: str, field: str = "strategy_type") -> str:
    if value not in STRATEGIES:
        raise ValidationError(
            field,
            "invalid_choice",
            f"{field} must be one of {', '.join(STRATEGIES)}; got {value!r}.",
        )
    return value


def _code(message: str, value: Any) -> str:
    if "'sma' or 'ema'" in message:
        return "invalid_choice"
    if "must be an integer" in message or "must be a number" in message or "finite" in message:
        return "invalid"
    if _BOUND.search(message):
        return "min_value"
    if "must be in [" in message:
        try:
            return "min_value" if float(value) < 0 else "max_value"
        except (TypeError, ValueError):
            return "invalid"
    return "invalid"


def check_parameters(
    strategy_type: str, parameters: Mapping[str, Any], *, fill_defaults: bool = False
) -> dict[str, Any]:
    """Validate ``parameters`` for ``strategy_type``; returns them with defaults filled in.

    Raises:
        ValidationError: on ``parameters.<name>`` (see the module notes).
    """
    spec = STRATEGIES[check_strategy_type(strategy_type)]
    for name in parameters:
        if name not in spec.defaults:
            allowed = ", ".join(spec.defaults) or "none"
            raise ValidationError(
                f"parameters.{name}",
                "unknown_field",
                f"{strategy_type} has no parameter {name!r} (allowed: {allowed}).",
            )
    merged: dict[str, Any] = {}
    for p in spec.params:
        field = f"parameters.{p.name}"
        if p.name not in parameters:
            if not fill_defaults and p.name not in OPTIONAL:
                raise ValidationError(
                    field, "required", f"{field} is required for {strategy_type}."
                )
            merged[p.name] = p.default
            continue
        value = parameters[p.name]
        try:
            p.check(value, field)
        except ValueError as exc:
            raise ValidationError(field, _code(str(exc), value), str(exc)) from None
        if p.name in _WINDOWS and int(value) > MAX_WINDOW:
            raise ValidationError(field, "max_value", f"{field} must be <= {MAX_WINDOW}.")
        merged[p.name] = int(value) if p.name in _WINDOWS else value
    if spec.ordered is not None:
        lo, hi = spec.ordered
        if not float(merged[lo]) < float(merged[hi]):
            raise ValidationError(
                f"parameters.{hi}",
                "min_value",
                f"parameters.{hi} must be greater than parameters.{lo} ({merged[lo]!r}); got {merged[hi]!r}.",
            )
    return merged
