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
from quantcore.backtest.engine import EngineOptions
from service.errors import ValidationError

__all__ = [
    "ENGINE_PARAMETERS",
    "MAX_WINDOW",
    "OPTIONAL",
    "REBALANCE",
    "check_parameters",
    "check_strategy_type",
    "library_parameters",
    "required_parameters",
    "strategy_types",
]

#: Parameters that keep the registry default when omitted at creation.
OPTIONAL = frozenset({"ma_type"})
#: Engine options a signal strategy's ``parameters`` may carry beside its own
#: (stops and sizing; ``size`` overrides ``max_position_size``), all optional.
ENGINE_PARAMETERS = (
    "sl_stop",
    "tp_stop",
    "trail_stop",
    "time_stop",
    "size_type",
    "size",
    "leverage",
    "borrow_rate",
)
#: Upper bound of window parameters (40 years of daily bars).
MAX_WINDOW = 10_000
_WINDOWS = frozenset({"short_window", "long_window", "window"})
#: Parameters the API (and so every stored strategy) names apart from quantcore's
#: registry: the library renamed momentum's ``lookback`` to ``window``, the wire kept it.
WIRE_NAMES: dict[str, dict[str, str]] = {"momentum": {"window": "lookback"}}
_BOUND = re.compile(r"must be (>=|>) ")
#: Target weights (``quantcore.backtest.rebalance``) beside the signal strategies; all
#: its parameters are optional: equal weights, monthly, no drift threshold.
REBALANCE = "rebalance"
_REBALANCE_DEFAULTS: dict[str, Any] = {"weights": None, "every": "M", "threshold": None}
_PERIODS = ("D", "W", "M", "Q", "Y")


def _wire(strategy_type: str, name: str) -> str:
    """The API's name of the registry parameter ``name``."""
    return WIRE_NAMES.get(strategy_type, {}).get(name, name)


