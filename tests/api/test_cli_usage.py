"""`sleuth usage` and `sleuth audit` read the ledger the service wrote (SQLite)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from sleuth.api.cli import app
from sleuth.store import SqliteStore
from sleuth.store.usage_records import AuditEntry, UsageRow

NOW = time.time()


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLEUTH_CONFIG", raising=False)
    monkeypatch.setenv("COLUMNS", "200")


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "sleuth.yaml"
    state = tmp_path / "state.sqlite"
    path.write_text(yaml.safe_dump({"store": {"backend": "sqlite", "path": str(state)}}))

    async def record() -> None:
        store = SqliteStore(state)
        rows = [
            UsageRow(NOW, "acme", "kagi", "ok", 25000, currency="USD", tool="internal_search"),
            UsageRow(NOW, "acme", "brave", "error", 0),
            UsageRow(NOW, "beta", "kagi", "cached", 0, 25000, "USD"),
        ]
        entry = AuditEntry(
            NOW,
            "acme",
            "ok",
            "h" * 64,
            providers=("kagi", "brave"),
            cost_micros={"USD": 25000},
            key="sk_abcdefgh",
            tool="internal_search",
            adapter="http_search",
        )
        await store.add_usage(rows, [entry])
        await store.add_usage([], [AuditEntry(NOW - 400 * 86400, "acme", "ok", None)])
        await store.aclose()

    asyncio.run(record())
    return path


def test_usage_reports_every_tenant_or_one(config: Path) -> None:
    runner = CliRunner()
    everyone = runner.invoke(app, ["usage", "--json", "--by", "tenant", "--config", str(config)])
    assert everyone.exit_code == 0, everyone.output
    report = json.loads(everyone.output)
    assert report["total"]["calls"] == 2 and report["total"]["failures"] == 1
    assert report["total"]["cost"] == {"USD": "0.025000"}
    assert report["total"]["cache_savings"] == {"USD": "0.025000"}
    assert set(report["periods"][0]["by_tenant"]) == {"acme", "beta"}
    beta = json.loads(
        runner.invoke(app, ["usage", "--json", "--tenant", "beta", "--config", str(config)]).output
    )
    assert (beta["total"]["calls"], beta["total"]["cache_hits"]) == (0, 1)
    table = runner.invoke(app, ["usage", "--period", "month", "--config", str(config)])
    assert table.exit_code == 0 and "0.025000 USD" in table.output


def test_a_bad_date_or_group_is_named(config: Path) -> None:
    runner = CliRunner()
    bad_date = runner.invoke(app, ["usage", "--since", "yesterday", "--config", str(config)])
    assert bad_date.exit_code == 2 and "--since: 'yesterday' is not a date" in bad_date.output
    bad_group = runner.invoke(app, ["usage", "--by", "colour", "--config", str(config)])
    assert bad_group.exit_code == 2 and "allowed: provider, tenant" in bad_group.output


def test_audit_lists_entries_and_prune_keeps_the_retention(config: Path) -> None:
    runner = CliRunner()
    listed = runner.invoke(
        app, ["audit", "--json", "--since", "2000-01-01", "--config", str(config)]
    )
    lines = [json.loads(line) for line in listed.output.splitlines()]
    assert len(lines) == 2
    assert (lines[0]["key"], lines[0]["tool"], lines[0]["providers"]) == (
        "sk_abcdefgh",
        "internal_search",
        ["kagi", "brave"],
    )
    pruned = runner.invoke(app, ["usage", "--prune", "--config", str(config)])
    assert "pruned 0 usage rows and 1 audit entries" in pruned.output
    after = runner.invoke(
        app, ["audit", "--json", "--since", "2000-01-01", "--config", str(config)]
    )
    assert len(after.output.splitlines()) == 1
