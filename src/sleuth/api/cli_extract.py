"""`sleuth extract URL|FILE...`: read pages and print their main text. A thin
adapter over `Sleuth.extract` (URLs) and `sleuth.extract.local` (files); no
extraction logic lives here. `sleuth.api.cli` registers `extract_command`.

`--json` prints JSON Lines, one `ExtractedPage` per input, in input order; a page
that could not be read has its `error` in the line. Exit status: 0 when every page
was read, 3 when some could not be, 1 for a broken configuration.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from sleuth.config import Settings
    from sleuth.extract.models import ExtractedPage

__all__ = ["extract_command"]


def _is_url(text: str) -> bool:
    return text.lower().startswith(("http://", "https://"))


async def _read(
    settings: Settings, inputs: list[str], request: dict[str, Any]
) -> list[ExtractedPage]:
    from sleuth.extract.local import page_from_file
    from sleuth.gateway import Sleuth

    urls = [text for text in inputs if _is_url(text)]
    fetched: list[ExtractedPage] = []
    if urls:
        async with Sleuth(settings) as sleuth:
            fetched = (await sleuth.extract({**request, "urls": urls})).pages
    by_url = iter(fetched)
    limit = request.get("max_chars") or settings.extract.max_chars
    return [
        next(by_url)
        if _is_url(text)
        else page_from_file(
            Path(text),
            settings.injection,
            include_links=request["include_links"],
            max_chars=limit,
        )
        for text in inputs
    ]


def _print_page(console: Console, page: ExtractedPage) -> None:
    console.print(f"[bold]{escape(page.title or page.url)}[/]", highlight=False)
    console.print(f"[dim]{escape(page.final_url or page.url)}[/]", highlight=False)
    if page.error is not None:
        console.print(f"[yellow]{page.error.code}[/] {escape(page.error.message)}", highlight=False)
        return
    stated = [
        f"{label} {value:%Y-%m-%d}"
        for label, value in (("published", page.published_at), ("modified", page.modified_at))
        if value is not None
    ]
    about = [*stated, *(v for v in (page.author, page.site_name, page.language) if v)]
    if about:
        console.print(f"[dim]{escape(' · '.join(about))}[/]", highlight=False)
    if page.flags:
        console.print(f"[yellow]flags: {', '.join(page.flags)}[/]")
    console.print()
    console.print(escape(page.text), highlight=False)
    if page.truncated:
        console.print("[yellow](cut at the character limit)[/]")


def extract_command(
    inputs: Annotated[list[str], typer.Argument(help="http(s) URLs or local files (HTML, PDF).")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON Lines, one page per input, in order.")
    ] = False,
    links: Annotated[
        bool, typer.Option("--links", help="Also list the main text's links.")
    ] = False,
    max_chars: Annotated[
        int | None, typer.Option("--max-chars", help="Cut each text at this many characters.")
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Fetch again.")] = False,
    config: Annotated[
        Path | None,
        typer.Option("--config", help="sleuth.yaml to use (default: $SLEUTH_CONFIG)."),
    ] = None,
    record: Annotated[
        Path | None, typer.Option("--record", help="Append each fetched page to this cassette.")
    ] = None,
    replay: Annotated[
        Path | None, typer.Option("--replay", help="Answer page fetches from this cassette.")
    ] = None,
) -> None:
    """Fetch pages (or read files) and print their main text."""
    from sleuth.config import load_settings
    from sleuth.errors import ConfigError, SearchError

    console = Console(soft_wrap=True)
    request: dict[str, Any] = {"include_links": links, "max_chars": max_chars, "no_cache": no_cache}
    try:
        overrides = {k: v for k, v in (("replay", replay), ("record", record)) if v is not None}
        settings = load_settings(config, **overrides)
        pages = asyncio.run(_read(settings, inputs, request))
    except SearchError as exc:
        Console(stderr=True).print(f"[bold red]error[/]: {escape(exc.message)}", highlight=False)
        raise typer.Exit(1 if isinstance(exc, ConfigError) else 2) from None
    for number, page in enumerate(pages):
        if as_json:
            print(page.model_dump_json())  # noqa: T201 (one JSON line per page)
        else:
            if number:
                console.print("\n" + "─" * 40 + "\n")
            _print_page(console, page)
    if any(page.error is not None for page in pages):
        raise typer.Exit(3)
