"""What a file is stored as: headings without their book numbering in the index, and the
same rows whichever way its bytes reach the HTML parser."""

from __future__ import annotations

from pathlib import Path

from sleuth.kb.extract import parse_document
from sleuth.kb.html import read_page
from sleuth.kb.rows import file_rows
from sleuth.kb.sections import Heading, prose, unnumbered
from sleuth.kb.store import unpack


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


def test_a_page_read_from_its_bytes_is_read_as_its_decoded_text() -> None:
    # `file_rows` hands an HTML page's own bytes to the parser when they are what its
    # decoded text encodes to; a byte order mark and carriage returns are the cases
    # where they are not, and all must give the rows the text gives.
    page = (
        "<html><head><title>Über → ok</title></head><body><h2 id='a'>Größe\r\n"
        "x</h2><p title='a\r\nb'>Zeile eins\r\nzwei\rdrei</p><pre>code\r\n  more\r\n</pre>"
        "</body></html>"
    )
    for data in (
        page.encode(),
        "\ufeff".encode() + page.encode(),
        page.replace("\r", "").encode(),
        "\ufeff".encode() + page.replace("\r", "").encode(),
    ):
        text = data.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
        expected = read_page(text)
        rows = file_rows(Path("p.html"), data, 0.0, "jieba")
        doc = parse_document(Path("p.html"), data, 0.0)
        assert rows is not None
        assert (doc.title, tuple(s.heading for s in doc.sections)) == (
            expected[0],
            tuple(item.text for item in expected[1] if isinstance(item, Heading)),
        )
        assert [row.heading for row in rows.sections] == [s.heading for s in doc.sections]
        assert [prose(unpack(row.body)) for row in rows.sections] == [s.text for s in doc.sections]
        assert [unpack(row.code) for row in rows.sections] == [s.code for s in doc.sections]


def test_text_in_latin_1_is_stored_as_its_letters() -> None:
    for name, data in (("latin.html", "<p>Größe</p>"), ("latin.txt", "Größe")):
        rows = file_rows(Path(name), data.encode("latin-1"), 0.0, "jieba")
        assert rows is not None
        (section,) = rows.sections
        assert prose(unpack(section.body)) == "Größe"
