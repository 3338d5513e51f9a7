"""PDFs through their text layer."""

import pytest
from page_fixtures import pdf_bytes

from sleuth.errors import BadResponse
from sleuth.extract.document import read_document
from sleuth.extract.pdf import pdf_text


def test_text_title_and_date_of_a_pdf() -> None:
    found = pdf_text(pdf_bytes(["First line (with brackets).", "Second line."], title="Notes"))
    assert found.text == "First line (with brackets).\nSecond line."
    assert found.title == "Notes"
    assert found.created is not None and found.created.isoformat() == "2025-03-01T12:00:00+00:00"


def test_a_pdf_served_as_octet_stream_is_still_a_pdf() -> None:
    document = read_document(pdf_bytes(["Body."]), "application/octet-stream", None)
    assert document.text == "Body."


def test_a_truncated_pdf_is_a_bad_response() -> None:
    with pytest.raises(BadResponse, match="the PDF cannot be read"):
        pdf_text(pdf_bytes(["Body."])[:40])
