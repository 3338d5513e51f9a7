"""PDF files by their text layer (pypdf): title, and one section per page.

A PDF has no headings in its text, but most documentation PDFs carry an outline (the
bookmarks a viewer shows beside the pages). Each page is a section under the outline
entry in force on it (the last one that starts on or before it), or "Page N" without
an outline, and links to the page itself (`manual.pdf#page=4`, which PDF viewers
open at that page). Lines are joined into paragraphs at blank lines, or after a short
line that ends a sentence. The title is the document's own (its metadata), else the
file name. A PDF that cannot be read (broken, encrypted) is `Unreadable`; one with
no text layer (scanned pages) has no text and is found by its title only.
"""

from __future__ import annotations

import io
import logging
import re
from typing import Any

from sleuth.kb.sections import Heading, join_lines
from sleuth.kb.unreadable import Unreadable

Items = list[Heading | str]

# A line that ends a sentence (or a label), and is shorter than this share of the
# page's longest line: the last line of a paragraph.
_SENTENCE_END = re.compile(r"[.!?:;。！？：；]\s*$")
_SHORT_LINE = 0.8

# pypdf logs what it cannot read in a file's fonts or structure ("fontTools is required
# to fully parse…", dozens a PDF), which Python prints to the terminal of `sleuth index`
# when the program configured no logging. The text is read regardless; a program that
# configures logging still receives these records.
logging.getLogger("pypdf").addHandler(logging.NullHandler())


def read_pdf(data: bytes) -> tuple[str | None, Items]:
    import pypdf

    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise Unreadable("encrypted")
        title = (reader.metadata.title if reader.metadata else None) or None
        headings = _outline_by_page(reader, reader.outline)
        pages = [page.extract_text() or "" for page in reader.pages]
    except Unreadable:
        raise
    except Exception as exc:  # noqa: BLE001 - a broken file raises many kinds in pypdf
        raise Unreadable(f"not a readable PDF ({type(exc).__name__})") from None
    items: Items = []
    heading = None
    for number, text in enumerate(pages, start=1):
        heading = headings.get(number, heading)
        items.append(Heading(heading or f"Page {number}", f"page={number}", slug=False))
        items.extend(_paragraphs(text))
    return (" ".join(title.split()) if isinstance(title, str) else None), items


def _outline_by_page(reader: Any, outline: list[Any]) -> dict[int, str]:
    """The last outline entry that starts on each page (1-based), nested ones included."""
    found: dict[int, str] = {}
    for entry in outline:
        if isinstance(entry, list):
            found.update(_outline_by_page(reader, entry))
            continue
        number = reader.get_destination_page_number(entry)
        if number is not None and number >= 0 and entry.title:
            found[number + 1] = " ".join(str(entry.title).split())
    return found


def _paragraphs(text: str) -> list[str]:
    """A page's lines joined into paragraphs: a blank line ends one, and so does a
    line that ends a sentence well short of the page's full width (the last line of
    a paragraph); a full line that happens to end with a full stop does not."""
    lines = [" ".join(line.split()) for line in text.split("\n")]
    width = max((len(line) for line in lines), default=0)
    blocks: list[str] = []
    kept: list[str] = []
    for line in lines:
        if line:
            kept.append(line)
        short = len(line) < _SHORT_LINE * width
        if kept and (not line or (short and _SENTENCE_END.search(line))):
            blocks.append(join_lines(kept))
            kept = []
    if kept:
        blocks.append(join_lines(kept))
    return blocks
