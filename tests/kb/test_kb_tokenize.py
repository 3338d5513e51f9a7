"""Index forms and query expressions for the jieba and trigram tokenizers."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import sleuth
from sleuth.kb.tokenize import (
    Tokenizer,
    analyze,
    build_query,
    identifiers,
    index_form,
    phrase_terms,
    segment,
    whole_names,
)


def test_jieba_segments_chinese_and_lower_cases_english() -> None:
    words = segment("分布式缓存系统 Uses LRU").split()
    assert {"缓存", "分布式", "系统"} <= set(words)
    assert words[-2:] == ["uses", "lru"]


def test_query_syntax_is_only_text() -> None:
    assert build_query('"foo" AND (bar NEAR baz* -x', "jieba").terms == (
        "foo",
        "bar",
        "near",
        "baz",
        "x",
    )


def test_a_query_of_punctuation_only_has_no_terms() -> None:
    assert build_query('* ( ) " -', "jieba").terms == ()
    assert build_query('* ( ) " -', "trigram").terms == ()


def test_english_words_are_stemmed_and_identifiers_split_into_words() -> None:
    assert analyze("Indexing indexes INDEXED", "jieba") == ["index", "index", "index"]
    assert analyze("functools.lru_cache pg_hba.conf", "jieba") == [
        "functool",
        "lru",
        "cach",
        "pg",
        "hba",
        "conf",
    ]


def test_trigram_finds_substrings_and_two_character_chinese_words() -> None:
    terms = analyze("缓存策略 caching", "trigram")
    assert {"缓存", "存策", "策略", "缓存策"} <= set(terms)
    assert {"cach", "cac", "chi", "ing"} <= set(terms)
    assert "缓存" in build_query("缓存", "trigram").terms


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
    assert build_query("Cache CACHE cache", tokenizer).terms[0] == "cach"
    assert len(set(build_query("Cache CACHE cache", tokenizer).terms)) == len(
        build_query("Cache CACHE cache", tokenizer).terms
    )


def test_snippet_words_are_the_query_words_and_their_stems() -> None:
    assert build_query("Caches caching 缓存", "jieba").words == (
        "caches",
        "caching",
        "缓存",
        "cach",
    )


def test_function_words_are_not_terms_unless_an_article_names_them() -> None:
    query = build_query("what does the with statement do", "jieba")
    assert query.terms == ("with", "statement")  # named by "the": a keyword, not filler
    assert query.pairs == (("with", "statement"),)
    assert build_query("what is the index for", "jieba").terms == ("index",)
    assert build_query("create index concurrently", "jieba").pairs == (
        ("creat", "index"),
        ("index", "concurr"),
    )
    assert build_query("what is it", "jieba").terms == ("what", "is", "it")  # nothing else
    assert build_query("怎么解压文件", "jieba").terms == ("解压", "文件")


def test_ascii_text_splits_at_every_character_but_letters_and_digits() -> None:
    text = "pg_hba.conf: host all 10.0.3.7/32; lru_cache(maxsize=128) a~b|c\tX"
    words = ["pg", "hba", "conf", "host", "all", "10", "0", "3", "7", "32", "lru", "cach"]
    words += ["maxsiz", "128", "a", "b", "c", "x"]
    assert analyze(text, "jieba") == words
    # The same words when the text is not all ASCII (the other way of splitting it).
    assert analyze(text + " — café", "jieba") == [*words, "café"]


def test_every_character_that_is_not_ascii_separates_words_or_is_part_of_one() -> None:
    # Text whose only other characters separate words is read as ASCII: each character
    # of the Basic Multilingual Plane (but Chinese, which jieba cuts) between two words.
    for code in range(0x80, 0x10000):
        char = chr(code)
        if 0xD800 <= code < 0xE000 or re.fullmatch(
            "[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]", char
        ):
            continue
        text = f"Indexes{char}of x{char}"
        words = re.findall(r"[^\W_]+", text.lower())
        assert analyze(text, "jieba") == [t for w in words for t in analyze(w, "jieba")], hex(code)


def test_identifiers_are_indexed_whole_after_the_words() -> None:
    assert index_form("Use lru_cache(maxsize) here", "jieba").split() == [
        *["use", "lru", "cach", "maxsiz", "here"],
        "lru_cache",
    ]
    assert index_form("no identifier here.", "jieba") == "no identifi here"


def test_dotted_identifiers_are_indexed_by_their_tails_too() -> None:
    terms = index_form("Call functools.lru_cache or inspect.Signature.bind_partial", "jieba")
    assert terms.split()[-5:] == [
        *["functools.lru_cache", "inspect.signature.bind_partial"],
        *["lru_cache", "signature.bind_partial", "bind_partial"],
    ]
    assert index_form("os.path.join", "jieba").split() == [
        *["os", "path", "join", "os.path.join", "path.join"]
    ]


def test_identifiers_are_words_joined_by_underscores_or_dots() -> None:
    text = "See pg_hba.conf. Host 10.0.3.7, v1.2 and os.path.join; AUTO_INCREMENT 的 _x_y 2_a"
    assert identifiers(text) == ["pg_hba.conf", "v1.2", "os.path.join", "auto_increment", "x_y"]
    assert identifiers("End of a sentence. Next one, 3.14 and 1_000.") == []
    # Dots and underscores are looked for apart, the identifiers given in text order.
    assert identifiers("a_b, x.y, c_d.e f_g") == ["a_b", "x.y", "c_d.e", "f_g"]


def test_a_query_looks_an_identifier_up_whole_as_well_as_by_its_parts() -> None:
    query = build_query("mysql AUTO_INCREMENT equivalent", "jieba")
    assert query.terms == ("mysql", "auto", "increment", "equival", "auto_increment")
    assert ("auto", "increment") in query.pairs  # phrase credit for the parts stays
    assert all("auto_increment" not in pair for pair in query.pairs)


def test_phrase_terms_are_the_analysed_terms_without_cutting_chinese() -> None:
    text = "Use lru_cache(maxsize) — here, café"
    assert phrase_terms(text, "jieba") == analyze(text, "jieba")
    # A Chinese run is one term that is no index term: the words around it stay apart.
    mixed = phrase_terms("create 服务器 index; create index", "jieba")
    assert mixed == ["creat", " ", "index", "creat", "index"]
    assert list(itertools.pairwise(mixed)).count(("creat", "index")) == 1
    assert phrase_terms("缓存 cache", "trigram") == analyze("缓存 cache", "trigram")


def test_whole_names_are_what_the_index_form_adds_after_the_words() -> None:
    text = "Call functools.lru_cache, then os.path.join."
    terms = index_form(text, "jieba").split()
    words = analyze(text, "jieba")
    assert terms[len(words) :] == whole_names(text)
    assert whole_names(text)[:2] == ["functools.lru_cache", "os.path.join"]
    assert whole_names("no names here.") == []
