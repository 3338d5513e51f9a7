"""The declared tools follow their folder: a new or changed file reloads them, a broken
edit keeps the last good set, a removed file takes its tools away."""

import logging
import os
from pathlib import Path

import pytest

from sleuth.errors import ConfigError
from sleuth.workflows.tool_book import ToolBook

ONE = "name: {name}\ndescription: d\nsearch: {{query: '{query}'}}\n"


def write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    # A later mtime even on file systems with a coarse clock.
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def test_an_edit_reloads_and_a_broken_one_keeps_the_last_good_set(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first = tmp_path / "a.yaml"
    write(first, ONE.format(name="alpha", query="one"))
    book = ToolBook(folder=tmp_path)
    assert book.current()["alpha"].search.query == "one"  # type: ignore[union-attr]

    write(first, ONE.format(name="alpha", query="two"))
    assert book.current()["alpha"].search.query == "two"  # type: ignore[union-attr]

    with caplog.at_level(logging.WARNING):
        write(first, "name: alpha\ndescription: d\nsearch: {query: q, time_range: soon}\n")
        assert book.current()["alpha"].search.query == "two"  # type: ignore[union-attr]
        book.current()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "time_range" in warnings[0]

    second = tmp_path / "b.yml"
    write(first, ONE.format(name="alpha", query="three"))
    write(second, ONE.format(name="beta", query="b"))
    assert sorted(book.current()) == ["alpha", "beta"]
    second.unlink()
    assert sorted(book.current()) == ["alpha"]


def test_a_broken_file_at_start_is_a_config_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("name: x\ndescription: d\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.yaml.*either search"):
        ToolBook(folder=tmp_path)
    with pytest.raises(ConfigError, match="is not a folder"):
        ToolBook(folder=tmp_path / "missing")
