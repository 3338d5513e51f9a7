"""A page from a local file (`sleuth extract FILE`): read, extracted and screened as a
fetched page is. Only the CLI reads files; the HTTP service and MCP never do.

>>> page_from_file(Path("/no/such/page.html"), InjectionSettings()).error.code
'invalid_request'
"""

from __future__ import annotations

import mimetypes
from pathlib import Path

from sleuth.errors import InvalidRequest, SearchError
from sleuth.extract.models import ExtractedPage
from sleuth.extract.reader import error_page, page_from_document
from sleuth.extract.screening import screened
from sleuth.stages.safety.injection import InjectionSettings

__all__ = ["page_from_file"]


def page_from_file(
    path: Path,
    injection: InjectionSettings,
    *,
    include_links: bool = False,
    max_chars: int = 100_000,
    max_bytes: int = 50_000_000,
) -> ExtractedPage:
    """The page in the file at `path`, or a page carrying its `error`."""
    shown = str(path)
    try:
        if not path.is_file():
            raise InvalidRequest(
                f"urls: {shown!r} is neither an http(s) URL nor a readable file",
                field="urls",
                allowed=["http", "https", "a file path"],
            )
        if path.stat().st_size > max_bytes:
            raise InvalidRequest(f"urls: {shown} is larger than {max_bytes} bytes", field="urls")
        from sleuth.extract.document import read_document  # heavy: see reader._read

        content_type = mimetypes.guess_type(path.name)[0]
        document = read_document(
            path.read_bytes(),
            content_type,
            path.resolve().as_uri(),
            max_chars=max_chars,
            include_links=include_links,
        )
    except SearchError as exc:
        return error_page(shown, exc)
    page = page_from_document(shown, document, include_links=include_links)
    return screened(page, injection)
