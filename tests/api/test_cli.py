"""The sleuth command as a person and an agent use it."""

import asyncio
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sleuth.api.cli import app
from sleuth.store import CacheEntry, SqliteStore


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SLEUTH_CONFIG", raising=False)
    monkeypatch.setenv("SLEUTH_KB__PATH", str(tmp_path / "kb.sqlite"))
    # Breakers and the response cache too: a test never answers from another's cache.
    monkeypatch.setenv("SLEUTH_STORE__PATH", str(tmp_path / "state.sqlite"))
    monkeypatch.setenv("COLUMNS", "200")
    return CliRunner()


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "caching.md").write_text(
        "# Caching strategy\n\nThe response cache keeps answers for ten minutes. "
        "Stale answers are served when every back end fails.\n",
        encoding="utf-8",
    )
    (folder / "缓存.md").write_text(
        "# 缓存策略\n\n响应缓存保存十分钟。所有后端都失败时，返回过期的缓存结果。\n",
        encoding="utf-8",
    )
    return folder


def test_index_then_search_prints_cited_results(runner: CliRunner, docs: Path) -> None:
    indexed = runner.invoke(app, ["index", str(docs)])
    assert indexed.exit_code == 0, indexed.output
    assert "2 added" in indexed.stdout
    found = runner.invoke(app, ["search", "how long does the response cache keep answers?"])
    assert found.exit_code == 0, found.output
    assert "Caching strategy" in found.stdout
    assert (docs / "caching.md").resolve().as_uri() in found.stdout
    again = runner.invoke(app, ["index", str(docs)])
    assert "2 unchanged" in again.stdout


def test_chinese_search_as_json(runner: CliRunner, docs: Path) -> None:
    runner.invoke(app, ["index", str(docs)])
    result = runner.invoke(app, ["search", "帮我找一下缓存保存多久", "--json", "--include", "url"])
    assert result.exit_code == 0, result.output
    response = json.loads(result.stdout)
    assert response["results"][0]["title"] == "缓存策略"
    assert response["results"][0]["url"].startswith("file://")
    assert "帮我" not in response["rewritten_query"]
    assert response["providers"]["local"]["status"] == "ok"


@pytest.mark.parametrize(
    ("args", "field", "words"),
    [
        (["--max-results", "0"], "max_results", "1..20"),
        (["--time-range", "before_2020"], "time_range", "any, past_week, past_month, past_year"),
        (["--priority", "urgent"], "priority", "normal, high"),
        (["--include", "raw_html"], "include", "url"),
    ],
)
def test_bad_input_is_one_clear_line_and_exit_2(
    runner: CliRunner, args: list[str], field: str, words: str
) -> None:
    result = runner.invoke(app, ["search", "q", *args])
    assert result.exit_code == 2
    assert result.stdout == ""
    line = result.stderr.strip()
    assert "\n" not in line
    assert field in line and words in line


def test_bad_input_with_json_prints_the_error_contract(runner: CliRunner) -> None:
    result = runner.invoke(app, ["search", "x" * 5000, "--json"])
    assert result.exit_code == 2
    (error,) = json.loads(result.stdout)["errors"]
    assert error["code"] == "invalid_request"
    assert error["field"] == "query"
    assert error["allowed"] == ["1..400 characters"]


def test_control_characters_only_is_refused(runner: CliRunner) -> None:
    result = runner.invoke(app, ["search", "\x01\x02\u200b", "--json"])
    assert result.exit_code == 2
    assert json.loads(result.stdout)["errors"][0]["field"] == "query"


def test_replay_runs_offline_and_record_writes_a_cassette(
    runner: CliRunner, tmp_path: Path
) -> None:
    cassette = tmp_path / "wiki.jsonl"
    body = {
        "batchcomplete": True,
        "query": {
            "search": [
                {
                    "ns": 0,
                    "title": "Solar panel",
                    "pageid": 1,
                    "snippet": 'A <span class="searchmatch">solar</span> panel converts light.',
                    "timestamp": "2026-01-01T00:00:00Z",
                }
            ],
            "general": {"server": "https://en.wikipedia.org", "articlepath": "/wiki/$1"},
        },
    }
    cassette.write_text(
        json.dumps(
            {
                "provider": "wikipedia",
                "query": "solar panel",
                "status": 200,
                "headers": {"content-type": "application/json"},
                "body": body,
            }
        )
        + "\n",
        encoding="utf-8",
    )
    recorded = tmp_path / "again.jsonl"
    result = runner.invoke(
        app,
        [
            "search",
            "solar panel",
            "--providers",
            "wikipedia",
            "--replay",
            str(cassette),
            "--record",
            str(recorded),
            "--json",
            "--include",
            "url",
        ],
    )
    assert result.exit_code == 0, result.output
    item = json.loads(result.stdout)["results"][0]
    assert item == {
        "title": "Solar panel",
        "snippet": "A solar panel converts light.",
        "url": "https://en.wikipedia.org/wiki/Solar_panel",
    }
    assert json.loads(recorded.read_text(encoding="utf-8"))["body"] == body


