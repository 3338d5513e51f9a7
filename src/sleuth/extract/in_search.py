"""`include: ["content"]`: the top results' pages read concurrently within what is
left of the search's deadline, each result given an excerpt of its page (the
passages nearest the query, `extract.excerpt_chars` at most).

A result whose page could not be read keeps its snippet, is marked `degraded` with
`content` in `missing`, and the response says why in a `content_unavailable`
degradation; so does a result past the first `extract.search_pages`.

The pages read come back too, by item id, for what only a page tells: the gateway
hands them to the content policy (the page's text and address), to dedupe (level 3
on the full text), to dates (the page's own dates) and to trust (its TLS).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import NamedTuple

from sleuth.contract import Degradation, ResultItem
from sleuth.extract.excerpt import excerpt
from sleuth.extract.models import ExtractedPage
from sleuth.extract.reader import PageReader

__all__ = ["ContentRead", "with_content"]

#: Below this much time left, no page is started: it could not finish.
_MIN_LEFT_S = 0.05


class ContentRead(NamedTuple):
    items: list[ResultItem]
    notes: list[Degradation]
    #: The page read for each item, by item id, whether or not it gave text.
    pages: dict[str, ExtractedPage]


def _unread(item: ResultItem, number: int, why: str) -> tuple[ResultItem, Degradation]:
    marked = item.model_copy(
        update={"degraded": True, "missing": list(dict.fromkeys([*item.missing, "content"]))}
    )
    provider = item.providers[0] if item.providers else None
    where = f"result {number} ({item.url})" if item.url else f"result {number}"
    return marked, Degradation(
        kind="content_unavailable", provider=provider, reason=f"{where}: {why}"
    )


async def with_content(
    items: Sequence[ResultItem],
    reader: PageReader,
    terms: Sequence[str],
    *,
    deadline: float,
) -> ContentRead:
    """`items` with `content` filled from their pages, why some have none, and the
    pages; `deadline` is a `time.perf_counter()` instant."""
    settings = reader.settings
    left = deadline - time.perf_counter()
    readable = [
        index
        for index, item in enumerate(items[: settings.search_pages])
        if item.url and item.url.lower().startswith(("http://", "https://"))
    ]
    pages: dict[int, ExtractedPage] = {}
    if readable and left > _MIN_LEFT_S:
        read = await asyncio.gather(
            *(reader.read(str(items[index].url), timeout_s=left) for index in readable)
        )
        pages = dict(zip(readable, read, strict=True))
    out: list[ResultItem] = []
    notes: list[Degradation] = []
    for index, item in enumerate(items):
        number = index + 1
        page = pages.get(index)
        if page is None:
            why = (
                f"only the first {settings.search_pages} results' pages are read"
                if index >= settings.search_pages
                else "no http(s) page to read"
                if index not in readable
                else "no time was left before the deadline"
            )
            marked, note = _unread(item, number, why)
        elif page.error is not None:
            marked, note = _unread(item, number, f"{page.error.code}: {page.error.message}")
        elif not (content := excerpt(page.text, terms, settings.excerpt_chars)):
            marked, note = _unread(item, number, "the page has no main text")
        else:
            flags = item.flags + [flag for flag in page.flags if flag not in item.flags]
            out.append(item.model_copy(update={"content": content, "flags": flags}))
            continue
        out.append(marked)
        notes.append(note)
    return ContentRead(out, notes, {items[index].id: page for index, page in pages.items()})
