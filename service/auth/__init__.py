"""Authentication: API tokens, browser sessions (cookie + CSRF) and API keys."""

from service.auth.guards import requires_user
from service.auth.identity import AuthMethod, Identity

__all__ = ["AuthMethod", "Identity", "requires_user"]
