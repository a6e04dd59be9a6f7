"""Backends injected into the test server (the way httpx injects a transport)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from textgen.backends.base import (
    Delta,
    Finish,
    GenerationRequest,
    ModelInfo,
    ReasoningDelta,
    TextDelta,
)
from textgen.backends.tokenizer import count_tokens

__all__ = ["BrokenBackend", "EchoBackend", "SlowBackend", "ThinkingBackend"]


class EchoBackend:
    """Answers with its context, one ``role: text`` line per entry, so tests can read it."""

    info = ModelInfo(id="echo-test", context_window=4096, max_output_tokens=4096)

    def count_tokens(self, text: str) -> int:
        return count_tokens(text)

    def validate(self, request: GenerationRequest) -> None:
        return None

    async def generate(self, request: GenerationRequest) -> AsyncIterator[Delta]:
        lines = [f"{m.role}: {m.text}" for m in request.messages]
        for i, line in enumerate(lines):
            yield TextDelta(("\n" if i else "") + line)
        yield Finish("stop", sum(count_tokens(line) for line in lines))


class BrokenBackend(EchoBackend):
    """Fails after its first delta: the server must answer 500 / ``response.failed``."""

    info = ModelInfo(id="broken-test", context_window=4096, max_output_tokens=4096)

    async def generate(self, request: GenerationRequest) -> AsyncIterator[Delta]:
        yield TextDelta("partial")
        raise RuntimeError("simulated backend failure")


class SlowBackend(EchoBackend):
    """Says ``word<i>`` once every 20 ms up to ``max_output_tokens``: long enough to cancel or disconnect.

    It continues a ``continuation`` (a resumed response) from the word after its last one.
    """

    info = ModelInfo(id="slow-test", context_window=4096, max_output_tokens=4096, continues=True)

    async def generate(self, request: GenerationRequest) -> AsyncIterator[Delta]:
        start = request.continuation.count(" word")
        for i in range(start, start + request.max_output_tokens):
            await asyncio.sleep(0.02)
            yield TextDelta(f" word{i}")
        yield Finish("length", request.max_output_tokens)


class ThinkingBackend(EchoBackend):
    """Reasons first (a reasoning item), then answers with its context like the echo backend."""

    info = ModelInfo(id="thinking-test", context_window=4096, max_output_tokens=4096)

    async def generate(self, request: GenerationRequest) -> AsyncIterator[Delta]:
        yield ReasoningDelta("private chain of thought")
        async for delta in super().generate(request):
            yield delta
