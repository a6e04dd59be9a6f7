"""Write README.md from docs/index.md, the documentation site's home page.

The site is the manual; the README is its first page, so the two never drift. Links
between pages (``analytics.md``, ``api/index.md``) are rewritten to point into
``docs/`` from the repository root. ``python scripts/build_readme.py`` writes it;
``--check`` exits 1 when README.md is stale (a test runs that).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

__all__ = ["MAX_LINES", "build", "main"]

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
#: A README, not a manual: the rest lives in the docs site.
MAX_LINES = 300

#: A Markdown link to a relative page: ``](name.md)`` or ``](api/index.md#anchor)``.
_PAGE_LINK = re.compile(r"\]\((?![a-z]+:|#|/)([^)\s]+\.md(?:#[^)\s]*)?)\)")


def build() -> str:
    """The README's text: docs/index.md with its page links rooted at ``docs/``."""
    text = (DOCS / "index.md").read_text(encoding="utf-8")
    return _PAGE_LINK.sub(lambda m: f"](docs/{m.group(1)})", text)


def main(argv: list[str]) -> int:
    text = build()
    lines = text.count("\n")
    if lines > MAX_LINES:
        print(f"docs/index.md has {lines} lines; the README keeps to {MAX_LINES}", file=sys.stderr)
        return 1
    readme = ROOT / "README.md"
    if "--check" in argv:
        if readme.read_text(encoding="utf-8") != text:
            print("README.md is stale: run `python scripts/build_readme.py`", file=sys.stderr)
            return 1
        return 0
    readme.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
