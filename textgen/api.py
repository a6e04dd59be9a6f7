"""HTTP handlers under ``/v1``: each parses its input and calls one service method."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

import msgspec
from litestar import Controller, Request, delete, get, post
from litestar.datastructures import UploadFile
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery, QueryParameter
from litestar.response import Response, ServerSentEvent
from litestar.response.sse import ServerSentEventMessage

from textgen.auth import project_of
from textgen.backends.base import ModelInfo, Registry
from textgen.conversations import ConversationService
from textgen.decoding import decode_body
from textgen.errors import bad_request, not_found
from textgen.events import ResponseEvent, ResponseObject
from textgen.files import FileService
from textgen.includes import check_include
from textgen.openapi import body_operation
from textgen.pagination import Page, page_body, paginate
from textgen.prompts import PromptService, read_model
from textgen.runs import Runner
from textgen.schemas import (
    ConversationCreate,
    ConversationItemsCreate,
    ConversationRead,
    ConversationUpdate,
    DataList,
    Deleted,
    FileRead,
    InputTokensCreate,
    InputTokensRead,
    ListPage,
    ModelRead,
    PromptCreate,
    PromptRead,
    ResponseCreate,
    SamplingDefaults,
)
from textgen.service import ResponseService
from textgen.store import FileRecord
from textgen.stored_items import Item

__all__ = ["ConversationsController", "FilesController", "ModelsController", "PromptsController", "ResponsesController", "Services"]

T = TypeVar("T")

# ``include`` on reads, as repeated query parameters: ``include=...`` or the SDK's ``include[]=...``.
_INCLUDE_DOC = "Optional item fields: message.output_text.logprobs, reasoning.encrypted_content."
Include = Annotated[list[str] | None, QueryParameter(name="include", description=_INCLUDE_DOC)]
IncludeBrackets = Annotated[list[str] | None, QueryParameter(name="include[]", description=_INCLUDE_DOC)]


@dataclass(frozen=True, slots=True)
class Services:
    """What the handlers use; injected as their ``services`` parameter (Litestar's dependency injection)."""

    responses: ResponseService
    runner: Runner
    prompts: PromptService
    files: FileService
    registry: Registry
    conversations: ConversationService


async def _decode(request: Request[Any, Any, Any], kind: type[T]) -> T:
    return decode_body(await request.body(), kind)


_SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


class _EventStream(ServerSentEvent):
    """Litestar's ``ServerSentEvent``, keeping its ``text/event-stream`` type on handlers whose other answers
    are JSON (the handler's default media type would win, and EventSource clients refuse it)."""

    def to_asgi_response(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["media_type"] = "text/event-stream"
        return super().to_asgi_response(*args, **kwargs)


def event_stream(messages: AsyncIterator[ServerSentEventMessage]) -> ServerSentEvent:
    """A ``text/event-stream`` answer through Litestar's ``ServerSentEvent`` (``\\n`` line ends)."""
    return _EventStream(messages, headers=_SSE_HEADERS)


def _sse(events: AsyncIterator[ResponseEvent]) -> ServerSentEvent:
    async def messages() -> AsyncIterator[ServerSentEventMessage]:
        async for event in events:
            yield ServerSentEventMessage(event=event.type, data=msgspec.json.encode(event).decode(), sep="\n")

    return event_stream(messages())


class ResponsesController(Controller):
    """``/v1/responses``."""

    path = "/responses"

    @post("/", status_code=200, operation_class=body_operation(ResponseCreate))
    async def create(self, request: Request[Any, Any, Any],
                     services: NamedDependency[Services]) -> ResponseObject | ServerSentEvent:
        """Create a response (``stream: true`` answers with server-sent events)."""
        body = await _decode(request, ResponseCreate)
        turn = await services.responses.prepare(body, project_of(request))
        if body.stream:
            return _sse(services.runner.stream(await services.runner.start(turn)))
        if body.background:
            await services.runner.start(turn)
            return services.responses.initial(turn)
        return await services.runner.create(turn)

    @post("/input_tokens", status_code=200, operation_class=body_operation(InputTokensCreate))
    async def input_tokens(self, request: Request[Any, Any, Any], services: NamedDependency[Services]) -> InputTokensRead:
        """Count the input tokens of a would-be response."""
        body = await _decode(request, InputTokensCreate)
        return await services.responses.count_input_tokens(body, project_of(request))

    @get("/{response_id:str}")
    async def retrieve(
        self,
        response_id: FromPath[str],
        request: Request[Any, Any, Any],
        services: NamedDependency[Services],
        stream: FromQuery[bool] = False,
        starting_after: FromQuery[int] = -1,
        include: Include = None,
        include_brackets: IncludeBrackets = None,
    ) -> ResponseObject | ServerSentEvent:
        """A stored response; ``stream=true`` replays its events after ``starting_after`` and follows."""
        included = check_include(include, include_brackets)
        if stream:
            return _sse(await services.runner.replay(response_id, project_of(request), starting_after))
        return await services.responses.get(response_id, project_of(request), included)

    @post("/{response_id:str}/cancel", status_code=200)
    async def cancel(self, response_id: FromPath[str], request: Request[Any, Any, Any],
                     services: NamedDependency[Services]) -> ResponseObject:
        """Cancel a background response."""
        return await services.runner.cancel(response_id, project_of(request))

    @delete("/{response_id:str}", status_code=200)
    async def remove(self, response_id: FromPath[str], request: Request[Any, Any, Any],
                     services: NamedDependency[Services]) -> Deleted:
        """Delete a stored response."""
        return await services.responses.delete(response_id, project_of(request))

    @get("/{response_id:str}/input_items")
    async def input_items(
        self,
        response_id: FromPath[str],
        request: Request[Any, Any, Any],
        services: NamedDependency[Services],
        after: FromQuery[str | None] = None,
        limit: FromQuery[int] = 20,
        order: FromQuery[str] = "desc",
        include: Include = None,
        include_brackets: IncludeBrackets = None,
    ) -> ListPage:
        """The input items of a response, paginated by ``after``/``limit``."""
        return await services.responses.input_items(
            response_id, project_of(request), Page.of(after, limit, order),
            include=check_include(include, include_brackets))


class ConversationsController(Controller):
    """``/v1/conversations``: durable item lists that responses read and extend."""

    path = "/conversations"

    @post("/", status_code=200, operation_class=body_operation(ConversationCreate))
    async def create(self, request: Request[Any, Any, Any], services: NamedDependency[Services]) -> ConversationRead:
        """Create a conversation (optionally with items and metadata)."""
        body = await _decode(request, ConversationCreate)
        return await services.conversations.create(project_of(request), body)

    @get("/{conversation_id:str}")
    async def retrieve(self, conversation_id: FromPath[str], request: Request[Any, Any, Any],
                       services: NamedDependency[Services]) -> ConversationRead:
        """A conversation."""
        return await services.conversations.get(conversation_id, project_of(request))

    @post("/{conversation_id:str}", status_code=200, operation_class=body_operation(ConversationUpdate))
    async def update(self, conversation_id: FromPath[str], request: Request[Any, Any, Any],
                     services: NamedDependency[Services]) -> ConversationRead:
        """Replace a conversation's metadata."""
        body = await _decode(request, ConversationUpdate)
        return await services.conversations.update(conversation_id, project_of(request), body)

    @delete("/{conversation_id:str}", status_code=200)
    async def remove(self, conversation_id: FromPath[str], request: Request[Any, Any, Any],
                     services: NamedDependency[Services]) -> Deleted:
        """Delete a conversation and its items."""
        return await services.conversations.delete(conversation_id, project_of(request))

    @get("/{conversation_id:str}/items")
    async def list_items(
        self,
        conversation_id: FromPath[str],
        request: Request[Any, Any, Any],
        services: NamedDependency[Services],
        after: FromQuery[str | None] = None,
        limit: FromQuery[int] = 20,
        order: FromQuery[str] = "desc",
        include: Include = None,
        include_brackets: IncludeBrackets = None,
    ) -> ListPage:
        """Items, latest first by default, paginated by ``after``/``limit``."""
        page = Page.of(after, limit, order)
        return await services.conversations.list_items(
            conversation_id, project_of(request), page, include=check_include(include, include_brackets))

    @post("/{conversation_id:str}/items", status_code=200, operation_class=body_operation(ConversationItemsCreate))
    async def add_items(self, conversation_id: FromPath[str], request: Request[Any, Any, Any], services: NamedDependency[Services],
                        include: Include = None, include_brackets: IncludeBrackets = None) -> ListPage:
        """Append up to 20 items."""
        included = check_include(include, include_brackets)
        body = await _decode(request, ConversationItemsCreate)
        return await services.conversations.add_items(conversation_id, project_of(request), body, included)

    @get("/{conversation_id:str}/items/{item_id:str}")
    async def retrieve_item(self, conversation_id: FromPath[str], item_id: FromPath[str],
                            request: Request[Any, Any, Any], services: NamedDependency[Services],
                            include: Include = None, include_brackets: IncludeBrackets = None) -> Item:
        """One item (its stored form, shaped by ``include``)."""
        return await services.conversations.get_item(conversation_id, item_id, project_of(request),
                                                              check_include(include, include_brackets))

    @delete("/{conversation_id:str}/items/{item_id:str}", status_code=200)
    async def remove_item(self, conversation_id: FromPath[str], item_id: FromPath[str],
                          request: Request[Any, Any, Any], services: NamedDependency[Services]) -> ConversationRead:
        """Delete one item; answers with the conversation."""
        return await services.conversations.delete_item(conversation_id, item_id, project_of(request))


def _model(info: ModelInfo) -> ModelRead:
    return ModelRead(id=info.id, created=info.created, owned_by=info.owned_by,
                     context_window=info.context_window, max_output_tokens=info.max_output_tokens,
                     sampling_defaults=SamplingDefaults(
                         temperature=1.0 if info.temperature is None else info.temperature,
                         top_p=1.0 if info.top_p is None else info.top_p, source=info.sampling_source))


class ModelsController(Controller):
    """``/v1/models``."""

    path = "/models"

    @get("/")
    async def list_models(self, services: NamedDependency[Services]) -> DataList:
        """Every model with its context window."""
        return DataList(data=[_model(b.info) for b in services.registry])

    @get("/{model_id:str}")
    async def retrieve(self, model_id: FromPath[str], services: NamedDependency[Services]) -> ModelRead:
        """One model by id or alias."""
        backend = services.registry.get(model_id)
        if backend is None:
            raise not_found(f"The model {model_id!r} does not exist.", param="model", code="model_not_found")
        return _model(backend.info)


class PromptsController(Controller):
    """``/v1/prompts``: reusable prompts with immutable versions."""

    path = "/prompts"

    @post("/", status_code=200, operation_class=body_operation(PromptCreate))
    async def create(self, request: Request[Any, Any, Any], services: NamedDependency[Services]) -> PromptRead:
        """Create a prompt (version ``"1"``)."""
        return await services.prompts.create(project_of(request), await _decode(request, PromptCreate))

    @post("/{prompt_id:str}/versions", status_code=200, operation_class=body_operation(PromptCreate))
    async def add_version(self, prompt_id: FromPath[str], request: Request[Any, Any, Any], services: NamedDependency[Services]) -> PromptRead:
        """Add a version; it becomes current."""
        return await services.prompts.add_version(project_of(request), prompt_id,
                                                          await _decode(request, PromptCreate))

    @get("/")
    async def list_prompts(self, request: Request[Any, Any, Any], services: NamedDependency[Services]) -> DataList:
        """Every prompt at its current version."""
        return DataList(data=await services.prompts.list_all(project_of(request)))

    @get("/{prompt_id:str}")
    async def retrieve(self, prompt_id: FromPath[str], request: Request[Any, Any, Any], services: NamedDependency[Services],
                       version: FromQuery[str | None] = None) -> PromptRead:
        """A prompt at ``version`` (default: current)."""
        return read_model(await services.prompts.get(project_of(request), prompt_id, version))


def _quote(filename: str) -> str:
    return "".join(c for c in filename if c.isprintable() and c not in '"\\')


def _file(record: FileRecord) -> FileRead:
    return FileRead(id=record.id, bytes=record.bytes, created_at=record.created_at,
                    filename=record.filename, purpose=record.purpose)


class FilesController(Controller):
    """``/v1/files``."""

    path = "/files"

    @post("/", status_code=200)
    async def upload(self, request: Request[Any, Any, Any], services: NamedDependency[Services]) -> FileRead:
        """Upload a file (multipart fields ``file`` and ``purpose``)."""
        if not request.headers.get("content-type", "").startswith("multipart/form-data"):
            raise bad_request("Upload files as multipart/form-data with fields 'file' and 'purpose'.")
        form = await request.form()
        upload, purpose = form.get("file"), form.get("purpose")
        if not isinstance(upload, UploadFile):
            raise bad_request("Missing required parameter: 'file'.", param="file",
                              code="missing_required_parameter")
        if not isinstance(purpose, str):
            raise bad_request("Missing required parameter: 'purpose'.", param="purpose",
                              code="missing_required_parameter")
        return _file(await services.files.create(project_of(request), upload, purpose))

    @get("/")
    async def list_files(
        self,
        request: Request[Any, Any, Any],
        services: NamedDependency[Services],
        purpose: FromQuery[str | None] = None,
        after: FromQuery[str | None] = None,
        limit: FromQuery[int] = 10_000,
        order: FromQuery[str] = "desc",
    ) -> ListPage:
        """Files, newest first by default (optionally of one ``purpose``), paginated by ``after``."""
        page = Page.of(after, limit, order, most=10_000)
        records = await services.files.list_files(project_of(request), purpose)
        chosen, more = paginate(records, page, lambda r: r.id, "a listed file", newest_first=True)
        return page_body([_file(r) for r in chosen], has_more=more)

    @get("/{file_id:str}")
    async def retrieve(self, file_id: FromPath[str], request: Request[Any, Any, Any], services: NamedDependency[Services]) -> FileRead:
        """File metadata."""
        return _file(await services.files.get(project_of(request), file_id))

    @get("/{file_id:str}/content")
    async def content(self, file_id: FromPath[str], request: Request[Any, Any, Any],
                      services: NamedDependency[Services]) -> Response[bytes]:
        """The file's bytes."""
        record, data = await services.files.content(project_of(request), file_id)
        return Response(data, media_type="application/octet-stream",
                        headers={"Content-Disposition": f'attachment; filename="{_quote(record.filename)}"'})

    @delete("/{file_id:str}", status_code=200)
    async def remove(self, file_id: FromPath[str], request: Request[Any, Any, Any], services: NamedDependency[Services]) -> Deleted:
        """Delete a file."""
        await services.files.delete(project_of(request), file_id)
        return Deleted(id=file_id, object="file")
