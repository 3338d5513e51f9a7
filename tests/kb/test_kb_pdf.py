"""PDF files by their text layer: one section per page under its outline entry."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

from sleuth.kb import index_folder, search
from sleuth.kb.extract import parse_document
from sleuth.kb.pdf import read_pdf
from sleuth.kb.unreadable import Unreadable


def make_pdf(pages: list[list[str]], outline: dict[int, str], title: str | None) -> bytes:
    """A PDF whose pages show these lines in Helvetica, with bookmarks to pages (0-based)."""
    writer = PdfWriter()
    font = writer._add_object(  # pypdf has no public way to add an indirect object
        DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
            }
        )
    )
    for lines in pages:
        page = writer.add_blank_page(612, 792)
        shown = " ".join(f"({line}) Tj 0 -16 Td" for line in lines)
        stream = DecodedStreamObject()
        stream.set_data(f"BT /F1 12 Tf 72 720 Td {shown} ET".encode())
        page[NameObject("/Contents")] = writer._add_object(stream)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
    for number, name in outline.items():
        writer.add_outline_item(title=name, page_number=number)
    if title:
        writer.add_metadata({"/Title": title})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


MANUAL = make_pdf(
    [
        ["The tool copies files between hosts."],
        ["Set the timeout with --timeout, in", "seconds.", "Each host has its own timeout."],
        ["A second page of configuration."],
    ],
    {0: "1. Introduction", 1: "2. Configuration"},
    "Tool Manual",
)


def test_pages_are_sections_under_the_outline_and_link_to_their_page() -> None:
    doc = parse_document(Path("manual.pdf"), MANUAL, 0.0)
    assert doc.title == "Tool Manual"
    assert [(s.heading, s.anchor) for s in doc.sections] == [
        ("1. Introduction", "page=1"),
        ("2. Configuration", "page=2"),
        ("2. Configuration", "page=3"),  # the entry in force on a page without its own
    ]
    # A short line that ends a sentence ends a paragraph.
    assert doc.sections[1].blocks == (
        "Set the timeout with --timeout, in seconds.",
        "Each host has its own timeout.",
    )


def test_without_outline_or_title_pages_are_numbered_and_the_name_is_the_title() -> None:
    doc = parse_document(Path("notes.pdf"), make_pdf([["One."], ["Two."]], {}, None), 0.0)
    assert doc.title == "notes"
    assert [s.heading for s in doc.sections] == ["Page 1", "Page 2"]


def test_a_broken_pdf_is_unreadable() -> None:
    with pytest.raises(Unreadable):
        read_pdf(b"%PDF-1.7\nnot really a pdf")


def test_a_pdf_is_searched_by_page_and_a_broken_one_is_skipped_and_named(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "manual.pdf").write_bytes(MANUAL)
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4\n\x00\x01 truncated")
    report = index_folder(tmp_path / "kb.db", docs)
    assert (report.added, report.not_text) == (1, ("broken.pdf",))
    (hit,) = search(tmp_path / "kb.db", "timeout seconds", 5)
    assert hit["url"].endswith("manual.pdf#page=2")
    assert hit["title"] == "Tool Manual — 2. Configuration"
    assert "timeout" in hit["snippet"]


def test_a_damaged_file_is_read_and_nothing_is_printed(tmp_path: Path) -> None:
    """A wrong `startxref` offset (a file edited by hand, or cut and mended) is
    repaired; pypdf, which read PDFs before, logged each repair, and `sleuth index`
    configures no logging, so Python printed them all to its terminal."""
    mended = re.sub(rb"startxref\s+(\d+)", lambda m: b"startxref\n%d" % (int(m[1]) + 7), MANUAL)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/manual.pdf").write_bytes(mended)
    script = (
        "import sys; from pathlib import Path; from sleuth.kb import index_folder;"
        "r = index_folder(Path(sys.argv[1]) / 'kb.db', Path(sys.argv[1]) / 'docs', workers=1);"
        "print(r.added)"
    )
    done = subprocess.run(  # noqa: S603 - this interpreter, a fixed script
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert (done.stdout, done.stderr) == ("1\n", "")
