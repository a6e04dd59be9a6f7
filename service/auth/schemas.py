"""Wire shapes of ``/api/auth/``."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import msgspec

__all__ = [
    "ApiKeyCreate",
    "ApiKeyCreated",
    "ApiKeyRead",
    "Credentials",
    "LoginRead",
    "MeRead",
    "TokenRead",
]


class Credentials(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    username: Annotated[str, msgspec.Meta(min_length=1, max_length=150)]
    password: Annotated[str, msgspec.Meta(min_length=1, max_length=1024)]


class TokenRead(msgspec.Struct, kw_only=True):
    token: str


class LoginRead(msgspec.Struct, kw_only=True):
    username: str
    csrf_token: str


class MeRead(msgspec.Struct, kw_only=True):
    id: int
    username: str
    auth_method: str


class ApiKeyCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=100)]


class ApiKeyRead(msgspec.Struct, kw_only=True):
    id: int
    name: str
    prefix: str
    created_at: dt.datetime


class ApiKeyCreated(ApiKeyRead, kw_only=True):
    key: str  # shown once
