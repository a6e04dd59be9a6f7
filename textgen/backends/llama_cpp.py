"""Any GGUF model through llama.cpp (``llama-cpp-python``) as a :class:`~textgen.backends.base.Backend`.

- **Prompt**: the chat template stored in the GGUF file (or one configured),
  rendered with llama-cpp-python's ``Jinja2ChatFormatter``; roles as in
  :func:`~textgen.backends.base.chat_turns`. ``usage.input_tokens`` is the exact
  length of the rendered prompt in the model's tokenizer.
- **Sampling**: exactly what the request asks: ``temperature`` (``0`` is greedy),
  ``top_p``, ``seed``. llama-cpp-python's own extras (repeat penalty 1.1, top-k
  40, min-p 0.05 in its completion API) are off unless the registry entry sets them.
- **Structured Outputs and tools**: the JSON schema is turned into a llama.cpp
  grammar by llama-cpp-python's converter (``llama_cpp.llama_grammar``), so every
  sampled token keeps the text a prefix of valid JSON; the finished value is also
  checked with ``jsonschema``. Tools are shown to the model in a system message;
  a call is the answer ``<tool_call>{"name": ..., "arguments": ...}</tool_call>``.
- **Concurrency and prefix caching**: see :mod:`textgen.backends.llama_cpp_pool`.
  llama.cpp keeps the key/value state of the tokens a context evaluated last;
  a new prompt reuses the longest common prefix and reports it as ``cached_tokens``.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import secrets
import threading
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import jsonschema
import llama_cpp
import numpy as np
from llama_cpp.llama_chat_format import Jinja2ChatFormatter
from llama_cpp.llama_grammar import LlamaGrammar, json_schema_to_gbnf

from textgen.backends.base import (
    ArgumentsDelta,
    BackendError,
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
    chat_turns,
    relay_from_thread,
)
from textgen.backends.constrained import MAX_NESTING, SchemaError, compile_schema
from textgen.backends.llama_cpp_pool import ContextPool, cached_ids, common_prefix
from textgen.backends.schema_bounds import bound_nesting, bounded_document

__all__ = ["TOOL_CALL_CLOSE", "TOOL_CALL_OPEN", "LlamaCppBackend", "Sampling", "tool_prompt"]

TOOL_CALL_OPEN = "<tool_call>"
TOOL_CALL_CLOSE = "</tool_call>"
_EMPTY_OBJECT = {"type": "object", "properties": {}}
# JSON Schema keywords llama-cpp-python's grammar converter ignores: refused, since the output could not be promised valid.
_UNENFORCED = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


@dataclass(frozen=True, slots=True)
class Sampling:
    """Sampler settings beyond the request's; the defaults turn every one of them off."""

    top_k: int = 0
    min_p: float = 0.0
    typical_p: float = 1.0
    repeat_penalty: float = 1.0
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0


def tool_prompt(tools: Sequence[FunctionSpec]) -> str:
    """The system text that shows the model its tools and the call format."""
    lines = [json.dumps({"name": t.name, "description": t.description,
                         "parameters": t.parameters or _EMPTY_OBJECT}) for t in tools]
    return ("You can call the functions below. To call one, answer with nothing but\n"
            f'{TOOL_CALL_OPEN}{{"name": <function name>, "arguments": <JSON object>}}{TOOL_CALL_CLOSE}\n'
            "Functions:\n" + "\n".join(lines))


def _unenforced(schema: Any, path: str) -> str | None:
    """JSON pointer of the first keyword the grammar converter does not enforce."""
    if not isinstance(schema, Mapping):
        return None
    for key in _UNENFORCED:
        if key in schema:
            return f"{path}/{key}"
    children: list[tuple[Any, str]] = [(schema.get("items"), f"{path}/items")]
    if isinstance(schema.get("additionalProperties"), Mapping):
        children.append((schema["additionalProperties"], f"{path}/additionalProperties"))
    for group in ("properties", "$defs", "definitions"):
        if isinstance(schema.get(group), Mapping):
            children += [(v, f"{path}/{group}/{k}") for k, v in schema[group].items()]
    if isinstance(schema.get("anyOf"), list):
        children += [(v, f"{path}/anyOf/{i}") for i, v in enumerate(schema["anyOf"])]
    return next((hit for child, at in children if (hit := _unenforced(child, at)) is not None), None)


