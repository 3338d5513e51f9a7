"""The `sleuth` command: a thin adapter over `Sleuth`; no pipeline logic lives here.

Each command imports the pipeline, the settings and the store when it runs, so that
`sleuth --help`, `sleuth search --help` and every command pay only for what they use
(`tests/api/test_cli_imports.py`).

Exit status: 0 when a search answered (even degraded), 2 for invalid input or a
refused query, 1 for a broken configuration.
"""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from sleuth.api import (
    cli_extract,
    cli_fields,
    cli_guard,
    cli_mcp,
    cli_providers,
    cli_serve,
    cli_tools,
    cli_usage,
    cli_workflows,
)
from sleuth.api.cli_errors import exit_with_error
from sleuth.api.cli_help import ReadableHelpGroup

if TYPE_CHECKING:
    from sleuth.config import KnowledgeBaseConfig
    from sleuth.contract import SearchResponse

app = typer.Typer(
    name="sleuth",
    help="Search for AI agents: many back ends, one strict contract, cited results.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=ReadableHelpGroup,
)

app.add_typer(cli_fields.app, name="fields")
app.add_typer(cli_serve.keys_app, name="keys")
app.command("serve")(cli_serve.serve_command)
app.command("worker")(cli_serve.worker_command)
app.command("mcp")(cli_mcp.mcp_command)
app.command("guard")(cli_guard.guard_command)
app.command("extract")(cli_extract.extract_command)
app.command("providers")(cli_providers.providers_command)
app.command("usage")(cli_usage.usage_command)
app.command("audit")(cli_usage.audit_command)
app.command("tool")(cli_tools.tool_command)
app.command("run")(cli_workflows.run_command)
cache_app = typer.Typer(
    help="The local response cache.", no_args_is_help=True, cls=ReadableHelpGroup
)
app.add_typer(cache_app, name="cache")


def out() -> Console:
    # Made per use, so the terminal width (COLUMNS) is read when printing, not at import.
    return Console(soft_wrap=True)


def err() -> Console:
    return Console(stderr=True, soft_wrap=True)


ConfigOption = Annotated[
    Path | None, typer.Option("--config", help="sleuth.yaml to use (default: $SLEUTH_CONFIG).")
]


class SchemaName(StrEnum):
    input = "input"
    output = "output"
    error = "error"


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="The question, in its full original wording.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the SearchResponse JSON.")] = False,
    providers: Annotated[
        str | None,
        typer.Option("--providers", help="Comma-separated back ends, e.g. local,wikipedia."),
    ] = None,
    max_results: Annotated[int, typer.Option("--max-results", help="1..20.")] = 5,
    time_range: Annotated[
        str, typer.Option("--time-range", help="any, past_week, past_month or past_year.")
    ] = "any",
    domain: Annotated[
        list[str] | None, typer.Option("--domain", help="Only this domain (repeatable).")
    ] = None,
    include: Annotated[
        list[str] | None,
        typer.Option("--include", help="Add an optional field, e.g. url (repeatable)."),
    ] = None,
    context: Annotated[
        list[str] | None,
        typer.Option("--context", help="An earlier turn, oldest first (repeatable)."),
    ] = None,
    priority: Annotated[str, typer.Option("--priority", help="normal or high.")] = "normal",
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Skip the response cache.")] = False,
    config: ConfigOption = None,
    record: Annotated[
        Path | None,
        typer.Option("--record", help="Append each provider exchange to this cassette."),
    ] = None,
    replay: Annotated[
        Path | None, typer.Option("--replay", help="Answer provider calls from this cassette.")
    ] = None,
) -> None:
    """Search and print cited results."""
    from sleuth.config import load_settings
    from sleuth.errors import SearchError
    from sleuth.gateway import Sleuth, parse_request
    from sleuth.observe import call_context

    raw: dict[str, Any] = {
        "query": query,
        "max_results": max_results,
        "time_range": time_range,
        "domain_filter": domain or [],
        "include": include or [],
        "context": context or [],
        "priority": priority,
        "no_cache": no_cache,
    }
    if providers is not None:
        raw["providers"] = [name.strip() for name in providers.split(",") if name.strip()]
    try:
        overrides: dict[str, Any] = {}
        if replay is not None:
            overrides["replay"] = replay
        if record is not None:
            overrides["record"] = record
        settings = load_settings(config, **overrides)
        request = parse_request(raw)
        if not as_json and not request.include and "url" in settings.projection.optional:
            # A person reading the table wants to see where each answer came from.
            request = request.model_copy(update={"include": ["url"]})
        with call_context(tool_name="cli"):
            response = Sleuth(settings).search_sync(request)
    except SearchError as exc:
        raise exit_with_error(exc, as_json) from None
    if as_json:
        out().print_json(response.model_dump_json(exclude_none=False))
    else:
        _print_response(response)


