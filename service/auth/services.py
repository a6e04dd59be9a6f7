"""Credential lookup and the token, session and API-key life cycles."""

from __future__ import annotations

import datetime as dt
import functools
import secrets
import unicodedata
from importlib import resources

from sqlalchemy import delete, func, or_, select, update
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
from service.db.models import ApiKey, AuthToken, User, UserSession, username_key, utcnow
from service.errors import AuthenticationRequired, NotFoundError, ValidationError
from service.identity_cache import IdentityCache

__all__ = [
    "SCOPES",
    "authenticate",
    "change_password",
    "check_password",
    "create_api_key",
    "create_session",
    "create_token",
    "create_user",
    "delete_api_key",
    "delete_session",
    "delete_token",
    "delete_user_token",
    "identify",
    "issue_token",
    "list_api_keys",
    "list_tokens",
    "live_credentials",
    "normalize_username",
]

TOKEN_PREFIX = "qct_"
API_KEY_PREFIX = "qck_"
SESSION_PREFIX = "qcs_"
#: What an API key may be allowed beyond reading and writing the user's data.
SCOPES = frozenset({"credentials"})  # create API keys and tokens, change the password


def _nfkc(text: str) -> str:
    """Unicode compatibility form: full-width ``ｂｏｂ`` is ``bob``, ``ﬁ`` is ``fi``."""
    return unicodedata.normalize("NFKC", text)


def normalize_username(username: str) -> str:
    """The username as stored: NFKC-normalized, surrounding whitespace removed (case kept,
    compared case-insensitively), so ``ｂｏｂ`` and ``Bob`` are the user ``bob``.

    Raises:
        ValidationError: empty after trimming, longer than 150, or holding control characters.
    """
    name = _nfkc(username).strip()
    if not name or len(name) > 150:
        raise ValidationError("username", "invalid", "Username must have 1 to 150 characters.")
    if any(unicodedata.category(c).startswith("C") for c in name):
        raise ValidationError(
            "username", "invalid_characters", "Username must not contain control characters."
        )
    return name


@functools.cache
def _common_passwords() -> frozenset[str]:
    text = resources.files("service.auth").joinpath("common_passwords.txt").read_text("utf-8")
    return frozenset(
        line.casefold() for line in text.splitlines() if line and not line.startswith("#")
    )


def check_password(password: str, username: str = "", field: str = "password") -> None:
    """Refuse a weak password (NIST SP 800-63B, section 5.1.1.2: length and a blocklist).

    Raises:
        ValidationError: ``min_length`` (under 8), ``blank`` (whitespace only),
            ``too_common`` (in the blocklist, compared case-insensitively) or
            ``similar_to_username`` (is or contains the username, NFKC, any case).
    """
    if len(password) < 8:
        raise ValidationError(field, "min_length", "Password must have at least 8 characters.")
    if not password.strip():
        raise ValidationError(field, "blank", "Password must not be whitespace only.")
    folded = password.casefold()
    if folded in _common_passwords():
        raise ValidationError(field, "too_common", "This password is too common; choose another.")
    name = username_key(username)
    plain = username_key(password)
    if name and (plain == name or (len(name) >= _NAME_IN_PASSWORD and name in plain)):
        raise ValidationError(
            field, "similar_to_username", "Password must not contain the username."
        )


#: A username at least this long may not appear anywhere in the password (a shorter
#: one only may not be the whole password: ``"al"`` would rule out ``"totally..."``).
_NAME_IN_PASSWORD = 3


def _username_matches(username: str):  # type: ignore[no-untyped-def]
    return User.username_key == username_key(username)


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
    if cache is None:
        return await _lookup(db, token=token, api_key=api_key, session_key=session_key)
    return await cache.load(
        key, lambda: _lookup(db, token=token, api_key=api_key, session_key=session_key)
    )


