"""Template rendering, settings and the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from textgen.errors import APIError
from textgen.prompts import render_template, template_variables
from textgen.settings import Settings


def test_template_variables_in_order_of_first_use() -> None:
    assert template_variables("{{b}} and {{ a }} and {{b}}") == ["b", "a"]
    assert template_variables([{"role": "user", "content": "{{x}}"}, {"role": "user", "content": "{{y}}"}]) == [
        "x", "y"]
    assert template_variables("no {placeholders} here {{ }}") == []


def test_render_string_template_is_one_developer_message() -> None:
    assert render_template("Hi {{name}}!", {"name": "Ada"}) == [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Hi Ada!"}]}
    ]


def test_render_splits_around_file_variables() -> None:
    file_part = {"type": "input_file", "file_id": "file-1"}
    (message,) = render_template("Read {{doc}} now", {"doc": file_part})
    assert message["content"] == [
        {"type": "input_text", "text": "Read "}, file_part, {"type": "input_text", "text": " now"},
    ]


@pytest.mark.parametrize(
    ("variables", "param"),
    [
        ({}, "prompt.variables.name"),
        ({"name": "x", "other": "y"}, "prompt.variables.other"),
        ({"name": {"type": "input_audio"}}, "prompt.variables.name"),
        ({"name": {"type": "input_text"}}, "prompt.variables.name.text"),
    ],
)
def test_render_errors_name_the_variable(variables: dict[str, object], param: str) -> None:
    with pytest.raises(APIError) as info:
        render_template("Hi {{name}}", variables)  # type: ignore[arg-type]
    assert info.value.status == 400 and info.value.param == param


def test_settings_from_env() -> None:
    s = Settings.from_env({"TEXTGEN_PORT": "9001", "TEXTGEN_API_KEYS": "a, b,", "TEXTGEN_DATA_DIR": "/tmp/x"})
    assert s.port == 9001 and s.api_keys == ("a", "b")
    assert s.resolved_database_url == "sqlite+aiosqlite:////tmp/x/textgen.db"
    assert Settings().port == 8001
    with pytest.raises(ValueError, match="port"):
        Settings.from_env({"TEXTGEN_PORT": "eighty"})
    with pytest.raises(ValueError, match="TEXTGEN_MAX_FILE_BYTES"):
        Settings.from_env({"TEXTGEN_MAX_FILE_BYTES": "0"})


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEXTGEN_")}
    env["TEXTGEN_DATA_DIR"] = str(tmp_path)
    return subprocess.run([sys.executable, "-m", "textgen", *args], capture_output=True, text=True, env=env,
                          timeout=60, check=False)


def test_cli_keys_and_prompts(tmp_path: Path) -> None:
    made = _cli(tmp_path, "keys", "create", "alice")
    assert made.returncode == 0, made.stderr
    key = made.stdout
    assert key.endswith("\n") and key.count("\n") == 1 and key.startswith("sk-tg-")
    assert key not in (tmp_path / "textgen.db").read_bytes().decode("latin-1")  # stored hashed only
    spec = tmp_path / "prompt.json"
    spec.write_text(json.dumps({"name": "greeting", "template": "Hello {{who}}", "instructions": "Be warm."}))
    created = _cli(tmp_path, "prompts", "create", str(spec))
    assert created.returncode == 0, created.stderr
    body = json.loads(created.stdout)
    assert body["id"].startswith("pmpt_") and body["version"] == "1" and body["variables"] == ["who"]
    again = _cli(tmp_path, "prompts", "create", str(spec))
    assert again.returncode == 2 and "already exists" in again.stderr
    spec.write_text('{"template": 3}')
    bad = _cli(tmp_path, "prompts", "create", str(spec))
    assert bad.returncode == 2 and "template" in bad.stderr


def test_every_module_declares_its_public_surface() -> None:
    import importlib
    import pkgutil

    import textgen

    names = [m.name for m in pkgutil.walk_packages(textgen.__path__, "textgen.")]
    assert "textgen.backends.builtin" in names and "textgen.service" in names
    for name in names:
        module = importlib.import_module(name)
        exported = getattr(module, "__all__", None)
        assert exported is not None, f"{name} has no __all__"
        assert len(set(exported)) == len(exported), f"{name}.__all__ repeats a name"
        missing = [n for n in exported if not hasattr(module, n)]
        assert not missing, f"{name}.__all__ names missing attributes {missing}"
