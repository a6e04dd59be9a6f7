"""Command line: ``python -m textgen serve | keys create NAME [--project P] | keys list | keys revoke KEY_ID | prompts create FILE [--project P]``."""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import sys
from pathlib import Path

import msgspec

from textgen.errors import APIError

__all__ = ["main"]


def _serve(args: argparse.Namespace) -> int:
    from service.logsafe import uvicorn_log_config
    from textgen.app import create_app
    from textgen.serving import serve
    from textgen.settings import Settings

    try:
        settings = Settings.from_env()
        app = create_app(settings)
    except ValueError as exc:  # bad TEXTGEN_* setting or model registry: say which, no traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2
    serve(app, args.host or settings.host, args.port or settings.port, args.log_level,
          log_config=uvicorn_log_config())
    return 0


def _utc(epoch: float) -> str:
    """An epoch in seconds as ISO 8601 UTC (``2026-11-26T15:28:11Z``)."""
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def _with_store(args: argparse.Namespace) -> str:
    from textgen.prompts import PromptService
    from textgen.schemas import PromptCreate
    from textgen.settings import Settings
    from textgen.store import Store

    settings = Settings.from_env()
    Path(settings.data_dir).mkdir(parents=True, exist_ok=True)
    store = Store(settings.resolved_database_url)
    try:
        await store.create_schema()
        if args.command == "prompts":
            body = msgspec.json.decode(Path(args.file).read_bytes(), type=PromptCreate)
            prompt = await PromptService(store).create(args.project, body)
            return msgspec.json.encode(prompt).decode()
        if args.action == "create":
            key_id, key = await store.create_key(args.name, args.project)
            print(f"created {key_id} in project {args.project!r}; the key is shown only once:", file=sys.stderr)
            return key
        if args.action == "revoke":
            if not await store.revoke_key(args.key_id):
                raise ValueError(f"no live key with id {args.key_id!r}")
            return f"revoked {args.key_id}"
        rows = [f"{k.id}\t{k.name}\t{k.project}\t{_utc(k.created_at)}\t{'revoked' if k.revoked_at else 'active'}"
                for k in await store.list_keys()]
        return "\n".join(["id\tname\tproject\tcreated_at\tstatus", *rows])
    finally:
        await store.dispose()


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m textgen", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve the API (default 127.0.0.1:8001, routes under /v1)")
    serve.add_argument("--host", default=None, help="bind address (default TEXTGEN_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, default=None, help="port (default TEXTGEN_PORT or 8001)")
    serve.add_argument("--log-level", default="info")
    keys = commands.add_parser("keys", help="manage API keys").add_subparsers(dest="action", required=True)
    create = keys.add_parser("create", help="create a key and print it (shown only once)")
    create.add_argument("name")
    create.add_argument("--project", default="default", help="the project the key works in (default: default)")
    keys.add_parser("list", help="list keys (id, name, project, created_at, status), never the keys")
    keys.add_parser("revoke", help="revoke a key: refused from its next request").add_argument("key_id")
    prompts = commands.add_parser("prompts", help="manage reusable prompts").add_subparsers(
        dest="action", required=True
    )
    prompts_create = prompts.add_parser(
        "create", help='create a prompt from a JSON file {"template", "name"?, "instructions"?}'
    )
    prompts_create.add_argument("file")
    prompts_create.add_argument("--project", default="default", help="the project that owns the prompt")
    args = parser.parse_args(argv)
    if args.command == "serve":
        return _serve(args)
    try:
        print(asyncio.run(_with_store(args)))
    except (OSError, ValueError, APIError) as exc:  # msgspec's errors are ValueErrors
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
