"""A request turned into a :class:`Turn`: every check done and the model's context built.

:meth:`TurnBuilder.prepare` does every check before a byte is sent (so a bad
request is a plain 400/404, streamed or not) and builds the context:

1. ``instructions`` (or the prompt's) as the leading ``system`` entry: they rank
   above every input message (rule 1) and apply to this request only;
2. the conversation of ``previous_response_id`` (its inputs and outputs, never
   its instructions: rule 2);
3. the reusable prompt's messages at the requested or current version (rule 3)
   with variables substituted (rule 4);
4. this request's ``input`` items.

Items become context entries in :mod:`textgen.context`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from textgen.backends.base import (
    Backend,
    BackendError,
    ChatMessage,
    GenerationRequest,
    Registry,
    RequestRejected,
)
from textgen.context import ContextRenderer, fit_context
from textgen.conversations import ConversationService, conversation_id_of
from textgen.errors import APIError, bad_request, not_found
from textgen.events import FunctionChoice, FunctionTool, PromptEcho, TextConfig
from textgen.files import FileService
from textgen.includes import INCLUDABLE, LOGPROBS, check_include
from textgen.inputs import (
    convert_items,
    normalize_input,
    normalize_text_format,
    normalize_tool_choice,
    normalize_tools,
    resolve_references,
)
from textgen.prompts import PromptService
from textgen.resume import ResumePoint
from textgen.schemas import InputTokensCreate, InputTokensRead, ResponseCreate
from textgen.sealing import Sealer
from textgen.settings import Settings
from textgen.store import Store, new_id
from textgen.stored_items import InputImagePart, Item, MessageItem

__all__ = ["Echo", "Turn", "TurnBuilder", "sampling_value"]


@dataclass(frozen=True, slots=True)
class Echo:
    """What the response object repeats of the request, as checked."""

    instructions: str | None
    prompt: PromptEcho | None
    tools: list[FunctionTool]
    tool_choice: str | FunctionChoice
    text: TextConfig


@dataclass(slots=True)
class Turn:
    """A validated request, ready to generate."""

    id: str
    created_at: int
    body: ResponseCreate
    backend: Backend
    echo: Echo
    input_items: list[Item]
    history: list[dict[str, Any]]
    entries: list[dict[str, Any]]
    request: GenerationRequest
    input_tokens: int
    project: str = ""
    conversation_id: str | None = None
    failure_status: int = 500
    cancelled: bool = False
    handback: bool = False  # stopping to hand the work back (shutdown): no closing events
    resume: ResumePoint | None = None  # where a resumed background response continues
    output: list[Item] = field(default_factory=list)


def sampling_value(requested: float | None, recommended: float | None) -> float:
    """A sampling setting: the request's, else the model's recommended one, else 1.0."""
    if requested is not None:
        return requested
    return 1.0 if recommended is None else recommended


class TurnBuilder:
    """Checks requests and builds their turns, within a project."""

    def __init__(
        self,
        store: Store,
        files: FileService,
        prompts: PromptService,
        registry: Registry,
        settings: Settings,
        conversations: ConversationService,
        sealer: Sealer,
    ) -> None:
        self.conversations = conversations
        self.sealer = sealer
        self.store = store
        self.files = files
        self.prompts = prompts
        self.registry = registry
        self.settings = settings
        self.context = ContextRenderer(files, sealer, settings.max_file_bytes)

    async def _check_variable_files(
        self, project: str, variables: dict[str, str | dict[str, Any]]
    ) -> None:
        """A file a prompt variable names must exist in ``project``: else a 404 naming the variable."""
        for name, value in variables.items():
            if not isinstance(value, dict) or not isinstance(value.get("file_id"), str):
                continue
            param = f"prompt.variables.{name}.file_id"
            if not await self.files.exists(project, value["file_id"]):
                raise not_found(
                    f"Prompt variable {name!r} names file {value['file_id']!r}, which does not exist.",
                    param=param,
                    code="file_not_found",
                )

    async def count_input_tokens(self, body: InputTokensCreate, project: str) -> InputTokensRead:
        """The input tokens a response with these fields would use (its context, no generation)."""
        model = body.model or next(iter(self.registry)).info.id
        fields = {f: getattr(body, f) for f in body.__struct_fields__ if f != "model"}
        if fields["input"] is None:
            fields["input"] = []
        turn = await self.prepare(
            ResponseCreate(model=model, store=False, **fields), project, counting=True
        )
        exact = getattr(
            turn.backend, "prompt_tokens", None
        )  # a local backend counts its rendered prompt
        tokens = (
            turn.input_tokens if exact is None else await asyncio.to_thread(exact, turn.request)
        )
        return InputTokensRead(input_tokens=tokens)

    async def prepare(self, body: ResponseCreate, project: str, *, counting: bool = False) -> Turn:
        """Validate ``body`` and build its context in ``project``; raises :class:`APIError` on any problem.

        Every id the request names (previous response, prompt, files) is looked up
        in ``project`` only: another project's id is a 404 like an unknown one.
        """
        backend = self.registry.get(body.model)
        if backend is None:
            raise not_found(
                f"The model {body.model!r} does not exist; see GET /v1/models.",
                param="model",
                code="model_not_found",
            )
        if body.input is None and body.prompt is None:
            raise bad_request(
                "Missing required parameter: 'input' (or 'prompt').",
                param="input",
                code="missing_required_parameter",
            )
        info = backend.info
        if body.max_output_tokens is not None and body.max_output_tokens > info.max_output_tokens:
            raise bad_request(
                f"max_output_tokens is {body.max_output_tokens}, above {info.max_output_tokens}, "
                f"the limit of model {info.id!r}.",
                param="max_output_tokens",
                code="invalid_value",
            )
        tools, specs = normalize_tools(body.tools)
        tool_choice, choice = normalize_tool_choice(body.tool_choice, specs)
        text_format, constraint = normalize_text_format(body.text.format if body.text else None)

        for i, value in enumerate(body.include or ()):
            if value not in INCLUDABLE:
                check_include([value], param=f"include[{i}]")
            if value == LOGPROBS and not info.logprobs:
                raise bad_request(
                    f"The model {info.id!r} does not report token log-probabilities.",
                    param=f"include[{i}]",
                    code="unsupported_value",
                )
        if body.top_logprobs and not info.logprobs:  # never silently ignored
            raise bad_request(
                f"The model {info.id!r} does not report token log-probabilities.",
                param="top_logprobs",
                code="unsupported_value",
            )
        if body.background and not body.store:
            raise bad_request(
                "Background mode requires 'store': true.", param="background", code="invalid_value"
            )
        history: list[dict[str, Any]] = []
        conversation_id = conversation_id_of(body.conversation)
        if conversation_id is not None and body.previous_response_id is not None:
            # OpenAI's reference on previous_response_id: "Cannot be used in conjunction with conversation."
            raise bad_request(
                "'previous_response_id' cannot be used together with 'conversation'.",
                param="conversation",
                code="invalid_value",
            )
        if conversation_id is not None:
            stored_items = await self.conversations.all_items(conversation_id, project)
            seen: set[str] = set()
            for i, item in enumerate(stored_items):
                entry = await self.context.entry(project, item, f"conversation.items[{i}]", seen)
                if entry is not None:
                    history.append(entry)
        if body.previous_response_id is not None:
            found = await self.store.history(body.previous_response_id, project)
            if found is None:
                raise not_found(
                    f"Previous response with id {body.previous_response_id!r} not found.",
                    param="previous_response_id",
                    code="previous_response_not_found",
                )
            history = found
        call_ids = {e["call_id"] for e in history if e.get("call_id") and e["role"] == "assistant"}

        instructions = body.instructions
        prompt_echo: PromptEcho | None = None
        items: list[Item] = []
        if body.prompt is not None:
            record, messages = await self.prompts.resolve(project, body.prompt)
            await self._check_variable_files(project, body.prompt.variables or {})
            items += await resolve_references(
                self.store,
                normalize_input(
                    convert_items(messages, "prompt.messages"), prefix="prompt.messages"
                ),
                "prompt.messages",
                project,
            )
            instructions = instructions if instructions is not None else record.instructions
            variables = {
                k: (
                    {"detail": "auto", **v}
                    if isinstance(v, dict) and v.get("type") == "input_image"
                    else v
                )
                for k, v in (body.prompt.variables or {}).items()
            }
            prompt_echo = PromptEcho(id=record.id, version=str(record.version), variables=variables)
        params = [f"prompt.messages[{i}]" for i in range(len(items))]
        own = await resolve_references(self.store, normalize_input(body.input), "input", project)
        items += own
        params += [f"input[{i}]" for i in range(len(own))]
        if not info.accepts_images:
            for item, param in zip(items, params, strict=True):
                for j, part in enumerate(item.content if isinstance(item, MessageItem) else ()):
                    if isinstance(part, InputImagePart):
                        raise bad_request(
                            f"The model {info.id!r} is text-only and cannot read images; "
                            "remove the input_image part.",
                            param=f"{param}.content[{j}]",
                            code="invalid_value",
                        )
        rendered = [
            await self.context.entry(project, item, param, call_ids)
            for item, param in zip(items, params, strict=True)
        ]
        entries = [e for e in rendered if e is not None]

        max_output = body.max_output_tokens or min(
            self.settings.default_max_output_tokens, info.max_output_tokens
        )
        lead = [{"role": "system", "text": instructions}] if instructions else []
        history, input_tokens = fit_context(
            backend, lead, history, entries, 0 if counting else max_output, body.truncation
        )
        context = [
            ChatMessage(e["role"], e["text"], tuple(e.get("images", ())))
            for e in (*lead, *history, *entries)
        ]
        request = GenerationRequest(
            messages=context,
            max_output_tokens=max_output,
            temperature=sampling_value(body.temperature, info.temperature),
            top_p=sampling_value(body.top_p, info.top_p),
            seed=body.seed,
            constraint=constraint,
            tools=specs,
            tool_choice=choice,
            logprobs=LOGPROBS in (body.include or ()) or bool(body.top_logprobs),
            top_logprobs=body.top_logprobs or 0,
        )
        try:
            backend.validate(request)
        except RequestRejected as exc:
            about_schema = exc.param is not None and exc.param.endswith(("schema", "parameters"))
            raise bad_request(
                str(exc),
                param=exc.param,
                code="invalid_schema" if about_schema else "unsupported_value",
            ) from exc
        except BackendError as exc:  # the backend's exact context-window count, before any output
            if not counting:  # counting input tokens reserves no room for an output
                raise APIError(
                    exc.status,
                    str(exc),
                    param="input" if exc.status == 400 else None,
                    code=exc.code,
                ) from exc
        verbosity = body.text.verbosity if body.text and body.text.verbosity else "medium"
        echo = Echo(
            instructions,
            prompt_echo,
            tools,
            tool_choice,
            TextConfig(format=text_format, verbosity=verbosity),
        )
        return Turn(
            new_id("resp_"),
            int(time.time()),
            body,
            backend,
            echo,
            items,
            history,
            entries,
            request,
            input_tokens,
            project,
            conversation_id,
        )
