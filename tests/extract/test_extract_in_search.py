"""`sleuth search ... --include content` on a replayed search whose results' pages
are in the same cassette (tests/data/extract/search_with_pages.jsonl): excerpts hold
the sentences that answer, and a page that cannot be read leaves its result's
snippet in place and says why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sleuth.api.cli import app

CASSETTE = Path(__file__).resolve().parents[1] / "data" / "extract" / "search_with_pages.jsonl"
QUERY = "When does the night train from Zurich reach Vienna?"


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SLEUTH_PROVIDERS__SEARXNG__ENABLED", "true")
    monkeypatch.setenv("SLEUTH_STORE__PATH", str(tmp_path / "state.sqlite"))
    return CliRunner()


def search(runner: CliRunner, *flags: str) -> dict[str, Any]:
    result = runner.invoke(
        app,
        ["search", QUERY, "--providers", "searxng", "--replay", str(CASSETTE), "--json", *flags],
    )
    assert result.exit_code == 0, result.output
    answer: dict[str, Any] = json.loads(result.stdout)
    return answer


def test_excerpts_hold_the_answer(runner: CliRunner) -> None:
    answer = search(runner, "--include", "content", "--include", "url")
    by_url = {item["url"]: item for item in answer["results"]}
    article = by_url["https://rail.example/news/night-trains"]
    assert "reaches Vienna at 07:05" in article["content"]
    assert article["snippet"].startswith("Three operators bring back sleeper services")
    assert "Related stories" not in article["content"] and "cookies" not in article["content"]
    assert len(article["content"]) <= 1200
    pdf = by_url["https://rail.example/notes.pdf"]
    assert pdf["content"] == "The night train leaves Zurich at 21:40.\nIt reaches Vienna at 07:05."
    kinds = [note["kind"] for note in answer["degradations"]]
    assert "deadline_exceeded" not in kinds


def test_a_page_that_cannot_be_read_keeps_its_snippet_and_says_why(runner: CliRunner) -> None:
    answer = search(runner, "--include", "content", "--include", "url")
    review = next(item for item in answer["results"] if "travel.example" in item["url"])
    assert review["snippet"].startswith("We took the night train from Zurich to Vienna")
    assert review["content"] is None
    assert review["degraded"] is True and review["missing"] == ["content"]
    (note,) = [n for n in answer["degradations"] if n["kind"] == "content_unavailable"]
    assert review["url"] in note["reason"] and "replay_miss" in note["reason"]


def test_without_include_content_no_page_is_read(runner: CliRunner) -> None:
    answer = search(runner, "--include", "url")
    assert all("content" not in item for item in answer["results"])
    assert "content" not in answer["timings"]


def test_results_past_search_pages_say_so(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLEUTH_EXTRACT__SEARCH_PAGES", "1")
    answer = search(runner, "--include", "content")
    first, *rest = answer["results"]
    assert first["content"]
    assert all(item["content"] is None and item["missing"] == ["content"] for item in rest)
    reasons = [n["reason"] for n in answer["degradations"] if n["kind"] == "content_unavailable"]
    assert any("only the first 1 results' pages are read" in reason for reason in reasons)
