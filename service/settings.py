"""Service settings: one immutable msgspec Struct read from ``QC_*`` environment variables."""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import msgspec

from service.ratelimit import RateLimit

__all__ = ["RateLimit", "Settings", "default_backtest_workers", "parse_networks", "parse_rate"]

_RATE = re.compile(r"^\s*(\d+)\s*/\s*(second|minute|hour|day)\s*$")
_PERIODS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}


def parse_rate(text: str, *, name: str = "rate") -> RateLimit:
    """Parse ``"1000/hour"`` (units: second, minute, hour, day).

    Raises:
        ValueError: naming ``name`` when the text is not of that form.
    """
    match = _RATE.match(text)
    if match is None or int(match.group(1)) < 1:
        raise ValueError(
            f"{name}: expected '<positive int>/<second|minute|hour|day>', got {text!r}"
        )
    return RateLimit(int(match.group(1)), _PERIODS[match.group(2)])


def parse_networks(text: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """Parse ``"127.0.0.1, 10.0.0.0/8"`` (addresses or CIDR blocks, comma separated).

    Raises:
        ValueError: naming ``QC_TRUSTED_PROXIES`` and the entry that is not an address.
    """
    nets = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            nets.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise ValueError(
                f"QC_TRUSTED_PROXIES: {part!r} is not an IP address or CIDR block"
            ) from None
    return tuple(nets)


def default_backtest_workers() -> int:
    """``min(4, cpu count)``: backtest worker processes when ``QC_BACKTEST_WORKERS`` is unset."""
    return min(4, os.cpu_count() or 1)


class Settings(msgspec.Struct, kw_only=True, frozen=True):
    """Everything the finance service reads from its environment.

    Every field ``x`` is read from ``QC_X``; see :meth:`from_env` and docs/service.md.
    """

    data_dir: str = "./var"
    database_url: str = ""  # empty: sqlite+aiosqlite under data_dir (WAL)
    redis_url: str = ""  # empty: rate-limit counters in process memory
    redis_prefix: str = "qc:"
    rate_limit_authenticated: str = "1000/hour"
    rate_limit_anonymous: str = "100/hour"
    rate_limit_realtime: str = "10/minute"
    rate_limit_enabled: bool = True
    demo_data: bool = False
    # compile (or load) the numba kernels at start-up, before /ready (quantcore.warmup)
    warm_up: bool = True
    debug: bool = False
    cors_origins: str = ""  # comma separated; empty: no CORS
    session_cookie_secure: bool = False
    session_ttl_seconds: Annotated[int, msgspec.Meta(ge=60)] = 14 * 86400
    max_body_bytes: Annotated[int, msgspec.Meta(ge=1024)] = 1024 * 1024
    db_pool_size: Annotated[int, msgspec.Meta(ge=1)] = 10
    sqlite_busy_timeout_seconds: Annotated[float, msgspec.Meta(gt=0)] = 30.0
    # X-Forwarded-For: trusted only from these peers (IPs or CIDRs, comma separated), and
    # only the right-most ``forwarded_hops`` entries (the ones our own proxies appended)
    trust_forwarded_for: bool = False
    trusted_proxies: str = "127.0.0.1,::1"
    forwarded_hops: Annotated[int, msgspec.Meta(ge=1, le=16)] = 1
    # API tokens expire this many seconds after creation; 0: never
    token_ttl: Annotated[int, msgspec.Meta(ge=0)] = 0
    auth_cache_seconds: Annotated[float, msgspec.Meta(ge=0)] = 5.0
    asset_cache_seconds: Annotated[float, msgspec.Meta(ge=0)] = 30.0
    # users whose portfolios each process keeps in memory (service/portfolios/book.py); 0: none
    portfolio_cache_users: Annotated[int, msgspec.Meta(ge=0)] = 10_000
    # real time (docs/realtime.md)
    realtime_tick_seconds: Annotated[float, msgspec.Meta(gt=0)] = 5.0
    realtime_max_subscriptions: Annotated[int, msgspec.Meta(ge=1)] = 500  # a whole watchlist
    realtime_messages_per_second: Annotated[int, msgspec.Meta(ge=1)] = 20
    realtime_max_backlog: Annotated[int, msgspec.Meta(ge=1)] = 256
    # open WebSockets per client IP and per worker (beyond them the upgrade is refused)
    realtime_max_connections_per_ip: Annotated[int, msgspec.Meta(ge=1)] = 20
    realtime_max_connections: Annotated[int, msgspec.Meta(ge=1)] = 10_000
    # how often open WebSockets re-check their credential (revocation closes them)
    realtime_auth_check_seconds: Annotated[float, msgspec.Meta(gt=0, le=60)] = 0.5
    # backtests (docs/service_analytics.md): worker processes; 0 runs them in a thread
    backtest_workers: Annotated[int, msgspec.Meta(ge=0)] = msgspec.field(
        default_factory=default_backtest_workers
    )

    def __post_init__(self) -> None:
        for name in ("rate_limit_authenticated", "rate_limit_anonymous", "rate_limit_realtime"):
            parse_rate(getattr(self, name), name=f"QC_{name.upper()}")
        parse_networks(self.trusted_proxies)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Build settings from ``QC_*`` variables (then ``overrides``).

        Raises:
            ValueError: naming the variable when a value cannot be converted.
        """
        env = os.environ if environ is None else environ
        raw: dict[str, Any] = {}
        for field in msgspec.structs.fields(cls):
            key = f"QC_{field.name.upper()}"
            if key in env:
                raw[field.name] = env[key]
        raw.update(overrides)
        try:
            return msgspec.convert(raw, cls, strict=False)
        except msgspec.ValidationError as exc:
            raise ValueError(f"invalid QC_* setting: {exc}") from None

    @property
    def database(self) -> str:
        """The SQLAlchemy URL: ``database_url`` or the SQLite file under ``data_dir``."""
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{Path(self.data_dir).resolve() / 'quantcore.db'}"

    @property
    def prices_dir(self) -> Path:
        """Where the Parquet price store lives."""
        return Path(self.data_dir) / "prices"

    @property
    def authenticated_rate(self) -> RateLimit:
        return parse_rate(self.rate_limit_authenticated)

    @property
    def anonymous_rate(self) -> RateLimit:
        return parse_rate(self.rate_limit_anonymous)

    @property
    def proxy_networks(self) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
        return parse_networks(self.trusted_proxies)

    @property
    def realtime_rate(self) -> RateLimit:
        return parse_rate(self.rate_limit_realtime)
