"""The textgen store's migration scripts, in order (``0001``, ``0002``, ...)."""

__all__: list[str] = []
