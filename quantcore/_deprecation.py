"""Renamed public names: the old name keeps working and warns with a DeprecationWarning.

A module that renamed or moved a name serves the old one from its module-level
``__getattr__`` (:pep:`562`), so that ``from quantcore.risk import rolling_beta``
and ``quantcore.risk.rolling_beta`` both warn once per use and hand back the one
implementation. Old names are not in ``__all__``; each module's docstring lists them.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["deprecated_aliases", "warn_renamed"]


def warn_renamed(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that ``old`` (a function, keyword or attribute) is now spelled ``new``."""
    warnings.warn(
        f"{old} is deprecated and will be removed; use {new} instead",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def deprecated_aliases(module: str, aliases: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` serving ``old name -> "package.module.new_name"``, with a warning."""

    def __getattr__(name: str) -> Any:
        target = aliases.get(name)
        if target is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        where, _, attr = target.rpartition(".")
        warn_renamed(f"{module}.{name}", target)
        return getattr(importlib.import_module(where), attr)

    return __getattr__
