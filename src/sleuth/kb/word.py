"""Word documents (.docx, python-docx): title, headings and paragraphs in order.

Paragraphs styled "Heading 1" to "Heading 9" (and "Title") are headings; tables are
read row by row, each row a block of its cells' text. The title is the document's own
(its core properties), else the first "Title" paragraph or heading, else the file
name. A .docx has no anchors a link could open, so its sections link to the file.
"""

from __future__ import annotations

import io
import re

from sleuth.kb.sections import Heading
from sleuth.kb.unreadable import Unreadable

Items = list[Heading | str]

_HEADING_STYLE = re.compile(r"^(?:Heading \d|Title)$")


def read_docx(data: bytes) -> tuple[str | None, Items]:
    import docx
    from docx.table import Table

    try:
        document = docx.Document(io.BytesIO(data))
        title = document.core_properties.title or None
        content = list(document.iter_inner_content())
    except Exception as exc:  # noqa: BLE001 - zip, XML and package errors alike
        raise Unreadable(f"not a readable Word document ({type(exc).__name__})") from None
    items: Items = []
    for block in content:
        if isinstance(block, Table):
            for row in block.rows:
                cells = dict.fromkeys(" ".join(cell.text.split()) for cell in row.cells)
                line = " ".join(cell for cell in cells if cell)
                if line:
                    items.append(line)
            continue
        text = " ".join(block.text.split())
        if not text:
            continue
        style = block.style.name if block.style is not None else ""
        if _HEADING_STYLE.match(style or ""):
            items.append(Heading(text, None, slug=False))
            title = title or text
        else:
            items.append(text)
    return title, items
