"""A PDF's text layer (pypdf): its pages' text, the document title and author, and its
dates when the document information states them. A scanned PDF with no text layer
gives no text (the caller says so); nothing here runs OCR.

>>> pdf_text(b"not a pdf")
Traceback (most recent call last):
sleuth.errors.BadResponse: the PDF cannot be read: ...
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from sleuth.errors import BadResponse

__all__ = ["PdfText", "pdf_text"]

#: Pages read at most: a 2,000-page manual is not one answer.
MAX_PAGES = 200


@dataclass(frozen=True)
class PdfText:
    text: str
    title: str | None
    author: str | None
    created: datetime | None
    modified: datetime | None
    truncated: bool


def _aware(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def pdf_text(body: bytes) -> PdfText:
    """The text layer of the PDF in `body`; `BadResponse` when it is not a readable PDF."""
    from pypdf import PdfReader  # imported on first use: most pages are HTML
    from pypdf.errors import PyPdfError

    # pypdf logs every malformed object it repairs; the caller only needs the outcome
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(io.BytesIO(body))
        pages = reader.pages[:MAX_PAGES]
        texts = [(page.extract_text() or "").strip() for page in pages]
        info = reader.metadata
    except (PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
        raise BadResponse(f"the PDF cannot be read: {type(exc).__name__}: {exc}") from None
    title = (info.title or "").strip() or None if info else None
    author = (info.author or "").strip() or None if info else None
    created = _aware(info.creation_date) if info else None
    modified = _aware(info.modification_date) if info else None
    return PdfText(
        "\n\n".join(text for text in texts if text),
        title,
        author,
        created,
        modified,
        len(reader.pages) > MAX_PAGES,
    )
