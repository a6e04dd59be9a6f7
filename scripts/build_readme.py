"""Compose README.md from docs/README.head.md and the per-area pages in docs/.

The area pages are the single source; README.md is generated so the two never
drift. ``python scripts/build_readme.py`` writes it; ``--check`` exits 1 when it
is stale (a test runs that).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

#: Area pages in reading order: the library first, then the services.
PAGES = [
    "analytics.md",
    "indicators.md",
    "backtest.md",
    "tax.md",
    "research.md",
    "service.md",
    "marketdata.md",
    "service_analytics.md",
    "realtime.md",
    "textgen.md",
    "textgen_backends.md",
]

HEADING = re.compile(r"^(#{1,6})(\s.*)$")
FENCE = re.compile(r"^\s*(```|~~~)")


def demote(text: str, top: int = 2) -> str:
    """Shift headings (outside code fences) so the page's first level becomes ``top``."""
    lines = text.splitlines()
    levels = []
    inside = False
    for line in lines:
        if FENCE.match(line):
            inside = not inside
        elif not inside and (m := HEADING.match(line)):
            levels.append(len(m.group(1)))
    shift = top - min(levels) if levels else 0
    out = []
    inside = False
    for line in lines:
        if FENCE.match(line):
            inside = not inside
        elif not inside and (m := HEADING.match(line)):
            line = "#" * min(6, len(m.group(1)) + shift) + m.group(2)
        out.append(line)
    return "\n".join(out).strip() + "\n"


def build() -> str:
    parts = [(DOCS / "README.head.md").read_text().strip() + "\n"]
    contents = ["## Contents", ""]
    for name in PAGES:
        page = DOCS / name
        if not page.exists():
            continue
        body = demote(page.read_text())
        title = body.splitlines()[0].lstrip("#").strip()
        anchor = re.sub(r"[^a-z0-9 _-]", "", title.lower()).replace(" ", "-")
        contents.append(f"- [{title}](#{anchor}) (source: `docs/{name}`)")
        parts.append(body)
    parts.insert(1, "\n".join(contents) + "\n")
    return "\n".join(parts)


def main(argv: list[str]) -> int:
    text = build()
    readme = ROOT / "README.md"
    if "--check" in argv:
        if readme.read_text() != text:
            print("README.md is stale: run `python scripts/build_readme.py`", file=sys.stderr)
            return 1
        return 0
    readme.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
