"""Liveness (``/health``) and readiness (``/ready``: database and Redis answer)."""

from __future__ import annotations

from litestar import Response, get
from litestar.di import NamedDependency

from service.state import Resources

__all__ = ["health", "ready"]


@get("/health", summary="Liveness", tags=["health"], sync_to_thread=False)
def health() -> dict[str, str]:
    return {"status": "ok"}


@get("/ready", summary="Readiness: database and Redis reachable", tags=["health"])
async def ready(resources: NamedDependency[Resources]) -> Response[dict[str, str]]:
    checks: dict[str, str] = {}
    try:
        await resources.db.ping()
        checks["database"] = "ok"
    except Exception as exc:  # report, never raise: this is a probe
        checks["database"] = f"error: {type(exc).__name__}"
    if resources.limiter.shared:
        try:
            await resources.limiter.ping()
            checks["redis"] = "ok"
        except Exception as exc:
            checks["redis"] = f"error: {type(exc).__name__}"
    ok = all(v == "ok" for v in checks.values())
    return Response(
        {"status": "ok" if ok else "unavailable", **checks}, status_code=200 if ok else 503
    )
