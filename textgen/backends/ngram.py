"""An interpolated Kneser-Ney trigram language model with temperature / top-p sampling.

The model is the one of Chen & Goodman (1999), "An empirical study of smoothing
techniques for language modeling", section 3.5 (interpolated Kneser-Ney) with a
single absolute discount ``D`` per order:

    P3(w | u v) = max(c(u v w) - D, 0) / c(u v .) + D N1+(u v .) / c(u v .) * P2(w | v)
    P2(w | v)   = max(N1+(. v w) - D, 0) / N1+(. v .) + D N1+(v .)' / N1+(. v .) * P1(w)
    P1(w)       = max(N1+(. w) - D, 0) / N1+(. .) + D N1+(.)' / N1+(. .) / |V|

where ``c`` are raw counts, ``N1+(. v w)`` is the number of distinct left words
``u`` seen before ``v w`` (a continuation count) and the primed ``N1+`` count the
distinct followers. Unseen contexts fall back to the lower order. Each
distribution sums to one exactly.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from textgen.backends.tokenizer import BOS, EOS, UNK

__all__ = ["KneserNeyModel", "sample_index"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class _Table:
    """The discounted followers of one context and the mass left for the lower order."""

    ids: IntArray
    weights: FloatArray
    backoff: float


def _table(counts: dict[int, int], discount: float) -> _Table:
    ids = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
    values = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
    total = float(values.sum())
    return _Table(
        ids=ids,
        weights=np.maximum(values - discount, 0.0) / total,
        backoff=discount * len(counts) / total,
    )


class KneserNeyModel:
    """A trained trigram model over a closed vocabulary.

    Args:
        vocab: Token strings; index ``i`` is token id ``i``. Must contain
            ``<s>``, ``</s>`` and ``<unk>``.
        unigram: ``P1`` over the vocabulary.
        bigram: Table of each seen ``v`` (continuation counts).
        trigram: Table of each seen ``(u, v)`` (raw counts).
    """

    def __init__(
        self,
        vocab: Sequence[str],
        unigram: FloatArray,
        bigram: dict[int, _Table],
        trigram: dict[tuple[int, int], _Table],
    ) -> None:
        self.vocab: tuple[str, ...] = tuple(vocab)
        self.index: dict[str, int] = {w: i for i, w in enumerate(self.vocab)}
        self.unigram = unigram
        self._bigram = bigram
        self._trigram = trigram
        self.bos = self.index[BOS]
        self.eos = self.index[EOS]
        self.unk = self.index[UNK]

    @classmethod
    def train(cls, sequences: Iterable[Sequence[str]], *, discount: float = 0.75) -> KneserNeyModel:
        """Count trigrams over token sequences (each padded with ``<s> <s>`` and ``</s>``).

        Args:
            sequences: Token lists, one per paragraph.
            discount: The absolute discount ``D`` in (0, 1].

        Returns:
            The trained model.
        """
        if not 0.0 < discount <= 1.0:
            raise ValueError(f"discount must be in (0, 1], got {discount}")
        index: dict[str, int] = {BOS: 0, EOS: 1, UNK: 2}
        trigrams: Counter[tuple[int, int, int]] = Counter()
        for seq in sequences:
            ids = [0, 0, *(index.setdefault(t, len(index)) for t in seq), 1]
            trigrams.update(zip(ids, ids[1:], ids[2:], strict=False))
        size = len(index)
        tri_counts: defaultdict[tuple[int, int], dict[int, int]] = defaultdict(dict)
        bi_cont: defaultdict[int, Counter[int]] = defaultdict(Counter)
        for (u, v, w), c in trigrams.items():
            tri_counts[(u, v)][w] = c
            bi_cont[v][w] += 1  # one more distinct left word u before (v, w)
        uni_cont = np.zeros(size, dtype=np.float64)
        for followers in bi_cont.values():
            for w in followers:
                uni_cont[w] += 1.0  # one more distinct left word v before w
        total = float(uni_cont.sum())
        types = float(np.count_nonzero(uni_cont))
        unigram = np.maximum(uni_cont - discount, 0.0) / total + discount * types / total / size
        vocab = [""] * size
        for word, i in index.items():
            vocab[i] = word
        return cls(
            vocab,
            unigram,
            {v: _table(dict(ws), discount) for v, ws in bi_cont.items()},
            {ctx: _table(ws, discount) for ctx, ws in tri_counts.items()},
        )

    def __len__(self) -> int:
        return len(self.vocab)

    def distribution(self, u: int, v: int) -> FloatArray:
        """``P(. | u v)`` over the whole vocabulary (a fresh array summing to one)."""
        p = self.unigram.copy()
        table = self._bigram.get(v)
        if table is not None:
            p *= table.backoff
            p[table.ids] += table.weights
        table3 = self._trigram.get((u, v))
        if table3 is not None:
            p *= table3.backoff
            p[table3.ids] += table3.weights
        return p

    def ids(self, tokens: Iterable[str]) -> list[int]:
        """Token ids, ``<unk>`` for out-of-vocabulary tokens."""
        return [self.index.get(t, self.unk) for t in tokens]


def sample_index(
    p: FloatArray,
    rng: np.random.Generator,
    *,
    temperature: float,
    top_p: float,
    allowed: BoolArray | None = None,
) -> int:
    """Draw one index from ``p`` after temperature, top-p (nucleus) and a mask.

    Args:
        p: Non-negative weights.
        rng: The random generator (seeded by the caller for reproducibility).
        temperature: ``0`` picks the most likely index; otherwise weights are
            raised to ``1 / temperature``.
        top_p: Keep the smallest set of most likely indices whose mass reaches
            ``top_p`` (``1`` keeps all).
        allowed: Optional mask of indices that may be drawn.

    Returns:
        The drawn index.
    """
    q = p if allowed is None else np.where(allowed, p, 0.0)
    if temperature <= 0.0:
        return int(np.argmax(q))
    if temperature != 1.0:
        positive = q > 0.0
        q = np.where(positive, np.exp(np.log(np.where(positive, q, 1.0)) / temperature), 0.0)
    q = q / q.sum()
    if top_p < 1.0:
        order = np.argsort(q)[::-1]
        cumulative = np.cumsum(q[order])
        keep = order[: int(np.searchsorted(cumulative, top_p)) + 1]
        mass = q[keep]
        return int(keep[rng.choice(len(keep), p=mass / mass.sum())])
    return int(rng.choice(len(q), p=q))