def _check_schema(schema: Any, strict: bool, param: str) -> None:
    if not isinstance(schema, Mapping):
        raise RequestRejected("The schema must be a JSON object.", param)
    try:
        compile_schema(schema, strict=strict)
    except SchemaError as exc:
        raise RequestRejected(f"Unsupported schema: {exc}", param) from exc
    at = _unenforced(schema, "")
    if at is not None:
        raise RequestRejected(f"Unsupported schema: keyword {at.rsplit('/', 1)[1]!r} is not supported by "
                              f"this model's grammar (at '{at}')", param)
    try:
        json_schema_to_gbnf(json.dumps(_grammar_schema(schema)))
    except Exception as exc:  # the converter raises assertion, key and value errors
        raise RequestRejected(f"Unsupported schema: {exc}", param) from exc


def _grammar_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` as llama.cpp's grammar converter gets it: no ``$ref: "#"``, no recursion, at most
    :data:`MAX_NESTING` levels deep (:mod:`textgen.backends.schema_bounds`)."""
    try:
        return bounded_document(schema, MAX_NESTING)
    except ValueError as exc:
        raise RequestRejected(f"Unsupported schema: {exc}") from exc


def _call_schema(tools: Sequence[FunctionSpec]) -> dict[str, Any]:
    """One ``{"name", "arguments"}`` object per tool: the grammar of a call to any of them (each tool's
    arguments bounded to :data:`MAX_NESTING` levels, their definitions gathered at the root)."""
    options: list[dict[str, Any]] = []
    defs: dict[str, Any] = {}
    for i, tool in enumerate(tools):
        arguments, own = bound_nesting(tool.parameters or _EMPTY_OBJECT, MAX_NESTING, prefix=f"tool{i}_")
        defs.update(own)
        options.append({"type": "object", "additionalProperties": False, "required": ["name", "arguments"],
                        "properties": {"name": {"const": tool.name}, "arguments": arguments}})
    return {"anyOf": options, "$defs": defs} if defs else {"anyOf": options}


def _without_trailing_space(pieces: Iterator[str]) -> Iterator[str]:
    """The pieces of a JSON text without the whitespace the grammar allows after the value: whitespace
    is held back until more text follows it, and dropped at the end."""
    held = ""
    for piece in pieces:
        text = held + piece
        body = text.rstrip()
        held = text[len(body):]
        if body:
            yield body


@dataclass(slots=True)
class _Plan:
    """A rendered request: what to evaluate and how to read the output."""

    prompt: str
    ids: list[int]
    mode: Literal["text", "json", "auto", "call", "named"]
    schema: Mapping[str, Any] | None = None  # what the output is checked against
    grammar: Mapping[str, Any] | None = None  # what the sampler is held to (the schema, bounded)
    tool: FunctionSpec | None = None
    tools: Sequence[FunctionSpec] = field(default_factory=tuple)


@dataclass(slots=True)
class _Run:
    """Counters of one generation, shared by its phases."""

    budget: int
    produced: int = 0
    reason: Literal["stop", "length"] = "stop"
    cached: int = 0
    logprobs: list[TokenLogprob] = field(default_factory=list)  # of tokens not yet emitted

    def text(self, piece: str) -> TextDelta:
        """A text delta carrying the log-probabilities of the tokens that made it."""
        delta = TextDelta(piece, tuple(self.logprobs))
        self.logprobs.clear()
        return delta


class LlamaCppBackend:
    """A GGUF model served by llama.cpp.

    Args:
        path: The ``.gguf`` file.
        info: Identity and limits; ``context_window`` is the llama.cpp context size.
        n_threads: Threads for decoding (llama-cpp-python's default when ``None``).
        n_threads_batch: Threads for prompt processing; ``n_threads`` when ``None`` (more threads than
            free cores make llama.cpp's thread barriers crawl on a loaded machine).
        n_gpu_layers: Layers offloaded to a GPU build of llama.cpp (0: CPU only).
        n_batch: Prompt tokens evaluated per llama.cpp batch.
        n_contexts: Contexts (key/value caches) that generate at the same time.
        chat_template: A Jinja chat template replacing the file's own.
        sampling: Sampler extras (all off by default).

    Raises:
        ValueError: The file does not load, has no chat template, or
            ``context_window`` exceeds the model's training context.
    """

    def __init__(
        self, path: str, info: ModelInfo, *, n_threads: int | None = None, n_threads_batch: int | None = None,
        n_gpu_layers: int = 0, n_batch: int = 512, n_contexts: int = 1, chat_template: str | None = None,
        sampling: Sampling = Sampling(),
    ) -> None:
        self._info = replace(info, logprobs=True, continues=True)
        self.sampling = sampling
        self.path = path
        contexts = [llama_cpp.Llama(model_path=path, n_ctx=info.context_window, n_threads=n_threads,
                                    n_threads_batch=n_threads_batch or n_threads, n_gpu_layers=n_gpu_layers, n_batch=n_batch,
                                    verbose=False) for _ in range(n_contexts)]
        first = contexts[0]
        trained = first._model.n_ctx_train()
        if info.context_window > trained:
            raise ValueError(f"context_window {info.context_window} exceeds the model's training context {trained}")
        template = chat_template or first.metadata.get("tokenizer.chat_template")
        if not template:
            raise ValueError("the GGUF file has no chat template; set chat_template")
        eos, bos = first.token_eos(), first.token_bos()
        self._formatter = Jinja2ChatFormatter(
            template, eos_token=first._model.token_get_text(eos) if eos >= 0 else "",
            bos_token=first._model.token_get_text(bos) if bos >= 0 else "")
        self._vocab = first._model.vocab
        self._tokenizer = first
        self._system_role = True
        self.pool = ContextPool(contexts)
        self._executor = ThreadPoolExecutor(max_workers=n_contexts, thread_name_prefix=f"llama-{info.id}")

    @property
    def info(self) -> ModelInfo:
        """Identity and limits."""
        return self._info

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` in the model's tokenizer (no special tokens)."""
        return len(self._tokenizer.tokenize(text.encode(), add_bos=False, special=False))

    def tokenize_prompt(self, prompt: str) -> list[int]:
        """Token ids of a rendered prompt (the template writes its own special tokens)."""
        return list(self._tokenizer.tokenize(prompt.encode(), add_bos=False, special=True))

    # --- prompt -----------------------------------------------------------------------
    def render(self, messages: Sequence[ChatMessage], tools: Sequence[FunctionSpec] = ()) -> str:
        """The prompt text: the chat template with the generation prompt appended.

        Tools, when given, are described in a system message after the leading
        system messages (so the instructions stay a shared prefix).
        """
        if tools:
            lead = next((i for i, m in enumerate(messages) if m.role not in ("system", "developer")),
                        len(messages))
            messages = [*messages[:lead], ChatMessage("system", tool_prompt(tools)), *messages[lead:]]
        if self._system_role:
            try:
                return self._formatter(messages=chat_turns(messages, system_role=True)).prompt  # type: ignore[arg-type]
            except Exception:  # jinja's raise_exception: "system role not supported"
                self._system_role = False
        return self._formatter(messages=chat_turns(messages, system_role=False)).prompt  # type: ignore[arg-type]

    def prompt_tokens(self, request: GenerationRequest) -> int:
        """The exact input tokens of ``request``: its rendered prompt, as ``usage.input_tokens`` reports it."""
        return len(self._render_plan(request).ids)

    def _plan(self, request: GenerationRequest) -> _Plan:
        plan = self._render_plan(request)
        needed = len(plan.ids) + request.max_output_tokens
        if needed > self.info.context_window:
            raise BackendError(  # the template's own tokens can exceed the server's per-message estimate
                f"This model's maximum context length is {self.info.context_window} tokens. However, you "
                f"requested {needed} tokens ({len(plan.ids)} in the input, {request.max_output_tokens} for the "
                "output). Shorten the input or lower max_output_tokens.", 400, "context_length_exceeded")
        return plan

    def _render_plan(self, request: GenerationRequest) -> _Plan:
        tools = request.tools if request.tool_choice != "none" else ()
        if request.tool_choice == "auto" and request.constraint is not None:
            tools = ()  # the answer follows the schema: a grammar cannot allow both
        prompt = self.render(request.messages, tools)
        plan: _Plan
        if request.continuation:  # a resumed plain-text answer: the model goes on after its own text
            plan = _Plan(prompt + request.continuation, [], "text")
        elif request.tool_choice == "required" and len(tools) > 1:
            call = _call_schema(tools)
            plan = _Plan(prompt + TOOL_CALL_OPEN, [], "call", call, call, tools=tools)
        elif request.tool_choice not in ("auto", "none") and tools:
            tool = tools[0] if request.tool_choice == "required" else next(
                t for t in tools if t.name == request.tool_choice)
            prefix = f'{TOOL_CALL_OPEN}{{"name": {json.dumps(tool.name)}, "arguments": '
            schema = tool.parameters or _EMPTY_OBJECT
            plan = _Plan(prompt + prefix, [], "named", schema, _grammar_schema(schema), tool=tool)
        elif tools:
            plan = _Plan(prompt, [], "auto", tools=tools)
        elif request.constraint is not None:
            plan = _Plan(prompt, [], "json", request.constraint.schema, _grammar_schema(request.constraint.schema))
        else:
            plan = _Plan(prompt, [], "text")
        plan.ids = self.tokenize_prompt(plan.prompt)
        return plan

    # --- validation -------------------------------------------------------------------
    def validate(self, request: GenerationRequest) -> None:
        """Reject schemas the grammar cannot enforce (the message names the keyword), and a
        templated prompt that leaves no room for ``max_output_tokens`` (BackendError, 400)."""
        if request.constraint is not None:
            _check_schema(request.constraint.schema, request.constraint.strict, "text.format.schema")
        if request.tool_choice != "none":
            for tool in request.tools:
                _check_schema(tool.parameters or _EMPTY_OBJECT, False, "tools.parameters")
        self._plan(request)

    # --- generation -------------------------------------------------------------------
    def _tokens(self, llama: Any, ids: list[int], request: GenerationRequest, schema: Mapping[str, Any] | None,
                run: _Run, stop: threading.Event) -> Iterator[int]:
        """Sampled tokens until end of generation, the budget or ``stop``."""
        grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False) if schema is not None else None
        llama.set_seed(request.seed if request.seed is not None else secrets.randbits(31))
        s = self.sampling
        tokens = llama.generate(
            ids, temp=request.temperature, top_p=request.top_p, top_k=s.top_k, min_p=s.min_p,
            typical_p=s.typical_p, repeat_penalty=s.repeat_penalty, frequency_penalty=s.frequency_penalty,
            presence_penalty=s.presence_penalty, grammar=grammar)
        try:
            for token in tokens:
                if stop.is_set():
                    return
                if llama_cpp.llama_vocab_is_eog(self._vocab, token):
                    run.reason = "stop"
                    return
                run.produced += 1
                yield token
                if run.produced >= run.budget:
                    run.reason = "length"
                    return
        finally:
            tokens.close()

    def _pieces(self, llama: Any, ids: list[int], request: GenerationRequest,
                schema: Mapping[str, Any] | None, run: _Run, stop: threading.Event) -> Iterator[str]:
        """The output as text, each piece complete UTF-8 characters."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        for token in self._tokens(llama, ids, request, schema, run, stop):
            if request.logprobs:
                run.logprobs.append(self._logprob(llama, token, request.top_logprobs))
            piece = decoder.decode(llama.detokenize([token]))
            if piece:
                yield piece
        tail = decoder.decode(b"", final=True)
        if tail:
            yield tail

    @staticmethod
    def _logprob(llama: Any, token: int, top: int) -> TokenLogprob:
        """``token``'s natural-log probability (and the ``top`` likeliest tokens') in the model's own
        distribution, before temperature, top_p and a grammar reshape it.

        While the generator is suspended on ``token``, the context's last logits are the ones it
        was sampled from.
        """
        n_vocab = llama.n_vocab()
        logits = np.ctypeslib.as_array(llama._ctx.get_logits_ith(-1), shape=(n_vocab,)).astype(np.float64)
        shifted = logits - logits.max()
        logp = shifted - np.log(np.exp(shifted).sum())
        best = np.argsort(-logp, kind="stable")[:top] if top else ()

        def text(i: int) -> str:
            return bytes(llama.detokenize([int(i)])).decode("utf-8", "replace")

        return TokenLogprob(text(token), float(logp[token]), tuple((text(i), float(logp[i])) for i in best))

    @staticmethod
    def _checked(text: str, schema: Mapping[str, Any], what: str) -> Any:
        try:
            value = json.loads(text)
            jsonschema.validate(value, schema)
        except (ValueError, jsonschema.ValidationError) as exc:
            raise BackendError(f"The model's {what} did not validate against the schema: {exc}") from exc
        return value

    def _run(self, llama: Any, plan: _Plan, request: GenerationRequest, stop: threading.Event) -> Iterator[Delta]:
        """The synchronous generation (a worker thread holding ``llama``)."""
        matched = common_prefix(cached_ids(llama), plan.ids)
        run = _Run(request.max_output_tokens, cached=min(matched, len(plan.ids) - 1))
        if plan.mode in ("text", "json"):
            chunks = []
            pieces = self._pieces(llama, plan.ids, request, plan.grammar, run, stop)
            for piece in _without_trailing_space(pieces) if plan.mode == "json" else pieces:
                chunks.append(piece)
                yield run.text(piece)
            if plan.schema is not None and run.reason == "stop" and not stop.is_set():
                self._checked("".join(chunks), plan.schema, "output")
        elif plan.mode == "named":
            assert plan.tool is not None and plan.schema is not None
            yield FunctionCallStart(plan.tool.name)
            chunks = []
            for piece in _without_trailing_space(self._pieces(llama, plan.ids, request, plan.grammar, run, stop)):
                chunks.append(piece)
                yield ArgumentsDelta(piece)
            if run.reason == "stop" and not stop.is_set():
                self._checked("".join(chunks), plan.schema, "function arguments")
        else:
            yield from self._auto(llama, plan, request, run, stop)
        yield Finish(run.reason, run.produced, input_tokens=len(plan.ids), cached_tokens=max(run.cached, 0))

    def _auto(self, llama: Any, plan: _Plan, request: GenerationRequest, run: _Run,
              stop: threading.Event) -> Iterator[Delta]:
        """Text, unless the answer opens with ``<tool_call>``: then a call under the tools' grammar."""
        text = ""
        if plan.mode == "auto":
            probing = True
            for piece in self._pieces(llama, plan.ids, request, None, run, stop):
                text += piece
                if not probing:
                    yield run.text(piece)
                    continue
                head = text.lstrip()
                if head.startswith(TOOL_CALL_OPEN):
                    break
                if not TOOL_CALL_OPEN.startswith(head):
                    probing = False
                    yield run.text(text)
            else:
                if probing and text:
                    yield run.text(text)  # a short answer that looked like the start of a call
                return
            if run.produced >= run.budget:
                run.reason = "length"
                yield run.text(text)
                return
            text = text[: text.index(TOOL_CALL_OPEN) + len(TOOL_CALL_OPEN)]
        schema = _call_schema(plan.tools)
        ids = self.tokenize_prompt(plan.prompt + text)
        call = "".join(self._pieces(llama, ids, request, schema, run, stop))
        if run.reason == "length" or stop.is_set():
            yield run.text(text + call)  # cut off before the call was complete
            return
        value = self._checked(call, schema, "function call")
        yield FunctionCallStart(value["name"])
        yield ArgumentsDelta(json.dumps(value["arguments"]))

    async def generate(self, request: GenerationRequest) -> AsyncIterator[Delta]:
        """Stream the output, generated in a worker thread that holds one context of the pool."""
        plan = await asyncio.to_thread(self._plan, request)
        llama = await self.pool.acquire(plan.ids)
        deltas = relay_from_thread(
            self._executor,
            lambda stop: self._run(llama, plan, request, stop),
            release=lambda: self.pool.release(llama),
        )
        async with contextlib.aclosing(deltas):  # closing it frees the context at the next token
            async for delta in deltas:
                yield delta

    def close(self) -> None:
        """Stop the worker threads (after the running generations)."""
        self._executor.shutdown(wait=False, cancel_futures=True)
