"""The model registry file named by ``TEXTGEN_MODELS``: model snapshots, backends, aliases.

A TOML file maps pinned snapshot ids to a backend and its settings; ``[aliases]``
maps family names to snapshots, so callers may ask for ``qwen-0.5b`` and get the
snapshot ``qwen-0.5b-2026-01-15`` (echoed in ``response.model``)::

    builtin = true                      # serve the built-in n-gram model too (default)

    [models."qwen-0.5b-2026-01-15"]
    backend = "transformers"
    path = "/srv/models/qwen2.5-0.5b-instruct"
    context_window = 32768
    max_output_tokens = 4096

    [models."gpt-upstream-2026-03-01"]
    backend = "openai_compatible"
    base_url = "http://127.0.0.1:8000/v1"
    upstream_model = "Qwen/Qwen2.5-7B-Instruct"
    api_key_env = "UPSTREAM_API_KEY"
    endpoint = "chat_completions"       # or "responses"
    context_window = 32768

    [aliases]
    "qwen-0.5b" = "qwen-0.5b-2026-01-15"

Everything is checked when the server starts: an unknown key, a wrong type, a
missing model directory, an alias to an unknown model or an unset
``api_key_env`` raise :class:`ConfigError` whose message names the file and the
entry. Backends are imported only when a model uses them, so the optional
``textgen[local]`` dependencies (torch, transformers) are needed only for
``transformers`` models.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

import msgspec

from textgen.backends.base import Backend, ModelInfo

__all__ = [
    "ConfigError",
    "ModelsFile",
    "OpenAICompatibleEntry",
    "TransformersEntry",
    "load_backends",
    "parse_config",
]

_SNAPSHOT_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})$")


class ConfigError(ValueError):
    """The registry file is invalid; the message names the file and the entry."""


class _Entry(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, tag_field="backend"):
    context_window: int
    max_output_tokens: int | None = None
    owned_by: str | None = None
    created: int | str | None = None
    accepts_images: bool = False

    def __post_init__(self) -> None:
        if self.context_window <= 0:
            raise ValueError("context_window must be positive")
        if self.max_output_tokens is not None and not 0 < self.max_output_tokens <= self.context_window:
            raise ValueError("max_output_tokens must be in (0, context_window]")


class TransformersEntry(_Entry, tag="transformers"):
    """A local Hugging Face causal-LM directory (see :mod:`textgen.backends.transformers_backend`).

    Attributes:
        path: The model directory (config, weights, tokenizer); nothing is downloaded.
        device: A torch device, ``"cpu"`` by default.
        dtype: ``"float32"``, ``"bfloat16"`` or ``"float16"``; the checkpoint's own when unset.
        prompt_cache_size: Prompts whose computed state is kept for prefix reuse (0 disables).
        reasoning_tags: Start and end markers of reasoning sections.
    """

    path: str
    device: str = "cpu"
    dtype: Literal["float32", "bfloat16", "float16"] | None = None
    prompt_cache_size: int = 4
    reasoning_tags: tuple[str, str] = ("<think>", "</think>")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.prompt_cache_size < 0:
            raise ValueError("prompt_cache_size must be >= 0")


class OpenAICompatibleEntry(_Entry, tag="openai_compatible"):
    """An upstream server (see :mod:`textgen.backends.openai_compatible`).

    Attributes:
        base_url: The upstream's API root, e.g. ``http://127.0.0.1:8000/v1``.
        upstream_model: The model name the upstream knows.
        api_key_env: Environment variable holding the upstream key (none sent if unset).
        endpoint: ``"chat_completions"`` (vLLM, llama.cpp, Ollama) or ``"responses"``.
        timeout: Seconds to wait for the upstream (connect and between chunks).
        developer_role: Role sent for ``developer`` messages (``"system"`` for most servers).
        send_seed: Forward the ``seed`` option (chat completions only accept it).
    """

    base_url: str
    upstream_model: str
    api_key_env: str | None = None
    endpoint: Literal["chat_completions", "responses"] = "chat_completions"
    timeout: float = 120.0
    developer_role: Literal["system", "developer"] = "system"
    send_seed: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError("base_url must start with http:// or https://")
        if self.timeout <= 0:
            raise ValueError("timeout must be positive")


Entry = TransformersEntry | OpenAICompatibleEntry


class ModelsFile(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The parsed registry file."""

    builtin: bool = True
    models: dict[str, Entry] = msgspec.field(default_factory=dict)
    aliases: dict[str, str] = msgspec.field(default_factory=dict)


def _created(model_id: str, value: int | str | None) -> int:
    if isinstance(value, int):
        return value
    text = value
    if text is None:
        match = _SNAPSHOT_DATE.search(model_id)
        if match is None:
            return 0
        text = match.group(1)
    day = dt.date.fromisoformat(text)
    return int(dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC).timestamp())


