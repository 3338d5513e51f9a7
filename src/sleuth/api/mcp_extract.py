"""The MCP tool `extract_page`: one page through `Sleuth.extract`. `sleuth.api.mcp`
registers `extract_page` as the tool's handler; no extraction logic lives here.

A page that could not be read is a tool error carrying the error contract, as a
failed search is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp import types
from pydantic import ValidationError

from sleuth.contract import describe_validation_error
from sleuth.errors import InvalidRequest
from sleuth.extract.models import ExtractedPage, PageArguments
from sleuth.gateway import Sleuth

__all__ = ["page_text", "read_page_tool"]


def page_text(page: ExtractedPage) -> str:
    """The page as an agent reads it: title, where and when, then the text.

    >>> print(page_text(ExtractedPage(url="https://a.example/", title="A", text="Body.")))
    A
    https://a.example/
    <BLANKLINE>
    Body.
    """
    head = [page.title or page.url, page.final_url or page.url]
    stated = [
        f"{label}: {value.isoformat()}"
        for label, value in (("published", page.published_at), ("modified", page.modified_at))
        if value is not None
    ]
    if stated:
        head.append("; ".join(stated))
    if page.flags:
        head.append(f"flags: {', '.join(page.flags)}")
    return "\n".join(head) + "\n\n" + page.text


def _arguments(arguments: Mapping[str, Any]) -> PageArguments:
    try:
        return PageArguments.model_validate_json(json.dumps(dict(arguments)), strict=True)
    except ValidationError as exc:
        raise InvalidRequest.from_details(describe_validation_error(exc, PageArguments)) from None


async def read_page_tool(
    sleuth: Sleuth, arguments: Mapping[str, Any], owner: str
) -> tuple[ExtractedPage, types.CallToolResult | None]:
    """The page, and its successful tool result (None when the page carries an error,
    which the caller turns into the tool error)."""
    args = _arguments(arguments)
    request = {"urls": [args.url], "include_links": args.include_links, "max_chars": args.max_chars}
    page = (await sleuth.extract(request)).pages[0]
    if page.error is not None:
        return page, None
    result = types.CallToolResult(
        content=[types.TextContent(text=page_text(page))],
        structured_content=page.model_dump(mode="json"),
    )
    return page, result
