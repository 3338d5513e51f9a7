"""`sleuth providers`: which back ends are configured here, and (--check) which answer,
checked against real HTTP on loopback with the providers' documented bodies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from pytest_httpserver import HTTPServer
from typer.testing import CliRunner

from sleuth import providers
from sleuth.api.cli import app

DATA = Path(__file__).parents[1] / "data"
KEYS = ("BRAVE_API_KEY", "TAVILY_API_KEY", "EXA_API_KEY", "GOOGLE_API_KEY", "SERPAPI_API_KEY")


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SLEUTH_CONFIG", raising=False)
    monkeypatch.setenv("SLEUTH_KB__PATH", str(tmp_path / "kb.sqlite"))
    monkeypatch.setenv("SLEUTH_STORE__PATH", str(tmp_path / "state.sqlite"))
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)
    return CliRunner()


def listed(runner: CliRunner, *args: str) -> dict[str, dict[str, Any]]:
    result = runner.invoke(app, ["providers", "--json", *args])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return {line["name"]: line for line in lines}


def test_every_back_end_is_listed_with_whether_it_is_configured_here(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", "test-key")
    found = listed(runner)
    assert sorted(found) == providers.names()
    assert found["brave"]["configured"] and found["brave"]["key"] == "set"
    assert not found["tavily"]["configured"]
    assert found["tavily"]["key"] == "missing: TAVILY_API_KEY"
    assert found["searxng"]["enabled"] is False  # off unless configured
    assert found["local"]["configured"] and found["local"]["key"] == "not needed"
    assert found["brave"]["time_range"] and found["brave"]["docs_url"].startswith("https://")


def test_check_makes_one_search_through_each_configured_provider(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, httpserver: HTTPServer
) -> None:
    brave_ok = json.loads((DATA / "brave" / "search_ok.json").read_text(encoding="utf-8"))
    httpserver.expect_request("/brave").respond_with_json(brave_ok)
    rejected = json.loads((DATA / "brave" / "error_token_invalid.json").read_text("utf-8"))
    httpserver.expect_request("/tavily").respond_with_json(rejected, status=401)
    config = tmp_path / "sleuth.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "chain": ["brave"],
                "egress": {"allow_private": ["127.0.0.1", "localhost"]},
                "providers": {
                    "brave": {"base_url": httpserver.url_for("/brave")},
                    "tavily": {"base_url": httpserver.url_for("/tavily")},
                    "local": {"enabled": False},
                    "wikipedia": {"enabled": False},
                    "duckduckgo": {"enabled": False},
                },
            }
        ),
        encoding="utf-8",
    )
    monkeypatch.setenv("BRAVE_API_KEY", "test-key")
    monkeypatch.setenv("TAVILY_API_KEY", "test-key")

    found = listed(runner, "--check", "--config", str(config))

    assert found["brave"]["check"].startswith("ok (")
    assert found["tavily"]["check"] == "error: auth_failed"
    assert found["exa"]["check"] is None  # not configured: not called
    asked = {request.path for request, _ in httpserver.log}
    assert asked == {"/brave", "/tavily"}