async def _lookup(
    db: Database, *, token: str | None, api_key: str | None, session_key: str | None
) -> Identity | None:
    async with db.read() as s:
        if token is not None:
            row = (
                await s.execute(
                    select(User.id, User.username, AuthToken.id)
                    .join(AuthToken, AuthToken.user_id == User.id)
                    .where(
                        AuthToken.key_hash == digest(token),
                        User.is_active.is_(True),
                        or_(AuthToken.expires_at.is_(None), AuthToken.expires_at > utcnow()),
                    )
                )
            ).first()
            if row is None:
                raise AuthenticationRequired("Invalid token.")
            return Identity(row[0], row[1], AuthMethod.TOKEN, row[2])
        if api_key is not None:
            krow = (
                await s.execute(
                    select(User.id, User.username, ApiKey.id, ApiKey.scopes)
                    .join(ApiKey, ApiKey.user_id == User.id)
                    .where(ApiKey.key_hash == digest(api_key), User.is_active.is_(True))
                )
            ).first()
            if krow is None:
                raise AuthenticationRequired("Invalid API key.")
            return Identity(
                krow[0], krow[1], AuthMethod.API_KEY, krow[2], scopes=frozenset(krow[3].split())
            )
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
        ValidationError: ``username`` taken (in any letter case) or invalid, or a weak
            ``password`` (:func:`check_password`).
    """
    name = normalize_username(username)
    check_password(password, name)
    user = User(username=name, password_hash=hash_password(password))
    taken = ValidationError("username", "unique", f"User {name!r} already exists.")
    try:
        async with db.write() as s:
            if (await s.execute(select(User.id).where(_username_matches(name)))).first():
                raise taken
            s.add(user)
    except IntegrityError:
        raise taken from None
    return user


async def authenticate(db: Database, username: str, password: str) -> User:
    """The user whose password matches (username compared trimmed and case-insensitively).

    The user is read in a short read session of its own, ended before the hash is
    checked: the request's write session (which writes the token or session after
    this) has not begun yet, so SQLite's write lock is not held while hashing.

    Raises:
        AuthenticationRequired: no hint whether the username or the password was wrong.
    """
    async with db.read() as s:
        user = (
            await s.execute(select(User).where(_username_matches(username)))
        ).scalar_one_or_none()
    if (
        not verify_password(user.password_hash if user and user.is_active else None, password)
        or user is None
    ):
        raise AuthenticationRequired("Invalid username or password.")
    return user


async def issue_token(
    session: AsyncSession, user_id: int, ttl: int = 0
) -> tuple[str, dt.datetime | None]:
    """A new API token for the user, expiring ``ttl`` seconds from now (0: never).

    Returns the plain key (shown once) and the expiry.
    """
    key = new_secret(TOKEN_PREFIX)
    expires = utcnow() + dt.timedelta(seconds=ttl) if ttl > 0 else None
    session.add(
        AuthToken(user_id=user_id, key_hash=digest(key), prefix=key[:12], expires_at=expires)
    )
    return key, expires


async def create_token(db: Database, user_id: int, ttl: int = 0) -> str:
    """:func:`issue_token` in a transaction of its own, the key only (the CLI, the demo data,
    tests: callers outside a request)."""
    async with db.write() as s:
        return (await issue_token(s, user_id, ttl))[0]


async def list_tokens(
    session: AsyncSession, user_id: int, limit: int, offset: int
) -> tuple[list[AuthToken], int]:
    """The user's tokens that have not expired, oldest first, and their count."""
    base = select(AuthToken).where(
        AuthToken.user_id == user_id,
        or_(AuthToken.expires_at.is_(None), AuthToken.expires_at > utcnow()),
    )
    count = (await session.execute(select(func.count()).select_from(base.subquery()))).scalar_one()
    rows = (
        await session.execute(base.order_by(AuthToken.id).limit(limit).offset(offset))
    ).scalars()
    return list(rows), int(count)


async def delete_user_token(session: AsyncSession, user_id: int, token_id: int) -> None:
    """Revoke one of the user's tokens; another user's id is a 404."""
    result = await session.execute(
        delete(AuthToken).where(AuthToken.id == token_id, AuthToken.user_id == user_id)
    )
    if result.rowcount == 0:  # type: ignore[attr-defined]
        raise NotFoundError(f"Token {token_id} not found.")


