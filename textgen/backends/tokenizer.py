"""A small word-level tokenizer: words, numbers and single punctuation marks.

It is the tokenizer of the built-in n-gram model and the token counter behind
``usage`` and context windows for it. Words are lower-cased for the model;
:func:`detokenize` restores sentence capitals and spacing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

__all__ = ["BOS", "EOS", "UNK", "count_tokens", "detokenize", "iter_pieces", "join_piece", "tokenize"]

BOS = "<s>"
EOS = "</s>"
UNK = "<unk>"

_TOKEN = re.compile(r"[A-Za-z]+(?:['\u2019][A-Za-z]+)*|\d+(?:[.,]\d+)*|[^\w\s]|_+", re.UNICODE)
_NO_SPACE_BEFORE = frozenset(".,;:!?)]}%'\"")
_NO_SPACE_AFTER = frozenset("([{$\"")
_SENTENCE_END = frozenset(".!?")


def tokenize(text: str) -> list[str]:
    """Split text into lower-cased word, number and punctuation tokens.

    Args:
        text: Any text.

    Returns:
        The tokens in order; whitespace is dropped.
    """
    return [m.group(0).lower() for m in _TOKEN.finditer(text)]


def count_tokens(text: str) -> int:
    """Number of tokens :func:`tokenize` would return, without building the list."""
    return sum(1 for _ in _TOKEN.finditer(text))


def join_piece(previous: str | None, token: str) -> str:
    """The text that appends ``token`` after ``previous`` (``None`` at the start).

    Capitalises the first word of a sentence and the pronoun "i", and puts a
    space before a word but not before closing punctuation.
    """
    word = token
    if token == "i" or previous is None or previous in _SENTENCE_END:
        word = token[:1].upper() + token[1:]
    if previous is None or token in _NO_SPACE_BEFORE or previous in _NO_SPACE_AFTER:
        return word
    return " " + word


def iter_pieces(tokens: Iterable[str]) -> Iterator[str]:
    """Yield the text piece of each token (see :func:`join_piece`)."""
    previous: str | None = None
    for token in tokens:
        yield join_piece(previous, token)
        previous = token


def detokenize(tokens: Iterable[str]) -> str:
    """Join tokens back into readable text."""
    return "".join(iter_pieces(tokens))
