"""`.gitignore` rules keep out of the knowledge base what a project keeps out of git."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from sleuth.kb import index_folder
from sleuth.kb.ignore import GitIgnores


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def indexed(db: Path, root: Path) -> set[str]:
    index_folder(db, root)
    with closing(sqlite3.connect(db)) as conn:
        return {path for (path,) in conn.execute("SELECT rel_path FROM documents")}


def test_gitignore_rules_are_followed_as_git_does(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    write(root / ".gitignore", "# generated\n_build/\n/drafts.md\n*.tmp.md\n")
    write(root / "sub/.gitignore", "!b.tmp.md\n")
    for name in ("guide.md", "_build/index.md", "drafts.md", "sub/drafts.md", "a.tmp.md",
                 "sub/b.tmp.md", "sub/c.tmp.md", "sub/_build/x.md"):  # fmt: skip
        write(root / name, f"# {name}\n\nText.")
    assert indexed(tmp_path / "kb.db", root) == {
        "guide.md",
        "sub/drafts.md",  # `/drafts.md` is anchored to the folder of its .gitignore
        "sub/b.tmp.md",  # brought back by the deeper rule
    }


def test_rules_of_the_work_tree_above_the_indexed_folder_apply(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write(repo / ".gitignore", "docs/generated/\n")
    write(repo / "docs/guide.md", "# Guide\n\nText.")
    write(repo / "docs/generated/api.md", "# API\n\nGenerated.")
    assert indexed(tmp_path / "kb.db", repo / "docs") == {"guide.md"}


def test_without_rules_nothing_is_ignored(tmp_path: Path) -> None:
    rules = GitIgnores(tmp_path)
    assert not rules.ignored("notes.md", is_dir=False)
    assert not rules.ignored("build", is_dir=True)
