"""`sleuth mcp`: serve the search tools over MCP on stdin and stdout, for desktop agents.

stdout carries the protocol, so everything else (logs, errors) goes to stderr.
Registered on the main command as `app.command("mcp")(cli_mcp.mcp_command)`; also
runnable as `python -m sleuth.api.cli_mcp`.

Exit status: 0 when the client closed the connection, 1 for a broken configuration,
2 for a missing replay cassette.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from pathlib import Path
from typing import Annotated, Any

import typer


def _complain(message: str) -> None:
    sys.stderr.write(f"error: {message}\n")


def mcp_command(
    config: Annotated[
        Path | None,
        typer.Option("--config", help="sleuth.yaml to use (default: $SLEUTH_CONFIG)."),
    ] = None,
    replay: Annotated[
        Path | None,
        typer.Option("--replay", help="Answer every provider call from this cassette."),
    ] = None,
) -> None:
    """Serve web_search and the task tools over MCP on stdin/stdout."""
    from sleuth.config import load_settings
    from sleuth.errors import SearchError

    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    if replay is not None and not replay.is_file():
        _complain(f"--replay: no cassette at {replay}")
        raise typer.Exit(2)
    overrides: dict[str, Any] = {} if replay is None else {"replay": replay}
    try:
        settings = load_settings(config, **overrides)
    except SearchError as exc:
        _complain(exc.message)
        raise typer.Exit(1) from None
    # Imported here so `sleuth --help` does not load the MCP SDK.
    from sleuth.api.mcp import run_stdio

    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a person at a terminal stops it
        run_stdio(settings)


def main() -> None:
    typer.run(mcp_command)


if __name__ == "__main__":
    main()
