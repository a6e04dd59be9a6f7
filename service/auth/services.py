"""Credential lookup and the token, session and API-key life cycles."""

from __future__ import annotations

import datetime as dt
import secrets
import time

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from service.auth.identity import (
    AuthMethod,
    Identity,
    digest,
    hash_password,
    new_secret,
    verify_password,
)
from service.db import Database
from service.db.models import ApiKey, AuthToken, User, UserSession, utcnow
from service.errors import AuthenticationRequired, NotFoundError, ValidationError

__all__ = [
    "IdentityCache",
    "authenticate",
    "create_api_key",
    "create_session",
    "create_token",
    "create_user",
    "delete_api_key",
    "delete_session",
    "delete_token",
    "identify",
    "list_api_keys",
]

TOKEN_PREFIX = "qct_"
API_KEY_PREFIX = "qck_"
SESSION_PREFIX = "qcs_"


class IdentityCache:
    """Recently verified credentials (by SHA-256) -> identity, for ``ttl`` seconds.

    Saves a database round trip per request. Revoking a credential clears this
    process's cache at once; other workers notice within ``ttl`` seconds (set
    ``QC_AUTH_CACHE_SECONDS=0`` to disable caching).
    """

    def __init__(self, ttl: float, max_size: int = 10_000) -> None:
        self.ttl = ttl
        self.max_size = max_size
        self._items: dict[str, tuple[float, Identity]] = {}

    def get(self, key: str) -> Identity | None:
        item = self._items.get(key)
        if item is None:
            return None
        if time.monotonic() - item[0] > self.ttl:
            self._items.pop(key, None)
            return None
        return item[1]

    def put(self, key: str, identity: Identity) -> None:
        if self.ttl <= 0:
            return
        if len(self._items) >= self.max_size:
            self._items.clear()
        self._items[key] = (time.monotonic(), identity)

    def clear(self) -> None:
        self._items.clear()


async def identify(
    db: Database,
    *,
    token: str | None,
    api_key: str | None,
    session_key: str | None,
    cache: IdentityCache | None = None,
) -> Identity | None:
    """The identity behind the presented credentials, ``None`` if none were presented.

    Raises:
        AuthenticationRequired: when a credential is presented but is not valid.
    """
    if token is None and api_key is None and session_key is None:
        return None
    secret = token if token is not None else api_key if api_key is not None else session_key
    key = (
        f"{'t' if token is not None else 'k' if api_key is not None else 's'}{digest(secret or '')}"
    )
    if cache is not None and (hit := cache.get(key)) is not None:
        return hit
    identity = await _lookup(db, token=token, api_key=api_key, session_key=session_key)
    if cache is not None and identity is not None:
        cache.put(key, identity)
    return identity


async def _lookup(
    db: Database, *, token: str | None, api_key: str | None, session_key: str | None
) -> Identity | None:
    async with db.read() as s:
        if token is not None:
            row = (
                await s.execute(
                    select(User.id, User.username, AuthToken.id)
                    .join(AuthToken, AuthToken.user_id == User.id)
                    .where(AuthToken.key_hash == digest(token), User.is_active.is_(True))
                )
            ).first()
            if row is None:
                raise AuthenticationRequired("Invalid token.")
            return Identity(row[0], row[1], AuthMethod.TOKEN, row[2])
        if api_key is not None:
            row = (
                await s.execute(
                    select(User.id, User.username, ApiKey.id)
                    .join(ApiKey, ApiKey.user_id == User.id)
                    .where(ApiKey.key_hash == digest(api_key), User.is_active.is_(True))
                )
            ).first()
            if row is None:
                raise AuthenticationRequired("Invalid API key.")
            return Identity(row[0], row[1], AuthMethod.API_KEY, row[2])
        srow = (
            await s.execute(
                select(User.id, User.username, UserSession.id, UserSession.csrf_token)
                .join(UserSession, UserSession.user_id == User.id)
                .where(
                    UserSession.key_hash == digest(session_key or ""),
                    UserSession.expires_at > utcnow(),
                    User.is_active.is_(True),
                )
            )
        ).first()
        if srow is None:
            return None  # an expired or unknown cookie is just anonymous
        return Identity(srow[0], srow[1], AuthMethod.SESSION, srow[2], srow[3])


