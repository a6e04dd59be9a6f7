"""The TEXTGEN_MODELS registry file: models, aliases, the built-in switch, errors naming the entry."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from textgen.app import create_app, default_backends
from textgen.backends.builtin import NGRAM_INFO
from textgen.backends.openai_compatible import OpenAICompatibleBackend
from textgen.backends.registry_config import DEFAULT_MODEL_ID, ConfigError, load_backends
from textgen.settings import Settings

UPSTREAM = '''
[models."up-2026-01-15"]
backend = "openai_compatible"
base_url = "http://127.0.0.1:9/v1"
upstream_model = "qwen"
context_window = 32768
'''


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "models.toml"
    path.write_text(text)
    return path


def test_models_aliases_and_defaults(tmp_path: Path) -> None:
    path = _write(tmp_path, "builtin = false\nngram = true\n" + UPSTREAM + '''
max_output_tokens = 4096
owned_by = "acme"
accepts_images = true
endpoint = "responses"
send_seed = false

[aliases]
"up" = "up-2026-01-15"
"chat" = "textgen-ngram-2026-11-22"
''')
    builtin, upstream = load_backends(path)
    assert builtin.info.id == NGRAM_INFO.id and builtin.info.aliases == ("textgen-ngram", "chat")
    assert isinstance(upstream, OpenAICompatibleBackend)
    info = upstream.info
    assert (info.id, info.aliases, info.context_window, info.max_output_tokens, info.owned_by) == (
        "up-2026-01-15", ("up",), 32768, 4096, "acme")
    assert info.accepts_images and upstream.endpoint == "responses" and not upstream.send_seed
    assert info.created == 1768435200  # 2026-01-15T00:00:00Z, from the snapshot date in the id
    assert upstream.base_url == "http://127.0.0.1:9/v1" and upstream.upstream_model == "qwen"


def test_defaults_of_an_entry(tmp_path: Path) -> None:
    (upstream,) = load_backends(_write(tmp_path, "builtin = false\n" + UPSTREAM + 'created = 2026-02-01\n'))
    assert isinstance(upstream, OpenAICompatibleBackend)
    info = upstream.info
    assert info.max_output_tokens == 32768 and info.owned_by == "upstream" and not info.accepts_images
    assert info.created == 1769904000  # 2026-02-01T00:00:00Z from a TOML date
    assert upstream.endpoint == "chat_completions" and upstream.developer_role == "system"


def test_settings_and_app_wiring(tmp_path: Path) -> None:
    path = _write(tmp_path, UPSTREAM)
    settings = Settings.from_env({"TEXTGEN_MODELS": str(path), "TEXTGEN_DATA_DIR": str(tmp_path)})
    assert settings.models == str(path)
    assert [b.info.id for b in default_backends(settings)] == [DEFAULT_MODEL_ID, "up-2026-01-15"]
    assert [b.info.id for b in default_backends(Settings(data_dir=str(tmp_path)))] == [DEFAULT_MODEL_ID]
    bad = _write(tmp_path, UPSTREAM + "contxt = 3\n")
    with pytest.raises(ConfigError, match="up-2026-01-15"):
        create_app(Settings(models=str(bad), data_dir=str(tmp_path)))


@pytest.mark.parametrize(("text", "message"), [
    (UPSTREAM + "contxt_window = 5\n", "[models.'up-2026-01-15']: Object contains unknown field `contxt_window`"),
    (UPSTREAM.replace("32768", '"big"'), "[models.'up-2026-01-15']: Expected `int`, got `str` - at `$.context_window`"),
    (UPSTREAM.replace("32768", "0"), "[models.'up-2026-01-15']: context_window must be positive"),
    (UPSTREAM + "max_output_tokens = 40000\n", "[models.'up-2026-01-15']: max_output_tokens must be in"),
    (UPSTREAM.replace('"openai_compatible"', '"vllm"'),
     "[models.'up-2026-01-15']: backend must be one of 'llama_cpp', 'transformers', 'openai_compatible', got 'vllm'"),
    (UPSTREAM.replace("http://", "ftp://"), "[models.'up-2026-01-15']: base_url must start with http://"),
    (UPSTREAM + 'endpoint = "completions"\n', "[models.'up-2026-01-15']: Invalid enum value 'completions' - at `$.endpoint`"),
    (UPSTREAM + 'created = "last week"\n', "[models.'up-2026-01-15']: Invalid isoformat string"),
    (UPSTREAM.replace("upstream_model = \"qwen\"\n", ""),
     "[models.'up-2026-01-15']: Object missing required field `upstream_model`"),
    (UPSTREAM + 'api_key_env = "QC_SURELY_UNSET_KEY"\n',
     "[models.'up-2026-01-15']: api_key_env 'QC_SURELY_UNSET_KEY' is not set"),
    ('[models."local-2026-01-01"]\nbackend = "transformers"\npath = "/no/such/dir"\ncontext_window = 10\n',
     "[models.'local-2026-01-01']: path '/no/such/dir' is not a directory"),
    (UPSTREAM + '[aliases]\n"up" = "up-2026-01-16"\n',
     "[aliases] 'up' points to 'up-2026-01-16', which is not a model of this file or a built-in model"),
    (UPSTREAM + '[aliases]\n"smollm2-135m-instruct" = "up-2026-01-15"\n',
     "[aliases] 'smollm2-135m-instruct' is already a model id or alias"),
    ("builtin = false\n", "no models"),
    ("builtin = 1\n", "Expected `bool`, got `int` - at `$.builtin`"),
    ("[models\n", "not valid TOML"),
])
def test_invalid_files_name_the_entry(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_backends(path)
    assert str(info.value).startswith(str(path)) and message in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="TEXTGEN_MODELS: cannot read"):
        load_backends(tmp_path / "absent.toml")


def test_serve_fails_at_start_with_the_message(tmp_path: Path) -> None:
    path = _write(tmp_path, UPSTREAM.replace("32768", "-1"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEXTGEN_")}
    env |= {"TEXTGEN_MODELS": str(path), "TEXTGEN_DATA_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "textgen", "serve", "--port", "9"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == f"error: {path}: [models.'up-2026-01-15']: context_window must be positive"
