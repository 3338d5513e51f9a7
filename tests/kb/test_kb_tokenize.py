"""Index forms and query expressions for the jieba and trigram tokenizers."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import sleuth
from sleuth.kb.tokenize import Tokenizer, build_query, segment


def test_jieba_segments_chinese_and_lower_cases_english() -> None:
    words = segment("分布式缓存系统 Uses LRU").split()
    assert {"缓存", "分布式", "系统"} <= set(words)
    assert words[-2:] == ["uses", "lru"]


def test_every_term_is_quoted_so_fts5_syntax_is_plain_text() -> None:
    query = build_query('"foo" AND (bar NEAR baz* -x', "jieba")
    assert query.match == '"foo" OR "and" OR "bar" OR "near" OR "baz" OR "x"'


def test_a_query_of_punctuation_only_has_no_match_expression() -> None:
    assert build_query('* ( ) " -', "jieba").match is None
    assert build_query('* ( ) " -', "trigram").match is None


def test_trigram_sends_short_terms_to_the_scan_and_splits_long_chinese_runs() -> None:
    query = build_query("缓存 api cache 如何设计缓存", "trigram")
    assert query.short_terms == ("缓存",)
    assert query.match == '"api" OR "cache" OR "如何设" OR "何设计" OR "设计缓" OR "计缓存"'


def test_jieba_is_loaded_only_for_chinese_and_prints_nothing(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "en.md").write_text("# Caching\n\nEnglish only.", encoding="utf-8")
    script = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from sleuth.kb import index_folder, search
        db, notes = Path({str(tmp_path / "kb.db")!r}), Path({str(notes)!r})
        index_folder(db, notes)
        search(db, "caching", 5)
        print("jieba" in sys.modules)
        (notes / "zh.md").write_text("缓存策略很重要。", encoding="utf-8")
        index_folder(db, notes)
        print(len(search(db, "缓存", 5)))
        """
    )
    src = str(Path(sleuth.__file__).parents[1])
    # A fresh interpreter, so jieba is not imported yet; the argv is fixed, no shell.
    done = subprocess.run(  # noqa: S603
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": src},
    )
    assert done.stdout.split() == ["False", "1"]
    assert done.stderr == ""


@pytest.mark.parametrize("tokenizer", ["jieba", "trigram"])
def test_terms_are_lower_cased_and_unique(tokenizer: Tokenizer) -> None:
    query = build_query("Cache CACHE cache", tokenizer)
    assert query.terms == ("cache",)


def test_jieba_snippet_terms_include_rough_english_stems() -> None:
    assert build_query("Caches caching 缓存", "jieba").terms == (
        "caches",
        "caching",
        "缓存",
        "cach",
    )
