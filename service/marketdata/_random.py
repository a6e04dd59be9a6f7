"""Counter-based random numbers: the same (seed, key, day, index) gives the same draw anywhere.

A draw is a SplitMix64 hash of its coordinates, so any day's numbers can be
computed without generating the days before it, in any order, vectorized. The
integers are bit-identical on every platform and NumPy version; normals come from
the uniforms through the inverse normal CDF (``scipy.special.ndtri``).
"""

from __future__ import annotations

import hashlib

import numpy as np
from numpy.typing import NDArray
from scipy.special import ndtri

__all__ = ["normals", "stable_key", "uniforms"]

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB


def _mix_int(z: int) -> int:
    """SplitMix64 finalizer on a Python int (exact 64-bit wrap-around)."""
    z &= _MASK
    z = ((z ^ (z >> 30)) * _M1) & _MASK
    z = ((z ^ (z >> 27)) * _M2) & _MASK
    return z ^ (z >> 31)


def _mix(z: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """SplitMix64 finalizer on a uint64 array (multiplication wraps modulo 2**64)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(_M1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(_M2)
    return z ^ (z >> np.uint64(31))


def stable_key(text: str) -> int:
    """A 64-bit key for ``text`` that is the same in every process (unlike ``hash``)."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def uniforms(
    seed: int, key: str, stream: int, days: NDArray[np.int64], n: int
) -> NDArray[np.float64]:
    """Uniform draws in the open interval (0, 1), one row per day.

    Args:
        seed: Market seed.
        key: What the draws are for (a symbol, ``"factor:market"``, ...).
        stream: Which use of the key (daily bars, intraday bars, live ticks ...).
        days: Day numbers (any integers: day ordinals, microsecond stamps).
        n: Draws per day.

    Returns:
        Array of shape ``(len(days), n)``.
    """
    base = _mix_int(_mix_int(_mix_int(seed * _GOLDEN) ^ stable_key(key)) + stream * _GOLDEN)
    counters = np.asarray(days, dtype=np.int64).astype(np.uint64)
    with np.errstate(over="ignore"):
        day_h = _mix(counters * np.uint64(_GOLDEN) + np.uint64(base))
        idx = (np.arange(1, n + 1, dtype=np.uint64) * np.uint64(_M2))[None, :]
        bits = _mix(day_h[:, None] ^ idx)
    return ((bits >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0**-53


def normals(
    seed: int, key: str, stream: int, days: NDArray[np.int64], n: int
) -> NDArray[np.float64]:
    """Standard normal draws of shape ``(len(days), n)`` (see :func:`uniforms`)."""
    out: NDArray[np.float64] = ndtri(uniforms(seed, key, stream, days, n))
    return out
