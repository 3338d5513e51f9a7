"""Indexing named sources: documents carry source, tags and modified_at, and a search
can be scoped to them."""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sleuth.kb import (
    IndexReport,
    index_folder,
    index_source,
    last_indexed,
    prune_sources,
    search,
)
from sleuth.kb.sources import SourceConfig
from sleuth.kb.store import SCHEMA_VERSION

DAY = 86_400
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def write(path: Path, text: str, *, age_days: float = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    stamp = NOW.timestamp() - age_days * DAY
    os.utime(path, (stamp, stamp))
    return path


@pytest.fixture
def folders(tmp_path: Path) -> dict[str, Path]:
    tickets = tmp_path / "tickets"
    write(tickets / "urgent/disk.md", "# Disk full\n\nThe export disk filled up overnight.")
    write(tickets / "login.md", "# Login fails\n\nThe export page rejects logins.", age_days=20)
    feedback = tmp_path / "feedback"
    write(
        feedback / "survey.md",
        "---\ntags: [Export, ui]\nmodified: 2026-11-30\n---\n# Survey\n\nExport is slow.",
        age_days=90,
    )
    wiki = tmp_path / "wiki"
    write(wiki / "export.md", "# Export\n\nHow the export works.")
    return {"tickets": tickets, "feedback": feedback, "wiki": wiki}


def sources(folders: dict[str, Path]) -> dict[str, SourceConfig]:
    return {
        "support_tickets": SourceConfig(
            paths=[folders["tickets"]], tags={"urgent": ["urgent"], "*.md": ["ticket"]}
        ),
        "customer_feedback": SourceConfig(paths=[folders["feedback"]]),
    }


@pytest.fixture
def db(tmp_path: Path, folders: dict[str, Path]) -> Path:
    db = tmp_path / "kb.sqlite"
    for name, source in sources(folders).items():
        index_source(db, name, source, now=NOW)
    index_folder(db, folders["wiki"])
    return db


def paths(hits: list[dict[str, object]]) -> list[object]:
    return sorted(hit["path"] for hit in hits)


def test_documents_carry_their_source_tags_and_modified_at(db: Path) -> None:
    hits = {hit["path"]: hit for hit in search(db, "export", 10)}
    assert set(hits) == {"urgent/disk.md", "login.md", "survey.md", "export.md"}
    disk, survey, wiki = hits["urgent/disk.md"], hits["survey.md"], hits["export.md"]
    assert (disk["source"], disk["tags"]) == ("support_tickets", ["urgent", "ticket"])
    assert (survey["source"], survey["tags"]) == ("customer_feedback", ["export", "ui"])
    assert (wiki["source"], wiki["tags"]) == ("", [])
    # The front matter's date of change wins over the file's mtime (90 days back).
    assert survey["modified_at"] == "2026-11-30T00:00:00+00:00"
    assert disk["modified_at"] == NOW.isoformat()


def test_a_search_scoped_to_sources_finds_only_theirs(db: Path) -> None:
    assert paths(search(db, "export", 10, sources=["support_tickets"])) == [
        "login.md",
        "urgent/disk.md",
    ]
    both = search(db, "export", 10, sources=["support_tickets", "customer_feedback"])
    assert paths(both) == ["login.md", "survey.md", "urgent/disk.md"]
    assert search(db, "export", 10, sources=["nobody"]) == []


def test_a_search_scoped_to_tags_and_a_date(db: Path) -> None:
    assert paths(search(db, "export", 10, tags=["urgent", "ui"])) == ["survey.md", "urgent/disk.md"]
    week_ago = datetime.fromtimestamp(NOW.timestamp() - 7 * DAY, tz=UTC)
    recent = search(db, "export", 10, since=week_ago)
    assert paths(recent) == ["export.md", "survey.md", "urgent/disk.md"]  # login.md is 20 days old
    scoped = search(db, "export", 10, sources=["support_tickets"], since=week_ago)
    assert paths(scoped) == ["urgent/disk.md"]


def test_new_folder_rules_retag_unchanged_files_without_reading_them(
    db: Path, folders: dict[str, Path]
) -> None:
    retagged = SourceConfig(paths=[folders["tickets"]], tags={"login.md": ["auth"]})
    report = index_source(db, "support_tickets", retagged, now=NOW)
    assert report == IndexReport(unchanged=2, files=2)
    assert paths(search(db, "export", 10, tags=["auth"])) == ["login.md"]
    assert search(db, "export", 10, tags=["urgent"]) == []


def test_a_source_may_name_single_files(tmp_path: Path, folders: dict[str, Path]) -> None:
    db = tmp_path / "files.sqlite"
    one = SourceConfig(paths=[folders["tickets"] / "login.md", folders["wiki"] / "export.md"])
    assert index_source(db, "picked", one, now=NOW) == IndexReport(added=2, files=2)
    assert paths(search(db, "export", 10, sources=["picked"])) == ["export.md", "login.md"]
    # Indexing one file never removes its indexed neighbours.
    index_folder(db, folders["tickets"])
    assert index_folder(db, folders["tickets"] / "login.md") == IndexReport(unchanged=1, files=1)
    assert len(search(db, "export", 10)) == 3


def test_each_source_run_is_recorded_for_its_schedule(db: Path, tmp_path: Path) -> None:
    assert last_indexed(db) == {"support_tickets": NOW, "customer_feedback": NOW}
    assert last_indexed(tmp_path / "missing.sqlite") == {}


def test_a_missing_path_of_a_source_is_named_before_anything_is_indexed(tmp_path: Path) -> None:
    source = SourceConfig(paths=[tmp_path / "gone"])
    with pytest.raises(FileNotFoundError, match=r"kb.sources.tickets.paths: .*gone"):
        index_source(tmp_path / "kb.sqlite", "tickets", source)
    assert not (tmp_path / "kb.sqlite").exists()


def test_a_knowledge_base_of_version_5_is_upgraded_in_place(
    tmp_path: Path, folders: dict[str, Path]
) -> None:
    """An index written before sources keeps its documents: they get no source and no
    tags, and their date as modified_at; the run that upgrades it reads the files
    again, as an older reading cut them (`parsed_by`, version 7)."""
    db = tmp_path / "kb.sqlite"
    index_folder(db, folders["wiki"])
    with closing(sqlite3.connect(db)) as conn:
        for column in ("source", "own_tags", "tags", "modified_at", "parsed_by"):
            conn.execute(f"ALTER TABLE documents DROP COLUMN {column}")
        conn.execute("DROP TABLE source_runs")
        conn.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
        conn.commit()
    assert index_folder(db, folders["wiki"]) == IndexReport(updated=1, files=1)
    (hit,) = search(db, "export", 5)
    assert (hit["source"], hit["tags"], hit["modified_at"]) == ("", [], hit["published_at"])
    with closing(sqlite3.connect(db)) as conn:
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    assert version == (SCHEMA_VERSION,)


def test_a_source_whose_paths_change_keeps_only_what_its_paths_hold(
    db: Path, folders: dict[str, Path], tmp_path: Path
) -> None:
    moved = tmp_path / "tickets-2027"
    write(moved / "vpn.md", "# VPN drops\n\nThe export VPN drops every hour.")
    report = index_source(db, "support_tickets", SourceConfig(paths=[moved]), now=NOW)
    assert (report.added, report.removed) == (1, 2)
    assert paths(search(db, "export", 10, sources=["support_tickets"])) == ["vpn.md"]
    assert "export.md" in paths(search(db, "export", 10))  # indexed by path: not a source's


def test_a_source_no_longer_configured_is_pruned_and_files_indexed_by_path_stay(
    db: Path,
) -> None:
    assert prune_sources(db, ["Support_Tickets"]) == {"customer_feedback": 1}
    assert paths(search(db, "export", 10)) == ["export.md", "login.md", "urgent/disk.md"]
    assert prune_sources(db, ["support_tickets"]) == {}
