"""The default model (SmolLM2-135M-Instruct, llama.cpp) served by textgen, measured side by side.

    python benchmarks/textgen_llama.py                   # all three parts
    python benchmarks/textgen_llama.py --part peer --rounds 5 --tokens 200
    python benchmarks/textgen_llama.py --part prefix --prefix 2000
    python benchmarks/textgen_llama.py --part concurrent --streams 8

- ``peer``: one streamed answer from ``python -m textgen serve`` (``/v1/responses``)
  and from llama-cpp-python's own OpenAI-compatible server (``python -m
  llama_cpp.server``, ``/v1/chat/completions``) on the same GGUF file, prompt,
  context size, thread count and greedy sampling (its repeat penalty, top-k
  and min-p off, like ours), alternating, ``--rounds`` times. Decode speed is
  (deltas - 1) / (time of the last delta - time of the first); time to first
  token is from sending the request to the first text delta. Medians and the
  ratios ours / theirs (decode) and ours / theirs (TTFT).
- ``prefix``: in process, the second of two requests that share a ``--prefix``
  token instructions prefix, with the first one's state cached (the normal
  case) and after an unrelated request has taken the context (no cache).
- ``concurrent``: ``--streams`` streamed requests at once against textgen with
  one context (a fair queue) and with two contexts (``n_contexts = 2``): total
  output tokens per second and the p99 time to first token.

Nothing is asserted: the machine is shared and noisy; numbers go in docs/textgen_backends.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from textgen.backends.base import ChatMessage, Finish, GenerationRequest
from textgen.backends.llama_cpp import LlamaCppBackend
from textgen.backends.registry_config import DEFAULT_MODEL_ID, default_entry, load_backends

__all__ = ["main"]

KEY = "sk-bench-" + "0" * 24
PROMPT = "Write a long story about a lighthouse keeper and a storm."


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _server(command: list[str], env: dict[str, str], ready: str) -> Iterator[None]:
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + 180
    try:
        while True:
            try:
                if httpx.get(ready, headers={"Authorization": f"Bearer {KEY}"}).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                raise RuntimeError(f"{command[2]} did not start: {log.read().decode()[-2000:]}")
            time.sleep(0.2)
        yield
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()


@contextmanager
def textgen(threads: int, contexts: int, window: int) -> Iterator[str]:
    """``python -m textgen serve`` on the default GGUF with these settings; yields the API root."""
    port, data = _port(), tempfile.mkdtemp()
    models = Path(data) / "models.toml"
    models.write_text(f'builtin = false\n[models."{DEFAULT_MODEL_ID}"]\nbackend = "llama_cpp"\n'
                      f'path = "{default_entry().path}"\ncontext_window = {window}\nn_threads = {threads}\n'
                      f"n_threads_batch = {threads}\nn_contexts = {contexts}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEXTGEN_")} | {
        "TEXTGEN_MODELS": str(models), "TEXTGEN_DATA_DIR": data, "TEXTGEN_API_KEYS": KEY,
        "TEXTGEN_RATE_LIMIT_PER_MINUTE": "0"}
    base = f"http://127.0.0.1:{port}/v1"
    with _server([sys.executable, "-m", "textgen", "serve", "--port", str(port), "--log-level", "warning"],
                 env, f"{base}/models"):
        yield base


@contextmanager
def llama_server(threads: int, window: int) -> Iterator[str]:
    """llama-cpp-python's own server on the same file and settings; yields the API root."""
    port = _port()
    base = f"http://127.0.0.1:{port}/v1"
    with _server([sys.executable, "-m", "llama_cpp.server", "--model", default_entry().path, "--port", str(port),
                  "--n_ctx", str(window), "--n_threads", str(threads), "--n_threads_batch", str(threads),
                  "--verbose", "false"], dict(os.environ), f"{base}/models"):
        yield base


async def _stream(client: httpx.AsyncClient, url: str, body: dict[str, object]) -> tuple[float, list[float]]:
    """(time to first text delta, arrival time of every text delta), both from the send."""
    start = time.perf_counter()
    stamps: list[float] = []
    async with client.stream("POST", url, json=body, headers={"Authorization": f"Bearer {KEY}"}) as r:
        r.raise_for_status()
        async for line in r.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            event = json.loads(line[6:])
            if event.get("type") == "response.output_text.delta" or (
                    event.get("choices") and event["choices"][0]["delta"].get("content")):
                stamps.append(time.perf_counter() - start)
    return (stamps[0] if stamps else float("nan")), stamps


def _ours(tokens: int) -> dict[str, object]:
    return {"model": DEFAULT_MODEL_ID, "input": PROMPT, "stream": True, "temperature": 0,
            "max_output_tokens": tokens, "store": False}


def _theirs(tokens: int) -> dict[str, object]:
    return {"messages": [{"role": "user", "content": PROMPT}], "stream": True, "temperature": 0,
            "max_tokens": tokens, "top_k": 0, "min_p": 0.0, "repeat_penalty": 1.0}


