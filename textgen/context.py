"""The model's context: items rendered as context entries, and the context window checked.

A context entry is ``{role, text[, call_id][, images]}``. A stored response keeps its turn's entries,
so a later ``previous_response_id`` reads them back without rendering the items again.
"""

from __future__ import annotations

from typing import Any

import msgspec

from textgen.backends.base import Backend
from textgen.errors import bad_request
from textgen.files import FileService, inline_text
from textgen.sealing import Sealer
from textgen.stored_items import (
    FunctionCallItem,
    FunctionCallOutputItem,
    InputFilePart,
    InputImagePart,
    Item,
    MessageItem,
    OutputTextPart,
    ReasoningItem,
    ReasoningTextPart,
    RefusalPart,
)

__all__ = ["ContextRenderer", "fit_context", "output_entries"]

_MESSAGE_OVERHEAD = 3  # tokens of role framing per context entry


def output_entries(output: list[Item]) -> list[dict[str, Any]]:
    """The context entries of a turn's output items (reasoning does not carry over to the next turn)."""
    entries: list[dict[str, Any]] = []
    for item in output:
        if isinstance(item, MessageItem):
            entries.append(
                {
                    "role": "assistant",
                    "text": "".join(p.text for p in item.content if isinstance(p, OutputTextPart)),
                }
            )
        elif isinstance(item, FunctionCallItem):
            entries.append(
                {
                    "role": "assistant",
                    "call_id": item.call_id,
                    "text": f"[call {item.name} {item.arguments}]",
                }
            )
    return entries


class ContextRenderer:
    """Renders input items as context entries (reading uploaded files, opening sealed reasoning)."""

    def __init__(self, files: FileService, sealer: Sealer, max_file_bytes: int) -> None:
        self.files = files
        self.sealer = sealer
        self.max_file_bytes = max_file_bytes

    async def entry(
        self, project: str, item: Item, param: str, call_ids: set[str]
    ) -> dict[str, Any] | None:
        """Render one normalised input item as a context entry ``{role, text[, call_id]}``.

        A reasoning item gives none: reasoning is not carried into the next turn's context.
        """
        if isinstance(item, ReasoningItem):
            if item.encrypted_content is not None:
                try:
                    sealed = msgspec.convert(
                        self.sealer.open(item.encrypted_content)["content"], list[ReasoningTextPart]
                    )
                except (ValueError, TypeError, KeyError, msgspec.ValidationError) as exc:
                    raise bad_request(
                        f"The encrypted_content of reasoning item {item.id!r} could not be "
                        f"read: {exc}.",
                        param=f"{param}.encrypted_content",
                        code="invalid_encrypted_content",
                    ) from exc
                item.content = item.content or sealed
            return None
        if isinstance(item, FunctionCallItem):
            call_ids.add(item.call_id)
            return {
                "role": "assistant",
                "call_id": item.call_id,
                "text": f"[call {item.name} {item.arguments}]",
            }
        if isinstance(item, FunctionCallOutputItem):
            if item.call_id not in call_ids:
                raise bad_request(
                    f"No tool call found for function call output with call_id {item.call_id!r}.",
                    param=f"{param}.call_id",
                    code="invalid_value",
                )
            return {"role": "tool", "call_id": item.call_id, "text": item.output}
        texts: list[str] = []
        images: list[str] = []
        for j, part in enumerate(item.content):
            where = f"{param}.content[{j}]"
            if isinstance(part, RefusalPart):
                texts.append(part.refusal)
            elif isinstance(part, InputImagePart):
                texts.append("[image]")
                if part.image_url:
                    images.append(part.image_url)
                else:  # an uploaded image must exist in this project
                    await self.files.get(project, part.file_id or "", f"{where}.file_id")
            elif isinstance(part, InputFilePart) and isinstance(part.file_data, str):
                data, part.file_data = part.file_data, msgspec.UNSET  # read once, not stored
                name, text = inline_text(data, part.filename, where, self.max_file_bytes)
                texts.append(f"[file {name}]\n{text}")
            elif isinstance(part, InputFilePart):
                name, text = await self.files.text(project, part.file_id or "", f"{where}.file_id")
                part.filename = name
                texts.append(f"[file {name}]\n{text}")
            else:
                texts.append(part.text)
        entry = {"role": item.role, "text": "\n".join(texts)}
        return {**entry, "images": images} if images else entry


def fit_context(
    backend: Backend,
    lead: list[dict[str, Any]],
    history: list[dict[str, Any]],
    entries: list[dict[str, Any]],
    max_output: int,
    truncation: str | None,
) -> tuple[list[dict[str, Any]], int]:
    """Check the context window; with ``truncation='auto'`` drop the oldest history first."""

    def cost(es: list[dict[str, Any]]) -> int:
        return sum(backend.count_tokens(e["text"]) + _MESSAGE_OVERHEAD for e in es)

    window = backend.info.context_window
    fixed = cost(lead) + cost(entries)
    costs = [backend.count_tokens(e["text"]) + _MESSAGE_OVERHEAD for e in history]
    total = fixed + sum(costs)
    start = 0
    while truncation == "auto" and total + max_output > window and start < len(history):
        total -= costs[start]
        start += 1
    if total + max_output > window:
        raise bad_request(
            f"This model's maximum context length is {window} tokens. However, you requested "
            f"{total + max_output} tokens ({total} in the input, {max_output} for the output). "
            "Shorten the input or lower max_output_tokens.",
            param="input",
            code="context_length_exceeded",
        )
    return history[start:], total
