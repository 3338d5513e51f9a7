"""One file's bytes as the rows the knowledge base stores: its title and date, and for
each section (or chunk of a long one) its headings, its text deflated, and the index
terms of each field. Pure, so the indexer can run it in worker processes.

A file that is not text (a NUL byte, or not UTF-8), or a PDF or Word document that
cannot be read, has no rows (None).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sleuth.kb.extract import BINARY_KINDS, kind_of, parse_document
from sleuth.kb.sections import unnumbered
from sleuth.kb.store import pack
from sleuth.kb.tokenize import Tokenizer, index_form
from sleuth.kb.unreadable import Unreadable


@dataclass(frozen=True)
class SectionRow:
    heading: str | None
    anchor: str | None
    title: str  # its headings: folded empty ones, then its own
    body: bytes  # prose, packed
    code: bytes  # code, packed
    terms: tuple[str, str, str, str]  # index terms of page title, title, prose, code


@dataclass(frozen=True)
class FileRows:
    title: str
    published_at: str
    sections: tuple[SectionRow, ...]
    modified_at: str = ""
    tags: tuple[str, ...] = ()  # its own (front matter), before the source's folder rules


def file_rows(path: Path, data: bytes, mtime: float, tokenizer: Tokenizer) -> FileRows | None:
    if kind_of(path) not in BINARY_KINDS and not is_text(data):
        return None
    try:
        doc = parse_document(path, data, mtime)
    except Unreadable:
        return None
    rows: list[SectionRow] = []
    for section in doc.sections:
        title = " ".join(dict.fromkeys([*section.above, *filter(None, [section.heading])]))
        for chunk in section.chunks():
            terms = tuple(
                index_form(text, tokenizer)
                for text in (unnumbered(doc.title), unnumbered(title), chunk.text, chunk.code)
            )
            rows.append(
                SectionRow(
                    section.heading,
                    section.anchor,
                    title,
                    pack(chunk.text),
                    pack(chunk.code),
                    (terms[0], terms[1], terms[2], terms[3]),
                )
            )
    return FileRows(doc.title, doc.published_at, tuple(rows), doc.modified_at, doc.tags)


def files_rows(
    files: Sequence[tuple[Path, bytes, float]], tokenizer: Tokenizer
) -> list[FileRows | None]:
    """`file_rows` of several files: one call per batch sent to a worker."""
    return [file_rows(path, data, mtime, tokenizer) for path, data, mtime in files]


def is_text(data: bytes) -> bool:
    """Whether a file's bytes are text: no NUL byte, valid UTF-8 (a byte order mark
    allowed). Binary files and other encodings would be indexed as noise."""
    if b"\0" in data:
        return False
    try:
        data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return False
    return True
