"""Sealed reasoning: ``include: ["reasoning.encrypted_content"]`` returns a reasoning item's text as
an authenticated, encrypted blob (Fernet: AES-128-CBC with an HMAC-SHA256 tag) that only this
server's key opens, so a ``store: false`` client can send the item back without the server keeping it.

The key comes from ``TEXTGEN_SECRET_KEY`` (a Fernet key; every instance of one deployment needs
the same one) or, when unset, from ``<data_dir>/secret.key``, created on first start with mode 0600.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec
from cryptography.fernet import Fernet, InvalidToken

__all__ = ["Sealer", "load_key"]


def load_key(secret_key: str, data_dir: str) -> bytes:
    """The configured key, or the one kept under ``data_dir`` (created once)."""
    if secret_key:
        return secret_key.encode()
    path = Path(data_dir) / "secret.key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(Fernet.generate_key())
    return path.read_bytes().strip()


class Sealer:
    """Seals and opens JSON values with one key.

    Raises:
        ValueError: The key is not a valid Fernet key (32 url-safe base64-encoded bytes).
    """

    def __init__(self, key: bytes) -> None:
        self._fernet = Fernet(key)

    def seal(self, value: Any) -> str:
        """An opaque string holding ``value``."""
        return self._fernet.encrypt(msgspec.json.encode(value)).decode()

    def open(self, blob: str) -> Any:
        """The value inside ``blob``.

        Raises:
            ValueError: ``blob`` was not sealed with this key or was altered.
        """
        try:
            return msgspec.json.decode(self._fernet.decrypt(blob.encode()))
        except (InvalidToken, msgspec.DecodeError, ValueError) as exc:
            raise ValueError("not sealed by this server, or altered") from exc
