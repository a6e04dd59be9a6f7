"""Griffe extension: render the Sphinx roles of quantcore's numpydoc docstrings in Markdown.

quantcore's docstrings follow numpydoc, which uses reStructuredText roles for maths
(``:math:`x```, ``.. math::``) and cross-references (``:func:`f```). mkdocstrings
renders docstrings as Markdown, so before rendering this extension rewrites

* ``:math:`x``` to ``$x$`` and a ``.. math::`` directive to a ``$$ ... $$`` block
  (typeset by pymdownx.arithmatex and MathJax);
* ``:func:`quantcore.a.b``` (and ``:mod:``, ``:class:``, ``:data:``, ...) naming a
  public ``quantcore`` object to an autorefs link ``[`b`][quantcore.a.b]``, which
  ``mkdocs build --strict`` checks (a misspelt target fails the build). Private
  targets, relative names and modules without a page of their own (a ``:::``
  line in ``docs/api/*.md``) become inline code.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import griffe

__all__ = ["RENDERED", "RstRoles", "convert"]

_MATH_ROLE = re.compile(r":math:`([^`]+)`")
_XREF_ROLE = re.compile(r":(?:py:)?(?:func|mod|class|data|attr|meth|obj|exc|const):`(~?)([^`]+)`")
_MATH_DIRECTIVE = re.compile(r"^(?P<indent>[ \t]*)\.\. math::[ \t]*(?P<rest>.*)$")
_PAGES = Path(__file__).resolve().parent
#: Objects rendered with a heading of their own: the ``::: identifier`` lines of the pages.
RENDERED = frozenset(
    m.group(1)
    for page in _PAGES.glob("*.md")
    for m in re.finditer(r"^:::\s*(\S+)", page.read_text(encoding="utf-8"), re.M)
)


def _is_unrendered_module(root: Any, target: str) -> bool:
    """``target`` names a module of ``root``'s package that no page renders."""
    obj = root
    for part in target.split(".")[1:]:
        try:
            obj = obj.members[part]
        except (KeyError, AttributeError):
            return False
    return bool(obj.is_module) and target not in RENDERED


def _xref(match: re.Match[str], root: Any = None) -> str:
    tilde, target = match.group(1), match.group(2).strip()
    short = target.rsplit(".", 1)[-1] if tilde else target
    public = target.startswith("quantcore.") and not any(
        p.startswith("_") for p in target.split(".")
    )
    if public and root is not None and _is_unrendered_module(root, target):
        public = False
    return f"[`{short}`][{target}]" if public else f"`{short}`"


def _math_blocks(text: str) -> str:
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = _MATH_DIRECTIVE.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        indent, body = m.group("indent"), [m.group("rest")] if m.group("rest") else []
        i += 1
        block: list[str] = []
        while i < len(lines) and (
            not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > len(indent)
        ):
            block.append(lines[i])
            i += 1
        while block and not block[-1].strip():
            block.pop()
        body += textwrap.dedent("\n".join(block)).strip("\n").splitlines()
        out += ["", f"{indent}$$", *(f"{indent}{b}" for b in body), f"{indent}$$", ""]
    return "\n".join(out)


def convert(text: str, root: Any = None) -> str:
    """Rewrite the reST maths and cross-reference roles of one docstring as Markdown.

    ``root`` is the loaded top-level package, used to tell unrendered modules apart.
    """
    text = _math_blocks(text)
    text = _MATH_ROLE.sub(lambda m: f"${m.group(1).strip()}$", text)
    return _XREF_ROLE.sub(lambda m: _xref(m, root), text)


class RstRoles(griffe.Extension):
    """Apply :func:`convert` to every docstring of a loaded package."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        seen: set[int] = set()
        stack: list[Any] = [pkg]
        while stack:
            obj = stack.pop()
            if id(obj) in seen or obj.is_alias:
                continue
            seen.add(id(obj))
            if obj.docstring is not None:
                obj.docstring.value = convert(obj.docstring.value, pkg)
            stack.extend(obj.members.values())
