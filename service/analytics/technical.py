"""Indicator names with parameters (``sma_20``, ``bollinger_20_2``) -> ``quantcore.indicators`` calls.

Syntax: ``<indicator>[_<p1>[_<p2>...]]``; omitted parameters take the defaults below.
Multi-output indicators add a suffix per output (``macd``, ``macd_signal``,
``macd_histogram``; ``bollinger_20_2_upper``/``_middle``/``_lower``;
``stochastic_k``/``_d``).

=============  ==========================  =====================
name           parameters (defaults)       inputs
=============  ==========================  =====================
sma, ema, wma  window (required)           close
roc            window (10)                 close
rsi            window (14)                 close
macd           fast, slow, signal (12 26 9) close
bollinger      window, num_std (20, 2)     close
atr, adx       window (14)                 high, low, close
williams_r     window (14)                 high, low, close
cci            window (20)                 high, low, close
stochastic     k, d, smooth_k (14, 3, 3)   high, low, close
obv            -                           close, volume
vwap           -                           high, low, close, volume
=============  ==========================  =====================
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from quantcore import indicators as ind
from service.errors import ValidationError

__all__ = ["INDICATORS", "MAX_INDICATORS", "IndicatorRequest", "IndicatorSpec", "compute", "parse"]

F64 = NDArray[np.float64]
MAX_INDICATORS = 20
_FIELD = "indicators"


@dataclass(frozen=True, slots=True)
class IndicatorSpec:
    """How to call one indicator: defaults (``None``: required), inputs and output suffixes."""

    defaults: tuple[float | None, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]  # "" for a single output
    call: Callable[..., Any]
    float_params: tuple[int, ...] = ()


def _one(fn: Callable[..., Any]) -> Callable[..., tuple[F64, ...]]:
    return lambda *a: (fn(*a),)


INDICATORS: dict[str, IndicatorSpec] = {
    "sma": IndicatorSpec((None,), ("close",), ("",), _one(ind.sma)),
    "ema": IndicatorSpec((None,), ("close",), ("",), _one(ind.ema)),
    "wma": IndicatorSpec((None,), ("close",), ("",), _one(ind.wma)),
    "roc": IndicatorSpec((10,), ("close",), ("",), _one(ind.roc)),
    "rsi": IndicatorSpec((14,), ("close",), ("",), _one(ind.rsi)),
    "macd": IndicatorSpec((12, 26, 9), ("close",), ("", "_signal", "_histogram"), ind.macd),
    "bollinger": IndicatorSpec(
        (20, 2.0), ("close",), ("_upper", "_middle", "_lower"), ind.bollinger_bands, (1,)
    ),
    "atr": IndicatorSpec((14,), ("high", "low", "close"), ("",), _one(ind.atr)),
    "adx": IndicatorSpec((14,), ("high", "low", "close"), ("",), _one(ind.adx)),
    "williams_r": IndicatorSpec((14,), ("high", "low", "close"), ("",), _one(ind.williams_r)),
    "cci": IndicatorSpec((20,), ("high", "low", "close"), ("",), _one(ind.cci)),
    "stochastic": IndicatorSpec(
        (14, 3, 3),
        ("high", "low", "close"),
        ("_k", "_d"),
        lambda h, low, c, k, d, s: ind.stochastic(h, low, c, k, d, smooth_k=s),
    ),
    "obv": IndicatorSpec((), ("close", "volume"), ("",), _one(ind.obv)),
    "vwap": IndicatorSpec((), ("high", "low", "close", "volume"), ("",), _one(ind.vwap)),
}
_BY_LENGTH = sorted(INDICATORS, key=len, reverse=True)


@dataclass(frozen=True, slots=True)
class IndicatorRequest:
    """A parsed indicator: its name as asked, the spec and the full parameter list."""

    name: str
    spec: IndicatorSpec
    params: tuple[float, ...]


#: Largest window or multiplier an indicator takes (40 years of daily bars): a bigger
#: number could only give all-NaN output, or overflow the kernels' int64.
MAX_PARAMETER = 10_000


def _number(text: str, name: str, as_float: bool) -> float:
    try:
        value = float(text) if as_float else int(text)
    except ValueError:
        kind = "a number" if as_float else "an integer"
        raise ValidationError(
            _FIELD, "invalid", f"{name}: parameter {text!r} must be {kind}."
        ) from None
    if not value <= MAX_PARAMETER:  # also refuses nan
        raise ValidationError(
            _FIELD, "out_of_range", f"{name}: parameter {text!r} must be at most {MAX_PARAMETER}."
        )
    return value


def parse(names: Sequence[str]) -> list[IndicatorRequest]:
    """Parse indicator names (repeated and comma-separated values both accepted).

    Raises:
        ValidationError: ``indicators`` with code ``required``, ``max_length``,
            ``invalid_choice`` (unknown indicator) or ``invalid`` (bad parameters).
    """
    flat = [n.strip().lower() for item in names for n in item.split(",") if n.strip()]
    if not flat:
        raise ValidationError(_FIELD, "required", "Give at least one indicator, e.g. sma_20.")
    if len(flat) > MAX_INDICATORS:
        raise ValidationError(_FIELD, "max_length", f"At most {MAX_INDICATORS} indicators.")
    out: list[IndicatorRequest] = []
    for name in dict.fromkeys(flat):
        base = next((b for b in _BY_LENGTH if name == b or name.startswith(b + "_")), None)
        if base is None:
            raise ValidationError(
                _FIELD,
                "invalid_choice",
                f"Unknown indicator {name!r}; choose from {', '.join(INDICATORS)}.",
            )
        spec = INDICATORS[base]
        parts = name[len(base) :].split("_")[1:]
        if len(parts) > len(spec.defaults):
            raise ValidationError(
                _FIELD, "invalid", f"{name}: {base} takes at most {len(spec.defaults)} parameters."
            )
        params: list[float] = []
        for i, default in enumerate(spec.defaults):
            if i < len(parts):
                params.append(_number(parts[i], name, i in spec.float_params))
            elif default is None:
                raise ValidationError(
                    _FIELD, "invalid", f"{name}: {base} needs a window, e.g. {base}_20."
                )
            else:
                params.append(default)
        out.append(IndicatorRequest(name, spec, tuple(params)))
    return out


def compute(requests: Sequence[IndicatorRequest], bars: dict[str, F64]) -> dict[str, F64]:
    """Run each indicator on the bar arrays; keys are the names plus output suffixes.

    Raises:
        ValidationError: ``indicators`` / ``invalid`` when ``quantcore`` rejects a
            parameter (e.g. a window below 1), with its message.
    """
    out: dict[str, F64] = {}
    for req in requests:
        args = [bars[i] for i in req.spec.inputs]
        try:
            values = req.spec.call(*args, *req.params)
        except ValueError as exc:
            raise ValidationError(_FIELD, "invalid", f"{req.name}: {exc}") from None
        for suffix, series in zip(req.spec.outputs, values, strict=True):
            out[req.name + suffix] = np.asarray(series, dtype=np.float64)
    return out
