"""One file's bytes as the rows the knowledge base stores: its title and date, and for
each section (or chunk of a long one) its headings, its text deflated, and the index
terms of each field. Pure, so the indexer can run it in worker processes.

A file that is not text (`decoded`), a PDF or Word document that cannot be read, or
a `.gz` file that is not gzip or holds more than `GUNZIPPED_MAX` bytes, has no rows
(None).
"""

from __future__ import annotations

import codecs
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

# Imported with the module the workers preload (or before they fork), not once in each
# worker at its first Chinese text: `kb.tokenize` imports it on first use.
import rjieba  # noqa: F401

from sleuth.extract.charset import detected, meta_charset, strictly
from sleuth.kb.extract import BINARY_KINDS, GZIP_SUFFIX, kind_of, parse_document
from sleuth.kb.sections import unnumbered
from sleuth.kb.store import pack
from sleuth.kb.tokenize import Tokenizer, index_form
from sleuth.kb.unreadable import Unreadable

# The reading of files into sections (HTML chrome and headings, anchors, man pages, API
# entries...). A change to it that files already indexed should get raises it: the
# next `sleuth index` reads every file a lower version cut, changed or not (2: man
# pages whose header has no middle title or a name too long for the right side, and
# NAME headed 命令名; 3: the stored prose marks where its code blocks stood, and a
# heading's anchor is not an id the HTML parser copied into it from an earlier element).
READER_VERSION = "3"


# Named tuples, not dataclasses: a worker's rows are pickled to the indexing process,
# and a tuple pickles in a third and unpickles in a quarter of a dataclass's time
# (0.03 against 0.12 ms a file of the corpus, most of it in the indexing process).
class SectionRow(NamedTuple):
    heading: str | None
    anchor: str | None
    title: str  # its headings: folded empty ones, then its own
    body: bytes  # prose, packed, with `sections.CODE_MARK`s where the code stood
    code: bytes  # code, packed
    terms: tuple[str, str, str, str]  # index terms of page title, title, prose, code


class FileRows(NamedTuple):
    title: str
    published_at: str
    sections: tuple[SectionRow, ...]
    modified_at: str = ""
    tags: tuple[str, ...] = ()  # its own (front matter), before the source's folder rules


def file_rows(path: Path, data: bytes, mtime: float, tokenizer: Tokenizer) -> FileRows | None:
    if path.suffix.lower() == GZIP_SUFFIX:
        unpacked = gunzipped(data)
        if unpacked is None:
            return None
        data = unpacked
    text = None
    kind = kind_of(path)
    if kind not in BINARY_KINDS:
        read = decoded(data, html=kind == "html")
        if read is None:
            return None
        text, data = read
    try:
        doc = parse_document(path, data, mtime, text=text)  # decoded once, here
    except Unreadable:
        return None
    page = index_form(unnumbered(doc.title), tokenizer)  # once a file, once a section:
    rows = []  # their terms are the same for every chunk
    for section in doc.sections:
        title = " ".join(dict.fromkeys([*section.above, *filter(None, [section.heading])]))
        headings = index_form(unnumbered(title), tokenizer)
        rows += [
            SectionRow(
                section.heading,
                section.anchor,
                title,
                pack(chunk.stored),
                pack(chunk.code),
                (
                    page,
                    headings,
                    index_form(chunk.text, tokenizer),
                    index_form(chunk.code, tokenizer),
                ),
            )
            for chunk in section.chunks()
        ]
    return FileRows(doc.title, doc.published_at, tuple(rows), doc.modified_at, doc.tags)


def files_rows(
    files: Sequence[tuple[Path, bytes, float]], tokenizer: Tokenizer
) -> list[FileRows | None]:
    """`file_rows` of several files: one call per batch sent to a worker."""
    return [file_rows(path, data, mtime, tokenizer) for path, data, mtime in files]


def decoded(data: bytes, *, html: bool = False) -> tuple[str, bytes] | None:
    """A file's bytes as text (a byte order mark dropped) and as UTF-8 (`data` itself
    when it is, as `parse_document` takes it), or None when they are not text.

    UTF-8, as nearly every file is; UTF-16 with its byte order mark (Windows Notepad's
    "Unicode"); an HTML page's `<meta>` charset; else the encoding detection finds
    (`sleuth.extract.charset.detected`: GBK and GB18030 notes, Latin-1 READMEs). Not
    text: a NUL byte outside UTF-16, or bytes no encoding reads, which would be indexed
    as noise."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return _as_utf8(strictly(data, "utf-16"))
    if b"\0" in data:
        return None
    text = strictly(data, "utf-8-sig")
    if text is not None:
        return text, data
    declared = meta_charset(data) if html else None
    text = strictly(data, declared) if declared else None
    if text is None:
        codec = detected(data)
        text = None if codec is None else data.decode(codec, errors="replace")
    return _as_utf8(text)


def _as_utf8(text: str | None) -> tuple[str, bytes] | None:
    return None if text is None else (text, text.encode("utf-8"))


#: The most a `.gz` file may hold: a bound on what a small file can make the indexer
#: hold in memory (the largest man page Debian ships, perlfunc's, is 400 KB).
GUNZIPPED_MAX = 64 * 1024 * 1024


def gunzipped(data: bytes) -> bytes | None:
    """The contents of gzip data (every member), or None when it is not gzip, is cut
    short, or holds more than `GUNZIPPED_MAX` bytes."""
    parts: list[bytes] = []
    size = 0
    while data:
        unpacker = zlib.decompressobj(wbits=31)
        try:
            part = unpacker.decompress(data, GUNZIPPED_MAX - size + 1)
        except zlib.error:
            return None
        size += len(part)
        if size > GUNZIPPED_MAX or not unpacker.eof:
            return None
        parts.append(part)
        data = unpacker.unused_data
    return b"".join(parts)
