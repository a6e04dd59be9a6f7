"""``/api/auth/``: tokens, session login/logout, password change, API keys, and who am I.

Every response of these routes carries ``Cache-Control: no-store`` (set by the request
middleware): they hold secrets or say who is signed in.
"""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, delete, get, post
from litestar.datastructures import Cookie, State
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody
from litestar.status_codes import HTTP_204_NO_CONTENT
from sqlalchemy.ext.asyncio import AsyncSession

from service.auth import services
from service.auth.guards import requires_user
from service.auth.identity import AuthMethod, Identity
from service.auth.schemas import (
    ApiKeyCreate,
    ApiKeyCreated,
    ApiKeyRead,
    Credentials,
    LoginRead,
    MeRead,
    PasswordChange,
    TokenInfo,
    TokenRead,
)
from service.db import after_commit
from service.errors import PermissionDenied, ValidationError
from service.middleware import CSRF_COOKIE, SESSION_COOKIE
from service.pagination import Page, PageParams
from service.state import Resources

__all__ = ["AuthController"]

Req = Request[Identity, Any, State]


def _may_manage_credentials(request: Request[Any, Any, Any]) -> None:
    """403 for a request made with an API key that lacks the ``credentials`` scope."""
    user: Identity | None = request.scope.get("user")
    if user is not None and not user.may_manage_credentials():
        raise PermissionDenied(
            "An API key without the 'credentials' scope cannot create keys or tokens "
            "or change the password.",
            details={"code": "scope_required", "scope": "credentials"},
        )