def test_a_failed_back_end_still_exits_0_and_says_why(runner: CliRunner, tmp_path: Path) -> None:
    cassette = tmp_path / "down.jsonl"
    down = {"provider": "wikipedia", "query": "q", "status": 503, "headers": {}, "body": "down"}
    # A 503 is retried (twice, by the default error rules): the cassette answers each time.
    cassette.write_text((json.dumps(down) + "\n") * 3, encoding="utf-8")
    result = runner.invoke(
        app, ["search", "q", "--providers", "wikipedia", "--replay", str(cassette)]
    )
    assert result.exit_code == 0
    assert "provider_unavailable" in result.stdout


@pytest.mark.parametrize("which", ["input", "output", "error"])
def test_schema_prints_json_schema(runner: CliRunner, which: str) -> None:
    result = runner.invoke(app, ["schema", which])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert schema["type"] == "object"
    expected = {"input": "query", "output": "results", "error": "code"}[which]
    assert expected in schema["properties"]


def test_cache_prune_removes_rarely_read_old_answers(runner: CliRunner, tmp_path: Path) -> None:
    now = time.time()

    def entry(key: str, days_old: float) -> CacheEntry:
        created = now - days_old * 86400
        return CacheEntry(key, key, "", (), {}, True, created, created, created + 3600)

    async def fill() -> None:
        store = SqliteStore(tmp_path / "state.sqlite")
        try:
            for key, days_old, reads in (("old", 40, 0), ("read", 40, 5), ("new", 1, 0)):
                await store.put_cached(entry(key, days_old))
                for _ in range(reads):
                    await store.get_cached(key, now)
        finally:
            await store.aclose()

    asyncio.run(fill())
    pruned = runner.invoke(app, ["cache", "prune"])
    assert pruned.exit_code == 0, pruned.output
    assert "removed 1 cached answers" in pruned.stdout  # "old": under 3 reads, over 30 days
    stricter = runner.invoke(app, ["cache", "prune", "--min-hits", "10", "--older-than-days", "0"])
    assert "removed 2 cached answers" in stricter.stdout  # "read" and "new" go too


def test_a_re_indexed_folder_shows_at_once(runner: CliRunner, docs: Path) -> None:
    runner.invoke(app, ["index", str(docs)])
    first = runner.invoke(app, ["search", "response cache minutes", "--json"])
    assert "ten minutes" in first.stdout
    (docs / "caching.md").write_text(
        "# Caching strategy\n\nThe response cache keeps answers for five minutes.\n",
        encoding="utf-8",
    )
    runner.invoke(app, ["index", str(docs)])
    second = runner.invoke(app, ["search", "response cache minutes", "--json"])
    assert "five minutes" in second.stdout and "ten minutes" not in second.stdout
    assert json.loads(second.stdout)["cache"] == "miss"


@pytest.mark.parametrize(
    "command",
    [["keys", "create", "--tenant", "acme"], ["keys", "list"], ["keys", "revoke", "sk_x"]],
)
def test_keys_commands_say_what_is_wrong_with_a_broken_config(
    runner: CliRunner, tmp_path: Path, command: list[str]
) -> None:
    config = tmp_path / "sleuth.yaml"
    config.write_text("store: [unclosed\n", encoding="utf-8")
    result = runner.invoke(app, [*command, "--config", str(config)])
    assert result.exit_code == 1
    assert "is not valid YAML" in result.output
    assert "Traceback" not in result.output


