"""Real-time prices: the ``/ws/realtime/`` channel, the price feed and its endpoints (docs/realtime.md)."""

__all__: list[str] = []