def _print_response(response: SearchResponse) -> None:
    console = out()
    console.print(
        f"[bold]{escape(response.query)}[/]  "
        f"[dim](searched as: {escape(response.rewritten_query)})[/]"
    )
    if response.summary:
        console.print()
        for sentence in response.summary:
            marks = "".join(f"[{c.result + 1}]" for c in sentence.citations)
            console.print(f"  {escape(sentence.text)} [cyan]{escape(marks)}[/]", highlight=False)
    for fact in response.facts:
        values = "; ".join(
            f"{value.value:g}{' ' + fact.unit if fact.unit else ''} ({', '.join(value.domains)})"
            for value in fact.values
        )
        console.print(f"  [dim]fact[/] {escape(fact.attribute)}: {fact.status}: {escape(values)}")
    for number, item in enumerate(response.results, start=1):
        console.print(f"\n[bold cyan]\\[{number}][/] [bold]{escape(item.title)}[/]")
        console.print(f"    {escape(item.snippet)}")
        if item.degraded:
            console.print(f"    [yellow](degraded: missing {', '.join(item.missing or [])})[/]")
        if item.url:
            console.print(f"    [dim]source:[/] {escape(item.url)}", highlight=False)
        if item.published_at:
            console.print(f"    [dim]published:[/] {item.published_at:%Y-%m-%d}", highlight=False)
    stats = ", ".join(
        f"{name} {report.status} {report.results} in {report.latency_ms:.0f} ms"
        for name, report in response.providers.items()
    )
    confidence = "" if response.confidence is None else f"; confidence {response.confidence:.2f}"
    total = response.timings.get("total", 0)
    console.print(f"\n[dim]providers: {stats}; total {total:.0f} ms{confidence}[/]")
    for error in response.errors:
        where = f"{error.provider}: " if error.provider else ""
        console.print(f"[yellow]{error.code}[/] {escape(where + error.message)}", highlight=False)


