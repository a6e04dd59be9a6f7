"""The tokenizer, the Kneser-Ney model (against a plain-Python twin) and the sampler."""

from __future__ import annotations

import asyncio
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from textgen.backends.base import ChatMessage, Finish, GenerationRequest, TextDelta
from textgen.backends.builtin import NgramBackend
from textgen.backends.ngram import KneserNeyModel, sample_index
from textgen.backends.tokenizer import BOS, EOS, count_tokens, detokenize, tokenize

CORPUS = [
    "the cat sat on the mat .".split(),
    "the dog sat on the log .".split(),
    "a cat saw the dog .".split(),
    "the mat was red .".split(),
]


def twin_probability(sequences: list[list[str]], d: float, u: str, v: str, w: str) -> float:
    """Interpolated Kneser-Ney (Chen & Goodman 1999, eq. 3.5) written out term by term."""
    trigrams: Counter[tuple[str, str, str]] = Counter()
    for seq in sequences:
        padded = [BOS, BOS, *seq, EOS]
        trigrams.update(zip(padded, padded[1:], padded[2:], strict=False))
    vocab = {t for g in trigrams for t in g} | {"<unk>"}
    bigram_types = {(b, c) for (_, b, c) in trigrams}
    cont_bi = Counter((b, c) for (_, b, c) in trigrams)  # N1+(. v w)

    def p1(x: str) -> float:
        n = sum(1 for (_, c) in bigram_types if c == x)
        total = len(bigram_types)
        types = len({c for (_, c) in bigram_types})
        return max(n - d, 0) / total + d * types / total / len(vocab)

    def p2(x: str, ctx: str) -> float:
        total = sum(n for (b, _), n in cont_bi.items() if b == ctx)
        if total == 0:
            return p1(x)
        followers = sum(1 for (b, _) in cont_bi if b == ctx)
        return max(cont_bi[(ctx, x)] - d, 0) / total + d * followers / total * p1(x)

    total = sum(n for (a, b, _), n in trigrams.items() if (a, b) == (u, v))
    if total == 0:
        return p2(w, v)
    followers = sum(1 for (a, b, _) in trigrams if (a, b) == (u, v))
    return max(trigrams[(u, v, w)] - d, 0) / total + d * followers / total * p2(w, v)


@pytest.mark.parametrize("discount", [0.5, 0.75, 1.0])
def test_kneser_ney_matches_the_plain_python_twin(discount: float) -> None:
    model = KneserNeyModel.train(CORPUS, discount=discount)
    contexts = [(BOS, BOS), (BOS, "the"), ("the", "cat"), ("on", "the"), ("dog", "."), ("red", "cat"),
                ("mat", "the")]
    for u, v in contexts:
        p = model.distribution(model.index[u], model.index[v])
        assert p.sum() == pytest.approx(1.0, abs=1e-12)
        for w in model.vocab[1:]:  # every word except <s>, which is never predicted
            assert p[model.index[w]] == pytest.approx(twin_probability(CORPUS, discount, u, v, w), abs=1e-12)


def test_train_rejects_bad_discount() -> None:
    with pytest.raises(ValueError, match="discount"):
        KneserNeyModel.train(CORPUS, discount=0.0)


def test_sample_index_temperature_and_top_p() -> None:
    p = np.array([0.1, 0.6, 0.3])
    rng = np.random.default_rng(0)
    assert sample_index(p, rng, temperature=0.0, top_p=1.0) == 1
    assert {sample_index(p, rng, temperature=1.0, top_p=0.5) for _ in range(50)} == {1}
    assert {sample_index(p, rng, temperature=1.0, top_p=0.85) for _ in range(200)} == {1, 2}
    mask = np.array([True, False, True])
    assert {sample_index(p, rng, temperature=1.0, top_p=1.0, allowed=mask) for _ in range(100)} == {0, 2}
    draws = np.array([sample_index(p, rng, temperature=1.0, top_p=1.0) for _ in range(4000)])
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / 4000, p, atol=0.03)
    cold = np.array([sample_index(p, rng, temperature=0.25, top_p=1.0) for _ in range(2000)])
    assert np.mean(cold == 1) > 0.9  # p**4 renormalised puts ~0.94 on index 1


@given(st.text(alphabet=st.sampled_from(list("abc XYZ.,!?'019")), max_size=60))
@settings(max_examples=100, deadline=None)
def test_tokenize_roundtrip_is_stable(text: str) -> None:
    tokens = tokenize(text)
    assert count_tokens(text) == len(tokens)
    assert tokenize(detokenize(tokens)) == tokens


def test_detokenize_capitalises_and_spaces() -> None:
    assert detokenize(["the", "cat", ",", "i", "think", ".", "yes", "!"]) == "The cat, I think. Yes!"


@pytest.fixture(scope="module")
def backend() -> NgramBackend:
    return NgramBackend()


def run(backend: NgramBackend, request: GenerationRequest) -> list[object]:
    async def collect() -> list[object]:
        return [d async for d in backend.generate(request)]

    return asyncio.run(collect())


def test_builtin_generation_honours_budget_and_seed(backend: NgramBackend) -> None:
    messages = [ChatMessage("user", "bread and soup in the kitchen")]
    a = run(backend, GenerationRequest(messages, 40, seed=3))
    b = run(backend, GenerationRequest(messages, 40, seed=3))
    assert a == b and isinstance(a[-1], Finish)
    text_deltas = [d for d in a if isinstance(d, TextDelta)]
    assert a[-1].output_tokens == len(text_deltas) <= 40  # type: ignore[attr-defined]
    short = run(backend, GenerationRequest(messages, 2, seed=3))
    assert short[-1] == Finish("length", 2) and len(short) == 3


def test_builtin_cache_leans_towards_the_prompt(backend: NgramBackend) -> None:
    """Over many seeds, a kitchen prompt yields more kitchen words than a software prompt."""
    kitchen = {"bread", "soup", "sauce", "oven", "cook", "baker", "recipe", "kitchen"}

    def share(prompt: str) -> int:
        hits = 0
        for seed in range(30):
            deltas = run(backend, GenerationRequest([ChatMessage("user", prompt)], 30, seed=seed))
            words = tokenize("".join(d.text for d in deltas if isinstance(d, TextDelta)))
            hits += sum(w in kitchen for w in words)
        return hits

    assert share("the bread, the soup and the sauce in the oven") > 2 * share("the server and the compiler")
