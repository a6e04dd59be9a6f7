"""``llama_cpp`` entries of the TEXTGEN_MODELS registry, the default model and the n-gram switch."""

from __future__ import annotations

from pathlib import Path

import pytest

from textgen.backends.builtin import NGRAM_INFO, NgramBackend
from textgen.backends.llama_cpp import LlamaCppBackend, Sampling
from textgen.backends.registry_config import (
    DEFAULT_MODEL_ALIAS,
    DEFAULT_MODEL_ID,
    ConfigError,
    default_entry,
    load_backends,
)

GGUF = default_entry().path


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "models.toml"
    path.write_text(text)
    return path


def test_a_gguf_entry_with_its_options(tmp_path: Path) -> None:
    path = _write(tmp_path, f'''builtin = false
[models."smol-tuned-2026-03-04"]
backend = "llama_cpp"
path = "{GGUF}"
context_window = 2048
max_output_tokens = 512
n_threads = 1
n_contexts = 2
top_k = 40
repeat_penalty = 1.1
chat_template = "{{% for m in messages %}}[{{{{ m.role }}}}] {{{{ m.content }}}}\\n{{% endfor %}}[assistant] "

[aliases]
"smol" = "smol-tuned-2026-03-04"
''')
    (backend,) = load_backends(path)
    assert isinstance(backend, LlamaCppBackend)
    info = backend.info
    assert (info.id, info.aliases, info.context_window, info.max_output_tokens, info.owned_by) == (
        "smol-tuned-2026-03-04", ("smol",), 2048, 512, "local")
    assert info.created == 1772582400  # 2026-03-04T00:00:00Z, from the snapshot date in the id
    assert backend.sampling == Sampling(top_k=40, repeat_penalty=1.1)
    assert len(backend.pool.contexts) == 2 and all(c.n_ctx() == 2048 for c in backend.pool.contexts)
    from textgen.backends.base import ChatMessage

    assert backend.render([ChatMessage("user", "hi")]) == "[user] hi\n[assistant] "  # the configured template


def test_default_model_and_ngram_switches(tmp_path: Path) -> None:
    (default,) = load_backends()
    assert default.info.id == DEFAULT_MODEL_ID and default.info.aliases == (DEFAULT_MODEL_ALIAS,)
    (ngram,) = load_backends(_write(tmp_path, 'builtin = false\nngram = true\n[aliases]\n"t" = "textgen-ngram-2026-11-22"\n'))
    assert isinstance(ngram, NgramBackend) and ngram.info.aliases == (*NGRAM_INFO.aliases, "t")
    both = load_backends(_write(tmp_path, 'ngram = true\n[aliases]\n"small" = "smollm2-135m-instruct-2025-02-07"\n'))
    assert [b.info.id for b in both] == [DEFAULT_MODEL_ID, NGRAM_INFO.id]
    assert both[0].info.aliases == (DEFAULT_MODEL_ALIAS, "small")


ENTRY = '[models."m-2026-01-01"]\nbackend = "llama_cpp"\npath = "{path}"\ncontext_window = {window}\n'


@pytest.mark.parametrize(("extra", "window", "message"), [
    ("", 100_000, "cannot load"),  # above the model's training context (8192)
    ("n_threads = 0\n", 1024, "n_threads must be positive"),
    ("n_contexts = 0\n", 1024, "n_batch and n_contexts must be positive"),
    ("min_p = 2.0\n", 1024, "min_p in [0, 1]"),
    ("top_p = 1.5\n", 1024, "top_p must be in (0, 1]"),  # the recommended default a request without top_p gets
])
def test_invalid_llama_entries_name_the_entry(tmp_path: Path, extra: str, window: int, message: str) -> None:
    path = _write(tmp_path, "builtin = false\n" + ENTRY.format(path=GGUF, window=window) + extra)
    with pytest.raises(ConfigError) as info:
        load_backends(path)
    assert str(info.value).startswith(f"{path}: [models.'m-2026-01-01']") and message in str(info.value)


def test_a_missing_gguf_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "builtin = false\n" + ENTRY.format(path=tmp_path / "absent.gguf", window=512))
    with pytest.raises(ConfigError, match=r"absent\.gguf' is not a file"):
        load_backends(path)
