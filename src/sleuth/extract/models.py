"""What `extract` takes and returns: `ExtractRequest`, `ExtractedPage`, `TlsInfo`.

One `ExtractedPage` per URL asked, in the order asked; a page that could not be read
carries its `error` in the error contract and no text, so one bad URL never hides
the others.

>>> parse_extract_request({"urls": ["https://example.org/a"]}).urls
['https://example.org/a']
>>> parse_extract_request({"urls": []})
Traceback (most recent call last):
sleuth.errors.InvalidRequest: urls: List should have at least 1 item after validation, not 0 \
(got []); allowed: 1..20 http(s) URLs
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sleuth.contract import ErrorInfo, TlsStatus, describe_validation_error
from sleuth.errors import InvalidRequest

__all__ = [
    "ExtractRequest",
    "ExtractResponse",
    "ExtractedPage",
    "PageArguments",
    "TlsInfo",
    "parse_extract_request",
]


class ExtractRequest(BaseModel):
    """Pages to read. `urls`: http(s) links, 1 to 20."""

    model_config = ConfigDict(extra="forbid", title="ExtractRequest")

    urls: list[str] = Field(min_length=1, max_length=20, description="http(s) pages to read.")
    include_links: bool = Field(False, description="Also return the links in the main text.")
    max_chars: int | None = Field(
        None, ge=200, le=100_000, description="Cut the text at this many characters."
    )
    no_cache: bool = Field(False, description="Fetch again even when the page is cached.")


class PageArguments(BaseModel):
    """The MCP tool `extract_page`: one page to read."""

    model_config = ConfigDict(extra="forbid", title="ExtractPageArguments")

    url: str = Field(min_length=1, max_length=2000, description="The http(s) page to read.")
    include_links: bool = Field(False, description="Also return the links in the main text.")
    max_chars: int | None = Field(
        None, ge=200, le=100_000, description="Cut the text at this many characters."
    )


class TlsInfo(BaseModel):
    """Whether the page came over TLS with a certificate that verified."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: TlsStatus
    reason: str | None = None


class ExtractedPage(BaseModel):
    """One page's main text and what the page states about itself."""

    model_config = ConfigDict(extra="forbid", title="ExtractedPage")

    url: str = Field(description="The URL asked for.")
    final_url: str | None = Field(None, description="Where redirects ended.")
    title: str = ""
    text: str = Field("", description="Main content: paragraphs, # headings, - lists, tables.")
    published_at: datetime | None = Field(None, description="As the page states it; never guessed.")
    modified_at: datetime | None = Field(None, description="As the page states it; never guessed.")
    language: str | None = None
    author: str | None = None
    site_name: str | None = None
    content_type: str | None = None
    links: list[str] | None = Field(None, description="Links in the main text, when asked for.")
    tls: TlsInfo = TlsInfo(status="none", reason="not fetched")
    truncated: bool = False
    flags: list[str] = Field(default_factory=list)
    degraded: bool = False
    missing: list[str] = Field(default_factory=list)
    error: ErrorInfo | None = None


class ExtractResponse(BaseModel):
    model_config = ConfigDict(extra="forbid", title="ExtractResponse")

    pages: list[ExtractedPage]
    took_ms: float = 0.0


def _allowed(field: str) -> list[str] | None:
    if field == "urls":
        return ["1..20 http(s) URLs"]
    return None


def parse_extract_request(
    data: ExtractRequest | Mapping[str, Any], *, strict: bool = False
) -> ExtractRequest:
    """A validated request, or `InvalidRequest` naming each bad field and its allowed values."""
    if isinstance(data, ExtractRequest):
        return data
    try:
        if strict:
            return ExtractRequest.model_validate_json(json.dumps(data), strict=True)
        return ExtractRequest.model_validate(data)
    except ValidationError as exc:
        details = describe_validation_error(exc, ExtractRequest)
        fixed = []
        for info in details:
            # the shared wording counts a list's bounds in characters; say items
            allowed = _allowed(info.field or "") or info.allowed
            message = info.message.split("; allowed: ")[0]
            if allowed:
                message += f"; allowed: {', '.join(allowed)}"
            fixed.append(info.model_copy(update={"allowed": allowed, "message": message}))
        raise InvalidRequest.from_details(fixed) from None
