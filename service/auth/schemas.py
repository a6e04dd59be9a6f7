"""Wire shapes of ``/api/auth/``."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

import msgspec

__all__ = [
    "ApiKeyCreate",
    "ApiKeyCreated",
    "ApiKeyRead",
    "Credentials",
    "LoginRead",
    "MeRead",
    "PasswordChange",
    "TokenInfo",
    "TokenRead",
]

Password = Annotated[str, msgspec.Meta(min_length=1, max_length=1024)]


class Credentials(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    username: Annotated[str, msgspec.Meta(min_length=1, max_length=150)]
    password: Annotated[str, msgspec.Meta(min_length=1, max_length=1024)]


class TokenRead(msgspec.Struct, kw_only=True):
    token: str
    expires_at: dt.datetime | None = None  # None: never (QC_TOKEN_TTL=0)


class TokenInfo(msgspec.Struct, kw_only=True):
    """A token as listed (never the key itself)."""

    id: int
    prefix: str
    created_at: dt.datetime
    expires_at: dt.datetime | None
    current: bool  # the token of this request


class PasswordChange(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    current_password: Password
    new_password: Password


class LoginRead(msgspec.Struct, kw_only=True):
    username: str
    csrf_token: str


class MeRead(msgspec.Struct, kw_only=True):
    id: int
    username: str
    auth_method: str


class ApiKeyCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=100)]
    # "credentials": the key may create API keys and tokens and change the password
    scopes: Annotated[list[Literal["credentials"]], msgspec.Meta(max_length=1)] = []


class ApiKeyRead(msgspec.Struct, kw_only=True):
    id: int
    name: str
    prefix: str
    created_at: dt.datetime
    scopes: list[str] = []


class ApiKeyCreated(ApiKeyRead, kw_only=True):
    key: str  # shown once
