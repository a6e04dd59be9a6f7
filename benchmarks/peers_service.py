"""Finance service vs a bare Litestar app on the same uvicorn settings (see service_load.py).

``ours`` sends a fixed batch of keep-alive requests to a service endpoint, ``peer``
the same batch to the bare constant endpoint; the ratio ``peer / ours`` is the
fraction of the bare app's throughput the endpoint reaches (goal: 50 % for the
asset detail, 25 % for the portfolio list). The servers start once per run
(~10-30 s), so these cases are left out of ``--quick`` runs.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from _harness import Case

__all__ = ["CASES"]

_BATCH = 400
_CONNECTIONS = 16


@functools.cache
def _servers() -> Any:
    from service_load import Servers

    return Servers()


async def _batch(port: int, path: str, headers: dict[str, str] | None = None) -> None:
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}\r\n".encode()
    per = _BATCH // _CONNECTIONS

    async def one() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for _ in range(per):
                writer.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line[15:])
                    for line in head.split(b"\r\n")
                    if line[:15].lower() == b"content-length:"
                )
                await reader.readexactly(length)
        finally:
            writer.close()

    await asyncio.gather(*(one() for _ in range(_CONNECTIONS)))


def _setup(quick: bool) -> Any:
    return _servers()


def _bare(s: Any) -> None:
    asyncio.run(_batch(s.bare_port, "/api/const/"))


def _asset(s: Any) -> None:
    asyncio.run(_batch(s.port, f"/api/assets/{s.asset_id}/"))


def _portfolios(s: Any) -> None:
    asyncio.run(_batch(s.port, "/api/portfolios/", {"Authorization": f"Token {s.token}"}))


CASES = [
    Case(
        name="service: GET /api/assets/{id}/ (400 req, 16 conn)",
        setup=_setup,
        ours=_asset,
        peer=_bare,
        peer_name="bare Litestar const",
        goal=0.5,
        goal_text=">= 50% of bare req/s",
        quick=False,
    ),
    Case(
        name="service: GET /api/portfolios/ 20x10 (400 req)",
        setup=_setup,
        ours=_portfolios,
        peer=_bare,
        peer_name="bare Litestar const",
        goal=0.25,
        goal_text=">= 25% of bare req/s",
        quick=False,
    ),
]