def library_parameters(strategy_type: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """Stored parameters with the registry's names, as ``quantcore.backtest`` takes them."""
    back = {wire: name for name, wire in WIRE_NAMES.get(strategy_type, {}).items()}
    return {back.get(k, k): v for k, v in parameters.items()}


def strategy_types() -> dict[str, dict[str, Any]]:
    """Each registered type with its parameters' defaults."""
    types = {
        name: {_wire(name, k): v for k, v in s.defaults.items()} for name, s in STRATEGIES.items()
    }
    types[REBALANCE] = dict(_REBALANCE_DEFAULTS)
    return types


def required_parameters(strategy_type: str) -> list[str]:
    """The parameters a stored strategy of this type must name."""
    if strategy_type == REBALANCE:
        return []
    return [
        _wire(strategy_type, p) for p in STRATEGIES[strategy_type].defaults if p not in OPTIONAL
    ]


def check_strategy_type(value: str, field: str = "strategy_type") -> str:
    if value not in STRATEGIES and value != REBALANCE:
        raise ValidationError(
            field,
            "invalid_choice",
            f"{field} must be one of {', '.join([*STRATEGIES, REBALANCE])}; got {value!r}.",
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
    strategy_type: str,
    parameters: Mapping[str, Any],
    *,
    fill_defaults: bool = False,
    symbols: list[str] | None = None,
) -> dict[str, Any]:
    """Validate ``parameters`` for ``strategy_type``; returns them with defaults filled in.

    ``symbols`` (the strategy's assets) are the keys ``rebalance`` weights may use.

    Raises:
        ValidationError: on ``parameters.<name>`` (see the module notes).
    """
    if check_strategy_type(strategy_type) == REBALANCE:
        return _check_rebalance(parameters, symbols)
    spec = STRATEGIES[strategy_type]
    engine = _check_engine({k: v for k, v in parameters.items() if k in ENGINE_PARAMETERS})
    parameters = {k: v for k, v in parameters.items() if k not in ENGINE_PARAMETERS}
    names = [_wire(strategy_type, p.name) for p in spec.params]
    for name in parameters:
        if name not in names:
            allowed = ", ".join([*names, *ENGINE_PARAMETERS])
            raise ValidationError(
                f"parameters.{name}",
                "unknown_field",
                f"{strategy_type} has no parameter {name!r} (allowed: {allowed}).",
            )
    merged: dict[str, Any] = {}
    for p, name in zip(spec.params, names, strict=True):
        field = f"parameters.{name}"
        if name not in parameters:
            if not fill_defaults and p.name not in OPTIONAL:
                raise ValidationError(
                    field, "required", f"{field} is required for {strategy_type}."
                )
            merged[name] = p.default
            continue
        value = parameters[name]
        try:
            p.check(value, field)
        except ValueError as exc:
            raise ValidationError(field, _code(str(exc), value), str(exc)) from None
        if p.name in _WINDOWS and int(value) > MAX_WINDOW:
            raise ValidationError(field, "max_value", f"{field} must be <= {MAX_WINDOW}.")
        merged[name] = int(value) if p.name in _WINDOWS else value
    if spec.ordered is not None:
        lo, hi = (_wire(strategy_type, n) for n in spec.ordered)
        if not float(merged[lo]) < float(merged[hi]):
            raise ValidationError(
                f"parameters.{hi}",
                "min_value",
                f"parameters.{hi} must be greater than parameters.{lo} ({merged[lo]!r}); got {merged[hi]!r}.",
            )
    return {**merged, **engine}


def _check_engine(options: dict[str, Any]) -> dict[str, Any]:
    """Stops and sizing given in ``parameters``, checked by the engine's own rules.

    ``size_type`` other than ``percent`` needs ``size``; the error names the option
    (``parameters.<name>``), code ``invalid`` for a wrong type or choice, else
    ``min_value``/``max_value`` by the side of the bound.
    """
    for name, value in options.items():
        if name == "size_type":
            continue
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ValidationError(
                f"parameters.{name}", "invalid", f"parameters.{name} must be a number."
            )
        if name == "time_stop" and isinstance(value, float):
            if not value.is_integer():
                raise ValidationError(
                    "parameters.time_stop",
                    "invalid",
                    "parameters.time_stop must be a whole number of bars.",
                )
            options[name] = int(value)
    try:
        EngineOptions(**options)
    except ValueError as exc:
        message = str(exc)
        name = next((n for n in ENGINE_PARAMETERS if message.startswith(n)), "size")
        if name == "size" and "required" in message:
            code = "required"
        elif name == "size_type":
            code = "invalid_choice"
        else:
            value = options.get(name)
            code = "min_value" if isinstance(value, (int, float)) and value <= 0 else "max_value"
        raise ValidationError(f"parameters.{name}", code, f"parameters.{message}") from None
    return options


def _number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise ValidationError(field, "invalid", f"{field} must be a number.")
    if value in (float("inf"), float("-inf")):
        raise ValidationError(field, "invalid", f"{field} must be finite.")
    return float(value)


def _check_rebalance(parameters: Mapping[str, Any], symbols: list[str] | None) -> dict[str, Any]:
    """``weights`` (symbol to weight >= 0, sum <= 1; null: equal weights), ``every``
    (``D``/``W``/``M``/``Q``/``Y`` or a bar count; null: only the first bar) and
    ``threshold`` (drift in [0, 1]; null: none)."""
    for name in parameters:
        if name not in _REBALANCE_DEFAULTS:
            raise ValidationError(
                f"parameters.{name}",
                "unknown_field",
                f"rebalance has no parameter {name!r} (allowed: weights, every, threshold).",
            )
    merged = {**_REBALANCE_DEFAULTS, **parameters}
    weights = merged["weights"]
    if weights is not None:
        if not isinstance(weights, Mapping):
            raise ValidationError(
                "parameters.weights", "invalid", "parameters.weights must be an object."
            )
        if not weights:
            raise ValidationError(
                "parameters.weights", "min_length", "parameters.weights must name an asset."
            )
        clean: dict[str, float] = {}
        for key, value in weights.items():
            sym = str(key).strip().upper()
            field = f"parameters.weights.{key}"
            if symbols is not None and sym not in symbols:
                raise ValidationError(
                    field, "invalid_choice", f"{field}: {sym} is not one of asset_symbols."
                )
            w = _number(value, field)
            if w < 0:
                raise ValidationError(field, "min_value", f"{field} must be >= 0.")
            clean[sym] = w
        if sum(clean.values()) > 1.0 + 1e-9:
            raise ValidationError(
                "parameters.weights", "max_value", "parameters.weights must sum to at most 1."
            )
        merged["weights"] = clean
    every = merged["every"]
    if isinstance(every, str):
        if every.upper() not in _PERIODS:
            raise ValidationError(
                "parameters.every",
                "invalid_choice",
                f"parameters.every must be one of {', '.join(_PERIODS)} or a bar count.",
            )
        merged["every"] = every.upper()
    elif every is not None:
        if isinstance(every, bool) or not isinstance(every, int):
            raise ValidationError(
                "parameters.every", "invalid", "parameters.every must be a period or a bar count."
            )
        if not 1 <= every <= MAX_WINDOW:
            code = "min_value" if every < 1 else "max_value"
            raise ValidationError(
                "parameters.every", code, f"parameters.every must be in [1, {MAX_WINDOW}]."
            )
    threshold = merged["threshold"]
    if threshold is not None:
        t = _number(threshold, "parameters.threshold")
        if not 0.0 <= t <= 1.0:
            code = "min_value" if t < 0 else "max_value"
            raise ValidationError(
                "parameters.threshold", code, "parameters.threshold must be in [0, 1]."
            )
        merged["threshold"] = t
    return merged