def parse_config(raw: dict[str, Any], source: str = "TEXTGEN_MODELS") -> ModelsFile:
    """Validate a decoded registry file.

    Args:
        raw: The TOML document as a dict.
        source: Named in error messages (the file path).

    Returns:
        The validated configuration.

    Raises:
        ConfigError: The message names ``source`` and the offending entry.
    """
    models = raw.get("models", {})
    if not isinstance(models, dict):
        raise ConfigError(f"{source}: [models] must be a table of model ids")
    entries: dict[str, Any] = {}
    for model_id, entry in models.items():
        where = f"{source}: [models.{model_id!r}]"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where} must be a table")
        if entry.get("backend") not in ("transformers", "openai_compatible"):
            raise ConfigError(f"{where}: backend must be 'transformers' or 'openai_compatible', "
                              f"got {entry.get('backend')!r}")
        if isinstance(entry.get("created"), dt.date):
            entry = {**entry, "created": entry["created"].isoformat()}
        try:
            entries[model_id] = msgspec.convert(entry, Entry)
            _created(model_id, entries[model_id].created)
        except (msgspec.ValidationError, ValueError) as exc:
            raise ConfigError(f"{where}: {exc}") from exc
    try:
        config = msgspec.convert({**raw, "models": {}}, ModelsFile)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{source}: {exc}") from exc
    config.models.update(entries)
    from textgen.backends.builtin import NGRAM_INFO

    known = set(config.models) | ({NGRAM_INFO.id} if config.builtin else set())
    taken = known | ({*NGRAM_INFO.aliases} if config.builtin else set())
    for alias, target in config.aliases.items():
        if alias in taken:
            raise ConfigError(f"{source}: [aliases] {alias!r} is already a model id or alias")
        if target not in known:
            raise ConfigError(f"{source}: [aliases] {alias!r} points to {target!r}, which is not a model "
                              f"of this file{' or the built-in model' if config.builtin else ''}")
    if not config.models and not config.builtin:
        raise ConfigError(f"{source}: no models: add a [models.\"id\"] table or set builtin = true")
    return config


def _info(model_id: str, entry: Entry, aliases: tuple[str, ...]) -> ModelInfo:
    return ModelInfo(
        id=model_id,
        context_window=entry.context_window,
        max_output_tokens=entry.max_output_tokens or entry.context_window,
        owned_by=entry.owned_by or ("local" if isinstance(entry, TransformersEntry) else "upstream"),
        created=_created(model_id, entry.created),
        aliases=aliases,
        accepts_images=entry.accepts_images,
    )


def _build(model_id: str, entry: Entry, info: ModelInfo, where: str) -> Backend:
    if isinstance(entry, OpenAICompatibleEntry):
        from textgen.backends.openai_compatible import OpenAICompatibleBackend

        api_key = None
        if entry.api_key_env is not None:
            api_key = os.environ.get(entry.api_key_env)
            if not api_key:
                raise ConfigError(f"{where}: api_key_env {entry.api_key_env!r} is not set")
        return OpenAICompatibleBackend(
            info, base_url=entry.base_url, upstream_model=entry.upstream_model, api_key=api_key,
            endpoint=entry.endpoint, timeout=entry.timeout, developer_role=entry.developer_role,
            send_seed=entry.send_seed,
        )
    if not Path(entry.path).is_dir():
        raise ConfigError(f"{where}: path {entry.path!r} is not a directory")
    try:
        from textgen.backends.transformers_backend import TransformersBackend
    except ImportError as exc:
        raise ConfigError(f"{where}: the transformers backend needs the optional dependencies "
                          f"(pip install 'quantcore[local]'): {exc}") from exc
    try:
        return TransformersBackend(
            entry.path, info, device=entry.device, dtype=entry.dtype,
            prompt_cache_size=entry.prompt_cache_size, reasoning_tags=entry.reasoning_tags,
        )
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{where}: cannot load {entry.path!r}: {exc}") from exc


def load_backends(path: str | os.PathLike[str]) -> list[Backend]:
    """Read, validate and instantiate every model of a registry file.

    Args:
        path: The TOML file (``TEXTGEN_MODELS``).

    Returns:
        The backends, the built-in model first unless ``builtin = false``.

    Raises:
        ConfigError: Unreadable or invalid file, or a model that cannot load;
            the message names the entry.
    """
    source = str(path)
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"TEXTGEN_MODELS: cannot read {source!r}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from exc
    config = parse_config(raw, source)
    aliases: dict[str, list[str]] = {}
    for alias, target in config.aliases.items():
        aliases.setdefault(target, []).append(alias)
    backends: list[Backend] = []
    if config.builtin:
        from textgen.backends.builtin import NGRAM_INFO, NgramBackend

        extra = tuple(aliases.get(NGRAM_INFO.id, ()))
        backends.append(NgramBackend(info=dataclasses.replace(NGRAM_INFO, aliases=NGRAM_INFO.aliases + extra)))
    for model_id, entry in config.models.items():
        info = _info(model_id, entry, tuple(aliases.get(model_id, ())))
        backends.append(_build(model_id, entry, info, f"{source}: [models.{model_id!r}]"))
    return backends