def test_index_names_a_missing_path_and_an_empty_folder(runner: CliRunner, tmp_path: Path) -> None:
    missing = runner.invoke(app, ["index", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2
    assert "does not exist" in missing.output
    empty = tmp_path / "bin"
    empty.mkdir()
    (empty / "tool").write_bytes(b"\x7fELF\x00\x00")
    (empty / "notes.md").write_bytes(b"\x00\x01binary")
    nothing = runner.invoke(app, ["index", str(empty)])
    assert nothing.exit_code == 1
    assert "nothing to index" in nothing.output
    assert "notes.md" in nothing.output  # named among the files that are not text


def test_index_leaves_out_excluded_paths(runner: CliRunner, docs: Path) -> None:
    (docs / "drafts").mkdir()
    (docs / "drafts" / "old.md").write_text("# Old caching notes\n\nOutdated.", encoding="utf-8")
    indexed = runner.invoke(app, ["index", str(docs), "--exclude", "drafts"])
    assert indexed.exit_code == 0, indexed.output
    assert "2 added" in indexed.stdout
    found = runner.invoke(app, ["search", "caching notes", "--json", "--include", "url"])
    urls = [item["url"] for item in json.loads(found.stdout)["results"]]
    assert urls
    assert not any("drafts" in url for url in urls)


def test_searching_an_empty_knowledge_base_says_how_to_fill_it(runner: CliRunner) -> None:
    result = runner.invoke(app, ["search", "caching", "--providers", "local", "--json"])
    errors = json.loads(result.stdout)["errors"]
    assert any("sleuth index" in error["message"] for error in errors), errors


def test_searching_a_knowledge_base_an_older_sleuth_wrote_says_to_index_again(
    runner: CliRunner, docs: Path, tmp_path: Path
) -> None:
    indexed = runner.invoke(app, ["index", str(docs)])
    assert indexed.exit_code == 0, indexed.output
    shutil.rmtree(tmp_path / "kb.sqlite.tantivy")  # an index of another layout: unreadable
    result = runner.invoke(app, ["search", "caching", "--providers", "local", "--json"])
    errors = json.loads(result.stdout)["errors"]
    assert any("sleuth index PATH` to rebuild" in error["message"] for error in errors), errors


def test_a_second_index_run_says_which_lock_another_run_holds(
    runner: CliRunner, docs: Path, tmp_path: Path
) -> None:
    # A real indexer, paused after its first file (its progress callback waits for a line).
    script = (
        "import sys; from pathlib import Path; from sleuth.kb import index_folder\n"
        "def wait(done, total, path):\n"
        "    print('indexing', flush=True); sys.stdin.readline()\n"
        "index_folder(Path(sys.argv[1]), Path(sys.argv[2]), progress=wait)\n"
    )
    first = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        [sys.executable, "-c", script, str(tmp_path / "kb.sqlite"), str(docs)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert first.stdout is not None and first.stdin is not None
    try:
        assert first.stdout.readline().strip() == "indexing"
        second = runner.invoke(app, ["index", str(docs)])
        assert second.exit_code == 3
        assert "another `sleuth index` is writing" in second.output
        assert f"process {first.pid} holds kb.sqlite.lock" in second.output
        assert "wait for it to finish" in second.output
    finally:
        first.communicate("\n\n", timeout=60)
    assert first.returncode == 0
    again = runner.invoke(app, ["index", str(docs)])
    assert again.exit_code == 0, again.output
    assert "2 unchanged" in again.stdout


def sources_config(tmp_path: Path, docs: Path) -> Path:
    """A sleuth.yaml with two sources: the notes (scheduled) and a folder of tickets."""
    tickets = tmp_path / "tickets"
    tickets.mkdir()
    (tickets / "t1.md").write_text("# Ticket 1\n\nThe cache returned stale answers.\n")
    config = tmp_path / "sources.yaml"  # not ./sleuth.yaml, which every run would read
    config.write_text(
        "kb:\n"
        "  sources:\n"
        f"    notes: {{paths: ['{docs}'], schedule: '0 3 * * *'}}\n"
        f"    tickets: {{paths: ['{tickets}'], tags: {{'*': [ticket]}}}}\n",
        encoding="utf-8",
    )
    return config


def test_index_without_a_path_indexes_the_configured_sources(
    runner: CliRunner, tmp_path: Path, docs: Path
) -> None:
    config = str(sources_config(tmp_path, docs))
    indexed = runner.invoke(app, ["index", "--config", config])
    assert indexed.exit_code == 0, indexed.output
    assert "indexed source notes" in indexed.stdout and "2 added" in indexed.stdout
    assert "indexed source tickets" in indexed.stdout and "1 added" in indexed.stdout
    one = runner.invoke(app, ["index", "--config", config, "--source", "tickets"])
    assert one.exit_code == 0, one.output
    assert "source tickets" in one.stdout and "notes" not in one.stdout
    # The notes were indexed a moment ago and their schedule runs at 03:00: not due.
    due = runner.invoke(app, ["index", "--config", config, "--due", "--source", "notes"])
    assert due.exit_code == 0, due.output
    assert due.stdout.strip() == "no source is due"


def test_index_of_every_source_removes_what_a_dropped_source_indexed(
    runner: CliRunner, tmp_path: Path, docs: Path
) -> None:
    config = sources_config(tmp_path, docs)
    assert runner.invoke(app, ["index", "--config", str(config)]).exit_code == 0
    search = ["search", "stale cache answers", "--config", str(config)]
    assert "t1.md" in runner.invoke(app, search).stdout
    config.write_text(f"kb:\n  sources:\n    notes: {{paths: ['{docs}']}}\n", encoding="utf-8")
    again = runner.invoke(app, ["index", "--config", str(config)])
    assert again.exit_code == 0, again.output
    assert "removed 1 documents of source tickets, no longer in kb.sources" in again.stdout
    assert "t1.md" not in runner.invoke(app, search).stdout


def test_index_names_an_unknown_source_and_a_missing_configuration(
    runner: CliRunner, tmp_path: Path, docs: Path
) -> None:
    config = str(sources_config(tmp_path, docs))
    unknown = runner.invoke(app, ["index", "--config", config, "--source", "notez"])
    assert unknown.exit_code == 2
    assert "'notez' is not a source; sources: notes, tickets" in unknown.output
    both = runner.invoke(app, ["index", str(docs), "--config", config, "--source", "notes"])
    assert both.exit_code == 2
    none = runner.invoke(app, ["index"])
    assert none.exit_code == 1
    assert "configure kb.sources" in none.output
