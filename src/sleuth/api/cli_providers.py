"""`sleuth providers`: every back end sleuth knows, whether it is configured here (on
in the settings, with its key when it needs one), what it can do, and with `--check`
whether it answers: one small search through it, with the search's own egress,
quota, breaker and error rules."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from sleuth.config import Settings

__all__ = ["providers_command"]

CHECK_QUERY = "sleuth provider check"


@dataclass(frozen=True)
class ProviderRow:
    name: str
    enabled: bool
    key: str  # "set", "missing: NAME" or "not needed"
    time_range: bool
    domain_filter: bool
    language: bool
    docs_url: str
    check: str | None = None  # with --check: "ok (n results, t ms)" or the error code

    @property
    def configured(self) -> bool:
        return self.enabled and not self.key.startswith("missing")


def rows(settings: Settings) -> list[ProviderRow]:
    from sleuth import providers as registry

    found = []
    declared = [name for name, conf in settings.providers.items() if conf.kind == "http"]
    for name in sorted({*registry.names(), *declared}):
        info = registry.get(name).info
        conf = settings.providers.get(name)
        variable = conf.api_key_env if conf is not None else info.api_key_env
        if not info.needs_key:
            key = "not needed"
        elif variable and os.environ.get(variable):
            key = "set"
        else:
            key = f"missing: {variable or 'no api_key_env'}"
        found.append(
            ProviderRow(
                name=name,
                enabled=conf is not None and conf.enabled,
                key=key,
                time_range=info.time_range,
                domain_filter=info.domain_filter,
                language=info.language,
                docs_url=info.docs_url,
            )
        )
    return found


def check(settings: Settings, row: ProviderRow) -> str:
    """One search through the provider alone: how it went, in a few words."""
    from sleuth.errors import SearchError
    from sleuth.gateway import Sleuth

    request = {"query": CHECK_QUERY, "providers": [row.name], "max_results": 1, "no_cache": True}
    try:
        response = Sleuth(settings).search_sync(request)
    except SearchError as exc:
        return exc.code
    report = response.providers.get(row.name)
    if report is None:
        return "not asked"
    if report.status == "ok":
        return f"ok ({report.results} results, {report.latency_ms:.0f} ms)"
    codes = [error.code for error in response.errors if error.provider == row.name]
    return f"{report.status}: {codes[0]}" if codes else report.status


def providers_command(
    check_them: Annotated[
        bool,
        typer.Option("--check", help="Make one small search through each configured one."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON Lines.")] = False,
    config: Annotated[
        Path | None, typer.Option("--config", help="sleuth.yaml to use (default: $SLEUTH_CONFIG).")
    ] = None,
) -> None:
    """List the back ends: configured here or not, what each can do, and (--check) whether
    each configured one answers."""
    from sleuth.config import load_settings
    from sleuth.errors import SearchError

    try:
        settings = load_settings(config)
    except SearchError as exc:
        Console(stderr=True).print(f"[bold red]error[/]: {exc.message}", highlight=False)
        raise typer.Exit(1) from None
    listed = rows(settings)
    if check_them:
        listed = [
            ProviderRow(**{**asdict(row), "check": check(settings, row)}) if row.configured else row
            for row in listed
        ]
    if as_json:
        for row in listed:
            print(json.dumps({**asdict(row), "configured": row.configured}))  # noqa: T201
        return
    table = Table("provider", "configured", "key", "time range", "domains", "language")
    if check_them:
        table.add_column("check")
    for row in listed:
        cells = [
            row.name,
            "yes" if row.configured else ("off" if not row.enabled else "no key"),
            row.key,
            *("yes" if flag else "-" for flag in (row.time_range, row.domain_filter, row.language)),
        ]
        if check_them:
            cells.append(row.check or "-")
        table.add_row(*cells)
    Console(soft_wrap=True).print(table)
