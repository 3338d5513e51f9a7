"""`sleuth serve` and `sleuth keys`: the HTTP service and its API keys.

`sleuth serve` prints where the API, the MCP endpoint and the OpenAPI page are, then
runs uvicorn until SIGINT or SIGTERM; shutdown gives running tasks
`serve.shutdown_grace_s` to finish and puts the rest back in the queue.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from sleuth import keys
from sleuth.config import load_settings
from sleuth.errors import SearchError
from sleuth.service_settings import is_loopback
from sleuth.store import KeyRecord, open_store

__all__ = ["keys_app", "serve_command"]

keys_app = typer.Typer(help="API keys of the HTTP service.", no_args_is_help=True)

ConfigOption = Annotated[
    Path | None, typer.Option("--config", help="sleuth.yaml to use (default: $SLEUTH_CONFIG).")
]


def _err(message: str) -> None:
    Console(stderr=True, soft_wrap=True).print(f"[bold red]error[/]: {message}", highlight=False)


def serve_command(
    host: Annotated[
        str | None, typer.Option("--host", help="Address to bind (default: serve.host).")
    ] = None,
    port: Annotated[
        int | None, typer.Option("--port", help="Port to bind (default: serve.port).")
    ] = None,
    config: ConfigOption = None,
    replay: Annotated[
        Path | None, typer.Option("--replay", help="Every provider answers from this cassette.")
    ] = None,
) -> None:
    """Serve the HTTP API, server-sent task events and MCP (at /mcp)."""
    import uvicorn

    from sleuth.api.http import create_app

    overrides: dict[str, Any] = {"replay": replay} if replay is not None else {}
    try:
        settings = load_settings(config, **overrides)
    except SearchError as exc:
        _err(exc.message)
        raise typer.Exit(1) from None
    bind = host or settings.serve.host
    bind_port = settings.serve.port if port is None else port
    if settings.serve.auth == "off" and not is_loopback(bind):
        _err(f"serve.auth is off, which is refused on {bind}: bind to 127.0.0.1 or turn auth on")
        raise typer.Exit(1)
    auth = "on" if settings.serve.auth_required(bind) else "off (loopback only)"
    base = f"http://{bind}:{bind_port}"
    console = Console(soft_wrap=True)
    console.print(f"sleuth serving on [bold]{base}[/]  (API keys: {auth})", highlight=False)
    console.print(f"  API      {base}/v1/search   {base}/v1/tasks", highlight=False)
    console.print(f"  MCP      {base}/mcp", highlight=False)
    console.print(f"  OpenAPI  {base}/openapi.json   (docs: {base}/docs)", highlight=False)
    if replay is not None:
        console.print(f"  replay   every provider answers from {replay}", highlight=False)
    app = create_app(settings, bound_host=bind)
    uvicorn.run(app, host=bind, port=bind_port, log_level="warning", access_log=False)


@keys_app.command("create")
def create(
    tenant: Annotated[str, typer.Option("--tenant", help="Whose key: tasks are per tenant.")],
    name: Annotated[str, typer.Option("--name", help="A note to tell keys apart.")] = "",
    config: ConfigOption = None,
) -> None:
    """Make a key and print it once; only its hash is stored."""
    settings = load_settings(config)

    async def make() -> str:
        store = open_store(settings.store)
        try:
            key, _ = await keys.create_key(store, tenant, name=name, now=time.time())
        finally:
            await store.aclose()
        return key

    try:
        key = asyncio.run(make())
    except SearchError as exc:
        _err(exc.message)
        raise typer.Exit(2) from None
    print(key)  # noqa: T201 - the one time the key is shown; plain, for scripts
    Console(stderr=True).print(
        f"key for tenant {tenant!r} made; it is not shown again. Send it as "
        "'Authorization: Bearer <key>'.",
        highlight=False,
    )


@keys_app.command("list")
def list_keys(
    tenant: Annotated[str | None, typer.Option("--tenant", help="Only this tenant's.")] = None,
    config: ConfigOption = None,
) -> None:
    """List keys by prefix (never the keys themselves)."""
    settings = load_settings(config)

    async def read() -> list[KeyRecord]:
        store = open_store(settings.store)
        try:
            return await store.list_keys(tenant)
        finally:
            await store.aclose()

    table = Table("prefix", "tenant", "name", "created", "revoked")
    for record in asyncio.run(read()):
        created = time.strftime("%Y-%m-%d %H:%M", time.gmtime(record.created_at))
        table.add_row(record.prefix, record.tenant, record.name, created, str(record.revoked))
    Console(soft_wrap=True).print(table)


@keys_app.command("revoke")
def revoke(
    prefix: Annotated[str, typer.Argument(help="The key's prefix, as `keys list` shows it.")],
    config: ConfigOption = None,
) -> None:
    """Revoke a key: requests with it are refused from now on."""
    settings = load_settings(config)

    async def revoke_it() -> int:
        store = open_store(settings.store)
        try:
            return await store.revoke_key(prefix)
        finally:
            await store.aclose()

    revoked = asyncio.run(revoke_it())
    if not revoked:
        _err(f"no active key with prefix {prefix!r}")
        raise typer.Exit(2)
    Console(soft_wrap=True).print(f"revoked {revoked} key(s) with prefix {prefix}")
