"""`sleuth tool`: lists the declared tools, calls one with --param k=v, and names a bad
argument with its allowed values (exit 2)."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sleuth.api.cli import app

CONFIG = """\
tools:
  - name: cache_notes
    description: The team's notes about caching
    parameters:
      aspect: {type: string, required: true}
      depth: {type: integer, default: 2, minimum: 1, maximum: 5}
    search:
      query: "缓存 {{aspect}}"
      providers: [local]
      max_results: 2
      projection: [title, url]
"""


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SLEUTH_KB__PATH", str(tmp_path / "kb.sqlite"))
    monkeypatch.setenv("SLEUTH_STORE__PATH", str(tmp_path / "state.sqlite"))
    monkeypatch.setenv("COLUMNS", "200")
    (tmp_path / "sleuth.yaml").write_text(CONFIG, encoding="utf-8")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "缓存.md").write_text(
        "# 缓存策略\n\n响应缓存保存十分钟。所有后端都失败时，返回过期的缓存结果。\n",
        encoding="utf-8",
    )
    (notes / "backups.md").write_text("# Backups\n\nBackups run nightly.\n", encoding="utf-8")
    cli = CliRunner()
    assert cli.invoke(app, ["index", str(notes)]).exit_code == 0
    return cli


def test_tool_lists_then_calls_a_declared_tool(runner: CliRunner) -> None:
    listed = runner.invoke(app, ["tool"])
    called = runner.invoke(app, ["tool", "cache_notes", "--param", "aspect=过期", "--json"])

    assert listed.exit_code == 0 and "cache_notes" in listed.output
    assert "aspect: string" in listed.output and "depth?: integer" in listed.output
    assert called.exit_code == 0, called.output
    body = json.loads(called.output)
    assert body["query"] == "缓存 过期"
    assert body["results"][0]["title"] == "缓存策略"
    assert set(body["results"][0]) == {"title", "url"}


def test_a_bad_argument_exits_2_naming_it_and_its_allowed_values(runner: CliRunner) -> None:
    wrong = runner.invoke(app, ["tool", "cache_notes", "-p", "aspect=x", "-p", "depth=9", "--json"])
    unknown = runner.invoke(app, ["tool", "cache_note"])

    assert wrong.exit_code == 2
    (error,) = json.loads(wrong.output)["errors"]
    assert (error["field"], error["allowed"]) == ("depth", ["integer 1..5"])
    assert unknown.exit_code == 2 and "declared: cache_notes" in unknown.output
