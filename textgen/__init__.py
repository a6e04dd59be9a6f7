"""Text generation: a Responses-API server in front of pluggable model backends."""

from textgen.app import create_app
from textgen.settings import Settings

__all__ = ["Settings", "create_app"]
