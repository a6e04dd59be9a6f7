"""Settings of the text-generation service, read once from ``TEXTGEN_*`` environment variables."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import msgspec

__all__ = ["Settings"]


class Settings(msgspec.Struct, kw_only=True, frozen=True):
    """Service configuration.

    Attributes:
        database_url: SQLAlchemy async URL. SQLite by default; several instances
            share conversation state through ``postgresql+asyncpg://...``.
        data_dir: Directory for file bytes (``<data_dir>/files``) and the default SQLite file.
        max_file_bytes: Upload size limit; larger uploads get a 413.
        api_keys: Extra accepted keys besides those created with ``keys create``.
        rate_limit_per_minute: Requests per project per minute (0 disables).
        secret_key: Fernet key sealing ``reasoning.encrypted_content``; empty keeps
            one in ``<data_dir>/secret.key``. Instances of one deployment share it.
        redis_url: ``redis://...`` shares the rate-limit counters of every instance;
            empty counts in process memory.
        default_max_output_tokens: Used when a request gives no ``max_output_tokens``.
        host: Bind address of ``python -m textgen serve``.
        port: Port of ``python -m textgen serve``.
        lease_seconds: How long a running response stays claimed by its instance without renewal
            (renewed every third of it); a dead instance's responses are taken over after it.
        models: Path of the model registry TOML (``TEXTGEN_MODELS``; see
            :mod:`textgen.backends.registry_config`); empty serves the default model only.
    """

    database_url: str = ""
    data_dir: str = "var"
    max_file_bytes: int = 8 * 1024 * 1024
    api_keys: tuple[str, ...] = ()
    rate_limit_per_minute: int = 600
    redis_url: str = ""
    secret_key: str = ""
    default_max_output_tokens: int = 256
    host: str = "127.0.0.1"
    port: int = 8001
    models: str = ""
    lease_seconds: float = 10.0

    def __post_init__(self) -> None:
        if self.lease_seconds <= 0:
            raise ValueError("TEXTGEN_LEASE_SECONDS must be positive")
        if self.max_file_bytes <= 0:
            raise ValueError("TEXTGEN_MAX_FILE_BYTES must be positive")
        if self.rate_limit_per_minute < 0:
            raise ValueError("TEXTGEN_RATE_LIMIT_PER_MINUTE must be >= 0")
        if self.default_max_output_tokens <= 0:
            raise ValueError("TEXTGEN_DEFAULT_MAX_OUTPUT_TOKENS must be positive")

    @property
    def files_dir(self) -> Path:
        """Where uploaded file bytes live."""
        return Path(self.data_dir) / "files"

    @property
    def resolved_database_url(self) -> str:
        """``database_url``, or the SQLite file ``<data_dir>/textgen.db``."""
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{Path(self.data_dir).resolve() / 'textgen.db'}"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Build settings from ``TEXTGEN_<FIELD>`` variables (``api_keys`` comma-separated).

        Raises:
            ValueError: A variable does not parse; the message names it.
        """
        env = os.environ if environ is None else environ
        raw: dict[str, object] = {}
        for name in cls.__struct_fields__:
            value = env.get(f"TEXTGEN_{name.upper()}")
            if value is None:
                continue
            raw[name] = tuple(k.strip() for k in value.split(",") if k.strip()) if name == "api_keys" else value
        try:
            return msgspec.convert(raw, cls, strict=False)
        except msgspec.ValidationError as exc:
            raise ValueError(f"invalid TEXTGEN_* setting: {exc}") from exc
