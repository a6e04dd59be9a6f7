"""Runs the app under uvicorn with the n-gram test double plus the test backends (echo, broken, thinking).

Usage: ``python serve_for_tests.py PORT DATA_DIR API_KEY`` (started by ``conftest.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import uvicorn

sys.path.insert(0, str(Path(__file__).parent))

from fake_backends import BrokenBackend, EchoBackend, ThinkingBackend

from textgen.app import create_app
from textgen.backends.builtin import NgramBackend
from textgen.settings import Settings

MAX_FILE_BYTES = 100_000

if __name__ == "__main__":
    port, data_dir, key = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    settings = Settings(data_dir=data_dir, api_keys=(key,), max_file_bytes=MAX_FILE_BYTES,
                        rate_limit_per_minute=0)
    app = create_app(settings, backends=[NgramBackend(), EchoBackend(), BrokenBackend(), ThinkingBackend()])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
