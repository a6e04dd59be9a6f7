"""Who is calling, and the secrets that say so.

Every secret (token, API key, session key) is 32 random bytes, URL-safe encoded,
and only its SHA-256 is stored: a database leak gives nothing that authenticates.
A slow KDF is not needed for 256-bit random secrets; passwords use Argon2id.
"""

from __future__ import annotations

import hashlib
import secrets
from enum import StrEnum

import msgspec
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

__all__ = [
    "AuthMethod",
    "Identity",
    "digest",
    "hash_password",
    "new_secret",
    "verify_password",
]

_hasher = PasswordHasher()  # Argon2id, RFC 9106 low-memory profile
# A real hash to verify against when the user does not exist (equal timing).
_DUMMY_HASH = _hasher.hash("not-a-password")


class AuthMethod(StrEnum):
    TOKEN = "token"
    SESSION = "session"
    API_KEY = "api_key"


class Identity(msgspec.Struct, frozen=True):
    """The authenticated user of a request (``request.user``)."""

    id: int
    username: str
    method: AuthMethod
    credential_id: int
    csrf_token: str = ""
    scopes: frozenset[str] = frozenset()  # API keys only (see ``SCOPES``)

    def may_manage_credentials(self) -> bool:
        """Tokens and sessions may; an API key only with the ``credentials`` scope."""
        return self.method is not AuthMethod.API_KEY or "credentials" in self.scopes


def new_secret(prefix: str) -> str:
    """A fresh secret such as ``qct_...`` (the prefix tells what it is)."""
    return f"{prefix}{secrets.token_urlsafe(32)}"


def digest(secret: str) -> str:
    """Hex SHA-256 of a secret, as stored."""
    return hashlib.sha256(secret.encode()).hexdigest()


def hash_password(password: str) -> str:
    """Argon2id hash of ``password``."""
    return _hasher.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    """Constant-work check of ``password``; ``None`` hash (unknown user) is always false."""
    try:
        return _hasher.verify(password_hash or _DUMMY_HASH, password) and password_hash is not None
    except (VerificationError, InvalidHashError):
        return False
