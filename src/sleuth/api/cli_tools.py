"""`sleuth tool [NAME] [--param k=v ...]`: list the declared tools, or call one. A thin
adapter over `ToolBox`; `sleuth.api.cli` registers `tool_command`.

`--param` values are read as the parameter's type (`--param days=7` is the integer
7) and checked as HTTP and MCP check them. Exit status: 0 when the tool answered
(even degraded, or with a failed part), 2 for an unknown tool or a bad argument
(the error names the parameter and its allowed values), 1 for a broken configuration.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from sleuth.api.cli_errors import exit_with_error

if TYPE_CHECKING:
    from sleuth.gateway import Sleuth
    from sleuth.workflows.toolbox import ToolAnswer, ToolBox

__all__ = ["tool_command"]


async def _call(sleuth: Sleuth, name: str, pairs: list[str]) -> ToolAnswer:
    from sleuth.observe import call_context
    from sleuth.workflows.arguments import from_command_line
    from sleuth.workflows.toolbox import ToolBox

    toolbox = ToolBox(sleuth)
    arguments = from_command_line(toolbox.get(name).parameters, pairs)
    try:
        # The Chinese segmenter's dictionary loads here, not inside a search's deadline
        # (a template's query may be Chinese whatever the arguments are).
        await sleuth.warm_up()
        with call_context(tool_name="cli"):
            return await toolbox.call(name, arguments)
    finally:
        await sleuth.aclose()


def tool_command(
    name: Annotated[
        str | None, typer.Argument(help="A declared tool; leave out to list them.")
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option("--param", "-p", help="An argument as NAME=VALUE (repeatable)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result JSON.")] = False,
    config: Annotated[
        Path | None, typer.Option("--config", help="sleuth.yaml to use (default: $SLEUTH_CONFIG).")
    ] = None,
) -> None:
    """Call a declared tool (tools: in sleuth.yaml, tools_dir), or list them."""
    from sleuth.api.answer_text import render_composite_text, render_text
    from sleuth.config import load_settings
    from sleuth.errors import SearchError
    from sleuth.gateway import Sleuth
    from sleuth.workflows.composite import CompositeResponse
    from sleuth.workflows.toolbox import ToolBox

    try:
        sleuth = Sleuth(load_settings(config))
        if name is None:
            _list(ToolBox(sleuth), as_json)
            return
        answer = asyncio.run(_call(sleuth, name, param or []))
    except SearchError as exc:
        raise exit_with_error(exc, as_json) from None
    console = Console(soft_wrap=True)
    if as_json:
        console.print_json(answer.model_dump_json())
    elif isinstance(answer, CompositeResponse):
        console.print(escape(render_composite_text(answer)), highlight=False)
    else:
        console.print(escape(render_text(answer)), highlight=False)


def _list(toolbox: ToolBox, as_json: bool) -> None:
    console = Console(soft_wrap=True)
    tools = [toolbox.get(name) for name in toolbox.names()]
    if as_json:
        console.print_json(json.dumps([tool.model_dump(mode="json") for tool in tools]))
        return
    if not tools:
        console.print("no declared tools (tools: in sleuth.yaml, or *.yaml files in tools_dir)")
    for tool in tools:
        kind = "composite" if tool.composite else "search"
        params = ", ".join(
            f"{key}{'' if spec.required else '?'}: {spec.type}"
            for key, spec in tool.parameters.items()
        )
        console.print(f"[bold]{escape(tool.name)}[/] ({kind}; {escape(params)})", highlight=False)
        console.print(f"    {escape(tool.description)}", highlight=False)