def peer(rounds: int, tokens: int, threads: int) -> None:
    """Decode speed and TTFT of textgen vs ``llama_cpp.server``."""
    results: dict[str, list[tuple[float, float, int]]] = {"textgen": [], "llama_cpp.server": []}

    async def one(base: str, path: str, body: dict[str, object]) -> tuple[float, float, int]:
        async with httpx.AsyncClient(timeout=300) as client:
            ttft, stamps = await _stream(client, base + path, body)
        speed = (len(stamps) - 1) / (stamps[-1] - stamps[0]) if len(stamps) > 1 else float("nan")
        return ttft, speed, len(stamps)

    with textgen(threads, 1, 2048) as ours, llama_server(threads, 2048) as theirs:
        for base, path, body in ((ours, "/responses", _ours(8)), (theirs, "/chat/completions", _theirs(8))):
            asyncio.run(one(base, path, body))  # warm-up
        for _ in range(rounds):
            results["textgen"].append(asyncio.run(one(ours, "/responses", _ours(tokens))))
            results["llama_cpp.server"].append(asyncio.run(one(theirs, "/chat/completions", _theirs(tokens))))
    print(f"streamed answer, {tokens} tokens max, n_threads={threads}, median of {rounds}")
    print(f"{'server':<18}{'TTFT ms':>10}{'decode tok/s':>14}{'deltas':>8}")
    medians = {}
    for name, rows in results.items():
        ttft = statistics.median(r[0] for r in rows)
        speed = statistics.median(r[1] for r in rows)
        medians[name] = (ttft, speed)
        print(f"{name:<18}{ttft * 1000:>10.1f}{speed:>14.1f}{statistics.median(r[2] for r in rows):>8.0f}")
    (t_ours, s_ours), (t_theirs, s_theirs) = medians["textgen"], medians["llama_cpp.server"]
    print(f"decode ours/theirs {s_ours / s_theirs:.2f} (goal >= 0.90); TTFT ours/theirs {t_ours / t_theirs:.2f} "
          "(goal <= 1.5)")


def prefix(length: int, rounds: int) -> None:
    """Second request of a pair sharing a ``length``-token prefix, with and without the cached state."""
    (backend,) = load_backends()
    assert isinstance(backend, LlamaCppBackend)
    rules: list[str] = []
    while backend.count_tokens(" ".join(rules)) < length:
        rules.append(f"Rule {len(rules)}: reply briefly and politely.")
    instructions = " ".join(rules)

    def request(question: str) -> GenerationRequest:
        return GenerationRequest([ChatMessage("system", instructions), ChatMessage("user", question)], 4,
                                 temperature=0)

    async def timed(r: GenerationRequest) -> tuple[float, Finish]:
        start = time.perf_counter()
        finish = [d async for d in backend.generate(r)][-1]
        assert isinstance(finish, Finish)
        return time.perf_counter() - start, finish

    cached, cold = [], []
    finish = None
    for i in range(rounds):
        asyncio.run(timed(request(f"First question {i}?")))
        seconds, finish = asyncio.run(timed(request(f"Second question {i}?")))
        cached.append(seconds)
        asyncio.run(timed(GenerationRequest([ChatMessage("user", f"Unrelated {i}.")], 1, temperature=0)))
        cold.append(asyncio.run(timed(request(f"Second question {i}?")))[0])
    assert finish is not None
    print(f"second request, {finish.input_tokens} prompt tokens of which {finish.cached_tokens} cached, "
          f"4 output tokens, median of {rounds}")
    print(f"no cache {statistics.median(cold) * 1000:.1f} ms, prefix cache {statistics.median(cached) * 1000:.1f} ms,"
          f" speed-up {statistics.median(cold) / statistics.median(cached):.1f}x")


def concurrent(streams: int, tokens: int, threads: int) -> None:
    """``streams`` streamed requests at once: total tok/s and p99 TTFT, one context vs two."""
    print(f"{streams} concurrent streamed requests, {tokens} tokens max each, n_threads={threads}")
    print(f"{'contexts':<10}{'total tok/s':>12}{'p99 TTFT ms':>13}{'median TTFT ms':>16}")
    for contexts in (1, 2):
        with textgen(threads, contexts, 2048) as base:
            async def run(base: str = base) -> tuple[float, list[float], int]:
                async with httpx.AsyncClient(timeout=600) as client:
                    await _stream(client, base + "/responses", _ours(4))  # warm-up
                    start = time.perf_counter()
                    done = await asyncio.gather(*(_stream(client, base + "/responses",
                                                          {**_ours(tokens), "input": f"{PROMPT} ({i})"})
                                                  for i in range(streams)))
                    elapsed = time.perf_counter() - start
                return elapsed, [d[0] for d in done], sum(len(d[1]) for d in done)

            elapsed, ttfts, total = asyncio.run(run())
            ttfts.sort()
            p99 = ttfts[min(len(ttfts) - 1, int(0.99 * len(ttfts)))]
            print(f"{contexts:<10}{total / elapsed:>12.1f}{p99 * 1000:>13.1f}{statistics.median(ttfts) * 1000:>16.1f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=["peer", "prefix", "concurrent", "all"], default="all")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--threads", type=int, default=max(1, (os.cpu_count() or 2) // 2))  # llama-cpp-python's default
    parser.add_argument("--prefix", type=int, default=2000)
    parser.add_argument("--streams", type=int, default=8)
    args = parser.parse_args(argv)
    if args.part in ("peer", "all"):
        peer(args.rounds, args.tokens, args.threads)
    if args.part in ("prefix", "all"):
        prefix(args.prefix, args.rounds)
    if args.part in ("concurrent", "all"):
        concurrent(args.streams, 64, args.threads)


if __name__ == "__main__":
    main()
