"""The built-in offline model: a Kneser-Ney trigram model over the shipped corpus.

What it is: a small statistical language model (see :mod:`textgen.backends.ngram`)
trained in about 0.1 s from ``corpus.txt``, a text this project generates from
its own templates. It writes fluent-looking English sentences about markets,
weather, cooking, software, travel and science, leaning towards the words of the
prompt through a cache in the spirit of Kuhn & De Mori (1990): the next-word
distribution is ``P_KN(w | u v) (1 + 8 c(w))`` renormalised, where ``c(w)`` in
[0, 1] is the relative weight of ``w`` among the prompt's content words (the
corpus's 60 most frequent words never count). It honours ``temperature``,
``top_p``, ``seed`` and ``max_output_tokens``, and produces schema-valid JSON by
constrained decoding (:mod:`textgen.backends.constrained`).

What it is not: it does not understand, follow instructions, answer questions,
reason or see images; its "answers" are plausible sentences, not facts.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path

import numpy as np

from textgen.backends.base import (
    ArgumentsDelta,
    ChatMessage,
    Delta,
    Finish,
    FunctionCallStart,
    FunctionSpec,
    GenerationRequest,
    ModelInfo,
    RequestRejected,
    TextDelta,
    TokenLogprob,
)
from textgen.backends.constrained import CompiledSchema, SchemaError, compile_schema, generate
from textgen.backends.ngram import KneserNeyModel, sample_index
from textgen.backends.tokenizer import count_tokens, join_piece, tokenize

__all__ = ["CORPUS_PATH", "NGRAM_INFO", "NgramBackend"]

CORPUS_PATH = Path(__file__).with_name("corpus.txt")
NGRAM_INFO = ModelInfo(
    id="textgen-ngram-2026-11-22",
    aliases=("textgen-ngram",),
    context_window=8192,
    max_output_tokens=2048,
    logprobs=True,
    owned_by="quantcore",
    created=1795305600,  # 2026-11-22T00:00:00Z
)
_CACHE_BOOST = 8.0
_STOPWORDS = 60  # the most frequent corpus words never enter the cache
_PHRASE_WORDS = 6
_EMPTY_OBJECT = {"type": "object", "properties": {}}
_NAME_PARTS = re.compile(r"[A-Za-z][a-z]*|[0-9]+")


class _Sampler:
    """One generation's sampling state: model, cache, options and RNG."""

    def __init__(self, backend: NgramBackend, request: GenerationRequest) -> None:
        self.model = backend.model
        self.backend = backend
        self.rng = np.random.default_rng(request.seed)
        self.temperature = request.temperature
        self.top_p = request.top_p
        self.cache = backend.cache_distribution(request.messages)

    def weights(self, u: int, v: int, extra: np.ndarray | None = None) -> np.ndarray:
        """The next token's unnormalised weights: Kneser-Ney times the prompt cache boost."""
        p = self.model.distribution(u, v)
        cache = self.cache if extra is None else extra
        return p if cache is None else p * (1.0 + _CACHE_BOOST * cache)

    def next_id(self, u: int, v: int, allowed: np.ndarray, extra: np.ndarray | None = None) -> int:
        return sample_index(self.weights(u, v, extra), self.rng, temperature=self.temperature, top_p=self.top_p,
                            allowed=allowed)

    def logprob(self, u: int, v: int, allowed: np.ndarray, w: int, top: int, text: str) -> TokenLogprob:
        """Log-probability of ``w``, emitted as ``text``, (and of the ``top`` likeliest words) in the
        model's distribution over the allowed tokens, before temperature and top_p reshape it."""
        p = np.where(allowed, self.weights(u, v), 0.0)
        with np.errstate(divide="ignore"):
            logp = np.log(p / p.sum())
        best = np.argsort(-logp, kind="stable")[:top] if top else ()
        vocab = self.model.vocab
        return TokenLogprob(text, float(logp[w]), tuple((vocab[i], float(logp[i])) for i in best))

    def phrase(
        self, hint: str, rng: np.random.Generator, min_chars: int, max_chars: int | None
    ) -> Iterator[str]:
        """Words for a JSON string (the :class:`~textgen.backends.constrained.TextSource` hook)."""
        del rng  # the sampler's own generator drives the words
        model = self.model
        extra = self.backend.mix_cache(self.cache, tokenize(hint.replace("_", " ")))
        u = v = model.bos
        length, words = 0, 0
        previous: str | None = None
        while max_chars is None or length < max_chars:
            done = words >= _PHRASE_WORDS and length >= min_chars
            if done:
                return
            allowed = self.backend.word_or_stop if length >= min_chars and words else self.backend.words
            w = self.next_id(u, v, allowed, extra)
            if not self.backend.words[w]:
                return  # a sentence end: the phrase is complete
            piece = join_piece(previous, model.vocab[w])
            if max_chars is not None and length + len(piece) > max_chars:
                if length >= min_chars:
                    return
                piece = piece.lstrip()[: max_chars - length] if words == 0 else piece[: max_chars - length]
            yield piece
            length += len(piece)
            words += 1
            previous, u, v = model.vocab[w], v, w


