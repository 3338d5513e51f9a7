"""Indexing folders: what is stored, incremental re-indexing, several roots, progress."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
import tantivy

from sleuth.kb import IndexBusy, IndexReport, NotSearchable, engine, index_folder, search
from sleuth.kb.rows import READER_VERSION
from sleuth.kb.store import SCHEMA_VERSION, unpack
from sleuth.kb.tokenize import ANALYSIS_VERSION, analyze


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def titles(db: Path, query: str) -> list[str]:
    return [hit["title"] for hit in search(db, query, 10)]


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    write(root / "cache.md", "# Cache strategy\n\nWrite-through caching keeps data safe.")
    write(root / "deep/raft.txt", "Raft consensus elects a leader.")
    write(root / "deep/page.html", "<title>Retrieval</title><p>BM25 ranks documents.</p>")
    write(root / "script.py", "print('not a note')")
    write(root / ".git/HEAD.md", "# hidden\n\nnot indexed")
    return root


def test_first_run_adds_every_supported_file(tmp_path: Path, notes: Path) -> None:
    db = tmp_path / "db" / "kb.db"
    report = index_folder(db, notes)
    assert report == IndexReport(added=3, updated=0, unchanged=0, removed=0, files=3)
    assert titles(db, "raft") == ["raft"]
    assert titles(db, "retrieval") == ["Retrieval"]
    assert titles(db, "hidden") == []
    assert titles(db, "print") == []


def test_progress_is_called_once_per_file_in_order(tmp_path: Path, notes: Path) -> None:
    calls: list[tuple[int, int, Path]] = []
    index_folder(tmp_path / "kb.db", notes, progress=lambda *call: calls.append(call))
    assert [(done, total) for done, total, _ in calls] == [(1, 3), (2, 3), (3, 3)]
    assert sorted(path.name for _, _, path in calls) == ["cache.md", "page.html", "raft.txt"]


def test_reindex_skips_unchanged_updates_changed_and_removes_deleted(
    tmp_path: Path, notes: Path
) -> None:
    db = tmp_path / "kb.db"
    index_folder(db, notes)
    write(notes / "cache.md", "# Cache eviction\n\nLRU eviction drops the oldest entry.")
    (notes / "deep/raft.txt").unlink()
    write(notes / "new.txt", "Paxos is another consensus protocol.")
    os.utime(notes / "deep/page.html")  # touched, same bytes: still unchanged

    report = index_folder(db, notes)

    assert report == IndexReport(added=1, updated=1, unchanged=1, removed=1, files=3)
    assert titles(db, "eviction") == ["Cache eviction"]
    assert titles(db, "write-through") == []
    assert titles(db, "raft") == []
    assert titles(db, "consensus") == ["new"]
    assert index_folder(db, notes) == IndexReport(unchanged=3, files=3)


def test_files_an_older_reading_cut_are_read_again_though_unchanged(
    tmp_path: Path, notes: Path
) -> None:
    """A new sleuth that reads files differently (chrome, headings, anchors) re-reads
    what an older one indexed, once, on the next run: unchanged bytes are not enough."""
    db = tmp_path / "kb.db"
    index_folder(db, notes)
    cache = str((notes / "cache.md").resolve())
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("UPDATE documents SET parsed_by = '0' WHERE path = ?", (cache,))
        conn.commit()

    assert index_folder(db, notes) == IndexReport(updated=1, unchanged=2, files=3)
    assert rows(db, "SELECT DISTINCT parsed_by FROM documents") == [(READER_VERSION,)]
    assert titles(db, "write-through") == ["Cache strategy"]
    assert index_folder(db, notes) == IndexReport(unchanged=3, files=3)


def test_a_knowledge_base_of_version_6_is_upgraded_in_place_and_read_again(
    tmp_path: Path, notes: Path
) -> None:
    """Version 6 did not record which reading cut a document: it is searched as it is,
    and the next run upgrades it and reads each file again."""
    db = tmp_path / "kb.db"
    index_folder(db, notes)
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("ALTER TABLE documents DROP COLUMN parsed_by")
        conn.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")
        conn.commit()

    assert titles(db, "write-through") == ["Cache strategy"]
    assert index_folder(db, notes) == IndexReport(updated=3, files=3)
    assert titles(db, "write-through") == ["Cache strategy"]
    assert rows(db, "SELECT value FROM meta WHERE key = 'schema_version'") == [(SCHEMA_VERSION,)]
    assert index_folder(db, notes) == IndexReport(unchanged=3, files=3)


def test_roots_share_a_database_without_touching_each_other(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    work = tmp_path / "work"
    home = tmp_path / "work-home"  # shares a name prefix with `work`
    write(work / "a.md", "# Alpha\n\nShared term kumquat.")
    write(home / "sub/b.md", "# Beta\n\nShared term kumquat.")
    index_folder(db, work)
    index_folder(db, home)

    (work / "a.md").unlink()
    assert index_folder(db, work) == IndexReport(removed=1)

    hits = search(db, "kumquat", 10)
    assert [(hit["title"], hit["path"]) for hit in hits] == [("Beta", "sub/b.md")]


def test_a_parent_root_takes_over_paths_of_a_child_root(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    write(tmp_path / "all/child/c.md", "# Child\n\nQuince jam.")
    index_folder(db, tmp_path / "all/child")
    assert index_folder(db, tmp_path / "all") == IndexReport(unchanged=1, files=1)
    assert [hit["path"] for hit in search(db, "quince", 5)] == ["child/c.md"]


def test_switching_tokenizer_rebuilds_the_index(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    write(tmp_path / "n/cache.md", "# 笔记\n\n缓存策略决定淘汰顺序。")
    index_folder(db, tmp_path / "n", tokenizer="jieba")
    assert titles(db, "存策") == []  # not a word: jieba never indexes it
    assert index_folder(db, tmp_path / "n", tokenizer="trigram") == IndexReport(
        unchanged=1, files=1
    )
    assert titles(db, "存策") == ["笔记"]  # substrings match with trigram
    assert titles(db, "缓存策略") == ["笔记"]


def test_an_index_of_an_earlier_analysis_is_rebuilt_from_the_stored_text(tmp_path: Path) -> None:
    """A knowledge base indexed before identifiers were indexed whole: the next run
    rebuilds its full-text index (no file is parsed again), then finds them whole."""
    db = tmp_path / "kb.db"
    write(tmp_path / "n/serial.md", "# Serial\n\nLike MySQL's AUTO_INCREMENT.")
    index_folder(db, tmp_path / "n")
    index = engine.open_index(db, create=True)
    writer = engine.Writer(index)  # as the earlier analysis indexed it: words only
    writer.clear()
    for section, doc, body in rows(db, "SELECT id, doc_id, body FROM sections"):
        writer.add(section, doc, "serial", "serial", " ".join(analyze(unpack(body), "jieba")), "")
    writer.close()
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'analysis'")
    assert engine.search(index, ["auto_increment"], 5) == []

    assert index_folder(db, tmp_path / "n") == IndexReport(unchanged=1, files=1)

    assert len(engine.search(engine.open_index(db, create=False), ["auto_increment"], 5)) == 1
    assert rows(db, "SELECT value FROM meta WHERE key = 'analysis'") == [(ANALYSIS_VERSION,)]


def test_database_is_in_wal_mode(tmp_path: Path, notes: Path) -> None:
    db = tmp_path / "kb.db"
    index_folder(db, notes)
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_bad_arguments_are_refused(tmp_path: Path, notes: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        index_folder(tmp_path / "kb.db", tmp_path / "missing")
    (notes / "logo.png").write_bytes(b"\x89PNG")
    with pytest.raises(NotADirectoryError, match="neither a folder nor a file"):
        index_folder(tmp_path / "kb.db", notes / "logo.png")
    with pytest.raises(ValueError, match="jieba, trigram"):
        index_folder(tmp_path / "kb.db", notes, tokenizer="bigram")  # type: ignore[arg-type]


def rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute(sql).fetchall()


def indexed_ids(db: Path) -> set[int]:
    index = engine.open_index(db, create=False)
    assert index is not None
    return engine.section_ids(index)


def section_rows(db: Path) -> list[tuple[object, ...]]:
    return rows(
        db,
        "SELECT rel_path, position, heading, anchor FROM sections"
        " JOIN documents ON documents.id = sections.doc_id ORDER BY rel_path, position",
    )


def test_each_section_is_a_row_and_reindexing_replaces_them(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    root = tmp_path / "n"
    write(root / "guide.md", "# Guide\n\nIntro.\n\n## Install\n\nRun it.\n\n## 配置\n\n写配置。")
    write(root / "plain.txt", "No headings here.")
    index_folder(db, root)
    assert section_rows(db) == [
        ("guide.md", 0, "Guide", "guide"),
        ("guide.md", 1, "Install", "install"),
        ("guide.md", 2, "配置", "配置"),
        ("plain.txt", 0, None, None),
    ]

    write(root / "guide.md", "# Guide\n\nIntro.\n\n## Upgrade\n\nRun the new one.")
    (root / "plain.txt").unlink()
    assert index_folder(db, root) == IndexReport(updated=1, removed=1, files=1)

    assert section_rows(db) == [
        ("guide.md", 0, "Guide", "guide"),
        ("guide.md", 1, "Upgrade", "upgrade"),
    ]
    # The full-text index holds exactly the current sections: nothing of the old ones.
    assert indexed_ids(db) == {id_ for (id_,) in rows(db, "SELECT id FROM sections")}
    assert titles(db, "install") == []
    assert titles(db, "配置") == []
    assert titles(db, "headings") == []
    assert titles(db, "upgrade") == ["Guide — Upgrade"]


def test_a_long_section_is_indexed_in_chunks_that_link_to_the_same_anchor(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    paragraphs = "\n\n".join(f"Paragraph {n} " + "filler words " * 30 for n in range(20))
    write(tmp_path / "n/long.md", f"# Long\n\n## Details\n\n{paragraphs}\n\nThe zucchini is here.")
    index_folder(db, tmp_path / "n")
    stored = rows(db, "SELECT anchor, body FROM sections ORDER BY position")
    chunks = [(anchor, len(unpack(body))) for anchor, body in stored]  # type: ignore[arg-type]
    assert len(chunks) > 3
    assert {anchor for anchor, _ in chunks} == {"details"}
    assert all(900 < size < 2000 for _, size in chunks)
    (hit,) = search(db, "zucchini", 5)
    assert hit["url"].endswith("long.md#details")
    assert hit["snippet"] == "The zucchini is here."


OLD_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE documents (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, root TEXT NOT NULL,
    rel_path TEXT NOT NULL, url TEXT NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL,
    published_at TEXT NOT NULL, sha256 TEXT NOT NULL
);
CREATE VIRTUAL TABLE documents_fts USING fts5(title, body, tokenize = 'trigram');
INSERT INTO meta VALUES ('schema_version', '1'), ('tokenizer', 'trigram');
"""


