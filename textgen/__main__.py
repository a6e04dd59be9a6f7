"""Command line: ``python -m textgen serve|keys create NAME|prompts create FILE``."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import msgspec

from textgen.errors import APIError

__all__ = ["main"]


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from textgen.app import create_app
    from textgen.settings import Settings

    try:
        settings = Settings.from_env()
        app = create_app(settings)
    except ValueError as exc:  # bad TEXTGEN_* setting or model registry: say which, no traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2
    uvicorn.run(
        app,
        host=args.host or settings.host,
        port=args.port or settings.port,
        log_level=args.log_level,
    )
    return 0


async def _with_store(action: str, value: str) -> str:
    from textgen.prompts import PromptService
    from textgen.schemas import PromptCreate
    from textgen.settings import Settings
    from textgen.store import Store

    settings = Settings.from_env()
    Path(settings.data_dir).mkdir(parents=True, exist_ok=True)
    store = Store(settings.resolved_database_url)
    try:
        await store.create_schema()
        if action == "key":
            return await store.create_key(value)
        body = msgspec.json.decode(Path(value).read_bytes(), type=PromptCreate)
        prompt = await PromptService(store).create(body)
        return msgspec.json.encode(prompt).decode()
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
    keys.add_parser("create", help="create a key and print it (shown only once)").add_argument("name")
    prompts = commands.add_parser("prompts", help="manage reusable prompts").add_subparsers(
        dest="action", required=True
    )
    prompts.add_parser(
        "create", help='create a prompt from a JSON file {"template", "name"?, "instructions"?}'
    ).add_argument("file")
    args = parser.parse_args(argv)
    if args.command == "serve":
        return _serve(args)
    try:
        if args.command == "keys":
            print(asyncio.run(_with_store("key", args.name)))
        else:
            print(asyncio.run(_with_store("prompt", args.file)))
    except (OSError, ValueError, APIError) as exc:  # msgspec's errors are ValueErrors
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
