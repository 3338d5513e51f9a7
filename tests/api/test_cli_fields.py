"""`sleuth fields profile` and `sleuth fields compare` over the recorded cassettes."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sleuth.api.cli import app

DUPLICATES = Path(__file__).parents[1] / "data" / "duplicates.jsonl"


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SLEUTH_CONFIG", raising=False)
    monkeypatch.setenv("SLEUTH_PROVIDERS__SEARXNG__ENABLED", "true")
    monkeypatch.setenv("COLUMNS", "250")
    return CliRunner()


def test_profile_saves_bodies_and_suggests_a_projection(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "prof"
    result = runner.invoke(app, [
        "fields", "profile", "--provider", "searxng", "--query", "what's new in python 3.13",
        "--replay", str(DUPLICATES), "--runs", "3", "--out", str(out),
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    saved = json.loads((out / "searxng-1.json").read_text(encoding="utf-8"))
    assert saved["results"][0]["title"] == "What's New In Python 3.13"
    # The cassette holds one answer, which a replay repeats for every run.
    assert json.loads((out / "searxng-3.json").read_text(encoding="utf-8")) == saved
    assert "publishedDate" in result.stdout and "occasional" in result.stdout
    suggestion = (out / "searxng-projection.yaml").read_text(encoding="utf-8")
    assert "projection:" in suggestion and "always: [title, snippet" in suggestion


def test_compare_reports_the_saving_as_json(runner: CliRunner, tmp_path: Path) -> None:
    queries = tmp_path / "queries.txt"
    queries.write_text("# one query\nwhat's new in python 3.13\n", encoding="utf-8")
    result = runner.invoke(app, [
        "fields", "compare", "--queries", str(queries), "--replay", str(DUPLICATES),
        "--providers", "searxng,wikipedia", "--json",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    (plain,) = report["plain"]
    assert plain["providers"] == ["searxng", "wikipedia"]
    assert plain["raw_items"] == 10 and plain["projected_items"] == 6
    assert plain["projected_chars"] < plain["raw_chars"]
    assert report["totals"]["citing"]["coverage"] == 1.0
    assert (
        report["totals"]["citing"]["projected_chars"] > report["totals"]["plain"]["projected_chars"]
    )


def test_profile_without_a_key_says_so_in_one_line(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("BRAVE_API_KEY", raising=False)
    result = runner.invoke(app, ["fields", "profile", "--provider", "brave", "--query", "q"])
    assert result.exit_code == 1
    assert "brave needs an API key ($BRAVE_API_KEY)" in result.stderr
    assert "Traceback" not in result.output + result.stderr


def test_profile_of_a_query_the_cassette_lacks_blames_the_cassette(runner: CliRunner) -> None:
    result = runner.invoke(app, [
        "fields", "profile", "--provider", "searxng", "--query", "nowhere in it",
        "--replay", str(DUPLICATES),
    ])  # fmt: skip
    assert result.exit_code == 2
    assert "the cassette has no answer for provider 'searxng'" in result.stderr


def test_compare_with_nothing_answered_measures_nothing(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("BRAVE_API_KEY", raising=False)
    queries = tmp_path / "queries.txt"
    queries.write_text("python 3.13\n", encoding="utf-8")
    result = runner.invoke(
        app, ["fields", "compare", "--queries", str(queries), "--providers", "brave", "--json"]
    )
    assert result.exit_code == 2
    assert "nothing was measured" in result.stderr
    assert "saved" not in result.stdout and "reduction" not in result.stdout
