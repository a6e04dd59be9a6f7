"""Latency of non-streamed ``responses.create`` over HTTP, stored vs not: the cost of the lifecycle rows.

Run: ``.venv/bin/python benchmarks/textgen_store_latency.py``. It starts
``tests/textgen/serve_shared.py`` (the n-gram model, SQLite in a temporary data
dir) and makes 50 SDK calls each way with ``max_output_tokens=64``, side by side.
Prints medians and p90s; asserts nothing.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import openai

SERVER = Path(__file__).parent.parent / "tests" / "textgen" / "serve_shared.py"
CALLS = 50


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEXTGEN_")}
    env["TEXTGEN_RATE_LIMIT_PER_MINUTE"] = "0"
    proc = subprocess.Popen([sys.executable, str(SERVER), str(port), tempfile.mkdtemp(), "k"], env=env)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(600):
            try:
                if httpx.get(f"{base}/models", headers={"Authorization": "Bearer k"}).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        client = openai.OpenAI(base_url=base, api_key="k", max_retries=0)
        for store in (True, False):
            times = []
            for seed in range(CALLS):
                start = time.perf_counter()
                client.responses.create(model="textgen-ngram", input="Tell me about the harbor.",
                                        max_output_tokens=64, store=store, extra_body={"seed": seed})
                times.append(time.perf_counter() - start)
            times.sort()
            print(f"store={store}: median {statistics.median(times) * 1000:.0f} ms, "
                  f"p90 {times[int(0.9 * CALLS) - 1] * 1000:.0f} ms")
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()
