"""Prompt caching of the ``transformers`` backend: a repeated long prefix is computed once.

    python benchmarks/textgen_prompt_cache.py                    # 2000-token prefix, 4 x 256 GPT-2
    python benchmarks/textgen_prompt_cache.py --prefix 500 --layers 2

Builds a random-weight GPT-2 (nothing downloaded; :func:`build_tiny_model`) and
sends pairs of requests that share a long instructions prefix and differ in
the last user message, as in a chat with fixed instructions. The second of
each pair reuses the first one's key/value cache for the shared prefix; the
same second request on a backend with the cache disabled is the baseline.
Each request generates a few tokens, so the time is mostly the prompt's
forward pass. Reported: median seconds, the ratio uncached / cached, and
``cached_tokens``. Nothing is asserted: the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time

from textgen.backends.base import ChatMessage, Finish, GenerationRequest, ModelInfo
from textgen.backends.transformers_backend import TransformersBackend, build_tiny_model

__all__ = ["main", "measure"]

CORPUS = ["Markets opened higher as rain moved across the coast; bakers sold bread and soup."] * 30


def _request(prefix: str, question: str, tokens: int) -> GenerationRequest:
    return GenerationRequest(messages=[ChatMessage("system", prefix), ChatMessage("user", question)],
                             max_output_tokens=tokens, temperature=0)


def _timed(backend: TransformersBackend, request: GenerationRequest) -> tuple[float, Finish]:
    async def run() -> Finish:
        last = None
        async for delta in backend.generate(request):
            last = delta
        assert isinstance(last, Finish)
        return last

    start = time.perf_counter()
    finish = asyncio.run(run())
    return time.perf_counter() - start, finish


def measure(prefix_tokens: int, layers: int, embd: int, repeats: int, output_tokens: int) -> dict[str, float]:
    """Median seconds of the second request with and without the prompt cache."""
    with tempfile.TemporaryDirectory() as path:
        build_tiny_model(path, CORPUS, n_layer=layers, n_embd=embd, n_positions=prefix_tokens + 512)
        info = ModelInfo(id="bench", context_window=prefix_tokens + 512, max_output_tokens=64)
        cached = TransformersBackend(path, info, prompt_cache_size=4)
        plain = TransformersBackend(path, info, prompt_cache_size=0)
        unit = "Markets opened higher as rain moved. "
        prefix = unit * max(1, prefix_tokens // cached.count_tokens(unit))
        _timed(cached, _request(prefix, "warm up", 1))  # first call: allocator and kernels warm
        _timed(plain, _request(prefix, "warm up", 1))
        hits, misses, reused, prompt = [], [], 0, 0
        for i in range(repeats):
            variant = f"Variant {i}. " + prefix  # a fresh prefix each round: no carry-over between rounds
            _timed(cached, _request(variant, "What happened to the markets?", output_tokens))
            second = _request(variant, "And what did the bakers sell?", output_tokens)
            t_hit, finish = _timed(cached, second)
            t_miss, _ = _timed(plain, second)
            hits.append(t_hit)
            misses.append(t_miss)
            reused, prompt = finish.cached_tokens, finish.input_tokens or 0
        cached.close()
        plain.close()
    hit, miss = statistics.median(hits), statistics.median(misses)
    return {"prompt_tokens": prompt, "cached_tokens": reused, "uncached_s": miss, "cached_s": hit,
            "ratio": miss / hit}


def main(argv: list[str] | None = None) -> int:
    """Run the measurement and print one line per setting."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prefix", type=int, default=2000, help="shared prefix length in tokens")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--embd", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--output-tokens", type=int, default=4)
    args = parser.parse_args(argv)
    r = measure(args.prefix, args.layers, args.embd, args.repeats, args.output_tokens)
    print(f"GPT-2 {args.layers} layers x {args.embd}, prompt {r['prompt_tokens']} tokens "
          f"({r['cached_tokens']} cached), {args.output_tokens} output tokens, median of {args.repeats}")
    print(f"second request, no prompt cache : {r['uncached_s'] * 1e3:8.1f} ms")
    print(f"second request, prompt cache    : {r['cached_s'] * 1e3:8.1f} ms")
    print(f"speed-up (uncached / cached)    : {r['ratio']:8.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
