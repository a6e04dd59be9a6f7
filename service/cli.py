"""The ``python -m service`` commands: serve, migrate, createuser, token, import-prices,
import-transactions."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from sqlalchemy import select

from service.db import Database, migrate
from service.db.models import User, username_key
from service.errors import ApiError
from service.settings import Settings

__all__ = ["main"]


def _db(settings: Settings) -> Database:
    return Database(
        settings.database, pool_size=2, busy_timeout=settings.sqlite_busy_timeout_seconds
    )


async def _migrate(settings: Settings) -> None:
    db = _db(settings)
    try:
        await migrate(db)
    finally:
        await db.dispose()


async def _prepare(settings: Settings) -> tuple[str, str] | None:
    """Migrate, sync assets, and seed the demo data when enabled (before workers start)."""
    from service.app import default_provider
    from service.demo import seed_demo, sync_assets

    db = _db(settings)
    try:
        await migrate(db)
        provider, _ = default_provider(settings)
        await sync_assets(db, provider)
        if settings.demo_data:
            return await seed_demo(db, provider, Path(settings.data_dir))
        return None
    finally:
        await db.dispose()


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    import uvicorn

    from quantcore.warmup import warm
    from service.logsafe import uvicorn_log_config

    demo = asyncio.run(_prepare(settings))
    if settings.warm_up:
        # Compiled into numba's cache here, once; each worker then loads it before /ready.
        warm(progress=sys.stderr.isatty())
    base = f"http://{args.host}:{args.port}"
    print(f"quantcore finance API on {base}/api/", flush=True)
    print(f"  web UI:       {base}/   (sign in with a user: the demo user below, if seeded)")
    print(f"  OpenAPI UI:   {base}/schema/swagger   (document: {base}/schema/openapi.json)")
    print(f"  health:       {base}/health   ready: {base}/ready")
    if demo is not None:
        from service.demo import DEMO_PASSWORD

        user, _ = demo  # the token stays in its file (mode 600), out of terminals and logs
        token_file = Path(settings.data_dir) / "demo-token.txt"
        print(f"  demo user:    {user} / {DEMO_PASSWORD}   (its API token is in {token_file})")
        print(
            f'  try:          curl -H "Authorization: Token $(cat {token_file})" {base}/api/portfolios/',
            flush=True,
        )
    uvicorn.run(
        "service.app:app_from_env",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level=args.log_level,
        log_config=uvicorn_log_config(),
        # SIGTERM: requests still running after 5 s are cut off (make serve stops within 10 s).
        timeout_graceful_shutdown=5,
        access_log=args.access_log,
        # Small JSON frames: per-message deflate costs more CPU per subscriber than it saves.
        ws_per_message_deflate=False,
        # Refuse big frames before reading them (the channel's own limit is 4 KiB).
        ws_max_size=65536,
        # The app reads X-Forwarded-* itself, from QC_TRUSTED_PROXIES only (service/middleware.py).
        proxy_headers=False,
    )
    return 0


def cmd_migrate(_: argparse.Namespace, settings: Settings) -> int:
    asyncio.run(_migrate(settings))
    print("database is at the latest revision")
    return 0


def cmd_createuser(args: argparse.Namespace, settings: Settings) -> int:
    from service.auth.services import create_user

    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = getpass.getpass("Password: ")
        if getpass.getpass("Password (again): ") != password:
            print("error: passwords do not match", file=sys.stderr)
            return 2

    async def run() -> None:
        db = _db(settings)
        try:
            await migrate(db)
            await create_user(db, args.name, password)
        finally:
            await db.dispose()

    try:
        asyncio.run(run())
    except ApiError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    print(f"user {args.name!r} created")
    return 0


def cmd_token(args: argparse.Namespace, settings: Settings) -> int:
    from service.auth.services import create_token

    async def run() -> str | None:
        db = _db(settings)
        try:
            async with db.read() as s:
                uid = (
                    await s.execute(
                        select(User.id).where(User.username_key == username_key(args.name))
                    )
                ).scalar_one_or_none()
            return None if uid is None else await create_token(db, uid, settings.token_ttl)
        finally:
            await db.dispose()

    token = asyncio.run(run())
    if token is None:
        print(f"error: no user named {args.name!r}", file=sys.stderr)
        return 1
    print(token)
    return 0


def cmd_import_prices(args: argparse.Namespace, settings: Settings) -> int:
    from service.assets.services import (
        CurrencyConflict,
        check_import_currency,
        upsert_imported_asset,
    )
    from service.marketdata.fx import CURRENCIES, fx_pair
    from service.marketdata.importers import PriceImportError, import_prices, read_price_file
    from service.marketdata.store import PriceStore, normalize_symbol

    if args.symbol and len(args.files) > 1:
        print("error: --symbol applies to one file only", file=sys.stderr)
        return 2
    if args.currency is not None and args.currency not in CURRENCIES:
        print(f"error: --currency must be one of {', '.join(CURRENCIES)}", file=sys.stderr)
        return 2
    symbols = []
    for path in args.files:
        try:
            symbols.append(normalize_symbol(args.symbol or Path(path).stem))
        except ValueError:
            pass  # import_prices names the problem
    options = [f"--{k.replace('_', '-')}" for k in ("name", "asset_type", "sector", "currency")
               if getattr(args, k) is not None]  # fmt: skip
    if options and (pairs := [s for s in symbols if fx_pair(s) is not None]):
        print(f"error: {', '.join(options)}: for assets only, not FX pairs ({', '.join(pairs)})",
              file=sys.stderr)  # fmt: skip
        return 2
    try:  # validate every file first: a bad file changes nothing
        for path in args.files:
            read_price_file(path)
    except PriceImportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    store = PriceStore(settings.prices_dir)

    async def run() -> None:
        db = _db(settings)
        try:
            await migrate(db)
            for symbol in symbols:  # a currency the provider contradicts changes nothing either
                await check_import_currency(db, symbol, args.currency)
            for path in args.files:
                result = import_prices(
                    path,
                    symbol=args.symbol,
                    asset_type=args.asset_type,
                    sector=args.sector,
                    name=args.name,
                    currency=args.currency,
                    store=store,
                )
                span = f"{result.symbol}: {result.rows} rows {result.first}..{result.last}"
                if result.fx_pair:
                    print(f"{span} (FX pair: rates, no asset)")
                    continue
                _, created = await upsert_imported_asset(db, result)
                verb = "new asset" if created else "attached to the existing asset"
                print(f"{span} ({verb})")
        finally:
            await db.dispose()

    try:
        asyncio.run(run())
    except (PriceImportError, CurrencyConflict) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def cmd_import_transactions(args: argparse.Namespace, settings: Settings) -> int:
    """Import a broker statement into a portfolio (as its owner); print the report as JSON."""
    import msgspec

    from service.db.models import Portfolio
    from service.imports import decode_mapping
    from service.imports.services import (
        ImportOptions,
        guess_format,
        import_statement,
        preview_statement,
    )
    from service.marketdata.fx import CURRENCIES

    path = Path(args.file)
    try:
        data = path.read_bytes()
    except OSError as exc:
        print(f"error: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 1
    fmt = args.format or guess_format(path.name, data)
    if fmt is None:
        print("error: --format ofx|csv is needed (the file name does not say)", file=sys.stderr)
        return 2
    try:
        mapping = decode_mapping(Path(args.mapping[1:]).read_text() if args.mapping and
                                 args.mapping.startswith("@") else args.mapping)  # fmt: skip
    except (ValueError, OSError) as exc:
        print(f"error: --mapping: {exc}", file=sys.stderr)
        return 2
    options = ImportOptions(
        format=fmt, mapping=mapping, preset=args.preset, dry_run=args.dry_run,
        create_assets=args.create_assets, currencies=CURRENCIES,  # the app's MarketData.currencies()
    )  # fmt: skip

    async def run() -> tuple[bytes, bool]:
        db = _db(settings)
        try:
            await migrate(db)
            async with db.read() as s:
                owner = (
                    await s.execute(select(Portfolio.user_id).where(Portfolio.id == args.portfolio))
                ).scalar_one_or_none()
            if owner is None:
                raise NotFound(f"no portfolio {args.portfolio}")
            if options.dry_run:
                report = await preview_statement(db, owner, args.portfolio, data, options)
            else:
                async with db.write() as s:  # the unit of work: committed unless it raises
                    report = await import_statement(s, owner, args.portfolio, data, options)
            return msgspec.json.format(msgspec.json.encode(report), indent=2), bool(report.errors)
        finally:
            await db.dispose()

    try:
        out, failed = asyncio.run(run())
    except NotFound as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except ApiError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        for e in exc.details.get("errors", []):
            where = f"line {e['line']}" if e["line"] else "file"
            print(f"  {where}: {e['field']}: {e['message']} ({e['code']})", file=sys.stderr)
        return 1
    print(out.decode())
    return 1 if failed else 0  # a dry run that found errors


class NotFound(Exception):
    """No such portfolio (the CLI's own error)."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m service", description="quantcore finance service"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="migrate, seed (QC_DEMO_DATA) and serve with uvicorn")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1)
    serve.add_argument("--log-level", default="info")
    serve.add_argument("--access-log", action=argparse.BooleanOptionalAction, default=False)
    serve.set_defaults(func=cmd_serve)
    sub.add_parser("migrate", help="upgrade the database schema").set_defaults(func=cmd_migrate)
    create = sub.add_parser("createuser", help="create a user (password prompted or from stdin)")
    create.add_argument("name")
    create.add_argument(
        "--password-stdin", action="store_true", help="read the password from stdin"
    )
    create.set_defaults(func=cmd_createuser)
    token = sub.add_parser("token", help="print a new API token for a user")
    token.add_argument("name")
    token.set_defaults(func=cmd_token)
    imp = sub.add_parser(
        "import-prices",
        help="import OHLCV from CSV (Yahoo style) or Parquet; an FX pair symbol (EURUSD) stores rates",
    )
    imp.add_argument("files", nargs="+")
    imp.add_argument("--symbol", default=None, help="ticker (default: file name)")
    imp.add_argument(
        "--asset-type",
        default=None,
        choices=["stock", "etf", "bond", "crypto"],
        help="default: kept for an existing asset, stock for a new one",
    )
    imp.add_argument("--sector", default=None, help="default: kept (new asset: empty)")
    imp.add_argument("--name", default=None, help="default: kept (new asset: the ticker)")
    imp.add_argument(
        "--currency",
        default=None,
        type=lambda code: code.strip().upper(),
        help="ISO 4217 code of the prices (USD, EUR, GBP, JPY); default: kept (new asset: USD)",
    )
    imp.set_defaults(func=cmd_import_prices)
    txn = sub.add_parser(
        "import-transactions",
        help="import a broker statement (OFX/QFX or CSV) into a portfolio, all or nothing",
    )
    txn.add_argument("portfolio", type=int, metavar="PORTFOLIO_ID")
    txn.add_argument("file", metavar="FILE")
    txn.add_argument(
        "--format", choices=["ofx", "csv"], default=None,
        help="default: from the file name (.ofx/.qfx/.csv) or its content",
    )  # fmt: skip
    txn.add_argument(
        "--mapping", default=None,
        help="CSV column mapping as JSON, or @FILE holding it (see docs/service.md)",
    )  # fmt: skip
    txn.add_argument(
        "--preset", choices=["schwab", "fidelity"], default=None,
        help="CSV layout (default: detected from the header)",
    )  # fmt: skip
    txn.add_argument(
        "--dry-run", action="store_true", help="report what would be added, write nothing"
    )
    txn.add_argument(
        "--create-assets", action="store_true",
        help="add unknown symbols as assets (in their rows' currency)",
    )  # fmt: skip
    txn.set_defaults(func=cmd_import_transactions)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m service``."""
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    # ofxtools logs a line per OFX element at INFO: its warnings and errors are enough
    logging.getLogger("ofxtools").setLevel(logging.WARNING)
    try:
        settings = Settings.from_env()
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return int(args.func(args, settings))
