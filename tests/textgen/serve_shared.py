"""Runs one server instance for the lifecycle tests (several may share one database).

Usage: ``python serve_shared.py PORT DATA_DIR API_KEY``; other settings come from
``TEXTGEN_*`` variables (``TEXTGEN_DATABASE_URL``, ``TEXTGEN_REDIS_URL``, ...).
Serves the n-gram model and the test backends, including the slow one.
"""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).parent))

from fake_backends import BrokenBackend, EchoBackend, SlowBackend

from textgen.app import create_app
from textgen.backends.builtin import NgramBackend
from textgen.serving import serve
from textgen.settings import Settings

if __name__ == "__main__":
    port, data_dir, key = sys.argv[1:4]
    settings = msgspec.structs.replace(Settings.from_env(), data_dir=data_dir, api_keys=(key,))
    app = create_app(settings, backends=[NgramBackend(), EchoBackend(), BrokenBackend(), SlowBackend()])
    serve(app, "127.0.0.1", int(port), "warning")
