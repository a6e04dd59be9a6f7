"""How often the default model answers the README's question right, at its recommended sampling
settings and at 1.0 (the server's former default): ``python benchmarks/textgen_sampling_defaults.py [N]``.

Runs the real app in-process (Litestar's test client) on SmolLM2-135M-Instruct, seeds 0..N-1.
"""

from __future__ import annotations

import sys
import tempfile

from litestar.testing import TestClient

from textgen.app import create_app
from textgen.settings import Settings

QUESTION = "What is the capital of Germany?"


def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as data, TestClient(create_app(Settings(
            data_dir=data, api_keys=("k",), rate_limit_per_minute=0))) as http:
        http.headers["Authorization"] = "Bearer k"
        for label, extra in (("recommended (no temperature/top_p)", {}), ("temperature 1.0, top_p 1.0",
                                                                          {"temperature": 1.0, "top_p": 1.0})):
            right = 0
            for seed in range(n):
                r = http.post("/v1/responses", json={"model": "smollm2-135m-instruct", "input": QUESTION,
                                                     "max_output_tokens": 32, "seed": seed, **extra}).json()
                text = "".join(p["text"] for o in r["output"] if o["type"] == "message" for p in o["content"])
                right += "Berlin" in text
            print(f"{label}: {right}/{n} answers name Berlin")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
