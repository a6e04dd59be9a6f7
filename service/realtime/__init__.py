"""Real-time prices: the ``/ws/realtime/`` channel, the price feed and its endpoints."""