@app.command()
def index(
    path: Annotated[
        Path | None,
        typer.Argument(
            help="Folder (or file) of Markdown, text, HTML, PDF and Word files; "
            "none: the configured kb.sources."
        ),
    ] = None,
    source: Annotated[
        list[str] | None,
        typer.Option("--source", help="Index this configured source (repeatable)."),
    ] = None,
    due: Annotated[
        bool, typer.Option("--due", help="Index only the sources whose schedule is due.")
    ] = False,
    exclude: Annotated[
        list[str] | None,
        typer.Option(
            "--exclude",
            help="Glob of files or folders to leave out (repeatable), besides kb.exclude.",
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Index a folder, or the configured sources, into the local knowledge base
    (incremental).

    Exit status: 0 when something was indexed (or, with --due, nothing was due), 1 when
    there is nothing to index, 2 for a path that does not exist or is neither a folder
    nor a file it reads and for an unknown source, 3 when another `sleuth index` is
    writing to the same knowledge base.
    """
    from sleuth import kb
    from sleuth.config import load_settings
    from sleuth.errors import SearchError

    if path is not None and not path.exists():
        err().print(f"[bold red]error[/]: path: {escape(str(path))} does not exist")
        raise typer.Exit(2)
    if path is not None and not (path.is_dir() or kb.readable_file(path)):
        err().print(
            f"[bold red]error[/]: path: {escape(str(path))} is neither a folder nor a "
            "Markdown, text, HTML, PDF or Word file"
        )
        raise typer.Exit(2)
    try:
        settings = load_settings(config)
    except SearchError as exc:
        raise exit_with_error(exc, as_json=False) from None
    names = _sources_to_index(settings.kb, path, source or [], due=due)
    extra = exclude or []
    if path is not None:
        _index_one(settings.kb, escape(str(path)), path, None, extra)
    for name in names:
        _index_one(settings.kb, f"source {escape(name)}", None, name, extra)
    if due and not names:
        out().print("no source is due", highlight=False)
    if path is None and not source and not due:  # every configured source: the rest go
        _prune(settings.kb)


def _prune(conf: KnowledgeBaseConfig) -> None:
    """Remove what sources no longer in kb.sources indexed, and say so."""
    from sleuth import kb

    try:
        dropped = kb.prune_sources(conf.path, list(conf.sources))
    except kb.IndexBusy as exc:
        err().print(f"[bold red]error[/]: {escape(str(exc))}", highlight=False)
        raise typer.Exit(3) from None
    for name, count in dropped.items():
        out().print(
            f"removed {count} documents of source {escape(name)}, no longer in kb.sources",
            highlight=False,
        )


def _sources_to_index(
    conf: KnowledgeBaseConfig, path: Path | None, asked: list[str], *, due: bool
) -> list[str]:
    """The configured sources a `sleuth index` run indexes (exit 2 for a wrong ask)."""
    from sleuth import kb

    configured = list(conf.sources)
    if path is not None:
        if asked or due:
            err().print("[bold red]error[/]: name a PATH or sources (--source, --due), not both")
            raise typer.Exit(2)
        return []
    for name in asked:
        if name.lower() not in conf.sources:
            allowed = ", ".join(configured) or "none configured (kb.sources in sleuth.yaml)"
            err().print(
                f"[bold red]error[/]: --source: {escape(name)!r} is not a source; "
                f"sources: {escape(allowed)}",
                highlight=False,
            )
            raise typer.Exit(2)
    if not configured:
        err().print(
            "[bold red]error[/]: nothing to index: name a folder (`sleuth index PATH`) or "
            "configure kb.sources in sleuth.yaml (docs/knowledge-base.md)",
            highlight=False,
        )
        raise typer.Exit(1)
    names = [name.lower() for name in asked] or configured
    if due:
        picked = {name: conf.sources[name] for name in names}
        names = kb.due_sources(picked, kb.last_indexed(conf.path), datetime.now(UTC))
    return list(dict.fromkeys(names))


def _index_one(
    conf: KnowledgeBaseConfig, label: str, path: Path | None, source: str | None, extra: list[str]
) -> None:
    """Index one folder or one source with a progress bar, and print what it did."""
    from sleuth import kb

    with Progress(
        TextColumn("indexing"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        console=err(),
        transient=True,
        # No refresh thread: with none, the indexer can fork its parse workers instead
        # of starting them from a fork server (seconds of CPU); `advance` redraws.
        auto_refresh=False,
    ) as progress:
        task = progress.add_task("", total=None)
        drawn = [0.0]

        def advance(done: int, total: int, current: Path) -> None:
            now = time.monotonic()
            redraw = now - drawn[0] >= 0.1 or done == total
            if redraw:
                drawn[0] = now
            progress.update(
                task, completed=done, total=total, description=current.name, refresh=redraw
            )

        options: dict[str, Any] = {
            "tokenizer": conf.tokenizer,
            "progress": advance,
            "exclude": [*conf.exclude, *extra],
            "workers": None,  # a process per CPU parses a large folder
        }
        try:
            if source is None:
                assert path is not None  # noqa: S101 - one of the two is given
                report = kb.index_folder(conf.path, path, **options)
            else:
                report = kb.index_source(conf.path, source, conf.sources[source], **options)
        except kb.IndexBusy as exc:
            progress.stop()
            err().print(f"[bold red]error[/]: {escape(str(exc))}", highlight=False)
            raise typer.Exit(3) from None
        except FileNotFoundError as exc:
            progress.stop()
            err().print(f"[bold red]error[/]: {escape(str(exc))}", highlight=False)
            raise typer.Exit(2) from None
    skipped = f", {report.skipped} skipped" if report.skipped else ""
    out().print(
        f"indexed {label} into {escape(str(conf.path))}: {report.added} added, "
        f"{report.updated} updated, {report.unchanged} unchanged, {report.removed} removed "
        f"({report.files} files{skipped})",
        highlight=False,
    )
    if report.not_text:
        shown = ", ".join(report.not_text[:5]) + (", …" if len(report.not_text) > 5 else "")
        out().print(
            f"not text (binary, in no encoding, or an unreadable PDF or Word file), skipped: "
            f"{escape(shown)}",
            highlight=False,
        )
    if report.files - report.skipped <= 0 and not report.removed:
        err().print(
            f"[bold red]error[/]: nothing to index in {label}: no readable "
            "Markdown (.md), text (.txt), HTML (.html), PDF (.pdf) or Word (.docx) files"
            " outside the excluded folders",
            highlight=False,
        )
        raise typer.Exit(1)


@app.command()
def schema(
    which: Annotated[SchemaName, typer.Argument(help="input, output or error.")] = SchemaName.input,
) -> None:
    """Print the JSON Schema an agent sees for the search tool."""
    from sleuth.contract import SCHEMAS

    out().print_json(json.dumps(SCHEMAS[which.value].model_json_schema(), ensure_ascii=False))


@cache_app.command("prune")
def cache_prune(
    config: ConfigOption = None,
    min_hits: Annotated[
        int | None,
        typer.Option("--min-hits", min=0, help="Remove entries read fewer times than this."),
    ] = None,
    older_than_days: Annotated[
        float | None,
        typer.Option("--older-than-days", min=0, help="...and created more days ago than this."),
    ] = None,
) -> None:
    """Remove rarely read old answers from the cache (defaults: cache.prune_* in the
    config); safe to run from cron while the service runs."""
    from sleuth.config import load_settings
    from sleuth.errors import SearchError
    from sleuth.store import open_store

    try:
        settings = load_settings(config)
    except SearchError as exc:
        raise exit_with_error(exc, as_json=False) from None
    hits = settings.cache.prune_min_hits if min_hits is None else min_hits
    days = settings.cache.prune_older_than_days if older_than_days is None else older_than_days

    async def prune() -> int:
        store = open_store(settings.store)
        try:
            return await store.prune_cache(time.time(), min_hits=hits, older_than_days=days)
        finally:
            await store.aclose()

    try:
        removed = asyncio.run(prune())
    except SearchError as exc:  # a store of another schema version
        raise exit_with_error(exc, as_json=False) from None
    where = settings.store.path if settings.store.backend == "sqlite" else "the memory store"
    out().print(
        f"removed {removed} cached answers read fewer than {hits} times and older than "
        f"{days:g} days from {where}",
        highlight=False,
    )


def main() -> None:
    app()


if __name__ == "__main__":
    main()
