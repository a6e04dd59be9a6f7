"""``python -m service serve|migrate|createuser|token|import-prices``."""

from service.cli import main

__all__: list[str] = []

if __name__ == "__main__":
    raise SystemExit(main())
