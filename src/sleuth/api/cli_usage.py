"""`sleuth usage` and `sleuth audit`: the usage ledger and the audit log, read from the
configured store (an operator's view: every tenant, or one with --tenant).

    sleuth usage [--period day|month] [--since D] [--until D] [--tenant T]
                 [--by provider,tool,...] [--json] [--prune]
    sleuth audit [--since D] [--until D] [--tenant T] [--limit N] [--json] [--prune]
"""

from __future__ import annotations

import asyncio
import json
import time
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from sleuth.api.cli_errors import exit_with_error
from sleuth.usage.groups import GROUPS

if TYPE_CHECKING:
    from sleuth.config import Settings

__all__ = ["audit_command", "usage_command"]

ConfigOption = Annotated[
    Path | None, typer.Option("--config", help="sleuth.yaml to use (default: $SLEUTH_CONFIG).")
]


_FIELDS = ("--since", "--until")


class PeriodName(StrEnum):
    day = "day"
    month = "month"


def _on_store(settings: Settings, use: Any) -> Any:
    from sleuth.store import Store, open_store

    async def run() -> Any:
        store: Store = open_store(settings.store)
        try:
            return await use(store)
        finally:
            await store.aclose()

    return asyncio.run(run())


def _money(amounts: dict[str, str]) -> str:
    return ", ".join(f"{amount} {currency}" for currency, amount in amounts.items()) or "0"


def usage_command(
    period: Annotated[
        PeriodName, typer.Option("--period", help="day or month (UTC).")
    ] = PeriodName.day,
    since: Annotated[
        str | None, typer.Option("--since", help="First day or month (YYYY-MM-DD or YYYY-MM).")
    ] = None,
    until: Annotated[
        str | None, typer.Option("--until", help="Last day or month included.")
    ] = None,
    tenant: Annotated[str | None, typer.Option("--tenant", help="Only this tenant's.")] = None,
    by: Annotated[
        str | None, typer.Option("--by", help=f"Group by: {', '.join(GROUPS)} (comma-separated).")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the report as GET /v1/usage does.")
    ] = False,
    prune: Annotated[
        bool,
        typer.Option("--prune", help="Delete usage rows and audit entries past their retention."),
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Calls, cost, cache savings and failures per day or month."""
    from sleuth.config import load_settings
    from sleuth.errors import SearchError
    from sleuth.usage import Ledger
    from sleuth.usage.report import requested_groups, requested_range

    try:
        settings = load_settings(config)
        ledger = Ledger(settings.usage, settings.audit)
        if prune:
            rows, entries = _on_store(settings, ledger.prune)
            Console(soft_wrap=True).print(f"pruned {rows} usage rows and {entries} audit entries")
            return
        start, end = requested_range(period.value, since, until, time.time(), fields=_FIELDS)
        groups = requested_groups(by, "--by")
        report = _on_store(
            settings,
            lambda store: ledger.report(
                store, since=start, until=end, period=period.value, tenant=tenant, by=groups
            ),
        )
    except SearchError as exc:
        raise exit_with_error(exc) from None
    if as_json:
        Console(soft_wrap=True).print_json(json.dumps(report, ensure_ascii=False))
        return
    table = Table("period", "calls", "failures", "cache hits", "unpriced", "cost", "cache savings")
    for entry in [*report["periods"], {"period": "total", **report["total"]}]:
        table.add_row(
            entry["period"],
            str(entry["calls"]),
            str(entry["failures"]),
            str(entry["cache_hits"]),
            str(entry["unpriced_calls"]),
            _money(entry["cost"]),
            _money(entry["cache_savings"]),
        )
    Console(soft_wrap=True).print(table)


def audit_command(
    since: Annotated[str | None, typer.Option("--since", help="First day (YYYY-MM-DD).")] = None,
    until: Annotated[str | None, typer.Option("--until", help="Last day included.")] = None,
    tenant: Annotated[str | None, typer.Option("--tenant", help="Only this tenant's.")] = None,
    limit: Annotated[
        int, typer.Option("--limit", min=1, max=100000, help="Newest first, at most this many.")
    ] = 100,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    config: ConfigOption = None,
) -> None:
    """The audit log: who searched, with which key and tool, when, which providers, what it cost."""
    from sleuth.api.http_usage import json_entry
    from sleuth.config import load_settings
    from sleuth.errors import SearchError
    from sleuth.usage.report import requested_range

    try:
        settings = load_settings(config)
        start, end = requested_range("day", since, until, time.time(), fields=_FIELDS)
        entries = _on_store(settings, lambda store: store.audit_entries(start, end, tenant, limit))
    except SearchError as exc:
        raise exit_with_error(exc) from None
    if as_json:
        for entry in entries:
            print(json.dumps(json_entry(entry), ensure_ascii=False))  # noqa: T201 - JSON Lines for scripts
        return
    table = Table("at", "tenant", "key", "via", "tool", "workflow", "status", "providers", "cost")
    for entry in entries:
        shown = json_entry(entry)
        table.add_row(
            shown["at"],
            entry.tenant,
            entry.key or "",
            entry.adapter,
            entry.tool or "",
            entry.workflow or "",
            entry.status,
            ", ".join(entry.providers),
            _money(shown["cost"]),
        )
    Console(soft_wrap=True).print(table)