async def change_password(
    db: Database, session: AsyncSession, identity: Identity, current: str, new: str
) -> None:
    """Set a new password and revoke every other session and token of the user.

    The credential of the request itself stays valid; API keys are kept (they are
    revoked one by one with ``DELETE /api/auth/api-keys/{id}/``). The current hash is
    read and checked, and the new one computed, before the first statement of
    ``session`` (the request's write transaction): SQLite's write lock is not held
    while hashing (see :func:`authenticate`).

    Raises:
        AuthenticationRequired: ``current`` is not the password.
        ValidationError: ``new_password`` is weak or equal to the current one.
    """
    async with db.read() as s:
        user = (await s.execute(select(User).where(User.id == identity.id))).scalar_one()
    if not verify_password(user.password_hash, current):
        raise AuthenticationRequired("The current password is not correct.")
    check_password(new, user.username, field="new_password")
    if new == current:
        raise ValidationError(
            "new_password", "unchanged", "The new password must differ from the current one."
        )
    keep_token = identity.credential_id if identity.method is AuthMethod.TOKEN else -1
    keep_session = identity.credential_id if identity.method is AuthMethod.SESSION else -1
    new_hash = hash_password(new)
    await session.execute(update(User).where(User.id == user.id).values(password_hash=new_hash))
    await session.execute(
        delete(AuthToken).where(AuthToken.user_id == user.id, AuthToken.id != keep_token)
    )
    await session.execute(
        delete(UserSession).where(UserSession.user_id == user.id, UserSession.id != keep_session)
    )


async def live_credentials(
    db: Database, wanted: dict[AuthMethod, set[int]]
) -> dict[AuthMethod, set[int]]:
    """Which of the ``wanted`` credential ids still authenticate (not revoked or expired)."""
    now = utcnow()
    found: dict[AuthMethod, set[int]] = {m: set() for m in wanted}
    tables = {
        AuthMethod.TOKEN: (
            AuthToken.id,
            or_(AuthToken.expires_at.is_(None), AuthToken.expires_at > now),
            AuthToken.user_id,
        ),
        AuthMethod.SESSION: (UserSession.id, UserSession.expires_at > now, UserSession.user_id),
        AuthMethod.API_KEY: (ApiKey.id, ApiKey.id.is_not(None), ApiKey.user_id),
    }
    async with db.read() as s:
        for method, ids in wanted.items():
            column, alive, owner = tables[method]
            chunk = sorted(ids)
            for i in range(0, len(chunk), 500):
                rows = await s.execute(
                    select(column)
                    .join(User, User.id == owner)
                    .where(column.in_(chunk[i : i + 500]), alive, User.is_active.is_(True))
                )
                found[method].update(rows.scalars())
    return found


async def delete_token(session: AsyncSession, token_id: int) -> None:
    await session.execute(delete(AuthToken).where(AuthToken.id == token_id))


async def create_session(session: AsyncSession, user_id: int, ttl: int) -> tuple[str, str]:
    """A new browser session; returns (cookie key, CSRF token)."""
    key, csrf = new_secret(SESSION_PREFIX), secrets.token_urlsafe(32)
    session.add(
        UserSession(
            user_id=user_id,
            key_hash=digest(key),
            csrf_token=csrf,
            expires_at=utcnow() + dt.timedelta(seconds=ttl),
        )
    )
    return key, csrf


async def delete_session(session: AsyncSession, session_id: int) -> None:
    await session.execute(delete(UserSession).where(UserSession.id == session_id))


async def create_api_key(
    session: AsyncSession, user_id: int, name: str, scopes: frozenset[str] = frozenset()
) -> tuple[ApiKey, str]:
    """A new API key (row and plain key, shown once) with the given :data:`SCOPES`."""
    key = new_secret(API_KEY_PREFIX)
    row = ApiKey(
        user_id=user_id,
        name=name,
        key_hash=digest(key),
        prefix=key[:12],
        scopes=" ".join(sorted(scopes)),
    )
    session.add(row)
    await session.flush()  # the id and created_at of the reply
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


async def delete_api_key(session: AsyncSession, user_id: int, key_id: int) -> None:
    """Revoke one of the user's keys; another user's id is a 404."""
    result = await session.execute(
        delete(ApiKey).where(ApiKey.id == key_id, ApiKey.user_id == user_id)
    )
    if result.rowcount == 0:  # type: ignore[attr-defined]
        raise NotFoundError(f"API key {key_id} not found.")