class AuthController(Controller):
    path = "/api/auth"
    tags = ["auth"]  # noqa: RUF012

    @post("/token/", summary="Exchange username and password for an API token", status_code=200)
    async def obtain_token(
        self,
        request: Req,
        data: JSONBody[Credentials],
        resources: NamedDependency[Resources],
        session: NamedDependency[AsyncSession],
    ) -> TokenRead:
        _may_manage_credentials(request)
        user = await services.authenticate(resources.db, data.username, data.password)
        token, expires = await services.issue_token(session, user.id, resources.settings.token_ttl)
        return TokenRead(token=token, expires_at=expires)

    @get(
        "/tokens/",
        summary="List your API tokens (without the keys)",
        guards=[requires_user],
    )
    async def list_tokens(
        self,
        request: Req,
        session: NamedDependency[AsyncSession],
        paging: NamedDependency[PageParams],
    ) -> Page[TokenInfo]:
        rows, count = await services.list_tokens(
            session, request.user.id, paging.limit, paging.offset
        )
        current = request.user.credential_id if request.user.method is AuthMethod.TOKEN else None
        items = [
            TokenInfo(
                id=r.id,
                prefix=r.prefix,
                created_at=r.created_at,
                expires_at=r.expires_at,
                current=r.id == current,
            )
            for r in rows
        ]
        return Page.build(request, items, count, paging)

    @delete(
        "/tokens/{token_id:int}/", summary="Revoke one of your API tokens", guards=[requires_user]
    )
    async def delete_token(
        self,
        request: Req,
        token_id: FromPath[int],
        resources: NamedDependency[Resources],
        session: NamedDependency[AsyncSession],
    ) -> None:
        await services.delete_user_token(session, request.user.id, token_id)
        after_commit(session, resources.identities.clear)

    @post(
        "/password/",
        summary="Change your password (revokes your other sessions and tokens)",
        guards=[requires_user],
        status_code=HTTP_204_NO_CONTENT,
    )
    async def change_password(
        self,
        request: Req,
        data: JSONBody[PasswordChange],
        resources: NamedDependency[Resources],
        session: NamedDependency[AsyncSession],
    ) -> None:
        _may_manage_credentials(request)
        await services.change_password(
            resources.db, session, request.user, data.current_password, data.new_password
        )
        after_commit(session, resources.identities.clear)

    @delete("/token/", summary="Revoke the token used for this request", guards=[requires_user])
    async def revoke_token(
        self,
        request: Req,
        resources: NamedDependency[Resources],
        session: NamedDependency[AsyncSession],
    ) -> None:
        if request.user.method is not AuthMethod.TOKEN:
            raise ValidationError(
                "Authorization", "invalid", "This request was not made with a token."
            )
        await services.delete_token(session, request.user.credential_id)
        after_commit(session, resources.identities.clear)

    @post(
        "/login/", summary="Start a browser session (HttpOnly cookie + CSRF token)", status_code=200
    )
    async def login(
        self,
        request: Req,
        data: JSONBody[Credentials],
        resources: NamedDependency[Resources],
        session: NamedDependency[AsyncSession],
    ) -> Response[LoginRead]:
        _may_manage_credentials(request)
        user = await services.authenticate(resources.db, data.username, data.password)
        ttl = resources.settings.session_ttl_seconds
        key, csrf = await services.create_session(session, user.id, ttl)
        secure = resources.settings.session_cookie_secure
        return Response(
            LoginRead(username=user.username, csrf_token=csrf),
            cookies=[
                Cookie(
                    key=SESSION_COOKIE,
                    value=key,
                    httponly=True,
                    samesite="lax",
                    secure=secure,
                    max_age=ttl,
                    path="/",
                ),
                Cookie(
                    key=CSRF_COOKIE,
                    value=csrf,
                    httponly=False,
                    samesite="lax",
                    secure=secure,
                    max_age=ttl,
                    path="/",
                ),
            ],
        )

    @post(
        "/logout/",
        summary="End the browser session",
        status_code=HTTP_204_NO_CONTENT,
        guards=[requires_user],
    )
    async def logout(
        self,
        request: Req,
        resources: NamedDependency[Resources],
        session: NamedDependency[AsyncSession],
    ) -> Response[None]:
        if request.user.method is AuthMethod.SESSION:
            await services.delete_session(session, request.user.credential_id)
            after_commit(session, resources.identities.clear)
        return Response(
            None,
            status_code=HTTP_204_NO_CONTENT,
            cookies=[
                Cookie(
                    key=SESSION_COOKIE, value="", max_age=0, path="/", httponly=True, samesite="lax"
                ),
                Cookie(key=CSRF_COOKIE, value="", max_age=0, path="/", samesite="lax"),
            ],
        )

    @get("/me/", summary="The authenticated user", guards=[requires_user])
    async def me(self, request: Req) -> MeRead:
        return MeRead(
            id=request.user.id, username=request.user.username, auth_method=str(request.user.method)
        )

    @post("/api-keys/", summary="Create an API key (the key is shown once)", guards=[requires_user])
    async def create_api_key(
        self, request: Req, data: JSONBody[ApiKeyCreate], session: NamedDependency[AsyncSession]
    ) -> ApiKeyCreated:
        _may_manage_credentials(request)
        row, key = await services.create_api_key(
            session, request.user.id, data.name, frozenset(data.scopes)
        )
        return ApiKeyCreated(
            id=row.id,
            name=row.name,
            prefix=row.prefix,
            created_at=row.created_at,
            scopes=row.scopes.split(),
            key=key,
        )

    @get(
        "/api-keys/",
        summary="List API keys (without the keys)",
        guards=[requires_user],
    )
    async def list_api_keys(
        self,
        request: Req,
        session: NamedDependency[AsyncSession],
        paging: NamedDependency[PageParams],
    ) -> Page[ApiKeyRead]:
        rows, count = await services.list_api_keys(
            session, request.user.id, paging.limit, paging.offset
        )
        items = [
            ApiKeyRead(
                id=r.id,
                name=r.name,
                prefix=r.prefix,
                created_at=r.created_at,
                scopes=r.scopes.split(),
            )
            for r in rows
        ]
        return Page.build(request, items, count, paging)

    @delete("/api-keys/{key_id:int}/", summary="Revoke an API key", guards=[requires_user])
    async def delete_api_key(
        self,
        request: Req,
        key_id: FromPath[int],
        resources: NamedDependency[Resources],
        session: NamedDependency[AsyncSession],
    ) -> None:
        await services.delete_api_key(session, request.user.id, key_id)
        after_commit(session, resources.identities.clear)