class NgramBackend:
    """The built-in :class:`~textgen.backends.base.Backend`.

    Args:
        corpus: Training text; paragraphs are separated by blank lines.
        info: Identity and limits (defaults to :data:`NGRAM_INFO`).
    """

    def __init__(self, corpus: str | None = None, info: ModelInfo = NGRAM_INFO) -> None:
        text = CORPUS_PATH.read_text(encoding="utf-8") if corpus is None else corpus
        paragraphs = [tokenize(p) for p in text.split("\n\n") if p.strip()]
        self.model = KneserNeyModel.train(paragraphs)
        self._info = info
        vocab = self.model.vocab
        self.words = np.array([bool(_NAME_PARTS.fullmatch(w)) or w.isalpha() for w in vocab])
        self.words[[self.model.bos, self.model.eos, self.model.unk]] = False
        self.word_or_stop = self.words.copy()
        self.word_or_stop[self.model.eos] = True
        if "." in self.model.index:
            self.word_or_stop[self.model.index["."]] = True
        self.text_tokens = np.ones(len(vocab), dtype=bool)
        self.text_tokens[[self.model.bos, self.model.unk]] = False
        self.first_tokens = self.text_tokens.copy()
        self.first_tokens[self.model.eos] = False
        frequency = Counter(t for p in paragraphs for t in p)
        self._stop = {w for w, _ in frequency.most_common(_STOPWORDS)}

    @property
    def info(self) -> ModelInfo:
        """Identity and limits."""
        return self._info

    def count_tokens(self, text: str) -> int:
        """Words, numbers and punctuation marks in ``text``."""
        return count_tokens(text)

    def mix_cache(self, cache: np.ndarray | None, tokens: Sequence[str]) -> np.ndarray | None:
        """``cache`` with ``tokens`` (known content words) weighted in as much again."""
        extra = self._counts(tokens)
        if extra is None:
            return cache
        return extra if cache is None else np.maximum(cache, extra)

    def _counts(self, tokens: Sequence[str]) -> np.ndarray | None:
        ids = [self.model.index[t] for t in tokens if t in self.model.index and t not in self._stop]
        ids = [i for i in ids if self.words[i]]
        if not ids:
            return None
        counts = np.bincount(np.asarray(ids), minlength=len(self.model)).astype(np.float64)
        return counts / counts.max()

    def cache_distribution(self, messages: Sequence[ChatMessage]) -> np.ndarray | None:
        """The prompt's content-word distribution; the latest user turn and instructions weigh most."""
        weights: list[tuple[float, np.ndarray]] = []
        last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
        for i, message in enumerate(messages):
            counts = self._counts(tokenize(message.text))
            if counts is not None:
                important = i == last_user or message.role in ("system", "developer")
                weights.append((3.0 if important else 1.0, counts))
        if not weights:
            return None
        mixed: np.ndarray = sum(w * c for w, c in weights)  # type: ignore[assignment]
        return mixed / mixed.max()

    def _compile(self, schema: object, strict: bool, param: str) -> CompiledSchema:
        if not isinstance(schema, dict):
            raise RequestRejected("The schema must be a JSON object.", param)
        try:
            return compile_schema(schema, strict=strict)
        except SchemaError as exc:
            raise RequestRejected(f"Invalid schema: {exc}.", param) from exc

    def validate(self, request: GenerationRequest) -> None:
        """Reject schemas outside the supported subset before any output is sent."""
        if request.constraint is not None:
            self._compile(request.constraint.schema, request.constraint.strict, "text.format.schema")
        for i, tool in enumerate(request.tools):
            self._compile(tool.parameters or _EMPTY_OBJECT, tool.strict, f"tools[{i}].parameters")

    def choose_tool(self, request: GenerationRequest) -> FunctionSpec | None:
        """The function to call, or ``None`` to answer in text.

        ``none``: never. A named function: that one. ``required``: the tool whose
        name and description share most words with the latest user message (the
        first on a tie). ``auto``: the same choice, but only when the latest
        message is the user's and mentions a word of a tool's name.
        """
        tools = list(request.tools)
        if not tools or request.tool_choice == "none":
            return None
        if request.tool_choice not in ("auto", "required"):
            return next(t for t in tools if t.name == request.tool_choice)
        last = request.messages[-1] if request.messages else None
        user_words = set(tokenize(last.text)) if last is not None and last.role == "user" else set()

        def name_words(tool: FunctionSpec) -> set[str]:
            return {w.lower() for w in _NAME_PARTS.findall(tool.name)}

        def score(tool: FunctionSpec) -> int:
            return len(user_words & (name_words(tool) | set(tokenize(tool.description))))

        best = max(tools, key=score)  # max keeps the first of equal scores
        if request.tool_choice == "required":
            return best
        mentioned = [t for t in tools if user_words & name_words(t)]
        return max(mentioned, key=score) if mentioned else None

    async def generate(self, request: GenerationRequest) -> AsyncIterator[Delta]:
        """Stream text, JSON or one function call (see :meth:`choose_tool`)."""
        sampler = _Sampler(self, request)
        budget = request.max_output_tokens
        tool = self.choose_tool(request)
        if tool is not None:
            yield FunctionCallStart(tool.name)
            schema = self._compile(tool.parameters or _EMPTY_OBJECT, tool.strict, "tools")
            async for delta in self._json(schema, sampler, budget, ArgumentsDelta):
                yield delta
        elif request.constraint is not None:
            schema = self._compile(request.constraint.schema, request.constraint.strict, "text.format")
            async for delta in self._json(schema, sampler, budget, TextDelta):
                yield delta
        else:
            async for delta in self._text(sampler, budget, request):
                yield delta

    async def _json(
        self,
        schema: CompiledSchema,
        sampler: _Sampler,
        budget: int,
        kind: type[TextDelta] | type[ArgumentsDelta],
    ) -> AsyncIterator[Delta]:
        used = 0
        for piece in generate(schema, sampler, sampler.rng):
            cost = count_tokens(piece)
            if used + cost > budget:
                yield Finish("length", used)
                return
            used += cost
            yield kind(piece)
            await asyncio.sleep(0)
        yield Finish("stop", used)

    async def _text(self, sampler: _Sampler, budget: int, request: GenerationRequest) -> AsyncIterator[Delta]:
        model = self.model
        u = v = model.bos
        previous: str | None = None
        for used in range(budget):
            allowed = self.first_tokens if previous is None else self.text_tokens
            w = sampler.next_id(u, v, allowed)
            if w == model.eos:
                yield Finish("stop", used)
                return
            token = model.vocab[w]
            piece = join_piece(previous, token)
            logprobs = (sampler.logprob(u, v, allowed, w, request.top_logprobs, piece),) if request.logprobs else ()
            yield TextDelta(piece, logprobs)
            previous, u, v = token, v, w
            await asyncio.sleep(0)
        yield Finish("length", budget)
