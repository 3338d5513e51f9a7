"""Word documents: headings by their style, paragraphs and table rows in order."""

from __future__ import annotations

import io
from pathlib import Path

import docx
import pytest

from sleuth.kb import index_folder, search
from sleuth.kb.extract import parse_document
from sleuth.kb.unreadable import Unreadable
from sleuth.kb.word import read_docx


def make_docx(title: str | None = None) -> bytes:
    document = docx.Document()
    if title:
        document.core_properties.title = title
    document.add_heading("部署指南", level=0)  # the "Title" style
    document.add_paragraph("先安装依赖，再启动服务。")
    document.add_heading("Ports", level=1)
    document.add_paragraph("The service listens on port 8080 by default.")
    table = document.add_table(rows=2, cols=2)
    settings = [("port", "8080"), ("host", "127.0.0.1")]
    for row, (name, value) in zip(table.rows, settings, strict=True):
        row.cells[0].text, row.cells[1].text = name, value
    document.add_paragraph("Change it in the configuration file.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_headings_by_style_paragraphs_and_table_rows_in_order() -> None:
    doc = parse_document(Path("guide.docx"), make_docx(), 0.0)
    assert doc.title == "部署指南"  # no title in its properties: the Title paragraph
    assert [s.heading for s in doc.sections] == ["部署指南", "Ports"]
    assert doc.sections[1].blocks == (
        "The service listens on port 8080 by default.",
        "port 8080",
        "host 127.0.0.1",
        "Change it in the configuration file.",
    )
    assert all(section.anchor is None for section in doc.sections)


def test_the_documents_own_title_comes_first() -> None:
    title, _items = read_docx(make_docx(title="Deployment Guide"))
    assert title == "Deployment Guide"


def test_a_file_named_docx_that_is_not_one_is_unreadable() -> None:
    with pytest.raises(Unreadable):
        read_docx(b"PK\x03\x04 not a zip at all")


def test_a_word_document_is_searched_in_both_languages(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.docx").write_bytes(make_docx())
    assert index_folder(tmp_path / "kb.db", tmp_path / "docs").added == 1
    (hit,) = search(tmp_path / "kb.db", "安装依赖", 5)
    assert hit["snippet"] == "先安装依赖，再启动服务。"
    (hit,) = search(tmp_path / "kb.db", "which port does it listen on", 5)
    assert hit["title"] == "部署指南 — Ports"
