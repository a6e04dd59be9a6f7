"""Uploaded files: bytes under ``<data_dir>/files``, metadata in the store.

An ``input_file`` content part (or prompt variable) puts a file's text into the
context. Text-like files are supported (plain text, Markdown, CSV/TSV, JSON,
JSON Lines, YAML, XML/HTML, logs, source code) when they decode as UTF-8; any
other type is a clear 400 naming the part.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import time
from pathlib import Path, PurePath

from litestar.datastructures import UploadFile

from textgen.errors import APIError, bad_request, not_found
from textgen.store import FileRecord, Store, new_id

__all__ = ["PURPOSES", "TEXT_EXTENSIONS", "FileService", "decode_text", "inline_text"]

PURPOSES = frozenset({"assistants", "batch", "fine-tune", "vision", "user_data", "evals"})
TEXT_EXTENSIONS = frozenset(
    {".txt", ".text", ".md", ".markdown", ".csv", ".tsv", ".json", ".jsonl", ".ndjson", ".yaml",
     ".yml", ".xml", ".html", ".htm", ".log", ".rst", ".py", ".toml", ".ini", ".sql"}
)
_CHUNK = 1 << 20


def decode_text(filename: str, data: bytes, param: str) -> str:
    """The text of a supported file.

    Raises:
        APIError: 400 ``unsupported_file`` for other types or non-UTF-8 bytes.
    """
    suffix = PurePath(filename).suffix.lower()
    if suffix not in TEXT_EXTENSIONS:
        kinds = ", ".join(sorted(TEXT_EXTENSIONS))
        raise bad_request(
            f"File type {suffix or '(none)'!r} of {filename!r} is not supported as input; "
            f"supported: {kinds}.",
            param=param,
            code="unsupported_file",
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise bad_request(
            f"File {filename!r} is not valid UTF-8 text.", param=param, code="unsupported_file"
        ) from exc


class FileService:
    """Stores and reads uploaded files.

    Args:
        store: Metadata store.
        root: Directory for the bytes.
        max_bytes: Upload size limit (413 beyond it).
    """

    def __init__(self, store: Store, root: Path, max_bytes: int) -> None:
        self.store = store
        self.root = root
        self.max_bytes = max_bytes

    def _path(self, file_id: str) -> Path:
        return self.root / file_id

    async def create(self, project: str, upload: UploadFile, purpose: str) -> FileRecord:
        """Save an upload and its metadata.

        Raises:
            APIError: 400 for a bad purpose or empty file name, 413 when too large.
        """
        if purpose not in PURPOSES:
            raise bad_request(
                f"Invalid purpose {purpose!r}; expected one of {', '.join(sorted(PURPOSES))}.",
                param="purpose",
                code="invalid_value",
            )
        filename = PurePath(upload.filename or "").name
        if not filename:
            raise bad_request("The uploaded file needs a file name.", param="file")
        file_id = new_id("file-")
        self.root.mkdir(parents=True, exist_ok=True)
        path, size = self._path(file_id), 0
        try:
            with path.open("wb") as out:
                while chunk := await upload.read(_CHUNK):
                    size += len(chunk)
                    if size > self.max_bytes:
                        raise APIError(
                            413,
                            f"File {filename!r} is larger than the limit of {self.max_bytes} bytes.",
                            param="file",
                            code="file_too_large",
                        )
                    await asyncio.to_thread(out.write, chunk)
            record = FileRecord(file_id, filename, size, purpose, int(time.time()), project)
            await self.store.add_file(record)
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        return record

    async def get(self, project: str, file_id: str, param: str = "file_id") -> FileRecord:
        """Metadata of a project's file; 404 if unknown (or another project's)."""
        record = await self.store.get_file(file_id, project)
        if record is None:
            raise not_found(f"No such file: {file_id!r}.", param=param, code="file_not_found")
        return record

    async def list_files(self, project: str, purpose: str | None = None) -> list[FileRecord]:
        """A project's files (optionally of one ``purpose``), newest first."""
        return await self.store.list_files(project, purpose)

    async def exists(self, project: str, file_id: str) -> bool:
        """Whether ``project`` has this file."""
        return await self.store.get_file(file_id, project) is not None

    async def content(self, project: str, file_id: str, param: str = "file_id") -> tuple[FileRecord, bytes]:
        """Metadata and bytes of a project's file; 404 if unknown."""
        record = await self.get(project, file_id, param)
        try:
            data = await asyncio.to_thread(self._path(file_id).read_bytes)
        except FileNotFoundError as exc:
            raise not_found(f"The bytes of file {file_id!r} are missing.", param=param,
                            code="file_not_found") from exc
        return record, data

    async def text(self, project: str, file_id: str, param: str) -> tuple[str, str]:
        """File name and text of a project's stored file for the context."""
        record, data = await self.content(project, file_id, param)
        return record.filename, decode_text(record.filename, data, param)

    async def delete(self, project: str, file_id: str) -> None:
        """Delete a project's file (metadata and bytes); 404 if unknown."""
        if not await self.store.delete_file(file_id, project):
            raise not_found(f"No such file: {file_id!r}.", param="file_id", code="file_not_found")
        self._path(file_id).unlink(missing_ok=True)


def inline_text(file_data: str, filename: str | None, param: str, max_bytes: int) -> tuple[str, str]:
    """File name and text of an inline ``file_data`` (base64 or a ``data:`` URL)."""
    if not filename:
        raise bad_request("An inline 'file_data' needs a 'filename'.", param=f"{param}.filename")
    payload = file_data.split(",", 1)[1] if file_data.startswith("data:") else file_data
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise bad_request("'file_data' is not valid base64.", param=f"{param}.file_data") from exc
    if len(data) > max_bytes:
        raise APIError(413, f"Inline file {filename!r} exceeds {max_bytes} bytes.",
                       param=f"{param}.file_data", code="file_too_large")
    return filename, decode_text(filename, data, param)
