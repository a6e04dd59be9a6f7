"""The application factory: ``create_app(settings) -> Litestar`` with every route under ``/v1``."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from litestar import Litestar, Router
from litestar.connection import ASGIConnection
from litestar.datastructures import State
from litestar.di import Provide
from litestar.handlers.base import BaseRouteHandler

from textgen.api import (
    ConversationsController,
    FilesController,
    ModelsController,
    PromptsController,
    ResponsesController,
    Services,
)
from textgen.auth import Authenticator, ratelimit_headers
from textgen.backends.base import Backend, Registry
from textgen.chat import ChatCompletionsController, ChatService
from textgen.conversations import ConversationService
from textgen.errors import exception_handlers
from textgen.files import FileService
from textgen.openapi import openapi_config
from textgen.prompts import PromptService
from textgen.ratelimit import make_limiter
from textgen.runs import Runner
from textgen.sealing import Sealer, load_key
from textgen.service import ResponseService
from textgen.settings import Settings
from textgen.store import Store
from textgen.turns import TurnBuilder

__all__ = ["create_app", "default_backends"]

_FORM_OVERHEAD = 64 * 1024  # multipart framing around an upload of the maximum size


def default_backends(settings: Settings | None = None) -> list[Backend]:
    """The models served when none are injected.

    The default model (SmolLM2-135M-Instruct through llama.cpp), plus the models
    of the ``TEXTGEN_MODELS`` registry file when ``settings.models`` names one
    (which may also disable the default model).

    Raises:
        ValueError: The registry file is invalid or a model cannot load; the message names the entry.
    """
    from textgen.backends.registry_config import load_backends

    return load_backends(settings.models if settings is not None and settings.models else None)


def create_app(settings: Settings | None = None, *, backends: Iterable[Backend] | None = None) -> Litestar:
    """Build the text-generation app.

    Args:
        settings: Configuration; read from ``TEXTGEN_*`` variables when omitted.
        backends: Models to serve (tests inject their own, as with an httpx transport);
            the built-in model when omitted.

    Returns:
        A Litestar app whose routes live under ``/v1`` (mountable into another app).
    """
    settings = settings or Settings.from_env()
    store = Store(settings.resolved_database_url)
    registry = Registry(default_backends(settings) if backends is None else backends)
    files = FileService(store, settings.files_dir, settings.max_file_bytes)
    prompts = PromptService(store)
    sealer = Sealer(load_key(settings.secret_key, settings.data_dir))
    conversations = ConversationService(store, sealer)
    turns = TurnBuilder(store, files, prompts, registry, settings, conversations, sealer)
    responses = ResponseService(turns)
    runner = Runner(responses, store, settings.lease_seconds)
    services = Services(responses, runner, prompts, files, registry, conversations)
    chat = ChatService(registry, settings)
    limiter = make_limiter(settings.rate_limit_per_minute, settings.redis_url)
    authenticator = Authenticator(store, settings.api_keys, limiter)

    async def guard(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
        await authenticator(connection, handler)  # a plain function: routers deep-copy their guards

    async def startup() -> None:
        Path(settings.data_dir).mkdir(parents=True, exist_ok=True)
        settings.files_dir.mkdir(parents=True, exist_ok=True)
        await store.create_schema()
        runner.start_recovery()  # queued or in-progress responses nobody holds: resume or fail them

    async def shutdown() -> None:
        await runner.close()
        if limiter is not None:
            await limiter.close()
        await store.dispose()

    v1 = Router(
        path="/v1",
        route_handlers=[ResponsesController, ConversationsController, ModelsController, PromptsController,
                        FilesController, ChatCompletionsController],
        guards=[guard],
        middleware=[ratelimit_headers],
        dependencies={"services": Provide(lambda: services, sync_to_thread=False),
                      "chat": Provide(lambda: chat, sync_to_thread=False)},
    )
    return Litestar(
        route_handlers=[v1],
        exception_handlers=exception_handlers,
        on_startup=[startup],
        on_shutdown=[shutdown],
        state=State({"services": services, "store": store}),
        request_max_body_size=settings.max_file_bytes + _FORM_OVERHEAD,
        openapi_config=openapi_config(),
    )
