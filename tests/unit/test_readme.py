"""README.md is the docs site's home page (docs/index.md): current, short, and runnable."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    return README.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def test_readme_is_generated_from_docs_index() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_readme.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


def test_readme_is_a_readme_not_the_manual() -> None:
    assert README.count("\n") <= 300


def test_readme_setup_is_make_serve_and_make_test() -> None:
    setup = _section("Setup")
    assert "make serve" in setup and "make test" in setup
    assert "Python 3.11" in setup and "compiler" in setup  # what the machine needs


def test_readme_links_reach_pages_that_exist() -> None:
    links = re.findall(r"\]\((docs/[^)#\s]+)", README)
    assert links, "the README links into the docs"
    assert [link for link in links if not (ROOT / link).is_file()] == []


#: Other projects whose issue trackers the docs may cite.
_PEERS = ("backtesting.py", "ghostfolio", "wealthfolio", "vectorbt", "numba", "litestar", "llama.cpp")


def test_no_ticket_numbers_in_docs() -> None:
    pages = [*ROOT.glob("docs/**/*.md"), ROOT / "README.md"]
    hits = [
        f"{page.relative_to(ROOT)}: {line.strip()}"
        for page in pages
        if "assets" not in page.parts
        for line in page.read_text(encoding="utf-8").splitlines()
        if re.search(r"\b(?:[Ii]ssue|ticket)s? #?\d+", line)
        and not any(peer in line.lower() for peer in _PEERS)
    ]
    assert hits == []


@pytest.mark.slow
def test_library_quick_start_runs_as_printed(tmp_path: Path) -> None:
    code = _section("Quick start: the library").split("```python\n", 1)[1].split("```", 1)[0]
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "sharpe_ratio" in result.stdout