def test_a_database_of_the_old_schema_is_rebuilt_by_section(tmp_path: Path, notes: Path) -> None:
    """A kb.sqlite from before sections (one row per file): search says to index again
    (no stale answer) until the next index run, which drops the old tables and adds
    every file again."""
    db = tmp_path / "kb.sqlite"
    cache = notes / "cache.md"
    with closing(sqlite3.connect(db)) as conn:
        conn.executescript(OLD_SCHEMA)
        conn.execute(
            "INSERT INTO documents VALUES (1, ?, ?, 'cache.md', ?, 'Cache strategy',"
            " 'Write-through caching keeps data safe.', '2025-01-01T00:00:00+00:00', 'x')",
            (str(cache.resolve()), str(notes.resolve()), cache.resolve().as_uri()),
        )
        conn.execute("INSERT INTO documents_fts VALUES ('Cache strategy', 'Write-through')")
        conn.commit()

    with pytest.raises(NotSearchable, match="another sleuth version: run `sleuth index PATH`"):
        search(db, "caching", 5)

    assert index_folder(db, notes) == IndexReport(added=3, files=3)
    (hit,) = search(db, "write-through caching", 5)
    assert hit["url"] == cache.resolve().as_uri() + "#cache-strategy"
    assert hit["snippet"] == "Write-through caching keeps data safe."
    tables = {name for (name,) in rows(db, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "documents_fts" not in tables
    assert rows(db, "SELECT value FROM meta WHERE key = 'schema_version'") == [(SCHEMA_VERSION,)]
    assert index_folder(db, notes) == IndexReport(unchanged=3, files=3)


def test_a_full_text_index_out_of_step_with_the_database_is_rebuilt(
    tmp_path: Path, notes: Path
) -> None:
    """An indexer stopped between its two commits, or a deleted index folder: the next run
    rebuilds the full-text index from the stored text, and search finds everything again;
    until then search says so."""
    db = tmp_path / "kb.db"
    index_folder(db, notes)
    engine.remove_index(db)
    with pytest.raises(NotSearchable, match="is missing or from another sleuth version"):
        search(db, "caching", 5)
    assert index_folder(db, notes) == IndexReport(unchanged=3, files=3)
    assert titles(db, "caching") == ["Cache strategy"]
    assert indexed_ids(db) == {id_ for (id_,) in rows(db, "SELECT id FROM sections")}


def test_a_documentation_folder_as_installed_gives_only_its_pages(tmp_path: Path) -> None:
    """Sphinx writes the reST sources and assets beside the pages; dependencies, caches,
    binary files and the user's own excludes are not documentation either."""
    root = tmp_path / "html"
    page = "<title>functools</title><h1>functools</h1><p>The lru_cache decorator.</p>"
    write(root / "library/functools.html", page)
    write(root / "_sources/library/functools.rst.txt", "functools\n=========\nlru_cache")
    write(root / "_static/searchtools.txt", "lru_cache search tools")
    write(root / "node_modules/pkg/README.md", "# lru_cache clone")
    write(root / ".git/notes.md", "# lru_cache notes")
    write(root / "drafts/old.md", "# lru_cache draft")
    write(root / "api/v1/old.md", "# lru_cache v1")
    (root / "logo.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00lru_cache")
    (root / "noise.md").write_bytes(bytes(range(1, 256)) * 40 + b"lru_cache")
    db = tmp_path / "kb.db"

    report = index_folder(db, root, exclude=["drafts", "api/v1/*"])

    assert report.added == 1
    assert report.not_text == ("logo.md", "noise.md")
    assert report.skipped == 2
    assert [hit["path"] for hit in search(db, "lru_cache", 10)] == ["library/functools.html"]


def test_a_page_in_another_form_beside_it_is_left_out(tmp_path: Path) -> None:
    """git's documentation ships each page's AsciiDoc source beside it (`git-branch.txt`
    and `git-branch.html`), bash's its manual printed (`bashref.pdf`); a Markdown file
    rendered next to itself is the same."""
    root = tmp_path / "doc"
    write(root / "git-branch.html", "<title>git-branch(1)</title><p>Rename a branch with -m.</p>")
    write(root / "git-branch.txt", "git-branch(1)\n=============\nRename a branch with `-m`.")
    write(root / "README.md", "# Branches\n\nRename a branch with -m.")
    write(root / "README.HTML", "<title>Branches</title><p>Rename a branch with -m.</p>")
    write(root / "technical/renames.txt", "How renames of a branch are remembered.")
    write(root / "technical/git-branch.txt", "Another folder: not the page's source.")
    (root / "git-branch.pdf").write_bytes(b"%PDF-1.4 not read: the page printed")
    db = tmp_path / "kb.db"

    report = index_folder(db, root)

    assert (report.files, report.skipped, report.not_text) == (4, 0, ())  # the PDF unread

    paths = sorted(hit["path"] for hit in search(db, "branch", 10))
    assert paths == [
        "README.HTML",
        "git-branch.html",
        "technical/git-branch.txt",
        "technical/renames.txt",
    ]
    # A source indexed before is removed once its page is beside it.
    write(root / "technical/git-branch.html", "<title>git-branch</title><p>A branch page.</p>")
    assert index_folder(db, root).removed == 1
    assert "technical/git-branch.txt" not in {hit["path"] for hit in search(db, "branch", 10)}


def test_a_file_that_turns_binary_loses_its_entry(tmp_path: Path) -> None:
    root = tmp_path / "n"
    write(root / "a.md", "# Zebra\n\nStripes.")
    db = tmp_path / "kb.db"
    index_folder(db, root)
    (root / "a.md").write_bytes(b"Zebra\x00\x01\x02")
    report = index_folder(db, root)
    assert (report.removed, report.not_text) == (1, ("a.md",))
    assert search(db, "zebra", 5) == []


def test_a_full_text_index_of_another_schema_is_replaced(tmp_path: Path, notes: Path) -> None:
    db = tmp_path / "kb.db"
    index_folder(db, notes)
    engine.remove_index(db)
    folder = engine.index_dir(db)
    folder.mkdir()
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("other")
    tantivy.Index(builder.build(), path=str(folder))
    with pytest.raises(NotSearchable, match="to rebuild it from the stored text"):
        search(db, "caching", 5)  # not readable: no stale answer, no crash, what to do
    index_folder(db, notes)
    assert titles(db, "caching") == ["Cache strategy"]


def test_a_second_writer_of_the_full_text_index_is_told_it_is_busy(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    write(tmp_path / "n/a.md", "# A\n\nText.")
    index_folder(db, tmp_path / "n")
    holder = engine.Writer(engine.open_index(db, create=True))
    try:
        with pytest.raises(IndexBusy, match=r"writer lock \(\.tantivy-writer\.lock\)"):
            engine.Writer(engine.open_index(db, create=True))
    finally:
        holder.close()


def test_worker_processes_index_exactly_what_one_process_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sleuth.kb.index.PARALLEL_FROM", 16)  # workers after one batch
    for n in range(40):
        write(tmp_path / f"n/{n:02}.md", f"# Note {n}\n\n## Part\n\nText {n} about 缓存 {n % 3}.")
    (tmp_path / "n/binary.md").write_bytes(b"\x00\x01")
    alone = index_folder(tmp_path / "one.db", tmp_path / "n", workers=1)
    shared = index_folder(tmp_path / "two.db", tmp_path / "n", workers=2)
    assert alone == shared
    assert shared.added == 40 and shared.not_text == ("binary.md",)
    query = (
        "SELECT rel_path, position, heading, anchor, sections.title, body, code FROM sections"
        " JOIN documents ON documents.id = sections.doc_id ORDER BY rel_path, position"
    )
    assert rows(tmp_path / "two.db", query) == rows(tmp_path / "one.db", query)
    assert search(tmp_path / "two.db", "缓存 Text 7", 3)[0]["path"] == "07.md"


def test_workers_that_cannot_start_leave_the_parsing_to_the_caller(tmp_path: Path) -> None:
    # A process running another thread is not forked: its workers come from a fork
    # server and import its main module again, which a script read from standard
    # input cannot be, so they die at start; the caller parses every batch itself.
    for n in range(40):
        write(tmp_path / f"n/{n:02}.md", f"# Note {n}\n\nText {n}.")
    script = (
        "import sys, threading; from pathlib import Path; import sleuth.kb.index as index\n"
        "threading.Thread(target=threading.Event().wait, daemon=True).start()\n"
        "index.PARALLEL_FROM = 16\n"
        f"report = index.index_folder(Path({str(tmp_path / 'kb.db')!r}),"
        f" Path({str(tmp_path / 'n')!r}), workers=2)\n"
        "print('added', report.added)\n"
    )
    done = subprocess.run(
        [sys.executable, "-"], input=script, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "added 40"
    assert len(rows(tmp_path / "kb.db", "SELECT id FROM documents")) == 40


def test_workers_are_forked_only_from_a_process_without_other_threads() -> None:
    script = (
        "import threading; from sleuth.kb.parsing import start_method\n"
        "print(start_method())\n"
        "threading.Thread(target=threading.Event().wait, daemon=True).start()\n"
        "print(start_method())\n"
    )
    done = subprocess.run(
        [sys.executable, "-"], input=script, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["fork", "forkserver"]


def test_a_link_to_a_file_indexed_anyway_is_left_out(tmp_path: Path) -> None:
    """Man pages' aliases are links to the page (`bunzip2.1.gz` to `bzip2.1.gz`)."""
    page = ".TH BZIP2 1\n.SH NAME\nbzip2, bunzip2 \\- a block-sorting file compressor\n"
    write(tmp_path / "man/man1/bzip2.1", page + ".SH DESCRIPTION\nCompresses files.\n")
    (tmp_path / "man/man1/bunzip2.1").symlink_to("bzip2.1")
    report = index_folder(tmp_path / "kb.db", tmp_path / "man")
    assert report.files == 1
    hits = search(tmp_path / "kb.db", "bunzip2 compresses", 5)
    assert [hit["path"] for hit in hits] == ["man1/bzip2.1"]


def test_a_linked_file_links_to_its_target(tmp_path: Path) -> None:
    write(tmp_path / "elsewhere/real.md", "# Real\n\nThe zyzzyva note.")
    write(tmp_path / "n/plain.md", "# Plain\n\nA plain zyzzyva note.")
    (tmp_path / "n/link.md").symlink_to(tmp_path / "elsewhere/real.md")
    index_folder(tmp_path / "kb.db", tmp_path / "n")
    hits = search(tmp_path / "kb.db", "zyzzyva", 5)
    urls = {hit["path"]: hit["url"].split("#")[0] for hit in hits}
    assert urls == {
        "link.md": (tmp_path / "elsewhere/real.md").resolve().as_uri(),
        "plain.md": (tmp_path / "n/plain.md").resolve().as_uri(),
    }
