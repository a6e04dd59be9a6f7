"""Running the app under uvicorn so that SIGTERM drains it: stop taking work at once, exit within 10 s.

On SIGTERM (or Ctrl-C) uvicorn stops accepting connections; :class:`DrainingServer` also tells the
:class:`~textgen.runs.Runner` at that moment, so no new generation starts and no orphaned response is
claimed, and every background generation stops, records its events and releases its lease for the
next instance (it is not cancelled). Open connections (a streamed answer, a replay that follows a
response) get :data:`GRACE_SECONDS` to finish; then the lifespan shutdown waits at most 5 s more.
"""

from __future__ import annotations

from types import FrameType
from typing import Any

import uvicorn
from litestar import Litestar

__all__ = ["GRACE_SECONDS", "DrainingServer", "serve"]

GRACE_SECONDS = 3


class DrainingServer(uvicorn.Server):
    """A uvicorn server whose exit signal drains the app's runner first."""

    def __init__(self, config: uvicorn.Config, app: Litestar) -> None:
        super().__init__(config)
        self.textgen_app = app

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        services = getattr(self.textgen_app.state, "services", None)
        if services is not None:
            services.runner.drain()
        super().handle_exit(sig, frame)


def serve(app: Litestar, host: str, port: int, log_level: str = "info", **options: Any) -> None:
    """Serve ``app`` until SIGTERM/SIGINT, then drain it (see the module docstring)."""
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level,
                            timeout_graceful_shutdown=GRACE_SECONDS, **options)
    DrainingServer(config, app).run()
