"""What a file is stored as: headings without their book numbering in the index."""

from __future__ import annotations

from pathlib import Path

from sleuth.kb.rows import file_rows
from sleuth.kb.sections import unnumbered


def test_heading_numbers_are_not_index_terms_but_versions_are() -> None:
    assert unnumbered("8.3. Character Types").split() == ["Character", "Types"]
    assert unnumbered("Chapter 31. Logical Replication").split() == ["Logical", "Replication"]
    assert unnumbered("Appendix M. Glossary E.21.3.2.1. Changes").split() == [
        "Glossary",
        "Changes",
    ]
    assert unnumbered("Release 15.1 for Python 3.11") == "Release 15.1 for Python 3.11"


def test_a_numbered_page_keeps_its_numbers_on_show_but_not_in_its_title_terms() -> None:
    page = (
        b"<html><head><title>14.4. Populating a Database</title></head><body><main>"
        b'<div class="sect2" id="P"><h3>14.4.1. Disable Autocommit</h3><p>Use one'
        b" transaction.</p></div></main></body></html>"
    )
    rows = file_rows(Path("populate.html"), page, 0.0, "jieba")
    assert rows is not None
    (section,) = rows.sections
    assert rows.title == "14.4. Populating a Database"  # what a person sees
    assert section.title == "14.4.1. Disable Autocommit"
    page_terms, title_terms, *_ = section.terms
    assert page_terms.split() == ["popul", "a", "databas"]  # function words stay indexed
    assert title_terms.split() == ["disabl", "autocommit"]


def test_binary_bytes_have_no_rows() -> None:
    assert file_rows(Path("logo.md"), b"\x89PNG\x00\x01", 0.0, "jieba") is None
