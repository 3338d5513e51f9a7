"""How every `sleuth` command ends on an error: the error contract, and the exit code.

Exit 1 for a configuration error (nothing was tried), 2 for any other refusal. With
`as_json` the errors go to stdout as `{"errors": [...]}` (each `ErrorInfo`, a refused
request's every field), for scripts; otherwise one line to stderr.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from sleuth.errors import SearchError

__all__ = ["exit_with_error"]


def exit_with_error(error: SearchError, as_json: bool = False) -> typer.Exit:
    """Print `error` and return the `typer.Exit` to raise."""
    from sleuth.errors import ConfigError, InvalidRequest  # loaded by then: `error` is one

    details = error.details if isinstance(error, InvalidRequest) else [error.info()]
    if as_json:
        payload = {"errors": [d.model_dump(mode="json", exclude_none=True) for d in details]}
        Console(soft_wrap=True).print_json(json.dumps(payload, ensure_ascii=False))
    else:
        Console(stderr=True, soft_wrap=True).print(
            f"[bold red]error[/]: {escape(error.message)}", highlight=False
        )
    return typer.Exit(1 if isinstance(error, ConfigError) else 2)
