"""`sleuth fields profile` and `sleuth fields compare`: decide which fields to keep, and
prove the saving. The analysis is in `sleuth.field_profile`; this module fetches.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from sleuth.api.cli_help import ReadableHelpGroup

if TYPE_CHECKING:
    from sleuth.config import Settings
    from sleuth.field_profile import Comparison
    from sleuth.transport import Transport

app = typer.Typer(
    help="Profile provider fields and measure what projection saves.", cls=ReadableHelpGroup
)


def _console() -> Console:
    return Console(soft_wrap=True)


def _error(message: str) -> None:
    Console(stderr=True, soft_wrap=True).print(f"error: {message}", highlight=False, markup=False)


def _settings(config: Path | None, replay: Path | None) -> Settings:
    from sleuth.config import load_settings
    from sleuth.errors import SearchError

    try:
        return load_settings(config, **({"replay": replay} if replay else {}))
    except SearchError as exc:
        Console(stderr=True).print(f"error: {exc.message}", highlight=False, markup=False)
        raise typer.Exit(1) from None


@app.command("profile")
def profile_command(
    provider: Annotated[str, typer.Option("--provider", help="The back end to profile.")],
    query: Annotated[str, typer.Option("--query", help="The query to send.")],
    runs: Annotated[int, typer.Option("--runs", min=1, max=50, help="How many calls.")] = 3,
    replay: Annotated[
        Path | None, typer.Option("--replay", help="Answer from this cassette.")
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", help="Folder for raw bodies and the suggestion.")
    ] = Path("profiles"),
    config: Annotated[Path | None, typer.Option("--config")] = None,
) -> None:
    """Save raw bodies, list every field path, split stable from occasional fields."""
    from sleuth import providers as registry
    from sleuth.errors import ConfigError, MissingApiKey, SearchError
    from sleuth.field_profile import profile, suggest_projection
    from sleuth.gateway import Sleuth

    settings = _settings(config, replay)
    try:
        bodies = asyncio.run(_fetch_bodies(settings, provider, query, runs))
    except SearchError as exc:  # no key, an unknown provider, no answer in the cassette
        _error(exc.message)
        raise typer.Exit(1 if isinstance(exc, MissingApiKey | ConfigError) else 2) from None
    if not bodies:
        _error(f"{provider} answered no body for {query!r}")
        raise typer.Exit(2)
    mapping = Sleuth(settings).mappings.for_provider(registry.get(provider))
    out.mkdir(parents=True, exist_ok=True)
    for number, body in enumerate(bodies, start=1):
        (out / f"{provider}-{number}.json").write_text(
            json.dumps(body, ensure_ascii=False, indent=2), encoding="utf-8"
        )
    found = profile(bodies, mapping)
    table = Table(title=f"{provider}: {found.runs} run(s), {found.results} result(s)")
    for column in ("field path (per result)", "present in", "kind", "samples"):
        table.add_column(column)
    for path, stat in sorted(found.result_fields.items()):
        kind = "stable" if path in found.stable else "occasional"
        table.add_row(path, f"{stat.present_in}/{found.results}", kind, " | ".join(stat.samples))
    console = _console()
    console.print(table)
    top = ", ".join(sorted(found.top_level))
    console.print(f"top-level fields: {top or '(none)'}", highlight=False)
    suggestion = suggest_projection(found, mapping, provider)
    (out / f"{provider}-projection.yaml").write_text(suggestion, encoding="utf-8")
    console.print(suggestion, highlight=False, markup=False)
    console.print(f"raw bodies and the suggestion are in {out}/", highlight=False)


async def _fetch_bodies(settings: Settings, provider: str, query: str, runs: int) -> list[Any]:
    """The raw bodies, with the configured keys (which an error body may quote) and
    key-shaped strings redacted: they are written to files."""
    from sleuth.errors import ReplayMiss
    from sleuth.gateway import Sleuth
    from sleuth.redaction import redact, secret_values

    bodies: list[Any] = []
    secrets = secret_values(settings.secret_env())
    async with Sleuth(settings) as sleuth:
        for _ in range(runs):
            try:
                response = await sleuth.fetch_raw(provider, query)
            except ReplayMiss:
                if not bodies:
                    raise  # the cassette has nothing for this query: say so
                break  # the cassette holds fewer runs than asked: profile those
            bodies.append(redact(response.body, secrets))
    return bodies


async def compare_queries(
    settings: Settings,
    queries: Sequence[str],
    providers: Sequence[str] | None,
    citing: bool,
    cassette: Sequence[dict[str, Any]] | None = None,
) -> list[Comparison]:
    """Search each query; compare the raw bodies with the projected results.

    With a cassette, every search replays from a fresh copy of it, so the same
    recorded bodies serve the plain and the citing run.
    """
    from sleuth import providers as registry
    from sleuth.field_profile import measure
    from sleuth.gateway import Sleuth
    from sleuth.transport import CapturingTransport, ReplayTransport

    comparisons = []
    for query in queries:
        inner: Transport = (
            ReplayTransport(cassette) if cassette is not None else Sleuth(settings).transport
        )
        capturing = CapturingTransport(inner)
        # no_cache: the comparison is about what the providers send, every time.
        request: dict[str, Any] = {"query": query, "max_results": 10, "no_cache": True}
        if providers:
            request["providers"] = list(providers)
        if citing:
            request["include"] = ["url"]
        async with Sleuth(settings, capturing) as sleuth:
            response = await sleuth.search(request)
        await capturing.aclose()
        # In the order asked, not the order in which the concurrent calls finished.
        order = [name for name in (providers or settings.chain) if name in capturing.captured]
        order += [name for name in capturing.captured if name not in order]
        answers = {name: capturing.captured[name] for name in order}
        raw = {name: answer.body for name, answer in answers.items() if answer.status == 200}
        mappings = {name: sleuth.mappings.for_provider(registry.get(name)) for name in raw}
        projected = [item.model_dump(mode="json") for item in response.results]
        comparisons.append(measure(query, raw, mappings, projected, citing))
    return comparisons


@app.command("compare")
def compare_command(
    queries: Annotated[Path, typer.Option("--queries", help="A file with one query per line.")],
    replay: Annotated[
        Path | None, typer.Option("--replay", help="Answer from this cassette.")
    ] = None,
    providers: Annotated[
        str | None, typer.Option("--providers", help="Comma-separated back ends.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    config: Annotated[Path | None, typer.Option("--config")] = None,
) -> None:
    """Characters and tokens of raw bodies versus projected results, and answer coverage."""
    from sleuth.transport import read_cassette

    settings = _settings(config, None)
    lines = [line.strip() for line in queries.read_text(encoding="utf-8").splitlines()]
    wanted = [line for line in lines if line and not line.startswith("#")]
    chosen = [name.strip() for name in providers.split(",")] if providers else None
    cassette = read_cassette(replay) if replay else None
    plain = asyncio.run(compare_queries(settings, wanted, chosen, citing=False, cassette=cassette))
    citing = asyncio.run(compare_queries(settings, wanted, chosen, citing=True, cassette=cassette))
    if not any(c.raw_chars for c in plain):
        # Nothing came back to measure (no keys, no answers): a "0% saved" would read as
        # a measurement.
        _error(
            "nothing was measured: no provider answered any query with a body; check the "
            "providers' key variables (providers.<name>.api_key_env) or pass --replay CASSETTE"
        )
        raise typer.Exit(2)
    if as_json:
        payload = {
            "plain": [_figures(c) for c in plain],
            "citing": [_figures(c) for c in citing],
            "totals": {"plain": totals(plain), "citing": totals(citing)},
        }
        _console().print_json(json.dumps(payload, ensure_ascii=False))
        return
    print_comparison(_console(), plain, citing)


def totals(comparisons: Sequence[Comparison]) -> dict[str, float]:
    raw = sum(c.raw_chars for c in comparisons)
    projected = sum(c.projected_chars for c in comparisons)
    items = sum(c.projected_items for c in comparisons)
    return {
        "raw_chars": raw,
        "raw_tokens": sum(c.raw_tokens for c in comparisons),
        "projected_chars": projected,
        "projected_tokens": sum(c.projected_tokens for c in comparisons),
        "reduction": 1 - projected / raw if raw else 0.0,
        "raw_items": sum(c.raw_items for c in comparisons),
        "projected_items": items,
        "coverage": sum(c.kept_items for c in comparisons) / items if items else 1.0,
        "answering": sum(c.answering_items for c in comparisons) / items if items else 1.0,
    }


def _figures(c: Comparison) -> dict[str, Any]:
    return asdict(c) | {"reduction": c.reduction, "coverage": c.coverage, "answering": c.answering}


def print_comparison(
    console: Console, plain: Sequence[Comparison], citing: Sequence[Comparison]
) -> None:
    """`kept`: answer fields projection kept (or flagged as never sent); `complete`:
    items carrying every answer field with a value."""
    table = Table(title="raw provider bodies vs projected results")
    columns = [
        *("query", "providers", "raw chars", "raw ~tokens", "items raw→kept"),
        *("projected chars", "saved", "kept", "complete"),
        *("with url: chars", "saved", "kept", "complete"),
    ]
    for column in columns:
        table.add_column(column, overflow="fold")

    def row(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
        return [
            *(str(a["raw_chars"]), str(a["raw_tokens"])),
            f"{a['raw_items']}→{a['projected_items']}",
            *(str(a["projected_chars"]), f"{a['reduction']:.0%}"),
            *(f"{a['coverage']:.0%}", f"{a['answering']:.0%}"),
            *(str(b["projected_chars"]), f"{b['reduction']:.0%}"),
            *(f"{b['coverage']:.0%}", f"{b['answering']:.0%}"),
        ]

    for a, b in zip(plain, citing, strict=True):
        table.add_row(a.query, ",".join(a.providers), *row(_figures(a), _figures(b)))
    table.add_row("all", "", *row(totals(plain), totals(citing)))
    console.print(table)
