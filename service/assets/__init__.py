"""Assets, quotes, price history and bulk prices (``/api/assets/``)."""
