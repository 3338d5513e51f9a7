"""`sleuth run WORKFLOW.yaml [--input k=v ...] [--key KEY]`: run a workflow as a task in
the configured store and wait for it. A thin adapter over `TaskRunner`; no workflow
logic lives here. `sleuth.api.cli` registers `run_command`.

The run is a task like any other (its events are its checkpoints), worked on by
this process. With `--key`, a second `sleuth run` with the same key is the same run:
after a crash it resumes at the step and item the first one reached (once that
worker's lease has run out), and after a success it prints the finished run.
Relative sink paths in the file are taken from the file's folder.

Exit status: 0 when the run succeeded (items that failed are listed), 3 when it
failed, 2 for invalid inputs, 1 for a broken configuration or workflow file.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from sleuth.api.cli_errors import exit_with_error

if TYPE_CHECKING:
    from sleuth.config import Settings
    from sleuth.contract import Task

__all__ = ["run_command"]

#: How long `sleuth run` waits for its run (a crashed earlier attempt's lease included).
_WAIT_S = 24 * 3600.0


async def _run(settings: Settings, file: Path, pairs: list[str], key: str | None) -> Task:
    from sleuth.gateway import Sleuth
    from sleuth.store import open_store
    from sleuth.tasks import TaskRunner
    from sleuth.workflows.arguments import from_command_line
    from sleuth.workflows.workflow_book import load_workflow

    workflow = load_workflow(file)
    inputs = from_command_line(workflow.inputs, pairs)
    async with Sleuth(settings) as sleuth:
        # As `sleuth serve` does: tasks live in the configured store whatever answers
        # the back ends' calls (a replayed run keeps breakers and cache in memory).
        store = sleuth.store if settings.replay is None else open_store(settings.store)
        try:
            runner = TaskRunner(sleuth, store, schedules=False)
            task, _ = await runner.submit_workflow(
                workflow, inputs, idempotency_key=key, base_dir=str(file.resolve().parent)
            )
            if task.status in ("success", "failed"):
                return await runner.get(task.task_id)
            async with runner:
                return await runner.wait(task.task_id, timeout_s=_WAIT_S)
        finally:
            if store is not sleuth.store:
                await store.aclose()


def run_command(
    file: Annotated[Path, typer.Argument(help="The workflow's YAML file.")],
    input_: Annotated[
        list[str] | None,
        typer.Option("--input", "-i", help="An input as NAME=VALUE (repeatable)."),
    ] = None,
    key: Annotated[
        str | None,
        typer.Option("--key", help="Idempotency key: the same key is the same run (resumes)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the task JSON.")] = False,
    config: Annotated[
        Path | None, typer.Option("--config", help="sleuth.yaml to use (default: $SLEUTH_CONFIG).")
    ] = None,
) -> None:
    """Run a workflow (steps, for_each, sinks) once and wait for it."""
    from sleuth.config import load_settings
    from sleuth.errors import SearchError

    try:
        task = asyncio.run(_run(load_settings(config), file, input_ or [], key))
    except SearchError as exc:
        raise exit_with_error(exc, as_json) from None
    console = Console(soft_wrap=True)
    if as_json:
        console.print_json(task.model_dump_json())
    else:
        _print(console, task)
    if task.status != "success":
        raise typer.Exit(3)


def _print(console: Console, task: Task) -> None:
    console.print(f"[bold]{escape(task.workflow or '')}[/] {task.task_id}: {task.status}")
    if task.error is not None:
        console.print(f"[red]{task.error.code}[/] {escape(task.error.message)}", highlight=False)
    run = task.run
    if run is None:
        return
    for step in run.steps:
        parts = [
            f"{name} {value}"
            for name, value in (
                ("items", step.items),
                ("written", step.written),
                ("failed", step.failed),
            )
            if value is not None
        ]
        resumed = " (from the earlier attempt)" if step.resumed else ""
        console.print(f"  {escape(step.id)} [{step.kind}] {', '.join(parts)}{resumed}")
    console.print(f"written: {run.written}; attempt {run.attempt}")
    for item in run.failed:
        console.print(
            f"  [yellow]failed[/] {escape(item.step)} {escape(item.key)}: "
            f"{item.code}: {escape(item.reason)}",
            highlight=False,
        )
