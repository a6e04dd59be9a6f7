"""A local Hugging Face causal language model as a :class:`~textgen.backends.base.Backend`.

The model directory (config, weights, tokenizer with a chat template) is loaded
with ``local_files_only=True``: nothing is downloaded. Generation is a plain
token loop run in a worker thread (one per model, so requests to one model run
one at a time and the event loop never blocks); each token is streamed as it is
decoded.

- **Prompt**: the tokenizer's chat template renders the context; ``developer``
  becomes ``system`` and, for templates without a system role, system text is
  folded into the next user message; ``tool`` results become user messages.
- **Sampling**: ``temperature`` (``0`` is greedy), ``top_p`` (nucleus), ``seed``
  (a private ``torch.Generator``), ``max_output_tokens``; stops at any EOS id of
  the tokenizer or the generation config.
- **Structured Outputs**: ``json_schema`` / ``json_object`` formats and function
  arguments are decoded under lm-format-enforcer's token enforcer, so the text
  parses and validates against the schema.
- **Reasoning**: text between ``<think>`` and ``</think>`` (configurable) is
  streamed as :class:`~textgen.backends.base.ReasoningDelta`; a template that
  opens ``<think>`` in the generation prompt starts the output inside it.
- **Prompt caching**: the key/value cache of each recent prompt is kept in a
  small LRU. A new prompt reuses the longest common token prefix with any of
  them (copied, then cropped), computes only the rest, and reports the reused
  length as ``cached_tokens``. Instructions and fixed prompt parts come first in
  the context, so repeated requests share long prefixes.
"""

from __future__ import annotations

import contextlib
import copy
import json
import secrets
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

import torch
from lmformatenforcer import (
    CharacterLevelParserConfig,
    JsonSchemaParser,
    TokenEnforcer,
    TokenEnforcerTokenizerData,
)
from transformers import AutoModelForCausalLM, AutoTokenizer

from textgen.backends.base import (
    ArgumentsDelta,
    BackendError,
    ChatMessage,
    Delta,
    Finish,
    FunctionCallStart,
    GenerationRequest,
    ModelInfo,
    ReasoningSplitter,
    RequestRejected,
    TextDelta,
    chat_turns,
    relay_from_thread,
)

__all__ = ["PromptCache", "TransformersBackend", "build_tiny_model", "common_prefix"]

_EMPTY_OBJECT = {"type": "object", "properties": {}}
_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token sequences."""
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


@dataclass(slots=True)
class _Hit:
    length: int
    state: Any  # a transformers Cache holding exactly ``length`` positions


class PromptCache:
    """An LRU of computed prompt states (key/value caches) keyed by token ids.

    Args:
        size: Prompts kept; ``0`` disables caching.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[int, ...], Any] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, ids: Sequence[int]) -> _Hit | None:
        """A private copy of the state of the longest cached prefix of ``ids``.

        At least the last token of ``ids`` is left to compute (its logits are needed).
        """
        best, key = 0, None
        for cached in self._entries:
            n = min(common_prefix(cached, ids), len(ids) - 1)
            if n > best:
                best, key = n, cached
        if key is None:
            return None
        self._entries.move_to_end(key)
        state = copy.deepcopy(self._entries[key])
        surplus = len(key) - best
        if surplus:
            try:
                state.crop(-surplus)
            except (RuntimeError, ValueError):  # e.g. sliding-window layers cannot roll back
                return None
        return _Hit(best, state)

    def store(self, ids: Sequence[int], state: Any) -> None:
        """Keep a copy of ``state`` (the cache of exactly ``ids``), evicting the oldest."""
        if self.size <= 0 or not ids:
            return
        key = tuple(ids)
        self._entries[key] = copy.deepcopy(state)
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)


