"""README.md is generated from docs/: it must be current, and its setup must be the two commands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_is_generated_from_docs() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_readme.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


def test_readme_setup_is_make_serve_and_make_test() -> None:
    text = (ROOT / "README.md").read_text()
    setup = text.split("## Setup", 1)[1].split("\n## ", 1)[0]
    assert "make serve" in setup and "make test" in setup