async def create_user(db: Database, username: str, password: str) -> User:
    """Create a user with an Argon2id password hash.

    Raises:
        ValidationError: ``username`` taken or empty, ``password`` shorter than 8.
    """
    if not username or len(username) > 150:
        raise ValidationError("username", "invalid", "Username must have 1 to 150 characters.")
    if len(password) < 8:
        raise ValidationError("password", "min_length", "Password must have at least 8 characters.")
    user = User(username=username, password_hash=hash_password(password))
    try:
        async with db.write() as s:
            s.add(user)
    except IntegrityError:
        raise ValidationError("username", "unique", f"User {username!r} already exists.") from None
    return user


async def authenticate(db: Database, username: str, password: str) -> User:
    """The user whose password matches, or 400 ``invalid_credentials`` (no hint which part)."""
    async with db.read() as s:
        user = (await s.execute(select(User).where(User.username == username))).scalar_one_or_none()
    if (
        not verify_password(user.password_hash if user and user.is_active else None, password)
        or user is None
    ):
        raise AuthenticationRequired("Invalid username or password.")
    return user


async def create_token(db: Database, user_id: int) -> str:
    """A new API token for the user; the plain key is returned once."""
    key = new_secret(TOKEN_PREFIX)
    async with db.write() as s:
        s.add(AuthToken(user_id=user_id, key_hash=digest(key), prefix=key[:12]))
    return key


async def delete_token(db: Database, token_id: int) -> None:
    async with db.write() as s:
        await s.execute(delete(AuthToken).where(AuthToken.id == token_id))


async def create_session(db: Database, user_id: int, ttl: int) -> tuple[str, str]:
    """A new browser session; returns (cookie key, CSRF token)."""
    key, csrf = new_secret(SESSION_PREFIX), secrets.token_urlsafe(32)
    async with db.write() as s:
        s.add(
            UserSession(
                user_id=user_id,
                key_hash=digest(key),
                csrf_token=csrf,
                expires_at=utcnow() + dt.timedelta(seconds=ttl),
            )
        )
    return key, csrf


async def delete_session(db: Database, session_id: int) -> None:
    async with db.write() as s:
        await s.execute(delete(UserSession).where(UserSession.id == session_id))


async def create_api_key(db: Database, user_id: int, name: str) -> tuple[ApiKey, str]:
    """A new API key (row and plain key, shown once)."""
    key = new_secret(API_KEY_PREFIX)
    row = ApiKey(user_id=user_id, name=name, key_hash=digest(key), prefix=key[:12])
    async with db.write() as s:
        s.add(row)
    return row, key


async def list_api_keys(
    session: AsyncSession, user_id: int, limit: int, offset: int
) -> tuple[list[ApiKey], int]:
    from sqlalchemy import func

    base = select(ApiKey).where(ApiKey.user_id == user_id)
    count = (await session.execute(select(func.count()).select_from(base.subquery()))).scalar_one()
    rows = (
        (await session.execute(base.order_by(ApiKey.id).limit(limit).offset(offset)))
        .scalars()
        .all()
    )
    return list(rows), int(count)


async def delete_api_key(db: Database, user_id: int, key_id: int) -> None:
    """Revoke one of the user's keys; another user's id is a 404."""
    async with db.write() as s:
        result = await s.execute(
            delete(ApiKey).where(ApiKey.id == key_id, ApiKey.user_id == user_id)
        )
        if result.rowcount == 0:  # type: ignore[attr-defined]
            raise NotFoundError(f"API key {key_id} not found.")