def _complete_json(text: str) -> bool:
    """Whether ``text`` is one whole JSON document (what a constrained answer must be to end)."""
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _tokenizer_data(tokenizer: Any, eos: list[int]) -> TokenEnforcerTokenizerData:
    """lm-format-enforcer's view of the vocabulary (the library's own recipe, version-proof)."""
    zero = tokenizer.encode("0", add_special_tokens=False)[-1]
    special = set(tokenizer.all_special_ids)
    regular = []
    for i in range(len(tokenizer)):
        if i in special:
            continue
        after_zero = tokenizer.decode([zero, i])[1:]
        if any(c < " " for c in after_zero):
            continue  # raw control characters are invalid inside JSON strings; blanks suffice between values
        regular.append((i, after_zero, len(after_zero) > len(tokenizer.decode([i]))))

    def decode(tokens: list[int]) -> str:
        return str(tokenizer.decode(tokens)).rstrip("\ufffd")

    return TokenEnforcerTokenizerData(regular, decode, eos, False, len(tokenizer))


class TransformersBackend:
    """A local causal LM behind the backend Protocol.

    Args:
        path: A Hugging Face model directory (loaded offline).
        info: Identity and limits.
        device: Torch device.
        dtype: ``"float32"``, ``"bfloat16"``, ``"float16"`` or ``None`` (the checkpoint's).
        prompt_cache_size: Prompts kept for prefix reuse (0 disables).
        reasoning_tags: Start and end markers of reasoning sections.
    """

    def __init__(
        self,
        path: str,
        info: ModelInfo,
        *,
        device: str = "cpu",
        dtype: str | None = None,
        prompt_cache_size: int = 4,
        reasoning_tags: tuple[str, str] = ("<think>", "</think>"),
    ) -> None:
        self._info = info
        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(
            path, local_files_only=True, dtype=_DTYPES[dtype] if dtype else "auto")
        self.model = model.to(device).eval()  # type: ignore[arg-type]  # transformers stubs: str device is fine
        self.device = torch.device(device)
        eos: list[int] = []
        for value in (self.tokenizer.eos_token_id, getattr(model.generation_config, "eos_token_id", None)):
            for token in value if isinstance(value, list) else [value]:
                if token is not None and token not in eos:
                    eos.append(int(token))
        if not eos:
            raise ValueError("the tokenizer and generation config define no eos_token_id")
        self.eos = eos
        self.prompt_cache = PromptCache(prompt_cache_size)
        self.reasoning_tags = reasoning_tags
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"textgen-{info.id}")
        self._enforcer_data: TokenEnforcerTokenizerData | None = None
        self._system_role = True

    @property
    def info(self) -> ModelInfo:
        """Identity and limits."""
        return self._info

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` with this model's tokenizer (no special tokens)."""
        return len(self.tokenizer.encode(text, add_special_tokens=False))

    # --- prompt -----------------------------------------------------------------------
    def render(self, messages: Sequence[ChatMessage]) -> str:
        """The prompt text: the chat template with the generation prompt appended."""
        if self.tokenizer.chat_template is None:
            lines = [f"{m.role}: {m.text}" for m in messages]
            return "\n".join([*lines, "assistant:"])
        if self._system_role:
            try:
                return str(self.tokenizer.apply_chat_template(
                    chat_turns(messages, system_role=True), tokenize=False, add_generation_prompt=True))
            except Exception:  # jinja's raise_exception: "system role not supported"
                self._system_role = False
        return str(self.tokenizer.apply_chat_template(
            chat_turns(messages, system_role=False), tokenize=False, add_generation_prompt=True))

    def prompt_ids(self, prompt: str) -> list[int]:
        """Token ids of a rendered prompt (the template carries its own special tokens)."""
        return list(self.tokenizer(prompt, add_special_tokens=False)["input_ids"])

    def prompt_tokens(self, request: GenerationRequest) -> int:
        """The exact input tokens of ``request``: its rendered prompt, as ``usage.input_tokens`` reports it."""
        return len(self.prompt_ids(self.render(request.messages)))

    # --- validation -------------------------------------------------------------------
    def _parser(self, schema: Any, param: str) -> JsonSchemaParser:
        if not isinstance(schema, dict):
            raise RequestRejected("The schema must be a JSON object.", param)
        try:
            return JsonSchemaParser(schema)
        except Exception as exc:  # the library raises pydantic/Key/Value errors
            raise RequestRejected(f"Unsupported schema: {exc}", param) from exc

    def _tool(self, request: GenerationRequest) -> Any:
        if not request.tools or request.tool_choice in ("auto", "none"):
            return None
        if request.tool_choice == "required":
            if len(request.tools) != 1:
                raise RequestRejected(f"Model {self.info.id!r} cannot choose among several tools; name one "
                                      "with tool_choice {'type': 'function', 'name': ...}.", "tool_choice")
            return request.tools[0]
        return next(t for t in request.tools if t.name == request.tool_choice)

    def _checked_prompt(self, request: GenerationRequest) -> tuple[str, list[int]]:
        """The templated prompt and its ids; BackendError (400) when no room is left for the output."""
        prompt = self.render(request.messages)
        ids = self.prompt_ids(prompt)
        if len(ids) + request.max_output_tokens > self.info.context_window:
            raise BackendError(  # the chat template's tokens can exceed the server's per-message estimate
                f"This model's maximum context length is {self.info.context_window} tokens. However, you "
                f"requested {len(ids) + request.max_output_tokens} tokens ({len(ids)} in the input, "
                f"{request.max_output_tokens} for the output). Shorten the input or lower max_output_tokens.",
                400, "context_length_exceeded")
        return prompt, ids

    def validate(self, request: GenerationRequest) -> None:
        """Reject schemas lm-format-enforcer cannot enforce, ambiguous tool choices, and a templated
        prompt that leaves no room for ``max_output_tokens`` (BackendError, 400)."""
        if request.constraint is not None:
            self._parser(request.constraint.schema, "text.format.schema")
        tool = self._tool(request)
        if tool is not None:
            self._parser(tool.parameters or _EMPTY_OBJECT, "tools.parameters")
        self._checked_prompt(request)

    # --- generation -------------------------------------------------------------------
    def _enforcer(self, schema: Any) -> TokenEnforcer:
        if self._enforcer_data is None:
            self._enforcer_data = _tokenizer_data(self.tokenizer, self.eos)
        parser = JsonSchemaParser(schema)
        enforcer = TokenEnforcer(self._enforcer_data, parser)
        # TokenEnforcer replaces the parser's config with one holding the vocabulary's alphabet;
        # keep that alphabet and allow one blank at a time (compact JSON, no runaway whitespace).
        parser.config = CharacterLevelParserConfig(alphabet=self._enforcer_data.tokenizer_alphabet,
                                                   max_consecutive_whitespaces=1)
        return enforcer

    @torch.inference_mode()
    def _forward(self, ids: list[int], state: Any) -> tuple[torch.Tensor, Any]:
        out = self.model(input_ids=torch.tensor([ids], device=self.device), cache=state, use_cache=True)
        return out.logits[0, -1].float(), out.cache

    @staticmethod
    def _sample(logits: torch.Tensor, allowed: list[int] | None, temperature: float, top_p: float,
                generator: torch.Generator) -> int:
        if allowed is not None:
            mask = torch.full_like(logits, float("-inf"))
            mask[allowed] = 0.0
            logits = logits + mask
        if temperature <= 0:
            return int(torch.argmax(logits))
        probs = torch.softmax(logits / temperature, dim=-1)
        if top_p < 1.0:
            sorted_probs, order = torch.sort(probs, descending=True)
            before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
            sorted_probs[before >= top_p] = 0.0  # keep the smallest set reaching top_p
            probs = torch.zeros_like(probs).scatter_(0, order, sorted_probs)
        return int(torch.multinomial(probs, 1, generator=generator))

    def _run(self, request: GenerationRequest, stop: threading.Event) -> Iterator[Delta]:
        """The synchronous generation loop (worker thread)."""
        prompt, ids = self._checked_prompt(request)
        hit = self.prompt_cache.lookup(ids)
        cached, state = (hit.length, hit.state) if hit is not None else (0, None)
        logits, state = self._forward(ids[cached:], state)
        self.prompt_cache.store(ids, state)
        generator = torch.Generator(device="cpu")
        generator.manual_seed(request.seed if request.seed is not None else secrets.randbits(63))

        tool = self._tool(request)
        schema = (tool.parameters or _EMPTY_OBJECT) if tool is not None else (
            request.constraint.schema if request.constraint is not None else None)
        enforcer = self._enforcer(schema) if schema is not None else None
        if tool is not None:
            yield FunctionCallStart(tool.name)
        start, end = self.reasoning_tags
        splitter = None if schema is not None else ReasoningSplitter(
            start, end, inside=prompt.rstrip().endswith(start))

        out: list[int] = []
        start_at, emitted = 0, ""  # text of out[start_at:] already sent (reset after each newline)
        reasoning_tokens = 0
        reason: Literal["stop", "length"] = "length"
        while len(out) < request.max_output_tokens and not stop.is_set():
            allowed = enforcer.get_allowed_tokens(out).allowed_tokens if enforcer is not None else None
            if allowed is not None and any(t in self.eos for t in allowed):
                # The enforcer also allows the end inside an unfinished value; end only on complete JSON.
                if _complete_json(str(self.tokenizer.decode(out, skip_special_tokens=True))):
                    reason = "stop"
                    break
                allowed = [t for t in allowed if t not in self.eos]
                if not allowed:
                    break  # cannot be finished: "length", so the response is incomplete, never completed
            token = self._sample(logits, allowed, request.temperature, request.top_p, generator)
            if token in self.eos:
                reason = "stop"
                break
            out.append(token)
            if splitter is not None and splitter.inside:
                reasoning_tokens += 1
            text = str(self.tokenizer.decode(out[start_at:], skip_special_tokens=True))
            if not text.endswith("\ufffd") and len(text) > len(emitted):
                piece, emitted = text[len(emitted):], text
                if piece.endswith("\n"):  # decode only the current line next time (linear, not quadratic)
                    start_at, emitted = len(out), ""
                if tool is not None:
                    yield ArgumentsDelta(piece)
                elif splitter is None:
                    yield TextDelta(piece)
                else:
                    yield from splitter.feed(piece)
            logits, state = self._forward([token], state)
        if splitter is not None:
            yield from splitter.flush()
        yield Finish(reason, len(out), input_tokens=len(ids), cached_tokens=cached,
                     reasoning_tokens=reasoning_tokens)

    async def generate(self, request: GenerationRequest) -> AsyncIterator[Delta]:
        """Stream the output of :meth:`_run`, computed in this model's worker thread."""
        deltas = relay_from_thread(self._executor, lambda stop: self._run(request, stop))
        async with contextlib.aclosing(deltas):  # a client that went away stops the worker
            async for delta in deltas:
                yield delta

    def close(self) -> None:
        """Stop the worker thread (after the running generation)."""
        self._executor.shutdown(wait=False, cancel_futures=True)


_TINY_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
_TINY_SPECIALS = ["<|bos|>", "<|end|>", "<|pad|>", "<|system|>", "<|user|>", "<|assistant|>"]


def build_tiny_model(
    path: str, corpus: Sequence[str], *, vocab_size: int = 400, n_layer: int = 2, n_embd: int = 64,
    n_positions: int = 1024, seed: int = 0,
) -> None:
    """Write a tiny random-weight GPT-2 and a byte-level BPE tokenizer to ``path``.

    Nothing is downloaded: the tokenizer is trained on ``corpus`` and the
    weights are random (``torch.manual_seed(seed)``), so the text is gibberish
    but every code path of the backend (chat template, KV cache, sampling,
    constrained decoding) runs for real. For tests, benchmarks and smoke runs.

    Args:
        path: Output directory.
        corpus: Training text for the tokenizer.
        vocab_size: BPE vocabulary size (the 256 bytes and the merges).
        n_layer: Transformer blocks.
        n_embd: Hidden size.
        n_positions: Longest sequence, also a sensible ``context_window``.
        seed: Weight initialisation seed.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=_TINY_SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    bpe.train_from_iterator(corpus, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<|bos|>", eos_token="<|end|>",
                                        pad_token="<|pad|>")
    tokenizer.add_tokens(["<think>", "</think>"])
    tokenizer.chat_template = _TINY_TEMPLATE
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=n_positions, n_embd=n_embd, n_layer=n_layer,
                        n_head=2, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                        tie_word_embeddings=False)
    GPT2LMHeadModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
